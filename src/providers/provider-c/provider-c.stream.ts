import { GatewayError } from '../../core/gateway.error';
import type { ChatEvent, FinishReason, UsageEvent } from '../../core/chat-event';
import type { FrameStep } from '../shared/turn-runner';
import type { CliErrorReport } from './provider-c.errors';
import { isPlanLimitResult, RunFailed } from './provider-c.errors';
import type { PlanReport } from '../../core/plan-usage';
import { planReportOf } from './provider-c.plan';
import type { ChannelParser, FenceOutput } from './provider-c.fence-parser';
import { FenceParser } from './provider-c.fence-parser';
import type { Channel } from './provider-c.tool-calls';
import { blockToToolCall, CrossChannelDuplicates, newToolCallId } from './provider-c.tool-calls';
import type { RestartMark } from './provider-c.restarts';
import { AnswerRestarts } from './provider-c.restarts';
import { isJsonObject, type JsonObject, str, num } from '../../common/json';
import type {
  AbandonedBlocks,
  ApiErrorFields,
  ApiStreamEvent,
  AssistantLine,
  ContentBlock,
  RateLimitInfo,
  RateLimitLine,
  ResultLine,
  StreamJsonLine,
  StreamJsonUsage,
} from './provider-c.stream-json';

/** A diagnostic the translator wants logged (names and counts only; never text). */
export type StreamDiagnostic = (event: string, fields: Record<string, unknown>) => void;

/**
 * The level a diagnostic is logged at. A block that could not become a call fails the turn
 * (`finishStep`), whose own line is the request's one warning (docs/troubleshooting.md "One line
 * per failure"), so its line is info; a block dropped from an answer that still succeeds, or one
 * accepted without its closing fence, is a warning; a call repeated across channels is debug. An
 * answer the CLI asked again because it had no text is the model's doing, not a fault: info.
 */
export function diagnosticLevel(event: string, fields: Record<string, unknown>): 'debug' | 'info' | 'warn' {
  if (event === 'tool_fence_duplicate') return 'debug';
  if (event === 'provider_c_answer_asked_again') return 'info';
  if (event === 'tool_fence_invalid' || event === 'tool_fence_too_large') return 'info';
  if (event === 'tool_fence_unclosed' && fields.accepted === false) return 'info';
  return 'warn';
}

export interface StreamStateOptions {
  /** Declared tool kinds by name; empty when the request has no tools. */
  readonly toolKinds: ReadonlyMap<string, 'function' | 'custom'>;
  /**
   * No call allowed (the turn's ToolChoicePlan: no tools, or `tool_choice: "none"`): a block is
   * still cut out of the answer, but dropped instead of becoming a call; it makes no
   * invalid-tool-call error either (docs/upstream/provider-c.md §5.4).
   */
  readonly discardBlocks?: boolean;
  /**
   * A non-streaming request: model output is held until the run ends well, so a part the CLI
   * abandons is dropped rather than sent (docs/upstream/provider-c.md §6.1).
   */
  readonly holdUntilEnd?: boolean;
  readonly diagnostic?: StreamDiagnostic;
  readonly newId?: () => string;
}

/** The run whose lines are translated: its stderr is the fallback text of an error result. */
export interface CliRun {
  stderr(): string;
}

