import { RETRY_NUDGES, TOOL_RESULTS_CLOSED } from './provider-b.constants';
import {
  endsWithToolResults,
  INVALID_TURN_RETRY,
  invalidTurnReason,
  showsText,
  withRetryNudge,
} from './provider-b.empty-turn';
import { createProviderBStreamState } from './provider-b.stream';
import type { CodeAssistContent } from './provider-b.wire-types';

const ended = (finishReason?: string) => ({
  ...createProviderBStreamState(new Set(), { toClient: (name) => name }, 'req-1'),
  frames: 1,
  finishReason,
});

const question: CodeAssistContent = { role: 'user', parts: [{ text: 'read a' }] };
const call: CodeAssistContent = { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'read', args: {} } }] };
const result: CodeAssistContent = {
  role: 'user',
  parts: [{ functionResponse: { id: 'c1', name: 'read', response: { output: 'a' } } }],
};

describe(invalidTurnReason.name, () => {
  it.each([
    // finish reason, thoughts, after a user message, after tool results
    [undefined, false, 'NO_FINISH_REASON', undefined],
    [undefined, true, 'NO_FINISH_REASON', 'THINKING_ONLY_RESPONSE'],
    ['STOP', false, 'NO_RESPONSE_TEXT', undefined],
    ['STOP', true, 'THINKING_ONLY_RESPONSE', 'THINKING_ONLY_RESPONSE'],
    ['MALFORMED_FUNCTION_CALL', false, 'MALFORMED_FUNCTION_CALL', 'MALFORMED_FUNCTION_CALL'],
    ['UNEXPECTED_TOOL_CALL', true, 'UNEXPECTED_TOOL_CALL', 'UNEXPECTED_TOOL_CALL'],
    ['MAX_TOKENS', true, 'MAX_TOKENS_EXCEEDED', 'MAX_TOKENS_EXCEEDED'],
    ['SAFETY', false, 'SAFETY_BLOCKED', 'SAFETY_BLOCKED'],
    ['RECITATION', false, 'RECITATION_BLOCKED', 'RECITATION_BLOCKED'],
    ['OTHER', false, 'OTHER_BLOCKED', 'OTHER_BLOCKED'],
    ['BLOCKLIST', false, 'NO_RESPONSE_TEXT', undefined],
  ])(
    'an empty end with %s (thoughts %s) is %s after a user message, %s after tool results',
    (finishReason, thoughts, afterUser, afterTools) => {
      expect(invalidTurnReason(ended(finishReason), thoughts, false)).toBe(afterUser);
      expect(invalidTurnReason(ended(finishReason), thoughts, true)).toBe(afterTools);
    },
  );
});

describe('INVALID_TURN_RETRY', () => {
  it('sends an invalid turn again 3 times at most, after 1 s, 2 s and 4 s, as the pinned Gemini CLI does', () => {
    expect(INVALID_TURN_RETRY.maxRetries).toBe(3);
    expect([0, 1, 2].map(INVALID_TURN_RETRY.delayMs)).toEqual([1000, 2000, 4000]);
  });
});

describe(showsText.name, () => {
  it('judges text as the CLI does: zero-width marks and HTML comments removed, then trimmed', () => {
    expect(showsText('\n \t')).toBe(false);
    expect(showsText('\u200b\ufeff\u200e <!-- a --> <!-- b\n-->')).toBe(false);
    expect(showsText('<!-<!-- x -->- y -->')).toBe(false);
    expect(showsText('<!-- open')).toBe(true);
    expect(showsText(' a ')).toBe(true);
  });
});

describe(endsWithToolResults.name, () => {
  it('is true when the last user turn ends with a function response, not when the user spoke after it', () => {
    expect(endsWithToolResults([question, call, result])).toBe(true);
    expect(endsWithToolResults([question])).toBe(false);
    expect(endsWithToolResults([question, call, { role: 'user', parts: [...result.parts, { text: 'stop' }] }])).toBe(
      false,
    );
    expect(endsWithToolResults([])).toBe(false);
  });
});

describe(withRetryNudge.name, () => {
  const thinking = RETRY_NUDGES.THINKING_ONLY_RESPONSE;
  const empty = RETRY_NUDGES.NO_RESPONSE_TEXT;

  it('closes tool results with a model turn and asks in a user turn of its own', () => {
    expect(withRetryNudge([question, call, result], 'THINKING_ONLY_RESPONSE')).toEqual([
      question,
      call,
      result,
      { role: 'model', parts: [{ text: TOOL_RESULTS_CLOSED }] },
      { role: 'user', parts: [{ text: thinking }] },
    ]);
  });

  it('closes tool results followed by user words in the same turn the same way, as the CLI looks at every part', () => {
    const mixed = { role: 'user' as const, parts: [...result.parts, { text: 'and stop' }] };
    expect(withRetryNudge([question, call, mixed], 'NO_RESPONSE_TEXT').slice(-2)).toEqual([
      { role: 'model', parts: [{ text: TOOL_RESULTS_CLOSED }] },
      { role: 'user', parts: [{ text: empty }] },
    ]);
  });

  it("appends the nudge to the user's last turn on a new line, leaving the client's contents as they were", () => {
    const contents = [question];
    expect(withRetryNudge(contents, 'NO_RESPONSE_TEXT')).toEqual([
      { role: 'user', parts: [{ text: 'read a' }, { text: `\n${empty}` }] },
    ]);
    expect(contents).toEqual([{ role: 'user', parts: [{ text: 'read a' }] }]);
  });

  it('adds a user turn after a model turn', () => {
    expect(withRetryNudge([question, call], 'NO_RESPONSE_TEXT').at(-1)).toEqual({
      role: 'user',
      parts: [{ text: empty }],
    });
  });

  it.each([undefined, 'NO_FINISH_REASON', 'MALFORMED_FUNCTION_CALL', 'MAX_TOKENS_EXCEEDED'])(
    'sends the contents unchanged after %s',
    (reason) => {
      const contents = [question, call, result];
      expect(withRetryNudge(contents, reason)).toBe(contents);
    },
  );
});
