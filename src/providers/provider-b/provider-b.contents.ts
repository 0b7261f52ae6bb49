import type { ChatMessage, HistoryToolCall } from '../../core/chat-message';
import { messageText, readHistoryToolCall } from '../../core/chat-message';
import { SKIP_THOUGHT_SIGNATURE } from './provider-b.constants';
import { CANCELLED_TOOL_OUTPUT, pairToolResults } from '../shared/tool-pairing';
import { callArgumentsOf, userParts } from './provider-b.content-parts';
import type { CodeAssistContent, CodeAssistPart } from './provider-b.wire-types';

/** Things worth a log line that the pure translation noticed (counts only, no content). */
export interface ContentsReport {
  /** Calls the client never answered, sent with the cancelled result (shared/tool-pairing.ts). */
  cancelledToolCalls: number;
  /** Tool results that answer no call, dropped (shared/tool-pairing.ts). */
  orphanToolResults: number;
}

export interface ConvertedMessages {
  readonly systemText?: string;
  readonly contents: CodeAssistContent[];
}

/**
 * Chat messages → Code Assist `contents` (docs/upstream/provider-b.md §6): system/developer text becomes one
 * system instruction; user → `user`, assistant → `model` with its tool calls as `functionCall`
 * parts, followed by one `user` content of `functionResponse` parts answering them in call order
 * (shared/tool-pairing.ts found each call's result wherever the client sent it).
 * `signatureFor` is the process-local signature memory (docs/upstream/provider-b.md §8).
 */
export function convertMessages(
  clientMessages: readonly ChatMessage[],
  customNames: ReadonlySet<string>,
  signatureFor: (callId: string) => string | undefined,
  report: ContentsReport,
): ConvertedMessages {
  // The parts and the calls' arguments were checked before the queue (assertCarriedContent, the
  // adapter's checkContent).
  // Gemini answers 400 unless each function-call turn is followed by exactly one response per call.
  const paired = pairToolResults(clientMessages, customNames);
  report.cancelledToolCalls += paired.cancelledCalls;
  report.orphanToolResults += paired.orphanResults;
  const systemTexts: string[] = [];
  const contents: CodeAssistContent[] = [];

  for (const { message, calls, results } of paired.messages) {
    if (message.role === 'system' || message.role === 'developer') {
      const text = messageText(message);
      if (text !== '') systemTexts.push(text);
    } else if (message.role === 'assistant') {
      const parts = modelParts(message, customNames, signatureFor);
      if (parts.length > 0) contents.push({ role: 'model', parts });
      if (calls.length > 0)
        contents.push({ role: 'user', parts: calls.map((call, index) => functionResponsePart(call, results[index])) });
    } else {
      const parts = userParts(message);
      if (parts.length > 0) contents.push({ role: 'user', parts });
    }
  }
  const systemText = systemTexts.length > 0 ? systemTexts.join('\n\n') : undefined;
  if (contents.length === 0) {
    // Gemini needs a user turn and refuses an empty text: a request of system text alone (OpenAI
    // answers one) sends that text as the user's turn. With no text at all, the empty turn goes up
    // and the upstream's refusal is the client's 400 `upstream_rejected_request`.
    return { contents: [{ role: 'user', parts: [{ text: systemText ?? '' }] }] };
  }
  return { systemText, contents: coalesceRoles(contents) };
}

/**
 * Adjacent contents of one role become one, as the Gemini CLI does before every request
 * (`coalesceConsecutiveRoles`): Gemini wants a function-call turn right after a user or
 * function-response turn, and an assistant text message followed by an assistant message with
 * calls (or a tool result followed by the user's next words) would otherwise break that.
 */
function coalesceRoles(contents: readonly CodeAssistContent[]): CodeAssistContent[] {
  const merged: CodeAssistContent[] = [];
  for (const content of contents) {
    const last = merged.at(-1);
    if (last && last.role === content.role)
      merged[merged.length - 1] = { role: last.role, parts: [...last.parts, ...content.parts] };
    else merged.push(content);
  }
  return merged;
}

/** An assistant message's text and calls. */
function modelParts(
  message: ChatMessage,
  customNames: ReadonlySet<string>,
  signatureFor: (callId: string) => string | undefined,
): CodeAssistPart[] {
  const parts: CodeAssistPart[] = [];
  const text = messageText(message);
  if (text !== '') parts.push({ text });
  let firstCall = true;
  for (const raw of message.tool_calls ?? []) {
    const call = readHistoryToolCall(raw, customNames);
    if (!call) continue;
    const known = call.thoughtSignature || (call.id !== '' ? signatureFor(call.id) : undefined);
    // The backend checks the first functionCall of a model turn for a signature (docs/upstream/provider-b.md §8).
    const signature = known || (firstCall ? SKIP_THOUGHT_SIGNATURE : undefined);
    firstCall = false;
    const functionCall = {
      ...(call.id !== '' ? { id: call.id } : {}),
      name: call.name,
      // A custom tool's raw input is `{input}`; a function call's arguments passed the check.
      args: call.kind === 'custom' ? { input: call.payload } : (callArgumentsOf(raw, call.payload) ?? {}),
    };
    parts.push(signature ? { functionCall, thoughtSignature: signature } : { functionCall });
  }
  return parts;
}

/** The answer to `call`: its result's text under the call's id and name, or the cancelled result. */
function functionResponsePart(call: HistoryToolCall, result: ChatMessage | undefined): CodeAssistPart {
  return {
    functionResponse: {
      ...(call.id !== '' ? { id: call.id } : {}),
      name: call.name,
      response: { output: result ? messageText(result) : CANCELLED_TOOL_OUTPUT },
    },
  };
}
