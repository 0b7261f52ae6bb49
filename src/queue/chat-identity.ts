import type { IncomingHttpHeaders } from 'node:http';
import canonicalize from 'canonicalize';
import { sha256Hex } from '../common/hashing';
import type { ChatMessage } from '../core/chat-message';
import { messageText } from '../core/chat-message';
import { quoted } from '../core/quoted';

// Which chat a request belongs to, and the key its tool turns queue under. The conversation id is
// the neutral chat identity (the agent queue's `chat` mode and every upstream cache identity); the
// queue key adds the PRIMARY_AGENT_QUEUE_KEY_MODE choices. Both read request fields and headers by
// the same rules (scalarText, headerText). It lives in queue/ because the queue, below the routes,
// takes the key, and chat/ builds both from the HTTP request.

/** What a conversation id is derived from: the request as the client sent it, and its caller. */
export interface ConversationInput {
  /** The JSON body, as sent (fields beyond the parsed ones are read: conversation_id, metadata…). */
  readonly body: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress?: string;
  /** The caller the chat belongs to (`chatScope`); `undefined` where callers are not told apart. */
  readonly scope: string | undefined;
}

/**
 * The identity of one chat, the same on every turn of it and different across chats and across
 * callers. `value` may carry client session ids, an IP or a caller, so it never reaches a log;
 * `source` names the cascade step that produced it (`chat:body`, `chat:header:x-conversation-id`,
 * …) and may be logged.
 */
export interface ConversationId {
  readonly source: string;
  readonly value: string;
  /** The caller `value` is scoped to, as the input had it. */
  readonly scope?: string;
}

/**
 * Version of the derivation below. Its exact strings feed the upstream cache identities
 * (provider_a `prompt_cache_key`, provider_b `session_id`; docs/providers.md "Conversation
 * identity"), so any change to a field list, an order, a prefix or the caller scope cools every
 * upstream cache: make it only as a new version, documented there. `chat-identity.spec.ts` pins
 * the values. v2 scopes every value by its caller.
 */
export const CONVERSATION_ID_VERSION = 2;

const GLOBAL_VALUE = 'global';
/** docs/design/behaviours.md §3.4 steps 1–2, in this order. */
const CHAT_ID_FIELDS = ['conversation_id', 'chat_id', 'thread_id', 'session_id'] as const;
/** docs/design/behaviours.md §3.4 step 3, in this order (Node lower-cases incoming header names). */
const CHAT_ID_HEADERS = [
  'x-conversation-id',
  'x-conversation-thread-id',
  'x-session-id',
  'x-cursor-session-id',
] as const;

function messagesOf(body: Record<string, unknown>): ChatMessage[] {
  return Array.isArray(body.messages)
    ? (body.messages as unknown[]).filter((item): item is ChatMessage => typeof item === 'object' && item !== null)
    : [];
}

/** docs/design/behaviours.md §3.4 step 4: the first non-blank assistant `tool_calls[].id` or `tool` `tool_call_id`, in message order. */
function earliestToolCallId(messages: readonly ChatMessage[]): string | undefined {
  for (const message of messages) {
    if (message.role === 'assistant' && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        const id = typeof call?.id === 'string' ? call.id.trim() : '';
        if (id !== '') return id;
      }
    }
    if (message.role === 'tool' && typeof message.tool_call_id === 'string' && message.tool_call_id.trim() !== '') {
      return message.tool_call_id.trim();
    }
  }
  return undefined;
}

/**
 * A cascade step's identity within its caller's scope: `<caller>` and a line feed before the
 * step's value, so that two callers sending the same chat id, first message or address never
 * share a chat. A caller holds no line feed (a header value cannot, a digest does not), so no
 * scoped value equals another caller's, nor an unscoped one.
 */
function conversation(scope: string | undefined, source: string, value: string): ConversationId {
  return scope === undefined ? { source, value } : { source, value: `${scope}\n${value}`, scope };
}

