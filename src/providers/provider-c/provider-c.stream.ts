import { GatewayError } from '../../core/gateway.error';
import type { ChatEvent, FinishReason, UsageEvent } from '../../core/chat-event';
import type { ChannelParser, FenceOutput } from './provider-c.fence-parser';
import { FenceParser, PassthroughParser } from './provider-c.fence-parser';
import type { Channel } from './provider-c.tool-calls';
import { blockToToolCall, CrossChannelDuplicates, newToolCallId } from './provider-c.tool-calls';
import { isJsonObject } from '../../common/json';

/** A diagnostic the translator wants logged (names and counts only; never text). */
export type StreamDiagnostic = (event: string, fields: Record<string, unknown>) => void;

export interface StreamStateOptions {
  /** Declared tool kinds by name; empty when the request has no tools. */
  readonly toolKinds: ReadonlyMap<string, 'function' | 'custom'>;
  /** False with no tools or `tool_choice: "none"`: text passes through unchanged (§5.4, §6). */
  readonly fenceDetection: boolean;
  readonly diagnostic?: StreamDiagnostic;
  readonly newId?: () => string;
}

interface UsageFields {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/**
 * What the CLI reported about a failed turn, read from its structured fields (Claude Code
 * 2.1.330, see __fixtures__/): the synthetic `assistant` line's `error` (`authentication_failed`,
 * `rate_limit`, `server_error`, `invalid_request`, `billing_error`, `unknown`),
 * `api_error_status`, `api_error_type`, `api_error` (`usage_limit_reached`), the limit's reset
 * (`api_error_params.rate_limit_info.resetsAt`, or a rejected `rate_limit_event`), and the
 * `result` line's `subtype` and `terminal_reason`. `text` is the CLI's own message: used only as
 * a fallback for classification, never shown and never logged.
 */
export interface CliErrorReport {
  readonly text: string;
  readonly error?: string;
  readonly apiStatus?: number;
  readonly apiErrorType?: string;
  readonly apiError?: string;
  readonly subtype?: string;
  readonly terminalReason?: string;
  /** Unix seconds at which a rejected limit resets. */
  readonly resetsAt?: number;
}

/** Per-run state of the stream-json translation; create one per child process, never share. */
export interface ProviderCStreamState {
  readonly options: StreamStateOptions;
  readonly parsers: Record<Channel, ChannelParser>;
  readonly duplicates: CrossChannelDuplicates;
  readonly streamedMessageIds: Set<string>;
  readonly blockKinds: Map<number, string>;
  sessionId?: string;
  model?: string;
  /** Usage merged from message_start / message_delta, used when the result line has none. */
  streamedUsage: UsageFields;
  stopReason?: string;
  /** Deltas seen since the last `assistant` line (fallback when message ids are missing). */
  deltasSinceAssistant: boolean;
  validCalls: number;
  droppedBlocks: number;
  /**
   * The API answered this run: its `message_start` stream event, or a real (non-synthetic)
   * assistant message from a CLI without partial messages. Never `system/init`, which the CLI
   * prints before it calls the API (design.md §4).
   */
  apiAnswered: boolean;
  /** The structured fields of the CLI's synthetic error message, when it printed one. */
  apiFailure?: Omit<CliErrorReport, 'text'> & { readonly text?: string };
  /** Reset time of a limit the CLI reported as rejected in a `rate_limit_event`. */
  limitResetsAt?: number;
}

/** How a line ended the run, if it did. */
export type LineOutcome = { readonly type: 'success' } | { readonly type: 'error'; readonly report: CliErrorReport };

export interface LineResult {
  readonly events: ChatEvent[];
  readonly outcome?: LineOutcome;
  /** True once the turn may count as accepted: the API answered, or model output or a successful end was seen. */
  readonly accepted: boolean;
}

export function createStreamState(options: StreamStateOptions): ProviderCStreamState {
  const parser = () => (options.fenceDetection ? new FenceParser() : new PassthroughParser());
  return {
    options,
    parsers: { content: parser(), reasoning: parser() },
    duplicates: new CrossChannelDuplicates(),
    streamedMessageIds: new Set(),
    blockKinds: new Map(),
    streamedUsage: {},
    deltasSinceAssistant: false,
    validCalls: 0,
    droppedBlocks: 0,
    apiAnswered: false,
  };
}

/** One stdout line as a JSON object, or `undefined` when it is not one (skipped and counted, §6). */
export function parseStreamLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** §6: one stream-json object → events. The `result` line is terminal. */
export function translateLine(message: Record<string, unknown>, state: ProviderCStreamState): LineResult {
  const result = translateMessage(message, state);
  const accepted = state.apiAnswered || result.outcome?.type === 'success' || result.events.some(isModelOutput);
  return { ...result, accepted };
}

function translateMessage(message: Record<string, unknown>, state: ProviderCStreamState): Omit<LineResult, 'accepted'> {
  switch (message.type) {
    case 'system':
      if (message.subtype === 'init') {
        state.sessionId = stringOr(message.session_id, state.sessionId);
        state.model = stringOr(message.model, state.model);
      }
      return { events: [] }; // init, status, api_retry, thinking_tokens, ui_invalidate, hooks
    case 'stream_event':
      return { events: isJsonObject(message.event) ? translateStreamEvent(message.event, state) : [] };
    case 'assistant':
      return { events: translateAssistant(message, state) };
    case 'rate_limit_event':
      noteRateLimit(message.rate_limit_info, state);
      return { events: [] };
    case 'result':
      return translateResult(message, state);
    default:
      return { events: [] };
  }
}

const isModelOutput = (event: ChatEvent) =>
  event.type === 'text-delta' || event.type === 'reasoning-delta' || event.type === 'tool-call';

function translateStreamEvent(event: Record<string, unknown>, state: ProviderCStreamState): ChatEvent[] {
  switch (event.type) {
    case 'message_start': {
      state.apiAnswered = true;
      const message = isJsonObject(event.message) ? event.message : {};
      if (typeof message.id === 'string') state.streamedMessageIds.add(message.id);
      state.model = stringOr(message.model, state.model);
      if (isJsonObject(message.usage)) state.streamedUsage = { ...readUsage(message.usage) };
      return [];
    }
    case 'content_block_start': {
      const block = isJsonObject(event.content_block) ? event.content_block : {};
      if (typeof event.index === 'number' && typeof block.type === 'string')
        state.blockKinds.set(event.index, block.type);
      // Anthropic starts blocks empty; any initial text still belongs to the block.
      if (block.type === 'text' && typeof block.text === 'string') return feed('content', block.text, state);
      if (block.type === 'thinking' && typeof block.thinking === 'string')
        return feed('reasoning', block.thinking, state);
      return [];
    }
    case 'content_block_delta': {
      const delta = isJsonObject(event.delta) ? event.delta : {};
      const kind =
        typeof delta.type === 'string' ? delta.type : `${state.blockKinds.get(Number(event.index)) ?? ''}_delta`;
      if (kind === 'text_delta' && typeof delta.text === 'string') {
        state.deltasSinceAssistant = true;
        return feed('content', delta.text, state);
      }
      if (kind === 'thinking_delta' && typeof delta.thinking === 'string') {
        state.deltasSinceAssistant = true;
        return feed('reasoning', delta.thinking, state);
      }
      return []; // signature_delta, input_json_delta
    }
    case 'message_delta': {
      const delta = isJsonObject(event.delta) ? event.delta : {};
      if (typeof delta.stop_reason === 'string') state.stopReason = delta.stop_reason;
      if (isJsonObject(event.usage)) state.streamedUsage = { ...state.streamedUsage, ...readUsage(event.usage) };
      return [];
    }
    default:
      return []; // content_block_stop, message_stop (not terminal), ping
  }
}

/**
 * A whole assistant message. With partial messages its text was already streamed, so it is
 * ignored; older CLIs without partial messages only send this line. A message the CLI made up
 * itself to report a failure (`error`, `is_api_error_message`, model `<synthetic>`) is never
 * model output: its fields are kept for classification and its text goes nowhere else.
 */
function translateAssistant(line: Record<string, unknown>, state: ProviderCStreamState): ChatEvent[] {
  const message = isJsonObject(line.message) ? line.message : {};
  if (typeof line.error === 'string' || line.is_api_error_message === true || message.model === '<synthetic>') {
    state.apiFailure = { ...readErrorFields(line), text: messageText(message) };
    return [];
  }
  state.apiAnswered = true;
  const id = typeof message.id === 'string' ? message.id : undefined;
  const streamed =
    id !== undefined
      ? state.streamedMessageIds.has(id) || (state.streamedMessageIds.size === 0 && state.deltasSinceAssistant)
      : state.deltasSinceAssistant;
  state.deltasSinceAssistant = false;
  if (streamed || !Array.isArray(message.content)) return [];
  const events: ChatEvent[] = [];
  for (const block of message.content as unknown[]) {
    if (!isJsonObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') events.push(...feed('content', block.text, state));
    if (block.type === 'thinking' && typeof block.thinking === 'string')
      events.push(...feed('reasoning', block.thinking, state));
  }
  return events;
}

function translateResult(line: Record<string, unknown>, state: ProviderCStreamState): Omit<LineResult, 'accepted'> {
  const subtype = typeof line.subtype === 'string' ? line.subtype : '';
  if (line.is_error === true || subtype.startsWith('error')) {
    return { events: [], outcome: { type: 'error', report: errorReport(line, state) } };
  }
  if (typeof line.stop_reason === 'string' && state.stopReason === undefined) state.stopReason = line.stop_reason;
  const usage = isJsonObject(line.usage) ? readUsage(line.usage) : state.streamedUsage;
  return { events: finishEvents(state, usage), outcome: { type: 'success' } };
}

/** §6: exit status 0 without a `result` line: flush, usage from what was seen, finish. */
export function endWithoutResult(state: ProviderCStreamState): ChatEvent[] {
  return finishEvents(state, state.streamedUsage);
}

/** Before a terminal error event: release held visible text; open fences are dropped (§7.3). */
export function flushVisibleText(state: ProviderCStreamState): ChatEvent[] {
  const events: ChatEvent[] = [];
  for (const channel of ['reasoning', 'content'] as const) {
    for (const item of state.parsers[channel].end()) {
      if (item.type === 'text') events.push(textEvent(channel, item.text));
    }
  }
  return events;
}

function finishEvents(state: ProviderCStreamState, usage: UsageFields): ChatEvent[] {
  const events: ChatEvent[] = [];
  for (const channel of ['reasoning', 'content'] as const)
    events.push(...handleOutputs(channel, state.parsers[channel].end(), state));
  events.push({ type: 'usage', usage: toUsageEvent(usage) });
  if (state.validCalls === 0 && state.droppedBlocks > 0) {
    events.push({
      type: 'error',
      error: new GatewayError('invalid_tool_call', {
        detail: `${state.droppedBlocks} tool fence(s) dropped, none valid`,
      }),
    });
  } else {
    events.push({ type: 'finish', reason: mapStopReason(state.stopReason) });
  }
  return events;
}

function feed(channel: Channel, text: string, state: ProviderCStreamState): ChatEvent[] {
  return text === '' ? [] : handleOutputs(channel, state.parsers[channel].push(text), state);
}

function handleOutputs(channel: Channel, outputs: FenceOutput[], state: ProviderCStreamState): ChatEvent[] {
  const events: ChatEvent[] = [];
  const log = state.options.diagnostic ?? (() => undefined);
  for (const item of outputs) {
    if (item.type === 'text') {
      events.push(textEvent(channel, item.text));
      continue;
    }
    if (item.type === 'dropped') {
      state.droppedBlocks++;
      if (item.reason === 'empty') log('tool_fence_empty', { channel });
      else if (item.reason === 'too_large') log('tool_fence_too_large', { channel, bytes: item.bytes });
      else if (item.reason === 'unclosed') log('tool_fence_unclosed', { channel, accepted: false, bytes: item.bytes });
      else log('tool_fence_invalid', { channel, reason: 'invalid_json', bytes: item.bytes });
      continue;
    }
    if (item.unclosed) log('tool_fence_unclosed', { channel, accepted: true });
    const converted = blockToToolCall(item.value, state.options.toolKinds, state.options.newId ?? newToolCallId);
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
    events.push({ type: 'tool-call', call: converted.call });
  }
  return events;
}

function textEvent(channel: Channel, text: string): ChatEvent {
  return channel === 'content' ? { type: 'text-delta', text } : { type: 'reasoning-delta', text };
}

/** §8.1: prompt = input + cache creation + cache read; cached = cache read; completion = output. */
export function toUsageEvent(usage: UsageFields): UsageEvent {
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

/** §8.2: end_turn, stop_sequence, absent → stop; max_tokens → length; refusal → content_filter. */
export function mapStopReason(stopReason: string | undefined): FinishReason {
  if (stopReason === 'max_tokens') return 'length';
  if (stopReason === 'refusal') return 'content_filter';
  return 'stop';
}

function readUsage(raw: Record<string, unknown>): UsageFields {
  const usage: UsageFields = {};
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

/** The error result's structured fields over the synthetic assistant message's; text as the fallback. */
function errorReport(line: Record<string, unknown>, state: ProviderCStreamState): CliErrorReport {
  const fromResult = readErrorFields(line);
  const earlier = state.apiFailure ?? {};
  const defined = <T>(...values: (T | undefined)[]) => values.find((value) => value !== undefined);
  return {
    text: resultErrorText(line) || earlier.text || '',
    error: earlier.error,
    apiStatus: defined(fromResult.apiStatus, earlier.apiStatus),
    apiErrorType: defined(fromResult.apiErrorType, earlier.apiErrorType),
    apiError: defined(fromResult.apiError, earlier.apiError),
    resetsAt: defined(earlier.resetsAt, state.limitResetsAt),
    subtype: typeof line.subtype === 'string' ? line.subtype : undefined,
    terminalReason: typeof line.terminal_reason === 'string' ? line.terminal_reason : undefined,
  };
}

function readErrorFields(line: Record<string, unknown>): Omit<CliErrorReport, 'text'> {
  const params = isJsonObject(line.api_error_params) ? line.api_error_params : {};
  const limit = isJsonObject(params.rate_limit_info) ? params.rate_limit_info : {};
  return {
    error: typeof line.error === 'string' ? line.error : undefined,
    apiStatus: typeof line.api_error_status === 'number' ? line.api_error_status : undefined,
    apiErrorType: typeof line.api_error_type === 'string' ? line.api_error_type : undefined,
    apiError: typeof line.api_error === 'string' ? line.api_error : undefined,
    resetsAt: typeof limit.resetsAt === 'number' && limit.resetsAt > 0 ? limit.resetsAt : undefined,
  };
}

/** A rejected limit carries its reset time (Unix seconds): the best Retry-After there is. */
function noteRateLimit(info: unknown, state: ProviderCStreamState): void {
  if (!isJsonObject(info) || info.status !== 'rejected') return;
  if (typeof info.resetsAt === 'number' && info.resetsAt > 0) state.limitResetsAt = info.resetsAt;
}

function messageText(message: Record<string, unknown>): string {
  if (!Array.isArray(message.content)) return '';
  return message.content
    .map((block) => (isJsonObject(block) && typeof block.text === 'string' ? block.text : ''))
    .join('\n');
}

/** The text classified for an error result (§8.3); used only for classification, never shown. */
function resultErrorText(line: Record<string, unknown>): string {
  if (typeof line.result === 'string' && line.result !== '') return line.result;
  if (Array.isArray(line.errors)) return line.errors.filter((entry) => typeof entry === 'string').join('\n');
  return '';
}

function stringOr(value: unknown, fallback: string | undefined): string | undefined {
  return typeof value === 'string' ? value : fallback;
}
