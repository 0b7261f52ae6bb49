import type { GatewayError } from '../../core/gateway.error';
import type { ChatEvent, FinishReason, ToolCallEvent, UsageEvent } from '../../core/chat-event';
import { classifyUpstreamFailure } from './provider-a.errors';
import type { RateLimitSnapshot } from './provider-a.rate-limits';
import { rateLimitsFromEvent } from './provider-a.rate-limits';
import { isJsonObject, type JsonObject } from '../../common/json';

/** One client tool call being assembled from its fragments (provider_a.md §9.2). */
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
 * cannot see each other's calls (style.md §2).
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
  readonly emittedCallIds: Set<string>;
}

export function createStreamState(): StreamState {
  return { textItems: new Set(), calls: [], recordsByKey: new Map(), emittedCallIds: new Set() };
}

/** What one upstream event means. */
export interface StreamStep {
  readonly events: ChatEvent[];
  /** A non-error event: the turn is accepted (§4.4). */
  readonly accepted: boolean;
  /** The turn is over (completed, incomplete, failed or error). */
  readonly terminal: boolean;
  /** Set when the event was `response.failed` / `error` (also present as the `error` event). */
  readonly failure?: GatewayError;
  readonly rateLimits?: RateLimitSnapshot;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const int = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) ? value : undefined;

const step = (events: ChatEvent[], extra: Partial<StreamStep> = {}): StreamStep => ({
  events,
  accepted: true,
  terminal: false,
  ...extra,
});

/** Context needed to classify an error event (for a usage limit's fallback reset). */
export interface TranslateOptions {
  readonly rateLimits?: RateLimitSnapshot;
  readonly now?: number;
}

/**
 * Pure translation of one upstream JSON event into typed events (provider_a.md §9.1). Unknown
 * event types are ignored. The only effect is on `state`.
 */
export function translateEvent(state: StreamState, event: JsonObject, options: TranslateOptions = {}): StreamStep {
  const type = str(event.type) ?? '';
  switch (type) {
    case 'response.created':
    case 'response.in_progress':
      rememberResponse(state, event.response);
      return step([]);
    case 'response.output_text.delta':
    case 'response.refusal.delta': {
      const itemId = str(event.item_id);
      if (itemId !== undefined) state.textItems.add(itemId);
      const delta = str(event.delta) ?? '';
      return step(delta === '' ? [] : [{ type: 'text-delta', text: delta }]);
    }
    case 'response.reasoning_summary_text.delta':
      return step(reasoningSummary(state, str(event.delta) ?? '', int(event.summary_index)));
    case 'response.reasoning_text.delta': {
      const delta = str(event.delta) ?? '';
      return step(delta === '' ? [] : [{ type: 'reasoning-delta', text: delta }]);
    }
    case 'response.output_item.added':
      openCall(state, event.item, int(event.output_index));
      return step([]);
    case 'response.function_call_arguments.delta':
    case 'response.custom_tool_call_input.delta':
      appendToCall(state, event, str(event.delta), false);
      return step([]);
    case 'response.function_call_arguments.done':
      appendToCall(state, event, str(event.arguments), true);
      return step([]);
    case 'response.custom_tool_call_input.done':
      appendToCall(state, event, str(event.input), true);
      return step([]);
    case 'response.output_item.done':
      return step(itemDone(state, event.item, int(event.output_index)));
    case 'response.completed':
      rememberResponse(state, event.response);
      return step([...releaseCalls(state, true), ...usageAndFinish(event.response, 'stop')], { terminal: true });
    case 'response.incomplete': {
      rememberResponse(state, event.response);
      const details =
        isJsonObject(event.response) && isJsonObject(event.response.incomplete_details)
          ? event.response.incomplete_details
          : {};
      const finish: FinishReason = details.reason === 'content_filter' ? 'content_filter' : 'length';
      return step([...releaseCalls(state, 'discard'), ...usageAndFinish(event.response, finish)], { terminal: true });
    }
    case 'response.failed':
    case 'error': {
      const failure = classifyUpstreamFailure({ payload: event, rateLimits: options.rateLimits, now: options.now });
      return step([{ type: 'error', error: failure }], { accepted: false, terminal: true, failure });
    }
    case 'codex.rate_limits':
      return step([], { rateLimits: rateLimitsFromEvent(event) });
    default:
      return step([]);
  }
}

