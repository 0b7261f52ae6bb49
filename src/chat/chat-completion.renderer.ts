import { randomUUID } from 'node:crypto';
import type { SseWriter } from '../common/sse/sse-writer';
import type { ChatEvent, FinishReason, PolledEvents, UsageEvent } from '../core/chat-event';
import type { CustomToolWire } from '../config/app-config';
import type { ToolCallEvent } from '../core/chat-event';
import { argumentsOf, isEmptyToolCall, unfinishedTurn } from '../core/chat-event';
import type { ProviderId } from '../core/provider-id';
import type { EventLogger } from '../core/event-logger';
import { clientLeft, GatewayError } from '../core/gateway.error';
import { streamErrorContent } from '../common/errors/error-writer';
import { isJsonObject } from '../common/json';
import { quoted } from '../core/quoted';
import type { StrictTools } from './strict-tools';

/*
 * One accepted turn in the OpenAI Chat Completions wire format: the chunk objects, the one
 * reading of the event union, and its two renderings — SSE as events arrive (writeChatStream)
 * or one `chat.completion` body (aggregateCompletion), with tool calls validated
 * and rendered once (ToolCallCollector). A second front end (e.g. /v1/responses)
 * would get its own renderer beside this one; the orchestrator does not change.
 */

// ── Tool calls ──────────────────────────────────────────────────────────────────────────

/** A tool call as written to the client, in a stream frame or a chat.completion message. */
export interface RenderedToolCall {
  readonly index: number;
  readonly id: string;
  readonly type: 'function' | 'custom';
  readonly function?: { readonly name: string; readonly arguments: string };
  readonly custom?: { readonly name: string; readonly input: string };
  readonly extra_content?: { readonly google: { readonly thought_signature: string } };
}

export type InvalidReason = 'empty_name' | 'invalid_json_arguments' | 'non_object_arguments' | 'off_schema_arguments';

/**
 * Why this call is invalid (a blank name; function arguments that are not JSON, or JSON but not an
 * object: OpenAI clients parse them as one, and a family whose upstream takes a call's arguments
 * only as an object refuses anything else in the history; blank arguments are `{}`), or undefined
 * when it is valid. A custom call's input is free text. An empty call (`isEmptyToolCall`) reads as
 * `empty_name` here, so it meets no `tool_choice`; the collector drops it before asking.
 */
export function toolCallProblem(call: ToolCallEvent): InvalidReason | undefined {
  if ((call.name?.trim() ?? '') === '') return 'empty_name';
  if (call.kind !== 'function' || (call.arguments ?? '').trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(call.arguments as string);
  } catch {
    return 'invalid_json_arguments';
  }
  return isJsonObject(value) ? undefined : 'non_object_arguments';
}

/** What the client's message says of each reason, after "the tool call at index n". */
const INVALID_REASON_WORDS: Readonly<Record<InvalidReason, string>> = {
  empty_name: 'has no tool name',
  invalid_json_arguments: 'has arguments that are not valid JSON',
  non_object_arguments: 'has arguments that are JSON but not an object',
  off_schema_arguments: "has arguments that its strict tool's parameters schema refuses",
};

/** The first invalid call of a turn: its position among the turn's calls, its name and why. */
interface InvalidCall {
  readonly index: number;
  readonly name: string;
  readonly reason: InvalidReason;
}

export interface ToolCallCollectorOptions {
  /** Where dropped and invalid calls are reported: the request's logger (no closure per request). */
  readonly logger?: Pick<EventLogger, 'info'>;
  /** The family answering the turn, named on the line of a dropped call. */
  readonly provider?: ProviderId;
  /** `parallel_tool_calls: false`: only the first call is passed on, and checked (the parameter table in chat-parameters.ts). */
  readonly firstCallOnly?: boolean;
  /** The request's strict tools the gateway holds calls to (strict-tools.ts): a call they refuse is invalid. */
  readonly strict?: StrictTools;
}

