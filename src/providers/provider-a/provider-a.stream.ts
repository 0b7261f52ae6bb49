import type { FrameStep } from '../shared/turn-runner';
import type { ChatEvent, FinishReason, ToolCallEvent, UsageEvent } from '../../core/chat-event';
import { UpstreamErrorEvent } from '../shared/upstream-failure';
import type { RateLimitSnapshot } from './provider-a.rate-limits';
import { rateLimitsFromEvent } from './provider-a.rate-limits';
import { isJsonObject, type JsonObject, str, int } from '../../common/json';
import type {
  CallItem,
  CallPayloadEvent,
  MessageItem,
  OutputItem,
  ResponsesEvent,
  ResponsesUsage,
  ResponseSnapshot,
} from './provider-a.frames';

/** One client tool call being assembled from its fragments (docs/upstream/provider-a.md §9.2). */
interface CallRecord {
  readonly key: string;
  readonly kind: 'function' | 'custom';
  itemId?: string;
  callId?: string;
  name: string;
  payload: string;
  done: boolean;
}

/**
 * Per-stream state: created for each upstream attempt and never shared, so concurrent turns
 * cannot see each other's calls (docs/design/code-shape.md §2).
 */
export interface StreamState {
  responseId?: string;
  model?: string;
  /** Last `summary_index` seen, to separate reasoning summaries with a blank line. */
  summaryIndex?: number;
  /** Message item ids that streamed text deltas (their `output_item.done` text is not repeated). */
  readonly textItems: Set<string>;
  /** Open and finished-but-held calls in first-seen order. */
  readonly calls: CallRecord[];
  readonly recordsByKey: Map<string, CallRecord>;
  /** Calls already given to the client; made with the first (most turns call nothing). */
  emittedCallIds?: Set<string>;
}

export function createStreamState(): StreamState {
  return { textItems: new Set(), calls: [], recordsByKey: new Map() };
}

/** What one upstream event means: the turn runner's step, plus the rate limits it reported. */
export interface StreamStep extends FrameStep {
  readonly events: ChatEvent[];
  /** A non-error event: the turn is accepted (docs/upstream/provider-a.md §4.4). */
  readonly accepted: boolean;
  /** The turn is over (completed, incomplete, failed or error). */
  readonly terminal: boolean;
  /** The event was `response.failed` / `error`: handed over as it came, for the family's `classify`. */
  readonly unclassified?: UpstreamErrorEvent;
  readonly rateLimits?: RateLimitSnapshot;
}

const step = (events: ChatEvent[], extra: Partial<StreamStep> = {}): StreamStep => ({
  events,
  accepted: true,
  terminal: false,
  ...extra,
});

/**
 * Pure translation of one upstream JSON event into typed events (docs/upstream/provider-a.md §9.1). Unknown
 * event types are ignored. The only effect is on `state`.
 */
export function translateEvent(state: StreamState, frame: JsonObject): StreamStep {
  const event = readEvent(frame);
  if (!event) return step([]);
  switch (event.type) {
    case 'response.created':
    case 'response.in_progress':
      rememberResponse(state, event.response);
      return step([]);
    case 'response.output_text.delta':
    case 'response.refusal.delta': {
      if (event.item_id !== undefined) state.textItems.add(event.item_id);
      const delta = event.delta ?? '';
      return step(delta === '' ? [] : [{ type: 'text-delta', text: delta }]);
    }
    case 'response.reasoning_summary_text.delta':
      return step(reasoningSummary(state, event.delta ?? '', event.summary_index));
    case 'response.reasoning_text.delta': {
      const delta = event.delta ?? '';
      return step(delta === '' ? [] : [{ type: 'reasoning-delta', text: delta }]);
    }
    case 'response.output_item.added':
      if (event.item?.type !== 'message') openCall(state, event.item, event.output_index);
      return step([]);
    case 'response.function_call_arguments.delta':
    case 'response.custom_tool_call_input.delta':
      appendToCall(state, event, event.delta, false);
      return step([]);
    case 'response.function_call_arguments.done':
      appendToCall(state, event, event.arguments, true);
      return step([]);
    case 'response.custom_tool_call_input.done':
      appendToCall(state, event, event.input, true);
      return step([]);
    case 'response.output_item.done':
      return step(itemDone(state, event.item, event.output_index));
    case 'response.completed':
      rememberResponse(state, event.response);
      return step([...releaseCalls(state, true), ...usageAndFinish(event.response, 'stop')], { terminal: true });
    case 'response.incomplete': {
      rememberResponse(state, event.response);
      const finish: FinishReason =
        event.response?.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
      return step([...releaseCalls(state, 'discard'), ...usageAndFinish(event.response, finish)], { terminal: true });
    }
    case 'response.failed':
    case 'error': {
      // A failed response may report what it used: billed all the same, so counted (never shown).
      const billed =
        event.type === 'response.failed' && isJsonObject(frame.response) ? readUsage(frame.response.usage) : undefined;
      return step([], {
        accepted: false,
        terminal: true,
        unclassified: new UpstreamErrorEvent(frame),
        ...(billed ? { billed } : {}),
      });
    }
    case 'codex.rate_limits':
      return step([], { rateLimits: rateLimitsFromEvent(frame) });
  }
}