function rememberResponse(state: StreamState, response: unknown): void {
  if (!isJsonObject(response)) return;
  state.responseId = str(response.id) ?? state.responseId;
  state.model = str(response.model) ?? state.model;
}

function reasoningSummary(state: StreamState, delta: string, summaryIndex: number | undefined): ChatEvent[] {
  let text = delta;
  if (summaryIndex !== undefined) {
    // A new summary part starts a new paragraph (§9.1).
    if (state.summaryIndex !== undefined && summaryIndex !== state.summaryIndex) text = `\n\n${text}`;
    state.summaryIndex = summaryIndex;
  }
  return text === '' ? [] : [{ type: 'reasoning-delta', text }];
}

function callKind(item: JsonObject): 'function' | 'custom' | undefined {
  if (item.type === 'function_call') return 'function';
  if (item.type === 'custom_tool_call') return 'custom';
  return undefined;
}

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

function openCall(state: StreamState, rawItem: unknown, outputIndex: number | undefined): CallRecord | undefined {
  if (!isJsonObject(rawItem)) return undefined;
  const kind = callKind(rawItem);
  const itemId = str(rawItem.id);
  const key = recordKey(itemId, outputIndex);
  if (!kind || key === undefined) return undefined;
  const existing = findRecord(state, itemId, outputIndex);
  if (existing) return existing;
  const record: CallRecord = {
    key,
    kind,
    itemId,
    callId: str(rawItem.call_id),
    name: str(rawItem.name) ?? '',
    payload: str(kind === 'function' ? rawItem.arguments : rawItem.input) ?? '',
    done: false,
  };
  state.calls.push(record);
  state.recordsByKey.set(key, record);
  // Events may refer to the call by item id or by output index: index both.
  if (itemId !== undefined && outputIndex !== undefined) state.recordsByKey.set(`index:${outputIndex}`, record);
  return record;
}

function appendToCall(state: StreamState, event: JsonObject, text: string | undefined, replace: boolean): void {
  const record = findRecord(state, str(event.item_id), int(event.output_index));
  if (!record || record.done || text === undefined) return;
  record.payload = replace ? text : record.payload + text;
}

function itemDone(state: StreamState, rawItem: unknown, outputIndex: number | undefined): ChatEvent[] {
  if (!isJsonObject(rawItem)) return [];
  if (rawItem.type === 'message') return messageText(state, rawItem);
  const kind = callKind(rawItem);
  if (!kind) return [];
  const record = findRecord(state, str(rawItem.id), outputIndex) ?? openCall(state, rawItem, outputIndex);
  if (!record || record.done) return [];
  // The finished item's values replace what the fragments accumulated (§9.2).
  record.callId = str(rawItem.call_id) ?? record.callId;
  record.name = str(rawItem.name) ?? record.name;
  record.payload = str(kind === 'function' ? rawItem.arguments : rawItem.input) ?? record.payload;
  record.done = true;
  return releaseCalls(state, false);
}

/** Text of a finished message item whose text never arrived as deltas. */
function messageText(state: StreamState, item: JsonObject): ChatEvent[] {
  const itemId = str(item.id);
  if (itemId !== undefined && state.textItems.has(itemId)) return [];
  const parts = Array.isArray(item.content) ? item.content : [];
  const text = parts.map((part) => (isJsonObject(part) ? (str(part.text) ?? str(part.refusal) ?? '') : '')).join('');
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

function usageAndFinish(response: unknown, reason: FinishReason): ChatEvent[] {
  const usage = isJsonObject(response) ? readUsage(response.usage) : undefined;
  return [...(usage ? [{ type: 'usage' as const, usage }] : []), { type: 'finish', reason }];
}

/** Responses usage → our usage (§9.3); total is the sum when absent. */
export function readUsage(raw: unknown): UsageEvent | undefined {
  if (!isJsonObject(raw)) return undefined;
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  const promptTokens = count(raw.input_tokens) ?? 0;
  const completionTokens = count(raw.output_tokens) ?? 0;
  const cached = isJsonObject(raw.input_tokens_details) ? count(raw.input_tokens_details.cached_tokens) : undefined;
  const reasoning = isJsonObject(raw.output_tokens_details)
    ? count(raw.output_tokens_details.reasoning_tokens)
    : undefined;
  return {
    promptTokens,
    completionTokens,
    totalTokens: count(raw.total_tokens) ?? promptTokens + completionTokens,
    ...(cached !== undefined ? { cachedPromptTokens: cached } : {}),
    ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
  };
}
