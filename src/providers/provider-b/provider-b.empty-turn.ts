import { RETRY_NUDGES, TOOL_RESULTS_CLOSED } from './provider-b.constants';
import type { ProviderBStreamState } from './provider-b.stream';
import type { CodeAssistContent } from './provider-b.wire-types';

/**
 * The pinned Gemini CLI sends a turn that ended invalid (see `invalidTurnReason`) up to 3 more
 * times (4 attempts), waiting 1 s, 2 s, 4 s (`MID_STREAM_RETRY_OPTIONS` in geminiChat.ts). So do we
 * (the runner's `emptyTurnRetry`), as long as nothing visible (text or a tool call) reached the
 * client.
 */
export const INVALID_TURN_RETRY = {
  maxRetries: 3,
  delayMs: (retry: number): number => 1000 * 2 ** retry,
};

const INVISIBLE_CHARACTERS = /[\u200B-\u200D\uFEFF\u200E\u200F]/g;
const HTML_COMMENT = /<!--[\s\S]*?-->/g;

/**
 * Whether an answer's text shows anything, as the CLI's `processStreamResponse` judges it: without
 * zero-width and direction marks, without HTML comments (removed until none is left), trimmed,
 * not empty. An answer whose text is only whitespace is an empty one.
 */
export function showsText(text: string): boolean {
  let cleaned = text.replace(INVISIBLE_CHARACTERS, '');
  let previous: string;
  do {
    previous = cleaned;
    cleaned = cleaned.replace(HTML_COMMENT, '');
  } while (cleaned !== previous);
  return cleaned.trim() !== '';
}

/** Empty ends the CLI counts as invalid even after tool results, named by its InvalidStreamError types. */
const EMPTY_CUT_REASONS: Readonly<Record<string, string>> = {
  MAX_TOKENS: 'MAX_TOKENS_EXCEEDED',
  SAFETY: 'SAFETY_BLOCKED',
  RECITATION: 'RECITATION_BLOCKED',
  OTHER: 'OTHER_BLOCKED',
};

/**
 * Why a turn that showed no text and no tool call is invalid and sent again, as the CLI's
 * `processStreamResponse` decides, in its order and by its names (for the log line and the
 * nudge); undefined for an end it accepts. An invalid call (`MALFORMED_FUNCTION_CALL`,
 * `UNEXPECTED_TOOL_CALL`), an empty end cut by a limit or a filter, and a thoughts-only answer are
 * always invalid. A missing finish reason and an empty answer are invalid only when the request
 * did not end with tool results (`afterToolResults`): after them, the CLI takes an empty answer as
 * the model's answer ("nothing to add").
 */
export function invalidTurnReason(
  state: ProviderBStreamState,
  thoughts: boolean,
  afterToolResults: boolean,
): string | undefined {
  const reason = state.finishReason;
  if (reason === undefined && !afterToolResults) return 'NO_FINISH_REASON';
  if (reason === 'MALFORMED_FUNCTION_CALL' || reason === 'UNEXPECTED_TOOL_CALL') return reason;
  const cut = reason === undefined ? undefined : EMPTY_CUT_REASONS[reason];
  if (cut !== undefined) return cut;
  if (thoughts) return 'THINKING_ONLY_RESPONSE';
  return afterToolResults ? undefined : 'NO_RESPONSE_TEXT';
}

/**
 * The request answers tool calls: its last content is a user turn ending with a `functionResponse`
 * (the CLI asks whether the message it sends is one; here tool results and a user message after
 * them share one user turn, and the user's words then make it a user message).
 */
export function endsWithToolResults(contents: readonly CodeAssistContent[]): boolean {
  const last = contents.at(-1);
  return last?.role === 'user' && last.parts.at(-1)?.functionResponse !== undefined;
}

/**
 * The contents of an attempt after one that ended invalid for `reason`, as the CLI sends them: for a
 * thoughts-only or empty answer, a nudge to answer now — after a user turn holding tool results
 * (any of its parts, as the CLI's `applyRetryNudge` looks) as a user turn behind a model turn that
 * closes them, after another user turn appended to it on a new line, else as a user turn of its
 * own. Any other reason sends the contents unchanged.
 */
export function withRetryNudge(
  contents: readonly CodeAssistContent[],
  reason: string | undefined,
): readonly CodeAssistContent[] {
  const nudge = reason === undefined ? undefined : RETRY_NUDGES[reason];
  if (nudge === undefined) return contents;
  const last = contents.at(-1);
  if (last === undefined || last.role !== 'user') return [...contents, { role: 'user', parts: [{ text: nudge }] }];
  if (last.parts.some((part) => part.functionResponse !== undefined))
    return [
      ...contents,
      { role: 'model', parts: [{ text: TOOL_RESULTS_CLOSED }] },
      { role: 'user', parts: [{ text: nudge }] },
    ];
  return [...contents.slice(0, -1), { role: 'user', parts: [...last.parts, { text: `\n${nudge}` }] }];
}
