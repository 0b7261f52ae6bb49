import type { IncomingHttpHeaders } from 'node:http';
import canonicalize from 'canonicalize';
import { sha256Hex } from '../common/hashing';
import { headerText, scalarText } from '../queue/queue-key';
import type { ChatMessage } from '../core/chat-message';
import { messageText } from '../core/chat-message';

/** What a conversation id is derived from: the request as the client sent it. */
export interface ConversationInput {
  /** The JSON body, as sent (fields beyond the parsed ones are read: conversation_id, metadata…). */
  readonly body: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress?: string;
}

/**
 * The identity of one chat, the same on every turn of it and different across chats. `value`
 * may carry client session ids or an IP, so it never reaches a log; `source` names the cascade
 * step that produced it (`chat:body`, `chat:header:x-conversation-id`, …) and may be logged.
 */
export interface ConversationId {
  readonly source: string;
  readonly value: string;
}

/**
 * Version of the derivation below. Its exact strings feed the upstream cache identities
 * (provider_a `prompt_cache_key`, provider_b `session_id`; docs/providers.md "Conversation
 * identity"), so any change to a field list, an order or a prefix cools every upstream cache:
 * make it only as a new version, documented there. `conversation-id.spec.ts` pins the values.
 */
export const CONVERSATION_ID_VERSION = 1;

const GLOBAL_VALUE = 'global';
/** §3.4 steps 1–2, in this order. */
const CHAT_ID_FIELDS = ['conversation_id', 'chat_id', 'thread_id', 'session_id'] as const;
/** §3.4 step 3, in this order (Node lower-cases incoming header names). */
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

/** §3.4 step 4: the first non-blank assistant `tool_calls[].id` or `tool` `tool_call_id`, in message order. */
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
 * §3.4 step 5: the first `user` message that has text — its trimmed string, or the RFC 8785
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
 * The conversation cascade of gateway-behaviours.md §3.4 (first hit wins), derivation v1. It
 * stays the same across the turns of one chat: every source is either a client-supplied chat id
 * or something fixed at the chat's start (the earliest tool-call id, the first user message).
 * Computed once per request; the `chat` queue mode and the adapters both use it.
 */
export function conversationIdOf(input: ConversationInput): ConversationId {
  const { body, headers } = input;
  for (const field of CHAT_ID_FIELDS) {
    const text = scalarText(body[field]);
    if (text !== undefined) return { source: 'chat:body', value: `chat:body:${field}=${text}` };
  }
  const metadata = body.metadata;
  if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)) {
    for (const field of CHAT_ID_FIELDS) {
      const text = scalarText((metadata as Record<string, unknown>)[field]);
      if (text !== undefined) return { source: 'chat:metadata', value: `chat:metadata:${field}=${text}` };
    }
  }
  for (const name of CHAT_ID_HEADERS) {
    const text = headerText(headers, name);
    if (text !== undefined) return { source: `chat:header:${name}`, value: `chat:header:${name}:${text}` };
  }
  const messages = messagesOf(body);
  const toolId = earliestToolCallId(messages);
  if (toolId !== undefined) return { source: 'chat:earliest_tool', value: `chat:earliest_tool:${toolId}` };
  const userText = firstUserText(messages);
  if (userText !== undefined) return { source: 'chat:first_user', value: `chat:first_user:${sha256Hex(userText)}` };
  const forwarded = headerText(headers, 'x-forwarded-for')?.split(',')[0].trim();
  if (forwarded) return { source: 'chat:x-forwarded-for', value: `chat:x-forwarded-for:${forwarded}` };
  const remote = input.remoteAddress?.trim();
  if (remote) return { source: 'chat:remote_ip', value: `chat:remote_ip:${remote}` };
  return { source: 'chat:global', value: GLOBAL_VALUE };
}
