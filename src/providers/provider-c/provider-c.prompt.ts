import type { ChatMessage, HistoryToolCall, NormalizedTool } from '../../core/chat-message';
import {
  customToolNames,
  isImagePart,
  messageText,
  partTypeName,
  textOfPart,
  unsupportedPartFix,
} from '../../core/chat-message';
import { GatewayError } from '../../core/gateway.error';
import type { PairedMessage } from '../shared/tool-pairing';
import { CANCELLED_TOOL_OUTPUT, pairToolResults } from '../shared/tool-pairing';
import { FENCE_OPENER } from './provider-c.fence-parser';
import type { ToolChoicePlan } from './provider-c.protocol';
import { CLOSING_REMINDER, renderProtocol } from './provider-c.protocol';

/** The stdin prompt, and what pairing the history's calls and results changed (counts only, for the debug log). */
export interface ProviderCPrompt {
  readonly text: string;
  /** Calls the client never answered, rendered with the cancelled result. */
  readonly cancelledCalls: number;
  /** Tool results that answer no call (an unknown id, a second answer), left out. */
  readonly orphanResults: number;
}

/**
 * docs/upstream/provider-c.md §4: the whole stdin prompt. Protocol block (when the plan allows calls), the transcript as
 * role-labelled blocks separated by one blank line, then the closing reminder. Call ids are
 * never shown to the model, so the results of each assistant turn are rendered right after its
 * calls, in call order, found by id wherever the client sent them (shared/tool-pairing.ts): the
 * model pairs them by place.
 */
export function renderProviderCPrompt(
  messages: readonly ChatMessage[],
  tools: readonly NormalizedTool[],
  plan: ToolChoicePlan,
): ProviderCPrompt {
  const customNames = customToolNames(tools);
  const paired = pairToolResults(messages, customNames);
  const sections: string[] = [];
  if (plan.callsAllowed) sections.push(renderProtocol(tools, plan));
  const transcript = renderTranscript(paired.messages);
  sections.push(...(transcript.length > 0 ? transcript : ['Continue.']));
  if (plan.callsAllowed) sections.push(CLOSING_REMINDER);
  return {
    text: sections.join('\n\n') + '\n',
    cancelledCalls: paired.cancelledCalls,
    orphanResults: paired.orphanResults,
  };
}

/** What to send instead of an image: the other families take images. */
const IMAGE_FIX =
  'describe the image in a text part, or choose a model of a family that takes images (provider_a, provider_b)';

/**
 * The CLI takes the conversation as text on stdin, so only text parts can reach the model: any
 * other part (an image, audio, a file) is a 400 naming where it is and what to send instead,
 * before a child is started, never a silent drop.
 */
export function assertTextOnlyConversation(messages: readonly ChatMessage[]): void {
  messages.forEach((message, messageIndex) => {
    if (!Array.isArray(message.content)) return;
    message.content.forEach((part: unknown, partIndex) => {
      const record = typeof part === 'object' && part !== null ? (part as Record<string, unknown>) : undefined;
      if (record !== undefined && textOfPart(record) !== undefined) return;
      const what = record === undefined ? 'a part that is not an object' : partTypeName(record.type);
      const fix = record !== undefined && isImagePart(record) ? IMAGE_FIX : unsupportedPartFix(record?.type);
      throw new GatewayError('invalid_request', {
        publicMessage: `messages[${messageIndex}].content[${partIndex}]: ${what} is not supported by provider_c (Claude Code takes the conversation as text); ${fix}`,
        param: 'messages',
      });
    });
  });
}

/** What a tool result with empty output reads as. */
export const EMPTY_TOOL_OUTPUT = '(no output)';

/** The transcript of a paired history: every call's result follows its assistant message, in call order. */
function renderTranscript(messages: readonly PairedMessage[]): string[] {
  const blocks: string[] = [];
  for (const { message, calls, results } of messages) {
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
        const parts = [...(text !== '' ? [text] : []), ...calls.map(renderCallBlock)];
        if (parts.length > 0) blocks.push(`Assistant:\n${parts.join('\n')}`);
        calls.forEach((call, index) => blocks.push(`Tool result (${call.name}):\n${resultText(results[index])}`));
        break;
      }
    }
  }
  return blocks;
}

/**
 * A result's text: an empty output is still the call's answer (without its block the call would
 * look unanswered), and a call the client never answered reads as cancelled, so the model neither
 * takes it as still running nor makes up its output.
 */
function resultText(result: ChatMessage | undefined): string {
  if (!result) return CANCELLED_TOOL_OUTPUT;
  const text = messageText(result);
  return text !== '' ? text : EMPTY_TOOL_OUTPUT;
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
