import fc from 'fast-check';
import type { ChatEvent } from '../core/chat-event';
import { GatewayError } from '../core/gateway.error';
import { StopRule, StopSequenceMatcher, stopAtSequences } from './stop-sequences';

/** Feeds `deltas` and returns what was released, and whether a stop was found. */
function run(stops: string[], deltas: string[]): { written: string[]; stopped: boolean } {
  const matcher = new StopSequenceMatcher(stops);
  const written: string[] = [];
  for (const delta of deltas) {
    written.push(matcher.push(delta));
    if (matcher.stopped) return { written, stopped: true };
  }
  written.push(matcher.flush());
  return { written, stopped: false };
}

describe(StopSequenceMatcher.name, () => {
  it('stops before a match inside one delta and never releases the stop text or what follows', () => {
    expect(run(['END'], ['abc END def'])).toEqual({ written: ['abc '], stopped: true });
  });

  it('catches a match split across two deltas, holding back only the possible start of one', () => {
    expect(run(['END'], ['abc E', 'ND def'])).toEqual({ written: ['abc ', ''], stopped: true });
    // "xE" could start "END": only "E" is held; "x" goes out at once.
    expect(run(['END'], ['xE', 'nd'])).toEqual({ written: ['x', 'End', ''], stopped: false });
  });

  it('catches a match spread over many one-character deltas', () => {
    expect(run(['</answer>'], ['ok', '<', '/', 'a', 'n', 's', 'w', 'e', 'r', '>', 'tail'])).toEqual({
      written: ['ok', '', '', '', '', '', '', '', '', ''],
      stopped: true,
    });
  });

  it('holds the longest partial suffix over all sequences and picks the earliest match', () => {
    const matcher = new StopSequenceMatcher(['abcd', 'cx']);
    expect(matcher.push('zzabc')).toBe('zz');
    expect(matcher.push('x')).toBe('ab');
    expect(matcher.stopped).toBe(true);
  });

  it('releases held text when the answer ends without a match', () => {
    expect(run(['\n\n'], ['line\n'])).toEqual({ written: ['line', '\n'], stopped: false });
  });

  it('releases nothing at the end once a match was found: the held start of the stop sequence is part of it', () => {
    const matcher = new StopSequenceMatcher(['END']);
    expect(matcher.push('abc E')).toBe('abc ');
    expect(matcher.push('ND def')).toBe('');
    expect(matcher.stopped).toBe(true);
    expect(matcher.flush()).toBe('');
  });

  it('releases exactly the text before the first match, however the text is cut into deltas (property)', () => {
    const alphabet = fc.constantFrom('a', 'b', 'E', 'N', 'D', '\n');
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: alphabet, maxLength: 6 }), { maxLength: 8 }),
        fc.array(fc.string({ unit: alphabet, minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
        (deltas, stops) => {
          const whole = deltas.join('');
          const firsts = stops.map((stop) => whole.indexOf(stop)).filter((at) => at >= 0);
          const expected = firsts.length > 0 ? whole.slice(0, Math.min(...firsts)) : whole;
          const result = run(stops, deltas);
          expect(result.written.join('')).toBe(expected);
          expect(result.stopped).toBe(firsts.length > 0);
        },
      ),
      { numRuns: 2000, seed: 22 },
    );
  });
});

describe(stopAtSequences.name, () => {
  async function collect(
    events: ChatEvent[],
    stops: string[],
    callsMayFollow = false,
  ): Promise<{ seen: ChatEvent[]; closed: boolean }> {
    let closed = false;
    async function* source(): AsyncGenerator<ChatEvent> {
      try {
        yield* events;
      } finally {
        closed = true;
      }
    }
    const seen: ChatEvent[] = [];
    for await (const event of new StopRule(stops, callsMayFollow).cut(source())) seen.push(event);
    return { seen, closed };
  }

  it('ends the turn with finish stop at the match and closes the source', async () => {
    const { seen, closed } = await collect(
      [
        { type: 'reasoning-delta', text: 'think END' },
        { type: 'text-delta', text: 'a STO' },
        { type: 'text-delta', text: 'P b' },
        { type: 'finish', reason: 'length' },
      ],
      ['STOP'],
    );
    expect(seen).toEqual([
      { type: 'reasoning-delta', text: 'think END' },
      { type: 'text-delta', text: 'a ' },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(closed).toBe(true);
  });

  it('writes held-back text before the finish of a turn without a match', async () => {
    const { seen } = await collect(
      [
        { type: 'text-delta', text: 'a S' },
        { type: 'finish', reason: 'stop' },
      ],
      ['STOP'],
    );
    expect(seen).toEqual([
      { type: 'text-delta', text: 'a ' },
      { type: 'text-delta', text: 'S' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('writes held-back text before an error that ends the turn, and when the source ends without a finish', async () => {
    const error = { type: 'error', error: new GatewayError('upstream') } as const;
    expect((await collect([{ type: 'text-delta', text: 'a S' }, error], ['STOP'])).seen).toEqual([
      { type: 'text-delta', text: 'a ' },
      { type: 'text-delta', text: 'S' },
      error,
    ]);
    expect((await collect([{ type: 'text-delta', text: 'a S' }], ['STOP'])).seen).toEqual([
      { type: 'text-delta', text: 'a ' },
      { type: 'text-delta', text: 'S' },
    ]);
  });

  it('with tools offered, reads on past the match for the calls only: text and reasoning after it are dropped, finish stop', async () => {
    const call = {
      type: 'tool-call',
      call: { id: 'c1', name: 'read_file', kind: 'function', arguments: '{}' },
    } as const;
    const usage = { type: 'usage', usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 } } as const;
    const { seen, closed } = await collect(
      [
        { type: 'text-delta', text: 'Reading EN' },
        { type: 'text-delta', text: 'D now' },
        { type: 'reasoning-delta', text: 'more' },
        call,
        { type: 'text-delta', text: 'after' },
        usage,
        { type: 'finish', reason: 'length' },
      ],
      ['END'],
      true,
    );
    expect(seen).toEqual([{ type: 'text-delta', text: 'Reading ' }, call, usage, { type: 'finish', reason: 'stop' }]);
    expect(closed).toBe(true);
  });

  it('with tools offered, a refusal or an error after the match ends the turn as it came', async () => {
    for (const end of [
      { type: 'finish', reason: 'content_filter' },
      { type: 'error', error: new GatewayError('upstream') },
    ] as const) {
      const { seen } = await collect([{ type: 'text-delta', text: 'a END b' }, end], ['END'], true);
      expect(seen).toEqual([{ type: 'text-delta', text: 'a ' }, end]);
    }
  });
});
