import type { FenceOutput } from './provider-c.fence-parser';
import { FENCE_OPENER, FenceParser } from './provider-c.fence-parser';

const O = FENCE_OPENER;
const TICKS = '```';

interface Collected {
  /** Visible text per push, in order (empty pushes omitted). */
  readonly pushes: string[];
  readonly text: string;
  readonly values: unknown[];
  readonly unclosedAccepted: number;
  readonly dropped: string[];
}

function collect(deltas: readonly string[], parser = new FenceParser()): Collected {
  const outputs: FenceOutput[][] = deltas.map((delta) => parser.push(delta));
  outputs.push(parser.end());
  const all = outputs.flat();
  return {
    pushes: outputs
      .map((items) =>
        items
          .filter((item) => item.type === 'text')
          .map((item) => (item as { text: string }).text)
          .join(''),
      )
      .filter((text) => text !== ''),
    text: all.map((item) => (item.type === 'text' ? item.text : '')).join(''),
    values: all.filter((item) => item.type === 'block').map((item) => (item as { value: unknown }).value),
    unclosedAccepted: all.filter((item) => item.type === 'block' && item.unclosed).length,
    dropped: all.filter((item) => item.type === 'dropped').map((item) => (item as { reason: string }).reason),
  };
}

/** Splits `whole` into three chunks at every pair of boundaries; returns the cuts whose result differs from `expected`. */
function splitsDiffering(whole: string, expected: Pick<Collected, 'text' | 'values' | 'dropped'>): string[] {
  const wanted = JSON.stringify(expected);
  const differing: string[] = [];
  for (let first = 0; first <= whole.length; first++) {
    for (let second = first; second <= whole.length; second++) {
      const { text, values, dropped } = collect([
        whole.slice(0, first),
        whole.slice(first, second),
        whole.slice(second),
      ]);
      if (JSON.stringify({ text, values, dropped }) !== wanted) differing.push(`${first}/${second}`);
    }
  }
  return differing;
}

