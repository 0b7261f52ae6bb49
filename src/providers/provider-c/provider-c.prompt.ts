import type { ChatMessage, HistoryToolCall, NormalizedTool } from '../../core/chat-message';
import {
  customToolNames,
  historyToolCallsById,
  messageText,
  partTypeName,
  readHistoryToolCall,
  textOfPart,
} from '../../core/chat-message';
import { GatewayError } from '../../core/gateway.error';
import { FENCE_OPENER } from './provider-c.fence-parser';
import type { ToolChoicePlan } from './provider-c.protocol';
import { CLOSING_REMINDER, renderProtocol } from './provider-c.protocol';

/**
 * docs/upstream/provider-c.md §4: the whole stdin prompt. Protocol block (when the plan enables tools), the transcript as
 * role-labelled blocks separated by one blank line, then the closing reminder. Call ids are
 * never shown to the model; tool results are paired by order and name.
 */
export function renderProviderCPrompt(
  messages: readonly ChatMessage[],
  tools: readonly NormalizedTool[],
  plan: ToolChoicePlan,
): string {
  const sections: string[] = [];
  if (plan.enabled) sections.push(renderProtocol(tools, plan));
  const transcript = renderTranscript(messages, tools);
  sections.push(...(transcript.length > 0 ? transcript : ['Continue.']));
  if (plan.enabled) sections.push(CLOSING_REMINDER);
  return sections.join('\n\n') + '\n';
}

/**
 * The CLI takes the conversation as text on stdin, so only text parts can reach the model: any
 * other part (an image, audio, a file) is a 400 naming where it is, before a child is started,
 * never a silent drop.
 */
export function assertTextOnlyConversation(messages: readonly ChatMessage[]): void {
  messages.forEach((message, messageIndex) => {
    if (!Array.isArray(message.content)) return;
    message.content.forEach((part: unknown, partIndex) => {
      const record = typeof part === 'object' && part !== null ? (part as Record<string, unknown>) : undefined;
      if (record !== undefined && textOfPart(record) !== undefined) return;
      const what = record === undefined ? 'a part that is not an object' : partTypeName(record.type);
      throw new GatewayError('invalid_request', {
        publicMessage: `messages[${messageIndex}].content[${partIndex}]: ${what} is not supported by provider_c (Claude Code takes the conversation as text)`,
        param: 'messages',
      });
    });
  });
}

function renderTranscript(messages: readonly ChatMessage[], tools: readonly NormalizedTool[]): string[] {
  const customNames = customToolNames(tools);
  const callsById = historyToolCallsById(messages, customNames);
  const blocks: string[] = [];
  for (const message of messages) {
    const text = messageText(message);
    switch (message.role) {
      case 'system':
      case 'developer':
        if (text !== '') blocks.push(`System:\n${text}`);
        break;
      case 'user':
        if (text !== '') blocks.push(`User:\n${text}`);
        break;
      case 'assistant': {
        const calls = (message.tool_calls ?? [])
          .map((call) => readHistoryToolCall(call, customNames))
          .filter((call) => call !== undefined);
        const parts = [...(text !== '' ? [text] : []), ...calls.map(renderCallBlock)];
        if (parts.length > 0) blocks.push(`Assistant:\n${parts.join('\n')}`);
        break;
      }
      case 'tool': {
        if (text === '') break;
        const name = message.tool_call_id ? callsById.get(message.tool_call_id)?.name : undefined;
        blocks.push(`${name !== undefined ? `Tool result (${name}):` : 'Tool result:'}\n${text}`);
        break;
      }
    }
  }
  return blocks;
}

/**
 * A history call exactly in the protocol's format. Function arguments are embedded as the JSON
 * value they hold (as written when they do not parse); custom calls carry their input as a JSON
 * string (docs/upstream/provider-c.md §4).
 */
export function renderCallBlock(call: HistoryToolCall): string {
  let argumentsValue: unknown = call.payload;
  if (call.kind === 'function') {
    const payload = call.payload.trim();
    try {
      argumentsValue = payload === '' ? {} : (JSON.parse(payload) as unknown);
    } catch {
      argumentsValue = call.payload;
    }
  }
  return `${FENCE_OPENER}\n${JSON.stringify({ name: call.name, arguments: argumentsValue })}\n\`\`\``;
}