/**
 * The boundary of the wire types (`provider-a.frames.ts`): the event with the fields the
 * translation reads, each kept only when it has its declared JSON type (otherwise it reads as
 * absent), or `undefined` for a `type` the translation ignores.
 */
function readEvent(frame: JsonObject): ResponsesEvent | undefined {
  const type = frame.type;
  switch (type) {
    case 'response.created':
    case 'response.in_progress':
    case 'response.completed':
    case 'response.incomplete':
      return { type, response: readResponse(frame.response) };
    case 'response.output_text.delta':
    case 'response.refusal.delta':
    case 'response.reasoning_summary_text.delta':
    case 'response.reasoning_text.delta':
      return { type, item_id: str(frame.item_id), delta: str(frame.delta), summary_index: int(frame.summary_index) };
    case 'response.output_item.added':
    case 'response.output_item.done':
      return { type, output_index: int(frame.output_index), item: readItem(frame.item) };
    case 'response.function_call_arguments.delta':
    case 'response.function_call_arguments.done':
    case 'response.custom_tool_call_input.delta':
    case 'response.custom_tool_call_input.done':
      return {
        type,
        item_id: str(frame.item_id),
        output_index: int(frame.output_index),
        delta: str(frame.delta),
        arguments: str(frame.arguments),
        input: str(frame.input),
      };
    case 'response.failed':
    case 'error':
    case 'codex.rate_limits':
      return { type };
    default:
      return undefined;
  }
}

function readResponse(raw: unknown): ResponseSnapshot | undefined {
  if (!isJsonObject(raw)) return undefined;
  const details = isJsonObject(raw.incomplete_details) ? { reason: str(raw.incomplete_details.reason) } : undefined;
  return { id: str(raw.id), model: str(raw.model), usage: readResponsesUsage(raw.usage), incomplete_details: details };
}

function readItem(raw: unknown): OutputItem | undefined {
  if (!isJsonObject(raw)) return undefined;
  const { type } = raw;
  if (type === 'message') {
    const parts = Array.isArray(raw.content) ? (raw.content as unknown[]) : [];
    const content = parts.map((part) =>
      isJsonObject(part) ? { text: str(part.text), refusal: str(part.refusal) } : {},
    );
    return { type, id: str(raw.id), content };
  }
  if (type !== 'function_call' && type !== 'custom_tool_call') return undefined;
  return {
    type,
    id: str(raw.id),
    call_id: str(raw.call_id),
    name: str(raw.name),
    arguments: str(raw.arguments),
    input: str(raw.input),
  };
}

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

function readResponsesUsage(raw: unknown): ResponsesUsage | undefined {
  if (!isJsonObject(raw)) return undefined;
  const { input_tokens_details: inputDetails, output_tokens_details: outputDetails } = raw;
  return {
    input_tokens: count(raw.input_tokens),
    output_tokens: count(raw.output_tokens),
    total_tokens: count(raw.total_tokens),
    input_tokens_details: isJsonObject(inputDetails) ? { cached_tokens: count(inputDetails.cached_tokens) } : undefined,
    output_tokens_details: isJsonObject(outputDetails)
      ? { reasoning_tokens: count(outputDetails.reasoning_tokens) }
      : undefined,
  };
}

function rememberResponse(state: StreamState, response: ResponseSnapshot | undefined): void {
  if (!response) return;
  state.responseId = response.id ?? state.responseId;
  state.model = response.model ?? state.model;
}

function reasoningSummary(state: StreamState, delta: string, summaryIndex: number | undefined): ChatEvent[] {
  let text = delta;
  if (summaryIndex !== undefined) {
    // A new summary part starts a new paragraph (docs/upstream/provider-a.md §9.1).
    if (state.summaryIndex !== undefined && summaryIndex !== state.summaryIndex) text = `\n\n${text}`;
    state.summaryIndex = summaryIndex;
  }
  return text === '' ? [] : [{ type: 'reasoning-delta', text }];
}

const callKind = (item: CallItem): CallRecord['kind'] => (item.type === 'function_call' ? 'function' : 'custom');

const recordKey = (itemId: string | undefined, outputIndex: number | undefined): string | undefined =>
  itemId !== undefined ? `id:${itemId}` : outputIndex !== undefined ? `index:${outputIndex}` : undefined;

