import type { IncomingHttpHeaders } from 'node:http';
import { sha256Hex } from '../common/hashing';
import type { ChatMessage } from '../core/chat-message';

/** What a queue key may be derived from (gateway-behaviours.md §3). */
export interface QueueKeyInput {
  /** The JSON body, as the client sent it (for `body:<field>`). */
  readonly body: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
  /** From `resolveCaller` (src/common/auth/bearer-auth.guard.ts). */
  readonly caller: string;
  /** The request's conversation id (src/chat/conversation-id.ts): the `chat` mode's key. */
  readonly conversation: { readonly source: string; readonly value: string };
}

/**
 * A queue key. `value` groups requests and may carry session ids, IPs or caller names, so it
 * never reaches a log or a metric: logs carry only `mode` (the resolved mode, e.g.
 * `chat:header:x-conversation-id`, `global`, `caller`) and `hash` (first 16 hex of SHA-256 of
 * the value's UTF-8 bytes).
 */
export interface QueueKey {
  readonly mode: string;
  readonly value: string;
  readonly hash: string;
}

const GLOBAL_VALUE = 'global';

/**
 * How a request field or header becomes id text, the same for conversation ids and queue keys
 * (gateway-behaviours.md §3): a non-blank string (trimmed), a finite number (its JSON text) or a
 * boolean; anything else is absent.
 */
export function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : undefined;
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

/** A header's trimmed, non-blank value; a repeated header counts by its first occurrence. */
export function headerText(headers: IncomingHttpHeaders, name: string): string | undefined {
  const raw = headers[name.toLowerCase()];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function makeKey(mode: string, value: string): QueueKey {
  return { mode, value, hash: sha256Hex(value).slice(0, 16) };
}

/**
 * The key for a configured `PRIMARY_AGENT_QUEUE_KEY_MODE` (§3.3). The mode string was validated
 * at startup; `chat` is the conversation id; `header:` and `body:` fall back to the `global`
 * key when their source is missing.
 */
export function queueKey(mode: string, input: QueueKeyInput): QueueKey {
  if (mode === 'chat') return makeKey(input.conversation.source, input.conversation.value);
  if (mode === 'global') return makeKey('global', GLOBAL_VALUE);
  if (mode === 'caller') return makeKey('caller', `caller:${input.caller}`);
  if (mode.startsWith('header:')) {
    // Header names are case-insensitive; one spelling keeps the key and the log stable.
    const name = mode.slice('header:'.length).trim().toLowerCase();
    const text = headerText(input.headers, name);
    return text === undefined ? makeKey('global', GLOBAL_VALUE) : makeKey(`header:${name}`, `header:${name}:${text}`);
  }
  if (mode.startsWith('body:')) {
    const field = mode.slice('body:'.length).trim();
    const text = Object.prototype.hasOwnProperty.call(input.body, field) ? scalarText(input.body[field]) : undefined;
    return text === undefined ? makeKey('global', GLOBAL_VALUE) : makeKey(`body:${field}`, `body:${field}:${text}`);
  }
  // Unreachable with a validated config; failing loudly beats silently serializing everything.
  throw new Error(`unsupported queue key mode ${JSON.stringify(mode.slice(0, 40))}`);
}

/**
 * A tool turn (§3.2): non-empty `tools`, an assistant message with non-empty `tool_calls`, or a
 * `tool` message. Only tool turns use the agent queue.
 */
export function isToolTurn(request: { readonly tools?: unknown; readonly messages?: unknown }): boolean {
  if (Array.isArray(request.tools) && request.tools.length > 0) return true;
  const messages: readonly (ChatMessage | null)[] = Array.isArray(request.messages) ? request.messages : [];
  return messages.some(
    (message) =>
      message?.role === 'tool' ||
      (message?.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0),
  );
}
