import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunFailed } from './provider-c.errors';
import { LineSplitter } from './provider-c.line-splitter';
import { errnoOf } from '../../common/errno';

/** docs/upstream/provider-c.md §3.4: stderr is kept only as a rolling tail for error classification. */
const STDERR_TAIL_BYTES = 64 * 1024;
/** docs/upstream/provider-c.md §3.6: SIGTERM first, SIGKILL when the group is still there after this long. */
const KILL_GRACE_MS = 2000;
/**
 * docs/upstream/provider-c.md §3.6: how long after the child exited its pipes may stay open (a
 * helper it left behind holds them); then the group is killed and the pipes let go.
 */
const EXIT_DRAIN_MS = 2000;

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** spawn() failed (`ENOENT`, `EACCES`, …). */
  readonly spawnError?: string;
}

export interface ChildSpawnOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The complete child environment (docs/upstream/provider-c.md §3.2); nothing else is inherited. */
  readonly env: Readonly<Record<string, string>>;
  /** Written to stdin as UTF-8, then stdin is closed (never in argv, docs/upstream/provider-c.md §3.4). */
  readonly stdin: string;
}

/**
 * One `claude` child (docs/upstream/provider-c.md §3): spawned directly (no shell) as the leader of its own process group
 * in a fresh private working directory; terminate = close stdin, SIGTERM to the group, SIGKILL
 * after 2 s; `reaped` resolves after the `close` event (all stdio closed, exit status known) and
 * the working directory was removed. Pipes still open 2 s after the exit are let go
 * (`releasePipes`). Never `unref`ed: the gateway always waits for its children.
 */
export class ClaudeChild {
  /** Why we terminated it, when we did (first reason wins). */
  terminatedBy?: string;
  readonly startedAt = Date.now();
  readonly closed: Promise<ChildExit>;
  readonly reaped: Promise<ChildExit>;
  private hasClosed = false;
  private hasExited = false;
  private discardRequested = false;
  /** The pipes were let go after the exit (`releasePipes`): their early end is no failure. */
  private pipesReleased = false;
  private stderrTail = Buffer.alloc(0);
  private killTimer?: NodeJS.Timeout;
  private drainTimer?: NodeJS.Timeout;
  private spawnError?: string;