/** Per-run state of the stream-json translation; create one per child process, never share. */
export interface ProviderCStreamState {
  readonly options: StreamStateOptions;
  readonly parsers: Record<Channel, ChannelParser>;
  readonly duplicates: CrossChannelDuplicates;
  readonly streamedMessageIds: Set<string>;
  readonly blockKinds: Map<number, string>;
  /** What the client was sent of a streamed message the CLI may abandon, and its answer since (docs/upstream/provider-c.md §6.1). */
  readonly restarts: AnswerRestarts;
  /** The streamed message being read (docs/upstream/provider-c.md §6.1, §6.2). */
  openMessage?: OpenMessage;
  /**
   * Where the last streamed message started, when it ended without text and the CLI may ask it
   * again (docs/upstream/provider-c.md §6.2): a next `message_start` gives it up from there.
   */
  unanswered?: BlockStart;
  sessionId?: string;
  model?: string;
  /** The running CLI's version, from its `init` line. */
  cliVersion?: string;
  /** Usage merged from message_start / message_delta, used when the result line has none. */
  streamedUsage: StreamJsonUsage;
  /**
   * The streamed message that just ended at the output limit (`max_tokens`), with its usage: the
   * CLI asks the model to resume, so a next `message_start` continues it (docs/upstream/provider-c.md §8.1).
   */
  cutAtLimit?: StreamJsonUsage;
  /**
   * The summed usage of the messages a later message continued after the output limit: their text
   * went to the client, so their usage is the client's too, beside the last message's.
   */
  continuedUsage?: StreamJsonUsage;
  /** The ids of the API messages the run answered with, streamed or not. */
  readonly messageIds: Set<string>;
  /**
   * The usage of the last API message when it was not streamed (the CLI's retry after a broken
   * stream sends its request again without streaming); cleared by the next `message_start`.
   */
  unstreamedUsage?: StreamJsonUsage;
  stopReason?: string;
  /**
   * The API stopped the answer with `stop_reason: "refusal"` (its safety classifier): the turn ends
   * there, with `content_filter`, and no tool call of that answer reaches the client
   * (docs/upstream/provider-c.md §8.2).
   */
  answerRefused: boolean;
  /** Deltas seen since the last `assistant` line (fallback when message ids are missing). */
  deltasSinceAssistant: boolean;
  validCalls: number;
  droppedBlocks: number;
  /**
   * The run counts as accepted: the API answered (its `message_start` stream event, or a real,
   * non-synthetic assistant message from a CLI without partial messages), or model output or a
   * successful result was seen. Never at `system/init`, which the CLI prints before it calls the
   * API (docs/design/decisions.md §4).
   */
  accepted: boolean;
  /** The structured fields of the CLI's synthetic error message, when it printed one. */
  apiFailure?: Omit<CliErrorReport, 'text'> & { readonly text?: string };
  /** Reset time of a limit the CLI reported as rejected in a `rate_limit_event`. */
  limitResetsAt?: number;
  /** A `rate_limit_event` said the organization's usage is paused at its daily cap (`dailyCapPaused`). */
  dailyCapPaused?: boolean;
  /**
   * What the run's latest `rate_limit_event` said of the login's plan and extra usage, not yet
   * handed to the account pool (the upstream takes it, knowing the run's login).
   */
  planReport?: PlanReport;
  /**
   * A plan report that says `rejected` and nothing else (no window, reset or extra usage): the
   * CLI's reading of any refused request, whatever refused it. Held until the run's `result` line:
   * handed on as `planReport` only when the run failed on the plan's limit (`isPlanLimitResult`),
   * dropped otherwise (a short-term rate limit, the long-context refusal, any other failure, an
   * answer).
   */
  refusalReport?: PlanReport;
}

/** Where the turn stood when a block (or message) started: what abandoning it from there undoes. */
interface BlockStart {
  readonly channel?: Channel;
  readonly mark: RestartMark;
  readonly validCalls: number;
  readonly droppedBlocks: number;
  readonly duplicates: Readonly<Record<Channel, number>>;
}

/** A streamed message: its id (as an abandonment names it), where it and each of its blocks started, whether it wrote text. */
interface OpenMessage {
  readonly id?: string;
  readonly start: BlockStart;
  readonly blocks: Map<number, BlockStart>;
  /** A text block had more than white space: what Claude Code counts as a visible answer. */
  wroteText: boolean;
}

export function createStreamState(options: StreamStateOptions): ProviderCStreamState {
  return {
    options,
    parsers: { content: new FenceParser(), reasoning: new FenceParser() },
    duplicates: new CrossChannelDuplicates(),
    streamedMessageIds: new Set(),
    blockKinds: new Map(),
    restarts: new AnswerRestarts(options.holdUntilEnd === true),
    streamedUsage: {},
    messageIds: new Set(),
    answerRefused: false,
    deltasSinceAssistant: false,
    validCalls: 0,
    droppedBlocks: 0,
    accepted: false,
  };
}

