import { semiSpaceRestartArgs, startedSemiSpaceMib } from './semi-space-cap';

const started = {
  execPath: '/usr/local/bin/node',
  execArgv: ['--stack-size=4000'],
  argv: ['/usr/local/bin/node', '/app/dist/main.js', '--port', '0'],
  env: {},
};

describe('the young-generation cap (docs/performance.md "Young generation")', () => {
  it('starts node again with its own flag, keeping its flags, the program and its arguments', () => {
    expect(semiSpaceRestartArgs(8, started)).toEqual([
      '/usr/local/bin/node',
      '--max-semi-space-size=8',
      '--stack-size=4000',
      '/app/dist/main.js',
      '--port',
      '0',
    ]);
  });

  it('goes on as it is when the cap is off', () => {
    expect(semiSpaceRestartArgs(0, started)).toBeUndefined();
  });

  it('goes on as it is when node was started with a bound: the operator chose it', () => {
    expect(semiSpaceRestartArgs(8, { ...started, execArgv: ['--max-semi-space-size=2'] })).toBeUndefined();
    expect(
      semiSpaceRestartArgs(8, {
        ...started,
        env: { NODE_OPTIONS: '--max-old-space-size=512 --max-semi-space-size=16' },
      }),
    ).toBeUndefined();
  });

  it('reads the bound in force: the command line before NODE_OPTIONS, the last flag of each', () => {
    expect(startedSemiSpaceMib(['--max-semi-space-size=4'], '--max-semi-space-size=16')).toBe(4);
    expect(startedSemiSpaceMib([], ' --max-old-space-size=512  --max-semi-space-size=16 ')).toBe(16);
    expect(startedSemiSpaceMib(['--max_semi_space_size=2', '--max-semi-space-size=3'], undefined)).toBe(3);
    expect(startedSemiSpaceMib(['--max-old-space-size=512'], '')).toBeUndefined();
  });
});