  private constructor(
    private readonly child: ChildProcess,
    readonly workDir: string,
  ) {
    this.closed = new Promise((resolve) => {
      child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
        this.hasClosed = true;
        clearTimeout(this.drainTimer);
        // A terminated group keeps its SIGKILL timer: a helper that ignored SIGTERM and let go
        // of our pipes still gets killed. It must not keep the gateway alive, though.
        this.killTimer?.unref();
        resolve({ code, signal, ...(this.spawnError ? { spawnError: this.spawnError } : {}) });
      });
    });
    child.once('exit', () => {
      this.hasExited = true;
      if (this.discardRequested) this.destroyStdout();
      // `close` waits for every pipe to end: normally at once, but a helper the CLI left behind
      // may hold them for as long as it lives.
      this.drainTimer = setTimeout(() => this.releasePipes(), EXIT_DRAIN_MS);
    });
    this.reaped = this.closed.then(async (exit) => {
      await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
      return exit;
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      // Only spawn failures arrive here (we never send signals through child.kill()).
      this.spawnError = error.code ?? 'spawn_error';
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      const joined = Buffer.concat([this.stderrTail, chunk]);
      this.stderrTail = joined.length > STDERR_TAIL_BYTES ? joined.subarray(joined.length - STDERR_TAIL_BYTES) : joined;
    });
  }

  /**
   * Creates the private working directory and spawns the child; spawn failures surface in
   * `closed`, except arguments spawn() refuses outright, which reject as a `spawn` run failure (`RunFailed`).
   */
  static async start(options: ChildSpawnOptions): Promise<ClaudeChild> {
    const workDir = await mkdtemp(path.join(os.tmpdir(), 'gateway-pc-'));
    // The CLI's own temp directory (CLAUDE_CODE_TMPDIR, before TMPDIR) inside the working one: what
    // it leaves there (its fs.watch probe, whose cleanup our SIGTERM cuts short) goes with the directory.
    const tempDir = path.join(workDir, 'tmp');
    let child: ChildProcess;
    try {
      await mkdir(tempDir, { mode: 0o700 });
      child = spawn(options.command, options.args, {
        cwd: workDir,
        env: { ...options.env, CLAUDE_CODE_TMPDIR: tempDir },
        detached: true,
        shell: false,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (error) {
      // spawn() rejects some arguments synchronously (a NUL byte in a passthrough model name), or
      // the temp directory could not be made: there is no child whose `close` would remove the
      // directory, and Node's message quotes the argument, so only its code travels on, as the
      // same failure as an async one.
      await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
      throw new RunFailed({ kind: 'spawn', errno: errnoOf(error) ?? 'spawn_error' });
    }
    const run = new ClaudeChild(child, workDir);
    // EPIPE when the child exits without reading: its exit status explains the failure.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.stdin, 'utf8');
    return run;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get isClosed(): boolean {
    return this.hasClosed;
  }

  /** The stderr tail: its last line classifies a failed run and, sanitized, is the one logged (`upstream_message`); never sent. */
  stderr(): string {
    return this.stderrTail.toString('utf8');
  }

  /** stdout as lines (docs/upstream/provider-c.md §3.4); throws LineTooLongError past 16 MiB. Read once. */
  async *lines(): AsyncGenerator<string> {
    const stdout = this.child.stdout;
    if (!stdout) return;
    const splitter = new LineSplitter();
    try {
      for await (const chunk of stdout as AsyncIterable<Buffer>) {
        yield* splitter.push(chunk);
      }
    } catch (error) {
      // Let go after the exit, stdout ends where the child's output ended.
      if (!this.pipesReleased) throw error;
    }
    const last = splitter.end();
    if (last !== undefined) yield last;
  }

  /**
   * We need no more output. Unread stdout keeps `close` from ever firing, so it is dropped, but
   * only once the child has exited: dropping it earlier would kill the child with EPIPE before
   * it could handle SIGTERM (or finish on its own after its result line).
   */
  discardOutput(): void {
    this.discardRequested = true;
    if (this.hasExited || this.spawnError !== undefined) this.destroyStdout();
  }

  private destroyStdout(): void {
    if (this.child.stdout && !this.child.stdout.destroyed) this.child.stdout.destroy();
  }

  /**
   * The child exited a while ago and its pipes are still open: what is left of its group is
   * killed, and the pipes are let go so `close` fires and the run ends. Stdout is let go only
   * once its reader took everything buffered (a slow reader loses none of the child's output);
   * a helper in a session of its own lives on, but no longer holds the run.
   */
  private releasePipes(): void {
    if (this.hasClosed) return;
    const pid = this.child.pid;
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
    const { stdout, stderr } = this.child;
    if (stdout && !stdout.destroyed && stdout.readableLength > 0) {
      this.drainTimer = setTimeout(() => this.releasePipes(), EXIT_DRAIN_MS);
      return;
    }
    this.pipesReleased = true;
    this.destroyStdout();
    if (stderr && !stderr.destroyed) stderr.destroy();
  }

  /**
   * The gateway process is exiting (`killChildrenOnExit`): no time for the grace, so SIGKILL to
   * the group and the directory removed at once, synchronously.
   */
  killNow(): void {
    const pid = this.child.pid;
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
    try {
      rmSync(this.workDir, { recursive: true, force: true });
    } catch {
      // Nothing more can be done while exiting.
    }
  }

  /** docs/upstream/provider-c.md §3.6 steps 1–3; idempotent. Step 4 (wait for `close`) is `reaped`. */
  terminate(reason: string): void {
    if (this.hasClosed || this.terminatedBy !== undefined) return;
    this.terminatedBy = reason;
    this.child.stdin?.destroy();
    const pid = this.child.pid;
    if (pid === undefined) return;
    signalGroup(pid, 'SIGTERM');
    this.killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
  }
}

/**
 * While installed, the gateway process exiting by any path (`process.exit` on a second signal, a
 * crash) first kills every child in `live` and removes its directory: children lead their own
 * process groups, so nothing else would stop them. Returns the uninstaller.
 */
export function killChildrenOnExit(live: ReadonlySet<ClaudeChild>): () => void {
  const onExit = () => {
    for (const child of live) child.killNow();
  };
  process.on('exit', onExit);
  return () => void process.off('exit', onExit);
}

/** Signals the whole process group (negative pid), so helpers the CLI started stop with it. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}