/**
 * Validates and renders complete tool calls once for all families (docs/design/behaviours.md §1.3):
 * ids synthesized when missing, a repeated id ignored, function arguments must be a JSON object
 * (blank → `{}`), one its tool's schema accepts when the gateway holds the tool's `strict` itself,
 * custom calls rendered per PRIMARY_CUSTOM_TOOL_WIRE, indices 0…n−1 in the order of the calls
 * passed on. An empty call (no name, no arguments: `isEmptyToolCall`) is dropped, as
 * the contract drops empty tool deltas, and logged as `tool_call_empty`. One invalid call fails the
 * whole turn (`failure`): a tool_calls finish without it would have the client's agent go on as if
 * the model had asked for the other tools only (contract, chat completions rule 7). Each invalid
 * call is logged as `tool_call_invalid` (index and reason only); the request's own line names the
 * first. The index on both lines is the call's place among the calls the upstream sent.
 */
export class ToolCallCollector {
  private readonly calls: RenderedToolCall[] = [];
  /** Made with the first call: most turns have none. */
  private seenIds?: Set<string>;
  private firstInvalid?: InvalidCall;
  private received = 0;

  constructor(
    private readonly requestId: string,
    private readonly wire: CustomToolWire,
    private readonly options: ToolCallCollectorOptions = {},
  ) {}

  add(call: ToolCallEvent): void {
    if (this.options.firstCallOnly && (this.calls.length > 0 || this.firstInvalid)) return;
    const position = this.received++;
    if (isEmptyToolCall(call)) return this.drop(position);
    const problem = toolCallProblem(call);
    if (problem) return this.reject(position, call, problem);
    // The name as the family mapped it back: the client's own, white space and all.
    const { name } = call;
    if (this.options.strict?.accepts(call) === false) return this.reject(position, call, 'off_schema_arguments');
    const index = this.calls.length;
    const id = call.id && call.id !== '' ? call.id : `call_${this.requestId.replace(/[^A-Za-z0-9_-]/g, '')}_${index}`;
    this.seenIds ??= new Set();
    if (this.seenIds.has(id)) return;
    this.seenIds.add(id);
    const signature = call.thoughtSignature
      ? { extra_content: { google: { thought_signature: call.thoughtSignature } } }
      : {};
    if (call.kind === 'custom' && this.wire === 'custom') {
      this.calls.push({ index, id, type: 'custom', custom: { name, input: call.input ?? '' }, ...signature });
    } else {
      const text = call.kind === 'custom' ? (call.input ?? '') : argumentsOf(call);
      this.calls.push({ index, id, type: 'function', function: { name, arguments: text }, ...signature });
    }
  }

  get valid(): readonly RenderedToolCall[] {
    return this.calls;
  }

  /** Why the first invalid call was invalid; undefined while every call was valid. */
  get invalidReason(): InvalidReason | undefined {
    return this.firstInvalid?.reason;
  }

  /**
   * The turn's failure when any call was invalid: `invalid_tool_call`, whose message names the
   * first invalid call by index and name (never its arguments) and the fix; undefined otherwise.
   */
  get failure(): GatewayError | undefined {
    const invalid = this.firstInvalid;
    if (invalid === undefined) return undefined;
    const named = invalid.name === '' ? '' : ` (${quoted(invalid.name, 64)})`;
    return new GatewayError('invalid_tool_call', {
      publicMessage:
        `the upstream produced an invalid tool call: the tool call at index ${invalid.index}${named} ` +
        `${INVALID_REASON_WORDS[invalid.reason]}, so none of the answer's tool calls was returned; ` +
        'send the request again, as the model may write a valid call on another try',
      detail: `tool call at index ${invalid.index}: ${invalid.reason}`,
    });
  }

  private reject(position: number, call: ToolCallEvent, reason: InvalidReason): void {
    this.firstInvalid ??= { index: position, name: call.name?.trim() ?? '', reason };
    // Info: the turn fails, and its own line is the request's one warning (docs/troubleshooting.md).
    this.options.logger?.info({ event: 'tool_call_invalid', index: position, reason }, 'tool_call_invalid');
  }

  /** An empty call: nothing is passed on and the turn goes on; info, as the contract expects such calls. */
  private drop(position: number): void {
    this.options.logger?.info(
      { event: 'tool_call_empty', provider: this.options.provider, index: position },
      'tool_call_empty',
    );
  }
}

