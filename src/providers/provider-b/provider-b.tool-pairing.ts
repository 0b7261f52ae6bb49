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
 * Gemini answers 400 unless every function-call turn is followed by exactly one function
 * response per call ("the number of function response parts is equal to the number of function
 * call parts of the function call turn"); agent clients send histories that break this — a
 * cancelled one of several parallel calls, a history trimmed from the front. Before every request
 * (as Codex does for provider_a, and as the Gemini CLI's own history always is) each assistant
 * message with calls is followed by one tool result per call, in call order: the client's result
 * when it sent one right after the calls, else the cancelled result. Any other tool message is
 * dropped. Only counts leave this function (for the debug log), never content.
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
