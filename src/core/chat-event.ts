import { GatewayError } from './gateway.error';

/** One complete tool call from the upstream (docs/design/behaviours.md §1.1). */
export interface ToolCallEvent {
  /** Upstream call id; the chat layer synthesizes one when missing. */
  readonly id?: string;
  readonly name: string;
  readonly kind: 'function' | 'custom';
  /** Function kind: the full argument string (validated as JSON by the chat layer). */
  readonly arguments?: string;
  /** Custom kind: the raw input text. */
  readonly input?: string;
  /** A family's opaque signature of the call (a thought signature), echoed to the client as extra_content. */
  readonly thoughtSignature?: string;
}

/**
 * A function call's arguments as the client receives them: the upstream's text, or `{}` when it
 * sent none or only white space (a call of a tool without parameters). Empty for a custom call.
 */
export function argumentsOf(call: ToolCallEvent): string {
  if (call.kind !== 'function') return '';
  const text = call.arguments ?? '';
  return text.trim() === '' ? '{}' : text;
}

/** An empty JSON object as text, white space allowed: `{}`, `{ }`. */
const EMPTY_OBJECT_TEXT = /^\{\s*\}$/;

/**
 * A call with nothing in it: no name, and no arguments or input (absent, blank, or `{}`), such as
 * Gemini's `functionCall: {}` part. The contract drops empty tool deltas (chat completions rule 7),
 * so the chat layer drops such a call instead of failing the turn on it; a call with a blank name
 * but real arguments is still invalid (docs/design/behaviours.md §1.3).
 */
export function isEmptyToolCall(call: ToolCallEvent): boolean {
  if ((call.name?.trim() ?? '') !== '') return false;
  const payload = (call.kind === 'custom' ? call.input : call.arguments)?.trim() ?? '';
  return payload === '' || EMPTY_OBJECT_TEXT.test(payload);
}

export interface UsageEvent {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  readonly cachedPromptTokens?: number;
  readonly reasoningTokens?: number;
}

export type FinishReason = 'stop' | 'length' | 'content_filter';

/**
 * The upstream's safety system stopped the answer (`content_filter`): the model's answer as it is,
 * never one a held `tool_choice` or `response_format` asks again (docs/chat.md).
 */
export const isRefusalFinish = (event: ChatEvent): boolean =>
  event.type === 'finish' && event.reason === 'content_filter';

/** The typed event union every adapter yields; SSE text exists only in the chat layer. */
export type ChatEvent =
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'reasoning-delta'; readonly text: string }
  | { readonly type: 'tool-call'; readonly call: ToolCallEvent }
  | { readonly type: 'usage'; readonly usage: UsageEvent }
  | { readonly type: 'finish'; readonly reason: FinishReason }
  /** Terminal; `error.code` is an internal upstream code; never carries upstream text. */
  | { readonly type: 'error'; readonly error: GatewayError };

/**
 * A turn's events that may also hand over an event already at hand without a promise: a reader
 * tries `poll()` first and awaits `next()` only when it returns undefined, so a burst of upstream
 * frames reaches the client in one synchronous run instead of a promise per event per layer.
 */
export interface PolledEvents extends AsyncIterable<ChatEvent>, AsyncIterator<ChatEvent> {
  /** The next event when it is at hand now; undefined when `next()` must be awaited for it. */
  poll?(): ChatEvent | undefined;
}

/** The failure of a turn whose events ran out before its `finish`: the upstream's, as it broke off. */
export function unfinishedTurn(): GatewayError {
  return new GatewayError('upstream', { detail: 'turn ended without a finish event' });
}
