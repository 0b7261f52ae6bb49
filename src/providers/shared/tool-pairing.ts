import type { ChatMessage, ChatRole, HistoryToolCall } from '../../core/chat-message';
import { historyToolCalls } from '../../core/chat-message';

/** The result text of a call the client never answered (it was cancelled, or the history trimmed). */
export const CANCELLED_TOOL_OUTPUT = 'The tool call was cancelled before it returned a result.';

/** A message of any role but `tool`. */
export type NotToolMessage = ChatMessage & { readonly role: Exclude<ChatRole, 'tool'> };

const isNotTool = (message: ChatMessage): message is NotToolMessage => message.role !== 'tool';

/** One message of the history other than a tool result, with the results of its calls. */
export interface PairedMessage {
  /** A system, developer, user or assistant message, as the client sent it. */
  readonly message: NotToolMessage;
  /** An assistant message's calls, in order (nameless entries left out); empty for any other message. */
  readonly calls: readonly HistoryToolCall[];
  /** `results[i]` answers `calls[i]`: the client's tool message, or undefined when none did. */
  readonly results: readonly (ChatMessage | undefined)[];
}

export interface PairedHistory {
  readonly messages: readonly PairedMessage[];
  /** Calls no tool message answered (each family sends its own "cancelled" result for them). */
  readonly cancelledCalls: number;
  /** Tool messages that answer no call, dropped. */
  readonly orphanResults: number;
}

const NONE: readonly never[] = [];

/** A message with calls whose results are still being found. */
interface OpenMessage extends PairedMessage {
  readonly results: (ChatMessage | undefined)[];
}

/**
 * The history with every tool result moved right after the call it answers, for all three
 * families (docs/chat.md "Tool calls"): provider_b's API refuses a call turn that the next turn
 * does not answer one for one, provider_c's model never sees call ids and pairs results by their
 * place, and the Responses backend wants an output for every call. Clients break the order (a
 * result sent after the next assistant message or the user's next words, a cancelled parallel
 * call, a history trimmed from the front), so results are paired by `tool_call_id`:
 *
 * - a tool message answers the nearest assistant message before it with a call of its id, and
 *   there the first such call not answered yet; so a call id that two turns reuse pairs each result
 *   with its own turn's call, whose name and kind (function/custom) the result is sent with;
 * - a tool message with no such call before it, or whose calls there are all answered already (a
 *   second result), answers no call and is dropped;
 * - a call no tool message answers is left without a result (`results[i]` undefined).
 *
 * Only counts leave this function (for a debug log line), never content.
 */
export function pairToolResults(messages: readonly ChatMessage[], customNames: ReadonlySet<string>): PairedHistory {
  const paired: PairedMessage[] = [];
  /** Per call id, the latest message so far with a call of that id. */
  let latestById: Map<string, OpenMessage> | undefined;
  let orphanResults = 0;
  let callCount = 0;
  let answered = 0;
  for (const message of messages) {
    if (!isNotTool(message)) {
      const id = typeof message.tool_call_id === 'string' ? message.tool_call_id : '';
      const owner = id === '' ? undefined : latestById?.get(id);
      const index = owner ? owner.calls.findIndex((call, at) => call.id === id && !owner.results[at]) : -1;
      if (owner && index >= 0) {
        owner.results[index] = message;
        answered++;
      } else orphanResults++;
      continue;
    }
    const calls =
      message.role === 'assistant' && message.tool_calls?.length ? historyToolCalls(message, customNames) : NONE;
    if (calls.length === 0) {
      paired.push({ message, calls: NONE, results: NONE });
      continue;
    }
    const entry: OpenMessage = {
      message,
      calls,
      results: new Array<ChatMessage | undefined>(calls.length).fill(undefined),
    };
    paired.push(entry);
    callCount += calls.length;
    latestById ??= new Map();
    for (const call of calls) if (call.id !== '') latestById.set(call.id, entry);
  }
  return { messages: paired, cancelledCalls: callCount - answered, orphanResults };
}