function findRecord(
  state: StreamState,
  itemId: string | undefined,
  outputIndex: number | undefined,
): CallRecord | undefined {
  const byId = itemId !== undefined ? state.recordsByKey.get(`id:${itemId}`) : undefined;
  return byId ?? (outputIndex !== undefined ? state.recordsByKey.get(`index:${outputIndex}`) : undefined);
}

function openCall(
  state: StreamState,
  item: CallItem | undefined,
  outputIndex: number | undefined,
): CallRecord | undefined {
  if (!item) return undefined;
  const kind = callKind(item);
  const itemId = item.id;
  const key = recordKey(itemId, outputIndex);
  if (key === undefined) return undefined;
  const existing = findRecord(state, itemId, outputIndex);
  if (existing) return existing;
  const record: CallRecord = {
    key,
    kind,
    itemId,
    callId: item.call_id,
    name: item.name ?? '',
    payload: (kind === 'function' ? item.arguments : item.input) ?? '',
    done: false,
  };
  state.calls.push(record);
  state.recordsByKey.set(key, record);
  // Events may refer to the call by item id or by output index: index both.
  if (itemId !== undefined && outputIndex !== undefined) state.recordsByKey.set(`index:${outputIndex}`, record);
  return record;
}

function appendToCall(state: StreamState, event: CallPayloadEvent, text: string | undefined, replace: boolean): void {
  const record = findRecord(state, event.item_id, event.output_index);
  if (!record || record.done || text === undefined) return;
  record.payload = replace ? text : record.payload + text;
}

function itemDone(state: StreamState, item: OutputItem | undefined, outputIndex: number | undefined): ChatEvent[] {
  if (!item) return [];
  if (item.type === 'message') return messageText(state, item);
  const kind = callKind(item);
  const record = findRecord(state, item.id, outputIndex) ?? openCall(state, item, outputIndex);
  if (!record || record.done) return [];
  // The finished item's values replace what the fragments accumulated (docs/upstream/provider-a.md §9.2).
  record.callId = item.call_id ?? record.callId;
  record.name = item.name ?? record.name;
  record.payload = (kind === 'function' ? item.arguments : item.input) ?? record.payload;
  record.done = true;
  return releaseCalls(state, false);
}

/** Text of a finished message item whose text never arrived as deltas. */
function messageText(state: StreamState, item: MessageItem): ChatEvent[] {
  const itemId = item.id;
  if (itemId !== undefined && state.textItems.has(itemId)) return [];
  const text = item.content.map((part) => part.text ?? part.refusal ?? '').join('');
  if (itemId !== undefined) state.textItems.add(itemId);
  return text === '' ? [] : [{ type: 'text-delta', text }];
}

/**
 * Emits finished calls in first-seen order, stopping at the first call still open, so client
 * indices follow the order calls appeared even when their `done` events arrive out of order.
 * With `flushOpen` (at `response.completed`) open calls are emitted with what accumulated; at
 * `response.incomplete` they are discarded (their arguments may be cut).
 */
function releaseCalls(state: StreamState, flushOpen: boolean | 'discard'): ChatEvent[] {
  const events: ChatEvent[] = [];
  while (state.calls.length > 0) {
    const record = state.calls[0];
    if (!record.done && flushOpen === false) break;
    state.calls.shift();
    if (!record.done && flushOpen !== true) continue;
    const id = record.callId ?? record.itemId;
    const dedupeKey = id ?? record.key;
    state.emittedCallIds ??= new Set();
    if (state.emittedCallIds.has(dedupeKey)) continue;
    state.emittedCallIds.add(dedupeKey);
    const call: ToolCallEvent =
      record.kind === 'function'
        ? { id, name: record.name, kind: 'function', arguments: record.payload }
        : { id, name: record.name, kind: 'custom', input: record.payload };
    events.push({ type: 'tool-call', call });
  }
  return events;
}

function usageAndFinish(response: ResponseSnapshot | undefined, reason: FinishReason): ChatEvent[] {
  const usage = response?.usage ? toUsageEvent(response.usage) : undefined;
  return [...(usage ? [{ type: 'usage' as const, usage }] : []), { type: 'finish', reason }];
}

/** Responses usage → our usage (docs/upstream/provider-a.md §9.3); total is the sum when absent. */
export function readUsage(raw: unknown): UsageEvent | undefined {
  const usage = readResponsesUsage(raw);
  return usage ? toUsageEvent(usage) : undefined;
}

function toUsageEvent(usage: ResponsesUsage): UsageEvent {
  const promptTokens = usage.input_tokens ?? 0;
  const completionTokens = usage.output_tokens ?? 0;
  const cached = usage.input_tokens_details?.cached_tokens;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  return {
    promptTokens,
    completionTokens,
    totalTokens: usage.total_tokens ?? promptTokens + completionTokens,
    ...(cached !== undefined ? { cachedPromptTokens: cached } : {}),
    ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
  };
}