describe(FenceParser.name, () => {
  describe('worked examples (docs/upstream/provider-c.md §7.6)', () => {
    it('1: text, then a fence in the next delta', () => {
      const result = collect(['Checking.', `\n${O}\n{"name":"read_file","arguments":{"path":"a"}}\n${TICKS}`]);
      expect(result.text).toBe('Checking.\n');
      expect(result.values).toEqual([{ name: 'read_file', arguments: { path: 'a' } }]);
      expect(result.dropped).toEqual([]);
    });

    it('2: an opener split across deltas streams the prose at once and holds only the partial opener', () => {
      const parser = new FenceParser();
      expect(parser.push(`here ${TICKS}agent_to`)).toEqual([{ type: 'text', text: 'here ' }]);
      expect(parser.push('ol_call\n{"name":"ls","arguments":{}}')).toEqual([]);
      expect(parser.push(`\n${TICKS}\ndone`)).toEqual([
        { type: 'block', value: { name: 'ls', arguments: {} }, unclosed: false },
        { type: 'text', text: '\ndone' },
      ]);
      expect(parser.end()).toEqual([]);
    });

    it('3: backtick runs inside JSON strings do not close the fence', () => {
      const result = collect([`${O}\n{"name":"write","arguments":{"text":"${TICKS}js\\nx()\\n${TICKS}"}}\n${TICKS}`]);
      expect(result.text).toBe('');
      expect(result.values).toEqual([{ name: 'write', arguments: { text: `${TICKS}js\nx()\n${TICKS}` } }]);
    });

    it('4: an ordinary python code fence is shown unchanged', () => {
      const result = collect(['see ', `${TICKS}python\nprint(1)\n${TICKS}`]);
      expect(result.text).toBe(`see ${TICKS}python\nprint(1)\n${TICKS}`);
      expect(result.values).toEqual([]);
    });

    it('5: an unclosed, incomplete fence at the end shows nothing and is dropped', () => {
      const result = collect([`${O}\n{"name":"ls","argu`]);
      expect(result.text).toBe('');
      expect(result.values).toEqual([]);
      expect(result.dropped).toEqual(['unclosed']);
    });
  });

  it('gives the same result for every split of a fence into three chunks', () => {
    const whole = `Before ${O}\n{"name":"edit","arguments":{"s":"a}\\"b\`\`\`c","n":[1,{"x":2}]}}\n${TICKS}\nafter`;
    const expected = {
      text: 'Before \nafter',
      values: [{ name: 'edit', arguments: { s: 'a}"b```c', n: [1, { x: 2 }] } }],
      dropped: [],
    };
    expect(collect([whole])).toMatchObject(expected);
    expect(splitsDiffering(whole, expected)).toEqual([]);
  });

  it('never shows any part of a fence, whatever the single split point', () => {
    const whole = `${O}\n{"name":"ls","arguments":{}}\n${TICKS}`;
    for (let cut = 0; cut <= whole.length; cut++) {
      const result = collect([whole.slice(0, cut), whole.slice(cut)]);
      expect({ cut, text: result.text, calls: result.values.length }).toEqual({ cut, text: '', calls: 1 });
    }
  });

  it('feeds one character at a time without losing or showing anything', () => {
    const whole = `a ${O} {"name":"x","arguments":{"q":"\\\\"}} ${TICKS} b`;
    const result = collect([...whole]);
    expect(result.text).toBe('a  b');
    expect(result.values).toEqual([{ name: 'x', arguments: { q: '\\' } }]);
  });

  it('finds several fences in one delta', () => {
    const result = collect([
      `one ${O}\n{"name":"a","arguments":{}}\n${TICKS} two ${O}\n{"name":"b","arguments":{}}\n${TICKS} three`,
    ]);
    expect(result.text).toBe('one  two  three');
    expect(result.values).toEqual([
      { name: 'a', arguments: {} },
      { name: 'b', arguments: {} },
    ]);
  });

  it('shows no whitespace that only borders fences, and shows it with the real text that follows', () => {
    const ls = `${O}\n{"name":"ls","arguments":{}}\n${TICKS}`;
    const only = collect([`\n ${ls}`, '\n', ls, '\n\n']);
    expect(only.pushes).toEqual([]);
    expect(only.values).toHaveLength(2);
    const parser = new FenceParser();
    expect(parser.push(`${ls}\n`)).toEqual([{ type: 'block', value: { name: 'ls', arguments: {} }, unclosed: false }]);
    expect(parser.push('\n')).toEqual([]);
    // Real text arrives: the held whitespace goes out with it, at once.
    expect(parser.push('Done.')).toEqual([{ type: 'text', text: '\n\nDone.' }]);
    expect(parser.push('\n')).toEqual([{ type: 'text', text: '\n' }]);
    // Whitespace after real text before a fence is part of that text, as before.
    expect(collect(['Looking.\n', ls]).text).toBe('Looking.\n');
  });

  it('keeps a whitespace-only answer that has no fence', () => {
    expect(collect(['\n', ' ']).text).toBe('\n ');
  });

  it('skips a stray word before the JSON object', () => {
    const result = collect([`${O}\njson\n{"name":"ls","arguments":{}}\n${TICKS}`]);
    expect(result.values).toEqual([{ name: 'ls', arguments: {} }]);
    expect(result.text).toBe('');
  });

  it('discards junk after the object up to the closing backticks and still accepts the call', () => {
    const result = collect([`${O}\n{"name":"ls","arguments":{}} trailing words\n${TICKS}rest`]);
    expect(result.values).toEqual([{ name: 'ls', arguments: {} }]);
    expect(result.text).toBe('rest');
  });

  it('drops an empty fence as empty, and one with words but no object as not_object', () => {
    const result = collect([`x${O}\n\n${TICKS}y`]);
    expect(result.text).toBe('xy');
    expect(result.dropped).toEqual(['empty']);
    expect(collect([`${O}\nls -la\n${TICKS}`]).dropped).toEqual(['not_object']);
    expect(collect([`${O}\n\`\`\n${TICKS}`]).dropped).toEqual(['not_object']);
  });

  it('reports broken JSON as a dropped block and continues after the fence', () => {
    const result = collect([`${O}\n{"name":"ls","arguments":{,}}\n${TICKS}after`]);
    expect(result.values).toEqual([]);
    expect(result.dropped).toEqual(['invalid_json']);
    expect(result.text).toBe('after');
  });

  it('accepts a complete object whose closing backticks are missing at the end', () => {
    const result = collect([`${O}\n{"name":"ls","arguments":{}}\n`]);
    expect(result.values).toEqual([{ name: 'ls', arguments: {} }]);
    expect(result.unclosedAccepted).toBe(1);
    expect(result.dropped).toEqual([]);
  });

  it('drops an object with junk after it when the stream ends before the closing backticks (more than they are missing)', () => {
    const result = collect([`${O}\n{"name":"rm","arguments":{}} trailing words`]);
    expect(result.values).toEqual([]);
    expect(result.dropped).toEqual(['unclosed']);
    expect(result.text).toBe('');
  });

  it('treats agent_tool_calls and agent_tool_call_v2 as ordinary text', () => {
    const text = `${TICKS}agent_tool_calls\n{"name":"ls"}\n${TICKS} and ${TICKS}agent_tool_call_v2 x`;
    const result = collect([text.slice(0, 18), text.slice(18)]);
    expect(result.text).toBe(text);
    expect(result.values).toEqual([]);
  });

  it('holds at most 17 characters of prose that could start an opener', () => {
    const parser = new FenceParser();
    expect(parser.push(`code ${TICKS}agent_tool_cal`)).toEqual([{ type: 'text', text: 'code ' }]);
    expect(parser.push('x')).toEqual([{ type: 'text', text: `${TICKS}agent_tool_calx` }]);
    expect(parser.push('end`')).toEqual([{ type: 'text', text: 'end' }]);
    expect(parser.end()).toEqual([{ type: 'text', text: '`' }]);
  });

  it('holds the exact opener until the next character decides', () => {
    const parser = new FenceParser();
    expect(parser.push(`a${O}`)).toEqual([{ type: 'text', text: 'a' }]);
    expect(parser.push('s')).toEqual([{ type: 'text', text: `${O}s` }]);
  });

  it('drops a body over the size cap and resumes after the closing fence', () => {
    const parser = new FenceParser(64);
    const big = 'x'.repeat(100);
    const result = collect([`${O}\n{"name":"w","arguments":{"t":"${big}"}}`, `\n${TICKS}visible`], parser);
    expect(result.values).toEqual([]);
    expect(result.dropped).toEqual(['too_large']);
    expect(result.text).toBe('visible');
  });

  it('keeps a body of exactly the cap (what follows the opener, closing backticks included) and drops one byte more', () => {
    const body = `\n{"name":"w","arguments":{"t":"é"}}\n${TICKS}`;
    const bytes = Buffer.byteLength(body, 'utf8');
    const atCap = collect([O, body, 'after'], new FenceParser(bytes));
    expect(atCap.values).toEqual([{ name: 'w', arguments: { t: 'é' } }]);
    expect(atCap.dropped).toEqual([]);
    expect(atCap.text).toBe('after');
    expect(collect([O, body, 'after'], new FenceParser(bytes - 1)).dropped).toEqual(['too_large']);
  });

  it('drops a fence body over 8 MiB (the default cap)', () => {
    const big = 'y'.repeat(8 * 1024 * 1024 + 10);
    const result = collect([`${O}\n{"name":"w","arguments":{"t":"`, big, `"}}\n${TICKS}ok`]);
    expect(result.values).toEqual([]);
    expect(result.dropped).toEqual(['too_large']);
    expect(result.text).toBe('ok');
  });

  it('tracks escaped quotes so a brace after them stays inside the string', () => {
    const result = collect([`${O}{"name":"a","arguments":{"v":"\\"}"}}${TICKS}`]);
    expect(result.values).toEqual([{ name: 'a', arguments: { v: '"}' } }]);
  });
});
