import { pairCallsWithOutputs } from './provider-a.call-pairing';

const fcall = (id: string) => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
const fout = (id: string) => ({ type: 'function_call_output', call_id: id, output: 'x' });
const user = { type: 'message', role: 'user', content: [] };

describe('pairCallsWithOutputs', () => {
  it('leaves complete pairs alone', () => {
    const input = [user, fcall('a'), fout('a')];
    expect(pairCallsWithOutputs(input)).toEqual({ items: input, abortedCalls: 0, orphanOutputs: 0 });
  });

  it('gives unanswered calls an aborted output of their own kind after the run of calls', () => {
    const custom = { type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', input: '' };
    const result = pairCallsWithOutputs([fcall('a'), fcall('b'), custom, fout('a'), user]);
    expect(result.items).toEqual([
      fcall('a'),
      fcall('b'),
      custom,
      { type: 'function_call_output', call_id: 'b', output: 'aborted' },
      { type: 'custom_tool_call_output', call_id: 'c', output: 'aborted' },
      fout('a'),
      user,
    ]);
    expect(result.abortedCalls).toBe(2);
  });

  it('drops outputs whose call is missing or comes later', () => {
    const result = pairCallsWithOutputs([fout('gone'), user, fout('late'), fcall('late'), fout('late')]);
    expect(result.items).toEqual([user, fcall('late'), fout('late')]);
    expect(result.orphanOutputs).toBe(2);
  });
});
