import fc from 'fast-check';
import type { ToolNameRule } from './tool-names';
import { buildToolNameMap } from './tool-names';

/** A small rule with a refused first character and a short limit, so every branch is reached. */
const RULE: ToolNameRule = {
  valid: /^[a-z_][a-z0-9_]{0,23}$/,
  badCharacter: /[^a-z0-9_]/g,
  badStart: /^[^a-z_]/,
  maxLength: 24,
};

describe(buildToolNameMap.name, () => {
  it('round-trips any set of names through valid, unique, order-independent upstream names (property)', () => {
    const name = fc.oneof(
      fc.string({ minLength: 0, maxLength: 40 }),
      fc.stringMatching(/^[a-z0-9_.]{1,30}$/),
      fc.stringMatching(/^[a-z_]{1,10}$/).map((tool) => `mcp__server__${tool}`),
      // Around the limit with one refused character: fast-check's default sizes rarely reach it.
      fc
        .tuple(fc.integer({ min: 12, max: 30 }), fc.nat(), fc.constantFrom('.', '/', ' '))
        .map(([length, at, bad]) => `${'n'.repeat(at % length)}${bad}${'n'.repeat(length - 1 - (at % length))}`),
    );
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 20 }), (names) => {
        const map = buildToolNameMap(names, RULE);
        const upstream = names.map((entry) => map.toUpstream(entry));
        for (const entry of upstream) expect(entry).toMatch(RULE.valid);
        expect(new Set(upstream).size).toBe(names.length);
        for (const entry of names) expect(map.toClient(map.toUpstream(entry))).toBe(entry);
        const again = buildToolNameMap([...names].reverse(), RULE);
        for (const entry of names) expect(again.toUpstream(entry)).toBe(map.toUpstream(entry));
      }),
      { numRuns: 300 },
    );
  });

  it('puts `_` before a refused first character and keeps valid names as they are', () => {
    const map = buildToolNameMap(['1password', 'ok_name'], RULE);
    expect(map.toUpstream('1password')).toMatch(/^_1password_[0-9a-f]{8}$/);
    expect(map.toUpstream('ok_name')).toBe('ok_name');
    expect(map.renamed).toBe(1);
  });

  it('keeps two names apart that read the same once sanitized', () => {
    const map = buildToolNameMap(['a/b', 'a b', 'a_b'], RULE);
    expect(map.toUpstream('a_b')).toBe('a_b');
    expect(map.toUpstream('a/b')).toMatch(/^a_b_[0-9a-f]{8}$/);
    expect(map.toUpstream('a b')).toMatch(/^a_b_[0-9a-f]{8}$/);
    expect(map.toUpstream('a/b')).not.toBe(map.toUpstream('a b'));
    expect(map.toClient(map.toUpstream('a b'))).toBe('a b');
  });

  it('cuts a long name to the limit, keeping an MCP name its prefix and tail', () => {
    const map = buildToolNameMap(['mcp__a_long_server__the_tool', 'a_very_long_plain_name_indeed'], RULE);
    expect(map.toUpstream('mcp__a_long_server__the_tool')).toMatch(/^mcp____the_tool_[0-9a-f]{8}$/);
    expect(map.toUpstream('a_very_long_plain_name_indeed')).toMatch(/^a_very_long_pla_[0-9a-f]{8}$/);
  });

  it('cuts a name that fits the limit only without the hash suffix, so the renamed one fits it too', () => {
    // 18 characters, one refused: under the limit of 24 as it is, over it once the suffix is added.
    const name = 'abcdefghijklmnop.x';
    const map = buildToolNameMap([name], RULE);
    expect(map.toUpstream(name)).toMatch(/^abcdefghijklmno_[0-9a-f]{8}$/);
    expect(map.toUpstream(name)).toMatch(RULE.valid);
    expect(map.toClient(map.toUpstream(name))).toBe(name);
  });

  it('returns names as they are, renaming nothing, when all are valid', () => {
    const map = buildToolNameMap(['a', 'b_1'], RULE);
    expect(map.renamed).toBe(0);
    expect(map.toUpstream('a')).toBe('a');
    expect(map.toClient('zzz')).toBe('zzz');
  });
});