// ── Chunks ──────────────────────────────────────────────────────────────────────────────

export type ClientFinishReason = FinishReason | 'tool_calls';

/** OpenAI usage object, with cached/reasoning details when the upstream reported them. */
export function usageBody(usage: UsageEvent | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = {
    prompt_tokens: usage?.promptTokens ?? 0,
    completion_tokens: usage?.completionTokens ?? 0,
    total_tokens: usage?.totalTokens ?? 0,
  };
  if (usage?.cachedPromptTokens !== undefined) body.prompt_tokens_details = { cached_tokens: usage.cachedPromptTokens };
  if (usage?.reasoningTokens !== undefined)
    body.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return body;
}

/** What follows a text delta's text in its chunk's JSON (`finish_reason` is null for a delta). */
const DELTA_TAIL = '},"finish_reason":null}]}';
const EMPTY_TEXT = '""';

/**
 * Builds `chat.completion.chunk` objects that all share one `id`, `created` and the `model` the
 * client sent (docs/design/behaviours.md §1.2).
 */
export class ChunkFactory {
  readonly id = `chatcmpl-${randomUUID()}`;
  readonly created = Math.floor(Date.now() / 1000);
  /** A text delta's JSON up to its text, per channel, made with the first (most chunks are deltas). */
  private contentHead?: string;
  private reasoningHead?: string;

  constructor(private readonly model: string) {}

  /**
   * A text delta's chunk as JSON text, the same bytes as serializing the chunk object whose delta
   * is `{ content: text }` (or `reasoning_content`): the part before the text is made once per
   * answer, so a delta costs the serialization of its text only, not of a new chunk object.
   */
  deltaJson(channel: 'content' | 'reasoning', text: string): string {
    const head =
      channel === 'content'
        ? (this.contentHead ??= this.headOf({ content: '' }))
        : (this.reasoningHead ??= this.headOf({ reasoning_content: '' }));
    return `${head}${JSON.stringify(text)}${DELTA_TAIL}`;
  }

  /** The JSON of a chunk with this one-field delta, up to the field's value (the empty string cut off). */
  private headOf(delta: Record<string, string>): string {
    const whole = JSON.stringify(this.chunk(delta));
    return whole.slice(0, whole.length - EMPTY_TEXT.length - DELTA_TAIL.length);
  }

  /** A chunk of this answer (its id, creation time and model) with these choices. */
  private envelope(choices: readonly unknown[]): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices };
  }

  private chunk(
    delta: Record<string, unknown>,
    finishReason: ClientFinishReason | null = null,
  ): Record<string, unknown> {
    return this.envelope([{ index: 0, delta, finish_reason: finishReason }]);
  }

  role() {
    return this.chunk({ role: 'assistant' });
  }

  toolCall(call: RenderedToolCall) {
    return this.chunk({ tool_calls: [call] });
  }

  finish(reason: ClientFinishReason) {
    return this.chunk({}, reason);
  }

  /** The contract's in-stream error chunk (content from the error writer), finish `stop`. */
  error(failure: GatewayError) {
    return this.chunk({ content: streamErrorContent(failure) }, 'stop');
  }

  usage(usage: UsageEvent | undefined) {
    return { ...this.envelope([]), usage: usageBody(usage) };
  }
}

// ── Reading a turn ──────────────────────────────────────────────────────────────────────

/** A turn's events as read here: `poll` first where the source has it (`PolledEvents`), else `next`. */
type EventReader = AsyncIterator<ChatEvent> & Pick<PolledEvents, 'poll'>;

/** A piece of text to show, or the turn's end (`reader.ended` then says how). */
type TurnPiece = { readonly channel: 'content' | 'reasoning'; readonly text: string } | undefined;

/**
 * The one place the event union is interpreted, for both renderings: text and reasoning are
 * returned to show as they arrive, tool calls go to the collector, usage and the finish reason
 * are kept, and an `error` event or a stream that ends without `finish` becomes `failure`.
 * Synchronous, so the renderer's own loop is the only function waiting on the turn.
 */