/**
 * docs/design/behaviours.md §3.4 step 4's identity for a tool-call id (trimmed; none for a blank
 * one), in the scope of the caller that made the call.
 */
export function earliestToolConversation(
  toolCallId: string | undefined,
  scope: string | undefined,
): ConversationId | undefined {
  const id = toolCallId?.trim();
  return id ? conversation(scope, 'chat:earliest_tool', `chat:earliest_tool:${id}`) : undefined;
}

/**
 * docs/design/behaviours.md §3.4 step 5: the first `user` message that has text — its trimmed string, or the RFC 8785
 * canonical JSON of its parts array (so a re-serialized but identical array keys the same).
 */
function firstUserText(messages: readonly ChatMessage[]): string | undefined {
  for (const message of messages) {
    if (message.role !== 'user' || messageText(message).trim() === '') continue;
    return typeof message.content === 'string' ? message.content.trim() : canonicalize(message.content);
  }
  return undefined;
}

/**
 * The conversation cascade of docs/design/behaviours.md §3.4 (first hit wins), derivation v2: the
 * step's value within the caller's scope. It stays the same across the turns of one chat: every
 * source is either a client-supplied chat id or something fixed at the chat's start (the earliest
 * tool-call id, the first user message), and the caller is the same on every turn. Computed once
 * per request; the `chat` queue mode and the adapters both use it.
 */
export function conversationIdOf(input: ConversationInput): ConversationId {
  const { body, headers, scope } = input;
  for (const field of CHAT_ID_FIELDS) {
    const text = scalarText(body[field]);
    if (text !== undefined) return conversation(scope, 'chat:body', `chat:body:${field}=${text}`);
  }
  const metadata = body.metadata;
  if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)) {
    for (const field of CHAT_ID_FIELDS) {
      const text = scalarText((metadata as Record<string, unknown>)[field]);
      if (text !== undefined) return conversation(scope, 'chat:metadata', `chat:metadata:${field}=${text}`);
    }
  }
  for (const name of CHAT_ID_HEADERS) {
    const text = headerText(headers, name);
    if (text !== undefined) return conversation(scope, `chat:header:${name}`, `chat:header:${name}:${text}`);
  }
  const messages = messagesOf(body);
  const byTool = earliestToolConversation(earliestToolCallId(messages), scope);
  if (byTool !== undefined) return byTool;
  const userText = firstUserText(messages);
  if (userText !== undefined) return conversation(scope, 'chat:first_user', `chat:first_user:${sha256Hex(userText)}`);
  const forwarded = headerText(headers, 'x-forwarded-for')?.split(',')[0].trim();
  if (forwarded) return conversation(scope, 'chat:x-forwarded-for', `chat:x-forwarded-for:${forwarded}`);
  const remote = input.remoteAddress?.trim();
  if (remote) return conversation(scope, 'chat:remote_ip', `chat:remote_ip:${remote}`);
  return conversation(scope, 'chat:global', GLOBAL_VALUE);
}

/** What a queue key may be derived from (docs/design/behaviours.md §3). */
export interface QueueKeyInput {
  /** The JSON body, as the client sent it (for `body:<field>`). */
  readonly body: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
  /** From `resolveCaller` (src/common/auth/bearer-auth.guard.ts). */
  readonly caller: string;
  /** The request's conversation id (above): the `chat` mode's key. */
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

// ── Queue keys ───────────────────────────────────────────────────────────────────────────────

/**
 * How a request field or header becomes id text, the same for conversation ids and queue keys
 * (docs/design/behaviours.md §3): a non-blank string (trimmed), a finite number (its JSON text) or a
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
 * The key for a configured `PRIMARY_AGENT_QUEUE_KEY_MODE` (docs/design/behaviours.md §3.3). The mode string was validated
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
  throw new Error(`unsupported queue key mode ${quoted(mode, 40)}`);
}

/**
 * A tool turn (docs/design/behaviours.md §3.2): non-empty `tools`, an assistant message with non-empty `tool_calls`, or a
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
