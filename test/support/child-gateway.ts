import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WAIT_GUARD_MS } from './fake-provider-a';
import { gatewayEnvironment } from './gateway-environment';

/** The repository root (this file is test/support/child-gateway.ts). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');
const MAIN = path.join(REPO_ROOT, 'src', 'main.ts');
const BUILT_MAIN = path.join(REPO_ROOT, 'dist', 'main.js');
const REGISTER = path.join(__dirname, '..', '..', 'scripts', 'register-ts.cjs');
const START_SCRIPT = path.join(REPO_ROOT, 'scripts', 'start.mjs');

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface GatewayRun extends ExitStatus {
  readonly stdout: string;
  readonly stderr: string;
}

/** A gateway running as a real child process (for signals, exit codes and stderr). */
export interface ChildGateway {
  readonly process: ChildProcess;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly home: string;
  /** Parsed pino lines from stdout so far. */
  readonly records: Record<string, unknown>[];
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<ExitStatus>;
  /** Kills the process if it still runs and removes its HOME. */
  close(): Promise<void>;
}

/** How the child runs: from source (default) or as the rig and the container run it, with Node flags. */
export interface ChildOptions {
  /** `node dist/main.js` (after `npm run build`) instead of `src/main.ts` through the TypeScript hook. */
  readonly built?: boolean;
  /** Flags for Node itself, before the entry point (`--inspect=…`, `--heapsnapshot-signal=…`). */
  readonly nodeFlags?: readonly string[];
  /** `node scripts/start.mjs`, what `npm start` runs (it builds dist/ first when it is stale). */
  readonly startScript?: boolean;
}

function spawnMain(
  settings: Record<string, string>,
  argv: readonly string[],
  home: string,
  options: ChildOptions = {},
): ChildProcess {
  const entry = options.startScript ? [START_SCRIPT] : options.built ? [BUILT_MAIN] : ['-r', REGISTER, MAIN];
  return spawn(process.execPath, [...(options.nodeFlags ?? []), ...entry, ...argv], {
    cwd: REPO_ROOT,
    env: gatewayEnvironment(settings, home),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function whenExited(child: ChildProcess): Promise<ExitStatus> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      return resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/**
 * Runs `src/main.ts` in a child process until it exits (config errors, `--help`), with a private
 * HOME. Fails the test if it is still running after `timeoutMs`.
 */
export async function runGateway(
  settings: Record<string, string>,
  argv: readonly string[] = [],
  timeoutMs = WAIT_GUARD_MS * 2,
  options: ChildOptions = {},
): Promise<GatewayRun> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-child-home-'));
  const child = spawnMain(settings, argv, home, options);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const status = await whenExited(child);
    // 'exit' can fire before the pipes are drained.
    await Promise.all([once(child.stdout!, 'close'), once(child.stderr!, 'close')]);
    if (status.signal === 'SIGKILL') throw new Error(`gateway did not exit within ${timeoutMs} ms; stderr: ${stderr}`);
    return { ...status, stdout, stderr };
  } finally {
    clearTimeout(timer);
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** A pino line; anything else on stdout is kept as `{ raw }` so a test can assert it never happens. */
function parseRecord(line: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(line) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { raw: line };
}

function once(stream: NodeJS.ReadableStream, event: string): Promise<void> {
  return new Promise((resolve) => {
    if ((stream as unknown as { closed?: boolean }).closed) return resolve();
    stream.once(event, () => resolve());
  });
}

/**
 * Starts `src/main.ts` (or, with `options.built`, `dist/main.js`) in a child process on a random
 * loopback port and resolves once its `gateway_listening` line names the port.
 */
export async function spawnGateway(
  settings: Record<string, string> = {},
  argv: readonly string[] = [],
  timeoutMs = WAIT_GUARD_MS * 2,
  options: ChildOptions = {},
): Promise<ChildGateway> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-child-home-'));
  const child = spawnMain(settings, argv, home, options);
  const records: Record<string, unknown>[] = [];
  let stdout = '';
  let stderr = '';
  let partial = '';
  const exited = whenExited(child);
  const port = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`gateway did not start within ${timeoutMs} ms; stderr: ${stderr}`)),
      timeoutMs,
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      stdout += text;
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines.filter((candidate) => candidate.trim() !== '')) {
        const record = parseRecord(line);
        records.push(record);
        if (record.event === 'gateway_listening') {
          clearTimeout(timer);
          resolve(record.port as number);
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    void exited.then((status) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited during startup (${JSON.stringify(status)}); stderr: ${stderr}`));
    });
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    fs.rmSync(home, { recursive: true, force: true });
  };
  try {
    const listeningPort = await port;
    return {
      process: child,
      url: `http://127.0.0.1:${listeningPort}`,
      home,
      records,
      stdout: () => stdout,
      stderr: () => stderr,
      exited,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
