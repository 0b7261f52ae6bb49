import { capSemiSpace, semiSpaceRestartArgs, startedSemiSpaceMib } from './semi-space-cap';

const started = {
  execPath: '/nonexistent/node',
  execArgv: ['--stack-size=4000'],
  argv: ['/nonexistent/node', '/app/dist/main.js', '--port', '0'],
  env: {},
};

describe('the young-generation cap (docs/performance.md "Young generation")', () => {
  it('starts node again with its own flag, keeping its flags, the program and its arguments', () => {
    expect(semiSpaceRestartArgs(8, started)).toEqual([
      '/nonexistent/node',
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

  it('says why when node cannot replace the process, and goes on', () => {
    const unavailable = Object.assign(new Error('process.execve is not available on win32'), {
      code: 'ERR_FEATURE_UNAVAILABLE_ON_PLATFORM',
    });
    const execve = jest.fn((): never => {
      throw unavailable;
    });
    expect(capSemiSpace(8, started, execve)).toBe(
      'node could not restart itself with --max-semi-space-size: ERR_FEATURE_UNAVAILABLE_ON_PLATFORM',
    );
    expect(execve).toHaveBeenCalledWith(
      '/nonexistent/node',
      ['/nonexistent/node', '--max-semi-space-size=8', '--stack-size=4000', '/app/dist/main.js', '--port', '0'],
      {},
    );
    expect(capSemiSpace(8, started, null)).toBe(
      'this node cannot replace a running process (it has no process.execve)',
    );
  });

  it('does not restart when there is nothing to change', () => {
    const execve = jest.fn((): never => {
      throw new Error('not expected');
    });
    expect(capSemiSpace(0, started, execve)).toBeUndefined();
    expect(capSemiSpace(8, { ...started, env: { NODE_OPTIONS: '--max-semi-space-size=4' } }, execve)).toBeUndefined();
    expect(execve).not.toHaveBeenCalled();
  });
});
