import type { ChatMessage } from '../../core/chat-message';
import type { PairedHistory } from './tool-pairing';
import { pairToolResults } from './tool-pairing';

const call = (id: string, name: string) => ({ id, type: 'function', function: { name, arguments: '{}' } });
const calling = (...calls: ReturnType<typeof call>[]): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: calls,
});
const result = (id: string, content: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content });
const user = (content: string): ChatMessage => ({ role: 'user', content });

/** The paired history as lines: each message's role, then `name=result` per call (`-` for none). */
function outline(paired: PairedHistory): string[] {
  return paired.messages.flatMap(({ message, calls, results }) => [
    message.role,
    ...calls.map((entry, index) => `  ${entry.name}=${(results[index]?.content as string | undefined) ?? '-'}`),
  ]);
}

describe(pairToolResults.name, () => {
  it('keeps a well-paired history as it is, and one without tool calls untouched', () => {
    const history = [user('go'), calling(call('a', 'read')), result('a', 'R-A'), user('next')];
    const paired = pairToolResults(history, new Set());
    expect(outline(paired)).toEqual(['user', 'assistant', '  read=R-A', 'user']);
    expect(paired.messages[1].results[0]).toBe(history[2]);
    expect(paired).toMatchObject({ cancelledCalls: 0, orphanResults: 0 });
    const plain = pairToolResults([user('hi'), { role: 'assistant', content: 'hello' }], new Set());
    expect(plain.messages.map((entry) => entry.calls.length + entry.results.length)).toEqual([0, 0]);
  });

  it('pairs results sent after a later call turn each with their own call', () => {
    const paired = pairToolResults(
      [user('go'), calling(call('a', 'read')), calling(call('b', 'list')), result('a', 'R-A'), result('b', 'R-B')],
      new Set(),
    );
    expect(outline(paired)).toEqual(['user', 'assistant', '  read=R-A', 'assistant', '  list=R-B']);
    expect(paired).toMatchObject({ cancelledCalls: 0, orphanResults: 0 });
  });

  it("pairs a result sent after the user's next words with its call, and results in any order in call order", () => {
    const paired = pairToolResults(
      [
        calling(call('a', 'read'), call('b', 'list'), call('c', 'run')),
        result('b', 'R-B'),
        user('slow'),
        result('a', 'R-A'),
      ],
      new Set(),
    );
    expect(outline(paired)).toEqual(['assistant', '  read=R-A', '  list=R-B', '  run=-', 'user']);
    expect(paired).toMatchObject({ cancelledCalls: 1, orphanResults: 0 });
  });

  it('pairs a result with the nearest call of its id when turns reuse one id, so it takes that call’s name and kind', () => {
    const patch = { id: 'call_0', type: 'custom', custom: { name: 'apply_patch', input: 'P' } };
    const paired = pairToolResults(
      [
        calling(call('call_0', 'read')),
        result('call_0', 'R-A'),
        { role: 'assistant', content: null, tool_calls: [patch] },
        result('call_0', 'R-B'),
      ],
      new Set(),
    );
    expect(outline(paired)).toEqual(['assistant', '  read=R-A', 'assistant', '  apply_patch=R-B']);
    expect(paired.messages[1].calls[0].kind).toBe('custom');
  });

  it('answers calls of one id in one message in order, and leaves an earlier turn’s call of that id unanswered', () => {
    const paired = pairToolResults(
      [
        calling(call('x', 'old')),
        calling(call('x', 'first'), call('x', 'second')),
        result('x', 'R1'),
        result('x', 'R2'),
      ],
      new Set(),
    );
    expect(outline(paired)).toEqual(['assistant', '  old=-', 'assistant', '  first=R1', '  second=R2']);
    expect(paired).toMatchObject({ cancelledCalls: 1, orphanResults: 0 });
  });

  it('drops a result with no call of its id before it, and a second result for an answered call', () => {
    const paired = pairToolResults(
      [
        result('gone', 'TRIMMED'),
        result('late', 'EARLY'),
        calling(call('late', 'read')),
        result('late', 'R'),
        result('late', 'AGAIN'),
      ],
      new Set(),
    );
    expect(outline(paired)).toEqual(['assistant', '  read=R']);
    expect(paired).toMatchObject({ cancelledCalls: 0, orphanResults: 3 });
  });

  it('reads a function call named as a custom tool as custom, and leaves nameless calls out', () => {
    const paired = pairToolResults(
      [
        calling(call('a', 'apply_patch'), { id: 'n', type: 'function', function: { name: '', arguments: '' } }),
        result('a', 'done'),
        result('n', 'NAMELESS'),
      ],
      new Set(['apply_patch']),
    );
    expect(paired.messages[0].calls.map((entry) => [entry.name, entry.kind])).toEqual([['apply_patch', 'custom']]);
    expect(paired).toMatchObject({ cancelledCalls: 0, orphanResults: 1 });
  });
});