/** One stdout line as a JSON object, or `undefined` when it is not one (skipped and counted, docs/upstream/provider-c.md §6). */
export function parseStreamLine(line: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * docs/upstream/provider-c.md §6: one stream-json object → the runner's step. The `result` line
 * ends the run: terminal on success; an error result is handed over unclassified, as the run's
 * `RunFailed` (with `run`'s stderr as its fallback text), for the family's `classify` at the
 * runner's time.
 */
export function translateLine(message: JsonObject, state: ProviderCStreamState, run: CliRun): FrameStep {
  const line = readLine(message);
  if (line?.type === 'result') return resultStep(line, state, run);
  // The CLI's refusal retry is switched off (provider-c.child-env.ts); should a CLI ask again all
  // the same, its new answer is no part of this turn, which ends now (the child is stopped).
  if (state.answerRefused && line?.type === 'stream_event' && line.event?.type === 'message_start')
    return { ...finishStep(state, withContinued(state, state.streamedUsage)), accepted: true };
  const events = translateMessage(line, state);
  if (!state.accepted && events.some(isModelOutput)) state.accepted = true;
  const failure = state.restarts.diverged ? state.restarts.restartFailure() : undefined;
  if (failure) return { events: [], failure };
  return state.accepted ? { events, accepted: true } : { events };
}

function translateMessage(
  line: Exclude<StreamJsonLine, ResultLine> | undefined,
  state: ProviderCStreamState,
): ChatEvent[] {
  switch (line?.type) {
    case 'system':
      if (line.subtype === 'init') {
        state.sessionId = line.session_id ?? state.sessionId;
        state.model = line.model ?? state.model;
        state.cliVersion = line.claude_code_version ?? state.cliVersion;
      }
      return []; // init, status, api_retry, thinking_tokens, ui_invalidate, hooks
    case 'stream_event':
      if (line.event?.type === 'message_stop') return endMessage(line.abandoned_blocks, state);
      return line.event ? translateStreamEvent(line.event, state) : [];
    case 'assistant':
      return translateAssistant(line, state);
    case 'rate_limit_event':
      noteRateLimit(line, state);
      return [];
    case undefined:
      return [];
  }
}

const isModelOutput = (event: ChatEvent) =>
  event.type === 'text-delta' || event.type === 'reasoning-delta' || event.type === 'tool-call';

function translateStreamEvent(event: ApiStreamEvent, state: ProviderCStreamState): ChatEvent[] {
  switch (event.type) {
    case 'message_start': {
      state.accepted = true;
      const { message } = event;
      if (message.id !== undefined) {
        state.streamedMessageIds.add(message.id);
        state.messageIds.add(message.id);
      }
      state.unstreamedUsage = undefined;
      if (state.cutAtLimit) state.continuedUsage = addUsage(state.continuedUsage, state.cutAtLimit);
      state.cutAtLimit = undefined;
      if (state.unanswered) askedAgain(state.unanswered, state);
      state.unanswered = undefined;
      state.openMessage = { id: message.id, start: startOf(undefined, state), blocks: new Map(), wroteText: false };
      state.restarts.messageStarted();
      state.model = message.model ?? state.model;
      if (!message.usage) return [];
      state.streamedUsage = { ...message.usage };
      return [provisionalUsage(state)];
    }
    case 'content_block_start': {
      const block = event.content_block;
      if (event.index !== undefined && block.type !== undefined) state.blockKinds.set(event.index, block.type);
      if (event.index !== undefined) noteBlockStart(event.index, block.type, state);
      // Anthropic starts blocks empty; any initial text still belongs to the block.
      if (block.type === 'text' && block.text !== undefined) return feedText(block.text, state);
      if (block.type === 'thinking' && block.thinking !== undefined) return feed('reasoning', block.thinking, state);
      return [];
    }
    case 'content_block_delta': {
      const { delta } = event;
      const kind = delta.type ?? `${state.blockKinds.get(event.index) ?? ''}_delta`;
      if (kind === 'text_delta' && delta.text !== undefined) {
        state.deltasSinceAssistant = true;
        return feedText(delta.text, state);
      }
      if (kind === 'thinking_delta' && delta.thinking !== undefined) {
        state.deltasSinceAssistant = true;
        return feed('reasoning', delta.thinking, state);
      }
      return []; // signature_delta, input_json_delta
    }
    case 'message_delta':
      if (event.delta.stop_reason !== undefined) state.stopReason = event.delta.stop_reason;
      if (!event.usage) return [];
      state.streamedUsage = { ...state.streamedUsage, ...event.usage };
      return [provisionalUsage(state)];
    case 'message_stop':
      return [];
  }
}

/**
 * What the API reported of the message so far, as a usage event (once per message_start and
 * message_delta, never per delta): a turn the gateway cuts before the run's `result` line (a stop
 * sequence) still reports the prompt the API read. The result line's usage, when it comes, is the
 * last usage event and the one the client and the metrics keep (docs/upstream/provider-c.md §8.1).
 */
function provisionalUsage(state: ProviderCStreamState): ChatEvent {
  return { type: 'usage', usage: toUsageEvent(withContinued(state, state.streamedUsage)) };
}

/** A message's usage plus that of the messages it continued after the output limit. */
function withContinued(state: ProviderCStreamState, usage: StreamJsonUsage): StreamJsonUsage {
  return state.continuedUsage ? addUsage(state.continuedUsage, usage) : usage;
}

function addUsage(a: StreamJsonUsage | undefined, b: StreamJsonUsage): StreamJsonUsage {
  const sum: StreamJsonUsage = { ...a };
  for (const [key, value] of Object.entries(b) as [keyof StreamJsonUsage, number | undefined][])
    if (value !== undefined) sum[key] = (sum[key] ?? 0) + value;
  return sum;
}

function noteBlockStart(index: number, type: string | undefined, state: ProviderCStreamState): void {
  const channel = type === 'text' ? 'content' : type === 'thinking' ? 'reasoning' : undefined;
  state.openMessage?.blocks.set(index, startOf(channel, state));
}

function startOf(channel: Channel | undefined, state: ProviderCStreamState): BlockStart {
  return {
    channel,
    mark: state.restarts.mark(),
    validCalls: state.validCalls,
    droppedBlocks: state.droppedBlocks,
    duplicates: state.duplicates.mark(),
  };
}

/** Text of a streamed text block: more than white space makes its message answered (docs/upstream/provider-c.md §6.2). */
function feedText(text: string, state: ProviderCStreamState): ChatEvent[] {
  const open = state.openMessage;
  if (open && !open.wroteText && /\S/.test(text)) open.wroteText = true;
  return feed('content', text, state);
}

/** What a block or message did since `start` is undone: its channels' parsers start afresh, its fences no longer count. */
function undoSince(start: BlockStart, channels: readonly Channel[], state: ProviderCStreamState): void {
  for (const channel of channels) state.parsers[channel] = new FenceParser();
  state.validCalls = start.validCalls;
  state.droppedBlocks = start.droppedBlocks;
  state.duplicates.rewind(start.duplicates);
  state.stopReason = undefined;
}

/**
 * docs/upstream/provider-c.md §6.2: a new message after one that ended without text is Claude
 * Code asking that answer again (a note asking for a visible answer), and the new answer is the
 * turn's: the unanswered message is given up whole, and what it sent is not sent twice.
 */
function askedAgain(unanswered: BlockStart, state: ProviderCStreamState): void {
  state.restarts.retry(unanswered.mark);
  undoSince(unanswered, ['content', 'reasoning'], state);
  state.options.diagnostic?.('provider_c_answer_asked_again', {});
}

/**
 * The streamed message ended. When the CLI says it abandoned its blocks from an index on
 * (docs/upstream/provider-c.md §6.1), what they did is undone: their channels' parsers start
 * afresh (a fence they left open cannot swallow the answer that follows), their dropped or valid
 * fences no longer count, and what they sent must be written again before anything new goes out.
 */
function endMessage(abandoned: AbandonedBlocks | undefined, state: ProviderCStreamState): ChatEvent[] {
  const open = state.openMessage;
  state.openMessage = undefined;
  let rewound = false;
  if (open && abandoned && abandoned.api_message_id === open.id) {
    const from = [...open.blocks.entries()].filter(([index]) => index >= abandoned.from_block_index);
    if (from.length > 0) {
      const [, first] = from.reduce((lowest, entry) => (entry[0] < lowest[0] ? entry : lowest));
      const channels = [...new Set(from.flatMap(([, block]) => (block.channel ? [block.channel] : [])))];
      state.restarts.rewind(first.mark, channels);
      undoSince(first, channels, state);
      rewound = true;
      state.options.diagnostic?.('provider_c_answer_restarted', { from_block_index: abandoned.from_block_index });
    }
  }
  // Claude Code asks again for an answer that stopped without text: until the run shows whether
  // it does, that message stays open to it, its calls kept and what it sent remembered
  // (docs/upstream/provider-c.md §6.2).
  if (
    open &&
    !rewound &&
    !open.wroteText &&
    (state.stopReason === 'end_turn' || state.stopReason === 'stop_sequence')
  ) {
    state.unanswered = open.start;
    return [];
  }
  // Cut at the output limit: the CLI asks the model to resume, and what this message sent stays.
  if (!rewound && state.stopReason === 'max_tokens') state.cutAtLimit = { ...state.streamedUsage };
  const calls = state.restarts.messageEnded(rewound);
  if (state.stopReason !== 'refusal') return calls;
  state.answerRefused = true;
  return [];
}

/**
 * A whole assistant message. With partial messages its text was already streamed, so it is
 * ignored; older CLIs without partial messages only send this line. A message the CLI made up
 * itself to report a failure (`error`, `is_api_error_message`, model `<synthetic>`) is never
 * model output: its fields are kept for classification and its text goes nowhere else.
 */
function translateAssistant(line: AssistantLine, state: ProviderCStreamState): ChatEvent[] {
  const { message } = line;
  if (line.error !== undefined || line.is_api_error_message === true || message.model === '<synthetic>') {
    state.apiFailure = { ...errorFields(line), text: messageText(message.content) };
    return [];
  }
  state.accepted = true;
  const id = message.id;
  const streamed =
    id !== undefined
      ? state.streamedMessageIds.has(id) || (state.streamedMessageIds.size === 0 && state.deltasSinceAssistant)
      : state.deltasSinceAssistant;
  state.deltasSinceAssistant = false;
  if (id !== undefined) state.messageIds.add(id);
  if (!streamed && message.usage) state.unstreamedUsage = message.usage;
  if (streamed || !message.content) return [];
  const events: ChatEvent[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && block.text !== undefined) events.push(...feed('content', block.text, state));
    if (block.type === 'thinking' && block.thinking !== undefined)
      events.push(...feed('reasoning', block.thinking, state));
  }
  return events;
}

/**
 * The run's `result` line: the turn's finish, or the failure the CLI reported (never accepted then).
 * A held bare `rejected` is the plan's only when the plan's limit is what failed the run.
 */
function resultStep(line: ResultLine, state: ProviderCStreamState, run: CliRun): FrameStep {
  const subtype = line.subtype ?? '';
  const refusal = state.refusalReport;
  state.refusalReport = undefined;
  // The CLI reports a refused answer as an error result (`is_error`, `stop_reason: "refusal"`,
  // after a synthetic "API Error: … safeguards flagged this message"): it is the model's answer.
  if (line.stop_reason === 'refusal') state.answerRefused = true;
  if (state.answerRefused) {
    state.accepted = true;
    return { ...finishStep(state, ...resultUsage(line, state)), accepted: true };
  }
  // The CLI resumed an answer cut at the output limit three times and gave up (an error result,
  // `api_error: "max_output_tokens"`): what the model wrote is the answer, cut, never a failure.
  if (isOutputLimitResult(line, state)) {
    state.stopReason = 'max_tokens';
    state.accepted = true;
    return { ...finishStep(state, ...resultUsage(line, state)), accepted: true };
  }
  if (line.is_error === true || subtype.startsWith('error')) {
    const report = errorReport(line, state);
    const stderr = run.stderr();
    if (refusal && isPlanLimitResult(report, stderr)) state.planReport = refusal;
    return { events: [], unclassified: new RunFailed({ kind: 'error_result', report, stderr }) };
  }
  if (line.stop_reason !== undefined && state.stopReason === undefined) state.stopReason = line.stop_reason;
  state.accepted = true;
  return { ...finishStep(state, ...resultUsage(line, state)), accepted: true };
}

/**
 * Claude Code 2.1.332 ends a run whose answer kept stopping at the output limit with a synthetic
 * `assistant` line and an error `result`, both `api_error: "max_output_tokens"` (the line also
 * `error: "max_output_tokens"`), `terminal_reason: "api_error"`, exit 1 (docs/upstream/provider-c.md §8.2).
 */
function isOutputLimitResult(line: ResultLine, state: ProviderCStreamState): boolean {
  const marker = 'max_output_tokens';
  const earlier = state.apiFailure;
  return line.api_error === marker || earlier?.apiError === marker || earlier?.error === marker;
}

/**
 * The result line's usage is the sum over every API call of the run. One call: it is the
 * answer's. More (the CLI asked again after a broken stream or an answer without text, or resumed
 * one cut at the output limit): the client is told the delivered messages', the last one's from
 * its stream or, when it was not streamed, its `assistant` line, plus those it continued after the
 * output limit; the rest of the sum (messages given up) is billed for the token counters only
 * (docs/upstream/provider-c.md §8.1).
 */
function resultUsage(line: ResultLine, state: ProviderCStreamState): [StreamJsonUsage, UsageEvent?] {
  const sum = line.usage;
  if (!sum) return [withContinued(state, state.streamedUsage)];
  if (state.messageIds.size <= 1 && (line.num_turns ?? 1) <= 1) return [sum];
  const delivered = withContinued(state, state.unstreamedUsage ?? state.streamedUsage);
  const [total, answer] = [toUsageEvent(sum), toUsageEvent(delivered)];
  const rest = (a: number | undefined, b: number | undefined) => Math.max(0, (a ?? 0) - (b ?? 0));
  return [
    delivered,
    {
      promptTokens: rest(total.promptTokens, answer.promptTokens),
      completionTokens: rest(total.completionTokens, answer.completionTokens),
      totalTokens: rest(total.totalTokens, answer.totalTokens),
      cachedPromptTokens: rest(total.cachedPromptTokens, answer.cachedPromptTokens),
    },
  ];
}

/** docs/upstream/provider-c.md §6: exit status 0 without a `result` line: flush, usage from what was seen, finish. */
export function endWithoutResult(state: ProviderCStreamState): FrameStep {
  return finishStep(state, withContinued(state, state.streamedUsage));
}

/**
 * Before a terminal error event: release held visible text; open fences are dropped (docs/upstream/provider-c.md §7.3).
 * Text that only repeats what a restarted answer already sent is not sent again (docs/upstream/provider-c.md §6.1).
 */
export function flushVisibleText(state: ProviderCStreamState): ChatEvent[] {
  const events: ChatEvent[] = [];
  for (const channel of ['reasoning', 'content'] as const) {
    for (const item of state.parsers[channel].end()) {
      if (item.type === 'text') events.push(...state.restarts.text(channel, item.text));
    }
  }
  return events;
}

/**
 * The turn's end: the held and flushed output, usage, and the finish; a failure instead when
 * what the client was sent is not the answer the CLI restarted (docs/upstream/provider-c.md §6.1).
 */
function finishStep(state: ProviderCStreamState, usage: StreamJsonUsage, billed?: UsageEvent): FrameStep {
  const flushed: ChatEvent[] = [];
  // An answer that ended at the output limit inside a fence was cut there: that fence is the cut,
  // not a call the model got wrong (finish `length`, docs/upstream/provider-c.md §8.2).
  const cut = state.stopReason === 'max_tokens';
  for (const channel of ['reasoning', 'content'] as const)
    flushed.push(...handleOutputs(channel, state.parsers[channel].end(), state, cut));
  const failure = state.restarts.restartFailure();
  if (failure) return { events: [], failure };
  const kept = [...state.restarts.release(), ...flushed];
  if (state.answerRefused) {
    const events = kept.filter((event) => event.type !== 'tool-call');
    events.push({ type: 'usage', usage: toUsageEvent(usage) }, { type: 'finish', reason: 'content_filter' });
    return { events, terminal: true, ...(billed ? { billed } : {}) };
  }
  const events = kept;
  events.push({ type: 'usage', usage: toUsageEvent(usage) });
  // A block that could not become a call fails the whole answer, as an invalid call does in the
  // chat layer: the valid calls alone would read as the model's whole request (docs/upstream/provider-c.md §7.4).
  if (state.droppedBlocks > 0) {
    events.push({
      type: 'error',
      error: new GatewayError('invalid_tool_call', {
        detail: `${state.droppedBlocks} tool fence(s) could not become a call, beside ${state.validCalls} that could`,
      }),
    });
  } else {
    events.push({ type: 'finish', reason: mapStopReason(state.stopReason) });
  }
  return { events, terminal: true, ...(billed ? { billed } : {}) };
}

function feed(channel: Channel, text: string, state: ProviderCStreamState): ChatEvent[] {
  return text === '' ? [] : handleOutputs(channel, state.parsers[channel].push(text), state);
}

/** What an empty block reads as: an object without a name or arguments. */
const EMPTY_BLOCK: Readonly<Record<string, never>> = Object.freeze({});

/** `cut`: the outputs end an answer cut at the output limit, so a fence still open is dropped without failing it. */
function handleOutputs(
  channel: Channel,
  outputs: FenceOutput[],
  state: ProviderCStreamState,
  cut = false,
): ChatEvent[] {
  const events: ChatEvent[] = [];
  const log = state.options.diagnostic ?? (() => undefined);
  for (const item of outputs) {
    if (item.type === 'text') {
      events.push(...state.restarts.text(channel, item.text));
      continue;
    }
    if (state.options.discardBlocks) {
      log('tool_fence_discarded', { channel });
      continue;
    }
    let value: unknown;
    if (item.type === 'dropped') {
      if (cut && item.reason === 'unclosed') {
        log('tool_fence_unclosed', { channel, accepted: false, cut: true, bytes: item.bytes });
        continue;
      }
      if (item.reason === 'empty') {
        // An empty block is an empty call, which the chat layer drops and logs as it does every
        // family's (docs/chat.md "Tool calls"): it fails nothing.
        value = EMPTY_BLOCK;
      } else {
        state.droppedBlocks++;
        if (item.reason === 'too_large') log('tool_fence_too_large', { channel, bytes: item.bytes });
        else if (item.reason === 'unclosed')
          log('tool_fence_unclosed', { channel, accepted: false, bytes: item.bytes });
        else log('tool_fence_invalid', { channel, reason: item.reason, bytes: item.bytes });
        continue;
      }
    } else {
      if (item.unclosed) log('tool_fence_unclosed', { channel, accepted: true });
      value = item.value;
    }
    const converted = blockToToolCall(value, state.options.toolKinds, state.options.newId ?? newToolCallId);
    if (!converted.ok) {
      state.droppedBlocks++;
      log('tool_fence_invalid', { channel, reason: converted.reason });
      continue;
    }
    state.validCalls++;
    if (!state.duplicates.admit(channel, converted.call)) {
      log('tool_fence_duplicate', { channel });
      continue;
    }
    events.push(...state.restarts.call(converted.call));
  }
  return events;
}

/** docs/upstream/provider-c.md §8.1: prompt = input + cache creation + cache read; cached = cache read; completion = output. */
export function toUsageEvent(usage: StreamJsonUsage): UsageEvent {
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const promptTokens = (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + cacheRead;
  const completionTokens = usage.output_tokens ?? 0;
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    ...(usage.cache_read_input_tokens !== undefined ? { cachedPromptTokens: cacheRead } : {}),
  };
}

/** docs/upstream/provider-c.md §8.2: end_turn, stop_sequence, absent → stop; max_tokens → length; refusal → content_filter. */
export function mapStopReason(stopReason: string | undefined): FinishReason {
  if (stopReason === 'max_tokens') return 'length';
  if (stopReason === 'refusal') return 'content_filter';
  return 'stop';
}

/** The error result's structured fields over the synthetic assistant message's; text as the fallback. */
function errorReport(line: ResultLine, state: ProviderCStreamState): CliErrorReport {
  const fromResult = errorFields(line);
  const earlier = state.apiFailure ?? {};
  const defined = <T>(...values: (T | undefined)[]) => values.find((value) => value !== undefined);
  return {
    text: resultErrorText(line) || earlier.text || '',
    error: earlier.error,
    apiStatus: defined(fromResult.apiStatus, earlier.apiStatus),
    apiErrorType: defined(fromResult.apiErrorType, earlier.apiErrorType),
    apiError: defined(fromResult.apiError, earlier.apiError),
    resetsAt: defined(earlier.resetsAt, state.limitResetsAt),
    ...(fromResult.dailyCapPaused || earlier.dailyCapPaused || state.dailyCapPaused ? { dailyCapPaused: true } : {}),
    subtype: line.subtype,
    terminalReason: line.terminal_reason,
    cliVersion: state.cliVersion,
  };
}

function errorFields(line: ApiErrorFields): Omit<CliErrorReport, 'text'> {
  const limit = line.api_error_params?.rate_limit_info;
  const resetsAt = limit?.resetsAt;
  return {
    error: line.error,
    apiStatus: line.api_error_status,
    apiErrorType: line.api_error_type,
    apiError: line.api_error,
    resetsAt: resetsAt !== undefined && resetsAt > 0 ? resetsAt : undefined,
    ...(limit?.dailyCapPaused === true ? { dailyCapPaused: true } : {}),
  };
}

/**
 * The CLI's view of the login's meters: kept as a plan report for the account pool. A rejected
 * limit carries its reset time (Unix seconds): the best Retry-After there is should the run fail.
 * A rejected plan on a delivered answer is not a failure: extra usage paid for it. A bare
 * `rejected` says only that some request was refused, so it waits for the run's `result` line.
 * A rejection with `dailyCapPaused` is the organization's pause, no report of the plan
 * (`planReportOf`): the run's failure says it (`classifyRunFailure`).
 */
function noteRateLimit(line: RateLimitLine, state: ProviderCStreamState): void {
  const info = line.rate_limit_info;
  const report = info && planReportOf(info);
  if (report && isBareRejection(report)) state.refusalReport = report;
  else if (report) state.planReport = report;
  if (info?.status !== 'rejected') return;
  if (info.dailyCapPaused === true) state.dailyCapPaused = true;
  if (info.resetsAt !== undefined && info.resetsAt > 0) state.limitResetsAt = info.resetsAt;
}

/** A spent plan and nothing about which window, until when, or extra usage. */
function isBareRejection(report: PlanReport): boolean {
  return report.planSpent === true && report.windows.length === 0 && !report.paid && report.spentUntil === undefined;
}

function messageText(content: readonly ContentBlock[] | undefined): string {
  return content ? content.map((block) => block.text ?? '').join('\n') : '';
}

/** The text classified for an error result (docs/upstream/provider-c.md §8.3); used only for classification, never shown. */
function resultErrorText(line: ResultLine): string {
  if (line.result !== undefined && line.result !== '') return line.result;
  return line.errors ? line.errors.join('\n') : '';
}

/**
 * The boundary of the stream-json types (`provider-c.stream-json.ts`): the line with the fields
 * the translation reads, each kept only when it has its declared JSON type (otherwise it reads as
 * absent), or `undefined` for a line of another `type`.
 */
function readLine(raw: JsonObject): StreamJsonLine | undefined {
  const { type } = raw;
  switch (type) {
    case 'system':
      return {
        type,
        subtype: str(raw.subtype),
        session_id: str(raw.session_id),
        model: str(raw.model),
        claude_code_version: str(raw.claude_code_version),
      };
    case 'stream_event':
      return {
        type,
        event: isJsonObject(raw.event) ? readApiEvent(raw.event) : undefined,
        abandoned_blocks: isJsonObject(raw.abandoned_blocks) ? readAbandoned(raw.abandoned_blocks) : undefined,
      };
    case 'assistant': {
      const message = isJsonObject(raw.message) ? raw.message : {};
      const content = Array.isArray(message.content) ? (message.content as unknown[]) : undefined;
      return {
        type,
        ...readErrorFields(raw),
        is_api_error_message: bool(raw.is_api_error_message),
        message: {
          id: str(message.id),
          model: str(message.model),
          content: content?.map(readBlock),
          usage: isJsonObject(message.usage) ? readUsage(message.usage) : undefined,
        },
      };
    }
    case 'rate_limit_event': {
      const info = raw.rate_limit_info;
      return { type, rate_limit_info: isJsonObject(info) ? readRateLimitInfo(info) : undefined };
    }
    case 'result':
      return {
        type,
        ...readErrorFields(raw),
        subtype: str(raw.subtype),
        is_error: bool(raw.is_error),
        stop_reason: str(raw.stop_reason),
        usage: isJsonObject(raw.usage) ? readUsage(raw.usage) : undefined,
        num_turns: num(raw.num_turns),
        result: str(raw.result),
        errors: Array.isArray(raw.errors)
          ? (raw.errors as unknown[]).filter((entry): entry is string => typeof entry === 'string')
          : undefined,
        terminal_reason: str(raw.terminal_reason),
      };
    default:
      return undefined;
  }
}

function readRateLimitInfo(info: JsonObject): RateLimitInfo {
  return {
    status: str(info.status),
    resetsAt: num(info.resetsAt),
    rateLimitType: str(info.rateLimitType),
    utilization: num(info.utilization),
    surpassedThreshold: num(info.surpassedThreshold),
    overageStatus: str(info.overageStatus),
    overageResetsAt: num(info.overageResetsAt),
    overageDisabledReason: str(info.overageDisabledReason),
    isUsingOverage: bool(info.isUsingOverage),
    overageInUse: bool(info.overageInUse),
    overageEnabled: bool(info.overageEnabled),
    dailyCapPaused: bool(info.dailyCapPaused),
  };
}

function readApiEvent(raw: JsonObject): ApiStreamEvent | undefined {
  switch (raw.type) {
    case 'message_start': {
      const message = isJsonObject(raw.message) ? raw.message : {};
      return {
        type: 'message_start',
        message: {
          id: str(message.id),
          model: str(message.model),
          usage: isJsonObject(message.usage) ? readUsage(message.usage) : undefined,
        },
      };
    }
    case 'content_block_start':
      return {
        type: 'content_block_start',
        index: num(raw.index),
        content_block: isJsonObject(raw.content_block) ? readBlock(raw.content_block) : {},
      };
    case 'content_block_delta': {
      const delta = isJsonObject(raw.delta) ? raw.delta : {};
      return {
        type: 'content_block_delta',
        index: Number(raw.index),
        delta: { type: str(delta.type), text: str(delta.text), thinking: str(delta.thinking) },
      };
    }
    case 'message_delta': {
      const delta = isJsonObject(raw.delta) ? raw.delta : {};
      return {
        type: 'message_delta',
        delta: { stop_reason: str(delta.stop_reason) },
        usage: isJsonObject(raw.usage) ? readUsage(raw.usage) : undefined,
      };
    }
    case 'message_stop':
      return { type: 'message_stop' }; // not terminal: the CLI may answer again after it
    default:
      return undefined; // content_block_stop, ping
  }
}

/** Both fields or nothing: an abandonment the gateway cannot place undoes nothing. */
function readAbandoned(raw: JsonObject): AbandonedBlocks | undefined {
  const id = str(raw.api_message_id);
  const from = num(raw.from_block_index);
  return id !== undefined && from !== undefined && Number.isInteger(from) && from >= 0
    ? { api_message_id: id, from_block_index: from }
    : undefined;
}

function readBlock(raw: unknown): ContentBlock {
  return isJsonObject(raw) ? { type: str(raw.type), text: str(raw.text), thinking: str(raw.thinking) } : {};
}

function readErrorFields(raw: JsonObject): ApiErrorFields {
  const params = isJsonObject(raw.api_error_params) ? raw.api_error_params : undefined;
  const limit = params && isJsonObject(params.rate_limit_info) ? params.rate_limit_info : undefined;
  return {
    error: str(raw.error),
    api_error_status: num(raw.api_error_status),
    api_error_type: str(raw.api_error_type),
    api_error: str(raw.api_error),
    api_error_params: params && {
      rate_limit_info: limit && { resetsAt: num(limit.resetsAt), dailyCapPaused: bool(limit.dailyCapPaused) },
    },
  };
}

/** Only finite, non-negative counts are kept. */
function readUsage(raw: JsonObject): StreamJsonUsage {
  const usage: StreamJsonUsage = {};
  for (const key of [
    'input_tokens',
    'output_tokens',
    'cache_creation_input_tokens',
    'cache_read_input_tokens',
  ] as const) {
    const value = raw[key];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) usage[key] = value;
  }
  return usage;
}

const bool = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : undefined);
