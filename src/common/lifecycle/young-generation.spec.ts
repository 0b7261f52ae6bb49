import { SEMI_SPACE_ARGUMENT, startedSemiSpaceMib } from './young-generation';

describe('the young-generation bound node was started with (docs/performance.md "Young generation")', () => {
  it("reads node's flag from its command line, in either spelling", () => {
    expect(startedSemiSpaceMib(['--stack-size=4000', '--max-semi-space-size=2'], undefined)).toBe(2);
    expect(startedSemiSpaceMib(['--max_semi_space_size=4'], undefined)).toBe(4);
  });

  it('reads NODE_OPTIONS when the command line has none, and lets the command line win, as node does', () => {
    expect(startedSemiSpaceMib([], '--max-old-space-size=512 --max-semi-space-size=16')).toBe(16);
    expect(startedSemiSpaceMib(['--max-semi-space-size=2'], '--max-semi-space-size=16')).toBe(2);
  });

  it('takes the last of several, the one V8 applies', () => {
    expect(startedSemiSpaceMib(['--max-semi-space-size=2', '--max-semi-space-size=8'], undefined)).toBe(8);
  });

  it("is undefined when node was started without one (V8's own growth)", () => {
    expect(startedSemiSpaceMib(['--max-semi-space-size'], '--max-old-space-size=512')).toBeUndefined();
    expect(startedSemiSpaceMib([], undefined)).toBeUndefined();
  });

  it('is given as node spells it', () => {
    expect(SEMI_SPACE_ARGUMENT).toBe('--max-semi-space-size=8');
  });
});
