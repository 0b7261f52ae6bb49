import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { ClaudeChild } from './provider-c.process';

/** Every child a test started: killed after it, whatever the test asserted. */
const started: ClaudeChild[] = [];
/** Helpers a child left behind in a session of their own: killed after the test too. */
const helpers: number[] = [];

/** A child that runs `script` in Node in place of the CLI (the gateway passes no PATH, so Node's own path). */
async function startNode(script: string, stdin = ''): Promise<ClaudeChild> {
  const child = await ClaudeChild.start({ command: process.execPath, args: ['-e', script], env: {}, stdin });
  started.push(child);
  return child;
}

async function readLines(child: ClaudeChild): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of child.lines()) lines.push(line);
  return lines;
}

/** A child that prints `ready` once it ignores SIGTERM, then lives until SIGKILL. */
const IGNORES_SIGTERM =
  "process.on('SIGTERM', () => undefined); process.stdout.write('ready\\n'); setInterval(() => undefined, 1 << 30);";

describe('ClaudeChild (docs/upstream/provider-c.md §3)', () => {
  afterEach(async () => {
    jest.useRealTimers();
    jest.restoreAllMocks();
    for (const pid of helpers.splice(0)) process.kill(pid, 'SIGKILL');
    for (const child of started.splice(0)) {
      if (!child.isClosed) child.killNow();
      child.discardOutput();
      await child.reaped;
    }
  });

  it('yields the last stdout line even when the child ends it without a newline', async () => {
    const child = await startNode('process.stdout.write(\'{"type":"first"}\\n{"type":"result"}\')');
    expect(await readLines(child)).toEqual(['{"type":"first"}', '{"type":"result"}']);
    expect(await child.reaped).toMatchObject({ code: 0 });
  });

  it('keeps the end of a stderr longer than its 64 KiB tail, where the line that classifies the failure is', async () => {
    const child = await startNode(
      "process.stderr.write('x'.repeat(100 * 1024) + '\\nError: usage limit reached\\n', () => process.exit(1));",
    );
    await readLines(child);
    await child.reaped;
    const stderr = child.stderr();
    expect(Buffer.byteLength(stderr)).toBe(64 * 1024);
    expect(stderr.endsWith('\nError: usage limit reached\n')).toBe(true);
  });

  it('gives the CLI a temp directory of its own inside the work dir, removed with it', async () => {
    const child = await startNode(
      "const dir = process.env.CLAUDE_CODE_TMPDIR; process.stdout.write(dir + ' ' + require('node:fs').existsSync(dir) + '\\n');",
    );
    expect(await readLines(child)).toEqual([`${path.join(child.workDir, 'tmp')} true`]);
    await child.reaped;
    expect(existsSync(child.workDir)).toBe(false);
  });

  it('keeps the first termination reason: a timeout later closed as the turn ends is still a timeout', async () => {
    const child = await startNode(IGNORES_SIGTERM);
    const lines = child.lines();
    expect((await lines.next()).value).toBe('ready');
    child.terminate('timeout');
    child.terminate('turn_end');
    expect(child.terminatedBy).toBe('timeout');
    child.killNow();
    child.discardOutput();
    await child.reaped;
    expect(child.terminatedBy).toBe('timeout');
  });

  it('sends SIGKILL to a group that ignores SIGTERM 2 s after the SIGTERM, not later', async () => {
    const child = await startNode(IGNORES_SIGTERM);
    const lines = child.lines();
    expect((await lines.next()).value).toBe('ready');
    const kill = jest.spyOn(process, 'kill');
    // Only the grace timer is faked: the child's pipes and exit stay real.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    child.terminate('timeout');
    expect(kill).toHaveBeenCalledWith(-child.pid!, 'SIGTERM');
    jest.advanceTimersByTime(1999);
    expect(kill).not.toHaveBeenCalledWith(-child.pid!, 'SIGKILL');
    jest.advanceTimersByTime(1);
    expect(kill).toHaveBeenCalledWith(-child.pid!, 'SIGKILL');
    jest.useRealTimers();
    child.discardOutput();
    expect(await child.reaped).toMatchObject({ signal: 'SIGKILL' });
  });

  it('lets go of pipes a helper holds after the child exited, once its reader took every line: the run ends', async () => {
    // The helper sits in a session of its own (out of the group's SIGKILL) and holds stdout and stderr.
    const child = await startNode(
      "const helper = require('node:child_process').spawn('sleep', ['300'], { detached: true, stdio: ['ignore', 'inherit', 'inherit'] });" +
        " helper.unref(); process.stdout.write(helper.pid + '\\n');",
    );
    const lines: string[] = [];
    for await (const line of child.lines()) {
      lines.push(line);
      helpers.push(Number(line));
    }
    expect(lines).toEqual([String(helpers[0])]);
    expect(await child.reaped).toMatchObject({ code: 0 });
    // A hang guard, not a speed bound: without the release the reader waits as long as the helper lives.
  }, 20_000);
});