class TurnReader {
  finish?: FinishReason;
  /** Terminal failure: an `error` event, or a turn that ended without `finish`. */
  failure?: GatewayError;
  usage?: UsageEvent;
  /** `finish` or `error` arrived: nothing after it is read. */
  ended = false;

  constructor(private readonly collector: ToolCallCollector) {}

  take(event: ChatEvent): TurnPiece {
    switch (event.type) {
      case 'text-delta':
        return event.text === '' ? undefined : { channel: 'content', text: event.text };
      case 'reasoning-delta':
        return event.text === '' ? undefined : { channel: 'reasoning', text: event.text };
      case 'tool-call':
        this.collector.add(event.call);
        return undefined;
      case 'usage':
        this.usage = event.usage;
        return undefined;
      case 'finish':
        this.finish = event.reason;
        this.ended = true;
        return undefined;
      case 'error':
        this.failure = event.error;
        this.ended = true;
        return undefined;
    }
    return undefined;
  }

  /** An awaited read's event; undefined when the events ran out (the turn is then unfinished). */
  eventOf(step: IteratorResult<ChatEvent>): ChatEvent | undefined {
    if (!step.done) return step.value;
    this.unfinished();
    return undefined;
  }

  /** The events ran out before `finish`. */
  private unfinished(): void {
    this.failure = unfinishedTurn();
    this.ended = true;
  }
}

// ── Streaming: SSE ──────────────────────────────────────────────────────────────────────

export interface StreamOutcome {
  /** Finish reason written to the client; undefined when the stream ended in an error chunk. */
  readonly finishReason?: ClientFinishReason;
  /** The failure written as an error chunk (its code, cause and fix go to the request's line). */
  readonly failure?: GatewayError;
  /** The client left; nothing more was written. */
  readonly clientGone: boolean;
  readonly toolCalls: number;
  /** The id of the first tool call the client got (the chat's identity from its next turn on). */
  readonly firstToolCallId?: string;
  readonly usage?: UsageEvent;
}

/**
 * Writes one accepted turn as the contract's SSE sequence (docs/design/behaviours.md §1.2): role
 * chunk; content and reasoning chunks as they arrive; after the adapter finished, one complete
 * frame per tool call; the finish chunk; the optional usage chunk; `[DONE]`. The headers go out
 * with the role chunk at the answer's first text or reasoning (or its end), or earlier with a
 * keep-alive comment a long silence needs. A failure before then is thrown, for the front end to
 * answer with its status; after, it becomes the `[error: …]` chunk and `[DONE]`, with no call
 * frame, as does an invalid tool call at any point. Events are pulled one at a time and each
 * write waits for the socket to drain, so backpressure reaches the upstream reader.
 */
