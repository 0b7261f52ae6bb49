import type { ChatMessage, HistoryToolCall, NormalizedTool } from '../../core/chat-message';
import { customToolNames, historyToolCallsById, messageText, readHistoryToolCall } from '../../core/chat-message';
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
