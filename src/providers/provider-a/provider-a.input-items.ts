import type { ChatMessage } from '../../core/chat-message';
import { responsesParts, textsOf } from './provider-a.content-parts';
import { historyToolCallsById, readHistoryToolCall } from '../shared/tool-definitions';
import { normalizeCallId } from './provider-a.identifiers';

type Json = Record<string, unknown>;

/** Chat messages split into the parts of a Responses request (provider_a.md §7.2). */
export interface ConversationInput {
  /** Texts of `system` and `developer` messages, in order (one entry per non-empty message). */
  readonly systemTexts: string[];
  /** The conversation as Responses input items, in order. */
  readonly items: Json[];
  /** `tool` messages without `tool_call_id`, dropped. */
  readonly orphanToolMessages: number;
}

/**
 * Pure: messages → instructions texts and input items. Tool calls and their results are paired
 * by the normalized call id N(id), and a result takes the kind (function/custom) of its call.
 */
export function conversationInput(messages: readonly ChatMessage[], customNames: ReadonlySet<string>): ConversationInput {
  const calls = historyToolCallsById(messages, customNames);
  const systemTexts: string[] = [];
  const items: Json[] = [];
  let orphanToolMessages = 0;

  for (const [index, message] of messages.entries()) {
    // Images go up in user messages and tool results; anything the backend cannot take is a 400.
    const parts = responsesParts(message, index, message.role === 'user' || message.role === 'tool');
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textsOf(parts).join('\n');
        if (text !== '') systemTexts.push(text);
        break;
      }
      case 'user': {
        const content = parts.filter((part) => part.type !== 'input_text' || part.text !== '');
        if (content.length > 0) items.push({ type: 'message', role: 'user', content });
        break;
      }
      case 'assistant': {
        const text = textsOf(parts).join('\n');
        if (text !== '') items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
        for (const rawCall of message.tool_calls ?? []) {
          const call = readHistoryToolCall(rawCall, customNames);
          if (!call) continue;
          const callId = normalizeCallId(call.id);
          items.push(
            call.kind === 'custom'
              ? { type: 'custom_tool_call', call_id: callId, name: call.name, input: call.payload }
              : { type: 'function_call', call_id: callId, name: call.name, arguments: call.payload === '' ? '{}' : call.payload },
          );
        }
        break;
      }
      case 'tool': {
        const id = typeof message.tool_call_id === 'string' ? message.tool_call_id : '';
        if (id === '') {
          orphanToolMessages++;
          break;
        }
        const kind = calls.get(id)?.kind ?? 'function';
        items.push({
          type: kind === 'custom' ? 'custom_tool_call_output' : 'function_call_output',
          call_id: normalizeCallId(id),
          // A result with images goes up as a list of parts, else as one string (texts joined).
          output: parts.some((part) => part.type === 'input_image') ? parts : textsOf(parts).join('\n'),
        });
        break;
      }
    }
  }
  return { systemTexts, items, orphanToolMessages };
}