export async function writeChatStream(
  writer: SseWriter,
  events: AsyncIterable<ChatEvent>,
  chunks: ChunkFactory,
  collector: ToolCallCollector,
  options: { includeUsage: boolean; signal: AbortSignal },
): Promise<StreamOutcome> {
  // Nothing is committed before the answer shows something: a failure until then is the JSON error
  // with its real status. A silence that needs a keep-alive comment commits the headers with it.
  writer.hold();
  let started = false;
  const turn = new TurnReader(collector);
  const iterator: EventReader = events[Symbol.asyncIterator]();
  try {
    while (!turn.ended) {
      // An event already at hand is taken without a promise; only a wait is awaited.
      const event = iterator.poll?.() ?? turn.eventOf(await iterator.next());
      if (event === undefined) break;
      const piece = turn.take(event);
      if (piece === undefined) continue;
      if (!started) {
        started = true;
        // A write is awaited only when it returned a promise: `await` of a plain value still makes one.
        const opened = writer.open(chunks.role());
        if (opened !== true && !(await opened)) return gone(collector, turn.usage);
      }
      const written = writer.sendJsonText(chunks.deltaJson(piece.channel, piece.text));
      // Awaited only when the write had to wait for the socket (backpressure).
      if (written !== true && !(await written)) return gone(collector, turn.usage);
    }
  } catch (error) {
    const { signal } = options;
    if (clientLeft(signal)) return gone(collector, turn.usage);
    // The gateway ended the turn (the drain deadline): its reason is the error the client is told.
    const failure = signal.aborted ? signal.reason : error;
    turn.failure = failure instanceof GatewayError ? failure : new GatewayError('upstream', { cause: failure });
  }
  const usage = turn.usage;
  if (clientLeft(options.signal) || writer.isClosed) return gone(collector, usage);
  const failure = turn.failure ?? collector.failure;
  if (!started) {
    // Nothing of the answer went out: the front end answers a failure with its status. An invalid
    // tool call is the answer itself, written as a stream writes it (the invalid-tool-call chunk).
    if (failure && failure.code !== 'invalid_tool_call' && !writer.committed) {
      writer.stopKeepAlive();
      throw failure;
    }
    const opened = writer.open(chunks.role());
    if (opened !== true && !(await opened)) return gone(collector, usage);
  }

  if (failure) {
    const sent = writer.sendJson(chunks.error(failure));
    if (typeof sent !== 'boolean') await sent;
    const done = writer.sendDone();
    if (typeof done !== 'boolean') await done;
    writer.end();
    return { failure, clientGone: false, toolCalls: 0, usage };
  }
  for (const call of collector.valid) {
    const sent = writer.sendJson(chunks.toolCall(call));
    if (sent !== true && !(await sent)) return gone(collector, usage);
  }
  const finishReason: ClientFinishReason = collector.valid.length > 0 ? 'tool_calls' : turn.finish!;
  const finished = writer.sendJson(chunks.finish(finishReason));
  if (finished !== true && !(await finished)) return gone(collector, usage);
  if (options.includeUsage) {
    const counted = writer.sendJson(chunks.usage(usage));
    if (counted !== true && !(await counted)) return gone(collector, usage);
  }
  const done = writer.sendDone();
  if (typeof done !== 'boolean') await done;
  writer.end();
  return {
    finishReason,
    clientGone: false,
    toolCalls: collector.valid.length,
    firstToolCallId: collector.valid[0]?.id,
    usage,
  };
}

/** The outcome of a stream whose client left: nothing more was written. */
function gone(collector: ToolCallCollector, usage?: UsageEvent): StreamOutcome {
  return { clientGone: true, toolCalls: collector.valid.length, usage };
}

// ── Non-streaming: one chat.completion ──────────────────────────────────────────────────

export interface CompletionOutcome {
  readonly body: Record<string, unknown>;
  readonly finishReason: ClientFinishReason;
  readonly toolCalls: number;
  readonly firstToolCallId?: string;
  readonly usage?: UsageEvent;
}

/**
 * Gathers a whole turn into one `chat.completion` (docs/design/decisions.md §4, docs/design/behaviours.md §1.4):
 * all text as `content` (null when empty and there are tool calls), `reasoning_content` when
 * any, each tool call once, the finish reason and usage (zeros when none was reported).
 * A terminal error event, or a turn with an invalid tool call, is thrown as a GatewayError:
 * nothing was written yet, so the client gets a JSON error with the real status.
 */
export async function aggregateCompletion(
  events: AsyncIterable<ChatEvent>,
  ids: ChunkFactory,
  model: string,
  collector: ToolCallCollector,
): Promise<CompletionOutcome> {
  let text = '';
  let reasoning = '';
  const turn = new TurnReader(collector);
  const iterator: EventReader = events[Symbol.asyncIterator]();
  while (!turn.ended) {
    const event = iterator.poll?.() ?? turn.eventOf(await iterator.next());
    if (event === undefined) break;
    const piece = turn.take(event);
    if (piece?.channel === 'content') text += piece.text;
    else if (piece) reasoning += piece.text;
  }
  const failure = turn.failure ?? collector.failure;
  if (failure) throw failure;
  const usage = turn.usage;
  const toolCalls = collector.valid.map(({ index: _index, ...call }) => call);
  const finishReason: ClientFinishReason = toolCalls.length > 0 ? 'tool_calls' : turn.finish!;
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
  };
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    body: {
      id: ids.id,
      object: 'chat.completion',
      created: ids.created,
      model,
      choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
      usage: usageBody(usage),
    },
    finishReason,
    toolCalls: toolCalls.length,
    firstToolCallId: toolCalls[0]?.id,
    usage,
  };
}
