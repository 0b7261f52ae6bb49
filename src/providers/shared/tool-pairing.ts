import type { ChatMessage } from '../../core/chat-message';
import { readHistoryToolCall } from '../../core/chat-message';

/** The result text of a call the client never answered (it was cancelled, or the history trimmed). */
export const CANCELLED_TOOL_OUTPUT = 'The tool call was cancelled before it returned a result.';

export interface PairedMessages {
  readonly messages: ChatMessage[];
  /** Calls without a result that got the cancelled result. */
  readonly cancelledCalls: number;
  /** Tool results with no call right before them (or answering a call twice), dropped. */
  readonly orphanResults: number;
}

/**
 * Every assistant message with calls is followed by exactly one tool result per call, in call
 * order, matched by `tool_call_id`: the client's result when it sent one among the tool messages
 * right after the calls (clients may send them in any order), else the cancelled result. Any other
 * tool message (an unknown id, a second result for one call, a result with no calls right before
 * it) is dropped. Agent clients send histories that break the pairing (a cancelled one of several
 * parallel calls, a history trimmed from the front); provider_b's API refuses them, and
 * provider_c's model, which never sees call ids, can only pair results by their place. Only counts
 * leave this function (for a debug log line), never content.
 */
export function pairToolResults(messages: readonly ChatMessage[], customNames: ReadonlySet<string>): PairedMessages {
  const paired: ChatMessage[] = [];
  let cancelledCalls = 0;
  let orphanResults = 0;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (message.role === 'tool') {
      orphanResults++;
      continue;
    }
    paired.push(message);
    const calls =
      message.role === 'assistant'
        ? (message.tool_calls ?? [])
            .map((call) => readHistoryToolCall(call, customNames))
            .filter((call) => call !== undefined)
        : [];
    if (calls.length === 0) continue;
    const results: ChatMessage[] = [];
    while (messages[index + 1]?.role === 'tool') results.push(messages[++index]);
    const unused = new Set(results);
    for (const call of calls) {
      const result = results.find((candidate) => unused.has(candidate) && resultId(candidate) === call.id);
      if (result) {
        unused.delete(result);
        paired.push(result);
      } else {
        cancelledCalls++;
        paired.push({ role: 'tool', tool_call_id: call.id, content: CANCELLED_TOOL_OUTPUT });
      }
    }
    orphanResults += unused.size;
  }
  return { messages: paired, cancelledCalls, orphanResults };
}

const resultId = (message: ChatMessage) => (typeof message.tool_call_id === 'string' ? message.tool_call_id : '');
