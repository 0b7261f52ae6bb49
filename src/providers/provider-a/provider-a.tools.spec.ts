import fc from 'fast-check';
import { buildToolNameMap, VALID_TOOL_NAME, withUpstreamToolNames } from './provider-a.tools';

describe('provider_a tool names', () => {
  it('round-trips any set of client names through valid, unique upstream names (property)', () => {
    const name = fc.oneof(
      fc.string({ minLength: 0, maxLength: 120 }),
      fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/),
      fc
        .tuple(fc.stringMatching(/^[a-z_]{1,40}$/), fc.stringMatching(/^[a-z_.]{1,60}$/))
        .map(([server, tool]) => `mcp__${server}__${tool}`),
    );
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 30 }), (names) => {
        const map = buildToolNameMap(names);
        const upstream = names.map((entry) => map.toUpstream(entry));
        for (const entry of upstream) expect(entry).toMatch(VALID_TOOL_NAME);
        expect(new Set(upstream).size).toBe(names.length);
        for (const entry of names) expect(map.toClient(map.toUpstream(entry))).toBe(entry);
        // Deterministic: the same set in another order gives the same names.
        const again = buildToolNameMap([...names].reverse());
        for (const entry of names) expect(again.toUpstream(entry)).toBe(map.toUpstream(entry));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps valid names, the mcp__ prefix and the tail of a long MCP name', () => {
    const long = 'mcp__a_very_long_server_name_that_goes_on_and_on__list_all_open_pull_requests';
    const map = buildToolNameMap(['read_file', long, 'fs.read']);
    expect(map.toUpstream('read_file')).toBe('read_file');
    expect(map.toUpstream(long)).toMatch(/^mcp__.*list_all_open_pull_requests_[0-9a-f]{8}$/);
    expect(map.toUpstream('fs.read')).toMatch(/^fs_read_[0-9a-f]{8}$/);
    expect(map.renamed).toBe(2);
  });

  it('never renames into a name the client already uses', () => {
    const map = buildToolNameMap(['a.b']);
    const taken = map.toUpstream('a.b');
    const both = buildToolNameMap(['a.b', taken]);
    expect(both.toUpstream(taken)).toBe(taken);
    expect(both.toUpstream('a.b')).not.toBe(taken);
    expect(both.toUpstream('a.b')).toMatch(VALID_TOOL_NAME);
  });

  it('leaves a body without invalid names untouched (same object)', () => {
    const body = { tools: [{ type: 'function', name: 'ok' }], input: [] };
    expect(withUpstreamToolNames(body).body).toBe(body);
  });
});
