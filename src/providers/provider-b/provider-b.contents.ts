import type { ChatMessage, HistoryToolCall } from '../../core/chat-message';
import { historyToolCallsById, messageText, readHistoryToolCall } from '../../core/chat-message';
import { SKIP_THOUGHT_SIGNATURE } from './provider-b.constants';
import { pairToolResults } from '../shared/tool-pairing';
import { callArgumentsOf, userParts } from './provider-b.content-parts';
import type { CodeAssistContent, CodeAssistPart } from './provider-b.wire-types';

/** Things worth a log line that the pure translation noticed (counts only, no content). */
export interface ContentsReport {
  /** Calls the client never answered, sent with the cancelled result (shared/tool-pairing.ts). */
  cancelledToolCalls: number;
  /** Tool results without a call right before them, dropped. */
  orphanToolResults: number;
}

export interface ConvertedMessages {
  readonly systemText?: string;
  readonly contents: CodeAssistContent[];
}

export const UNKNOWN_TOOL_NAME = 'unknown_tool';

/**
 * Chat messages → Code Assist `contents` (docs/upstream/provider-b.md §6): system/developer text becomes one
 * system instruction; user → `user`, assistant → `model` with its tool calls as `functionCall`
 * parts; each run of consecutive tool messages → one `user` content of `functionResponse` parts.
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
  const messages = paired.messages;
  const callsById = historyToolCallsById(messages, customNames);
  const systemTexts: string[] = [];
  const contents: CodeAssistContent[] = [];
  let toolRun: CodeAssistPart[] | undefined;

  for (const message of messages) {
    if (message.role === 'tool') {
      if (!toolRun) {
        toolRun = [];
        contents.push({ role: 'user', parts: toolRun });
      }
      toolRun.push(functionResponsePart(message, callsById));
      continue;
    }
    toolRun = undefined;
    if (message.role === 'system' || message.role === 'developer') {
      const text = messageText(message);
      if (text !== '') systemTexts.push(text);
    } else if (message.role === 'assistant') {
      const parts = modelParts(message, customNames, signatureFor);
      if (parts.length > 0) contents.push({ role: 'model', parts });
    } else {
      const parts = userParts(message);
      if (parts.length > 0) contents.push({ role: 'user', parts });
    }
  }
  if (contents.length === 0) contents.push({ role: 'user', parts: [{ text: '' }] });
  return {
    systemText: systemTexts.length > 0 ? systemTexts.join('\n\n') : undefined,
    contents: coalesceRoles(contents),
  };
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

function functionResponsePart(message: ChatMessage, callsById: ReadonlyMap<string, HistoryToolCall>): CodeAssistPart {
  const id = typeof message.tool_call_id === 'string' ? message.tool_call_id : '';
  const call = id !== '' ? callsById.get(id) : undefined;
  return {
    functionResponse: {
      ...(id !== '' ? { id } : {}),
      name: call?.name ?? UNKNOWN_TOOL_NAME,
      response: { output: messageText(message) },
    },
  };
}
