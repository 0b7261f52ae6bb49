import * as fs from 'node:fs';
import * as path from 'node:path';
import { WAIT_GUARD_MS } from './fake-provider-a';
import { eventually } from './poll';
import { claudeCapturePath } from './oracle-pins';

/**
 * The argument vector the gateway gives `claude` up to the model (docs/upstream/provider-c.md §3.1 plus the
 * isolation flags), written out here rather than taken from the code so the tests pin it.
 */
export const CLAUDE_ARGV_BEFORE_MODEL: readonly string[] = [
  '-p',
  '--verbose',
  '--output-format=stream-json',
  '--include-partial-messages',
  '--no-session-persistence',
  '--setting-sources',
  '',
  '--strict-mcp-config',
  '--safe-mode',
  '--disable-slash-commands',
  '--tools',
  '',
  '--model',
];

/** Absolute path of the fake `claude` executable (docs/upstream/provider-c.md §10). */
export const FAKE_CLAUDE_PATH = path.join(__dirname, 'fake-claude.mjs');

/** One stdout item of a scripted run: a JSON line, or raw text (a newline is appended to both). */
export type FakeClaudeStdoutItem =
  | { readonly line: Record<string, unknown>; readonly delayMs?: number }
  | { readonly raw: string; readonly delayMs?: number };

/** One scripted run of the fake; run n of the gateway plays `runs[n]` (the last one repeats). */
export interface FakeClaudeRun {
  /** Read the prompt from stdin to EOF first and save it as `stdin.txt`. `providerCSettings` defaults it to true. */
  readonly readStdin?: boolean;
  readonly stdout?: readonly FakeClaudeStdoutItem[];
  /** Written to stderr after stdout. */
  readonly stderr?: string;
  /** Exit status when not hanging (default 0). */
  readonly exitCode?: number;
  /** Stay alive after printing, until signalled (cancel, timeout and idle tests). */
  readonly hang?: boolean;
  /** On SIGTERM, record it (`signal.txt`) and keep running: only the gateway's SIGKILL after its grace ends the run. */
  readonly ignoreSigterm?: boolean;
  /** After printing, die by this signal (a crash the real CLI cannot be made to have). */
  readonly killWith?: NodeJS.Signals;
  /** Answer any prompt (`npm run demo`): a tool call when tools are offered and unanswered, else text. */
  readonly demo?: boolean;
  /**
   * Before printing, start a `sleep` that inherits stdout and stderr and outlives the fake: in its
   * process group (`group`) or in a session of its own (`session`). Its pid is `helperPid`.
   */
  readonly helper?: 'group' | 'session';
}

/** What one run of the fake recorded. */
export interface FakeClaudeRecord {
  readonly index: number;
  readonly dir: string;
  readonly argv: string[];
  readonly cwd: string;
  /** Presence flags only (the fake never records secret values), plus the CLI retry setting. */
  readonly env: {
    GATEWAY_BEARER_SECRET: boolean;
    ANTHROPIC_API_KEY: boolean;
    CLAUDE_CODE_OAUTH_TOKEN: boolean;
    CLAUDECODE: boolean;
    CLAUDE_CODE_ENTRYPOINT: boolean;
    CLAUDE_CODE_SESSION_ID: boolean;
    ANTHROPIC_AUTH_TOKEN: boolean;
    CLAUDE_CODE_USE_BEDROCK: boolean;
    ANTHROPIC_FOUNDRY_API_KEY: boolean;
    ANTHROPIC_BASE_URL: boolean;
    CLAUDE_CODE_MAX_RETRIES: string | null;
  };
  readonly pid: number;
  /** The prompt it read, when the run had `readStdin`. */
  readonly stdin?: string;
  /** `SIGTERM` when it was terminated. */
  readonly signal?: string;
  /** The pid of the run's `helper`, once started. */
  readonly helperPid?: number;
  /** Epoch ms when the fake started and when it exited (absent while it still runs). */
  readonly startedAt: number;
  readonly exitedAt?: number;
}

/** Env settings that point the gateway at the fake (pass them to `startGateway` or `loadConfig`). */
export interface ProviderCFakeSettings {
  readonly PROVIDER_C_COMMAND: string;
  readonly FAKE_CLAUDE_SCRIPT: string;
  readonly FAKE_CLAUDE_RECORD_DIR: string;
  readonly [name: string]: string;
}

/**
 * Writes the fake's script (`<dir>/fake-claude-script.json`) and record directory
 * (`<dir>/records`) and returns the settings for the gateway. The gateway hands its whole
 * environment to the child, so FAKE_* reach the fake. Example:
 *
 * ```ts
 * const gateway = await startGateway({ ...providerCSettings(dir, [{ stdout: [{ line: initLine() }, { line: textDelta('Hi') }, { line: resultLine() }] }]), GATEWAY_PROVIDERS: 'provider_c' });
 * ```
 */
export function providerCSettings(dir: string, runs: readonly FakeClaudeRun[]): ProviderCFakeSettings {
  const scriptPath = path.join(dir, 'fake-claude-script.json');
  const recordDir = path.join(dir, 'records');
  fs.mkdirSync(recordDir, { recursive: true });
  const script = { runs: runs.map((run) => ({ readStdin: true, ...run })) };
  fs.writeFileSync(scriptPath, JSON.stringify(script, null, 2));
  return { PROVIDER_C_COMMAND: FAKE_CLAUDE_PATH, FAKE_CLAUDE_SCRIPT: scriptPath, FAKE_CLAUDE_RECORD_DIR: recordDir };
}

/** The argv of each `auth status` ask the fake answered with FAKE_CLAUDE_RECORD_DIR=`recordDir`, in order. */
export function readAuthStatusArgv(recordDir: string): string[][] {
  const file = path.join(recordDir, 'auth-status-argv.jsonl');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as string[]);
}

/** Every run the fake recorded under `<dir>/records`, in run order. */
export function readRuns(dir: string): FakeClaudeRecord[] {
  const recordDir = path.join(dir, 'records');
  if (!fs.existsSync(recordDir)) return [];
  const read = (runDir: string, name: string) => {
    const file = path.join(runDir, name);
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
  };
  return fs
    .readdirSync(recordDir)
    .filter((name) => /^run-\d+$/.test(name))
    .map((name) => Number(name.slice(4)))
    .sort((a, b) => a - b)
    .map((index) => {
      const runDir = path.join(recordDir, `run-${index}`);
      const exitedAt = read(runDir, 'exited-at.txt');
      return {
        index,
        dir: runDir,
        argv: JSON.parse(read(runDir, 'argv.json') ?? '[]') as string[],
        cwd: read(runDir, 'cwd.txt') ?? '',
        env: JSON.parse(read(runDir, 'env.json') ?? '{}') as FakeClaudeRecord['env'],
        pid: Number(read(runDir, 'pid.txt') ?? 0),
        stdin: read(runDir, 'stdin.txt'),
        signal: read(runDir, 'signal.txt'),
        helperPid: read(runDir, 'helper-pid.txt') === undefined ? undefined : Number(read(runDir, 'helper-pid.txt')),
        startedAt: Number(read(runDir, 'started-at.txt') ?? 0),
        exitedAt: exitedAt === undefined ? undefined : Number(exitedAt),
      };
    });
}

// ── stream-json line builders ───────────────────────────────────────────────────────────────────
// Each builder copies a line the pinned real Claude Code printed (src/providers/provider-c/
// __fixtures__/claude-code-<pin>/) and changes only the scripted fields, so the fake `claude`
// prints what the real one prints.
const capturedFiles = new Map<string, Record<string, any>[]>();

/** A deep copy of the first captured line of `file` that `matches`. */
function capturedLine(file: string, matches: (line: Record<string, any>) => boolean): Record<string, any> {
  let lines = capturedFiles.get(file);
  if (!lines) {
    lines = fs
      .readFileSync(claudeCapturePath(`${file}.jsonl`), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, any>);
    capturedFiles.set(file, lines);
  }
  const found = lines.find(matches);
  if (!found) throw new Error(`no such line in the captured ${file}.jsonl`);
  return structuredClone(found);
}

const isDelta = (kind: string) => (line: Record<string, any>) =>
  line.type === 'stream_event' && line.event?.delta?.type === kind;

/** `{"type":"system","subtype":"init",…}`: printed before the CLI calls the API (not an acceptance). */
export function initLine(model = 'claude-fable-5', sessionId = 's-1'): Record<string, unknown> {
  return {
    ...capturedLine('text', (line) => line.type === 'system' && line.subtype === 'init'),
    model,
    session_id: sessionId,
  };
}

/** A partial-message text delta (content channel). */
export function textDelta(text: string, index = 0): Record<string, unknown> {
  const line = capturedLine('text', isDelta('text_delta'));
  line.event.index = index;
  line.event.delta.text = text;
  return line;
}

/** A partial-message thinking delta (reasoning channel). */
export function thinkingDelta(thinking: string, index = 0): Record<string, unknown> {
  const line = capturedLine('thinking', isDelta('thinking_delta'));
  line.event.index = index;
  line.event.delta.thinking = thinking;
  return line;
}

/** `message_delta` with a stop reason (`end_turn`, `max_tokens`, `refusal`, …) and usage (none unless given). */
export function messageDelta(stopReason: string, usage?: Record<string, number>): Record<string, unknown> {
  const line = capturedLine(
    'text',
    (candidate) => candidate.type === 'stream_event' && candidate.event?.type === 'message_delta',
  );
  line.event.delta.stop_reason = stopReason;
  if (usage) line.event.usage = usage;
  else delete line.event.usage;
  return line;
}

export interface ResultLineOptions {
  /** An error result (`is_error: true`, `terminal_reason: "api_error"`, no structured API status). */
  readonly isError?: boolean;
  /** The `result` text (for errors: what the gateway classifies; never shown to clients). */
  readonly text?: string;
  /** Usage on the line; without it the line carries none and the gateway uses the streamed usage. */
  readonly usage?: Record<string, number>;
}

/** The terminal `result` line. */
export function resultLine({ isError = false, text = '', usage }: ResultLineOptions = {}): Record<string, unknown> {
  const line = isError
    ? capturedLine('failed-after-output', (candidate) => candidate.type === 'result')
    : capturedLine('text', (candidate) => candidate.type === 'result');
  line.result = text;
  line.session_id = 's-1';
  if (usage) line.usage = usage;
  else delete line.usage;
  return line;
}

/** A complete `agent_tool_call` block as the model writes it (opener line, JSON, closing line). */
export function fenceText(name: string, args: unknown): string {
  return '```agent_tool_call\n' + JSON.stringify({ name, arguments: args }) + '\n```';
}

/** A scripted run that answers `text` (one delta per piece when given pieces) and ends successfully. */
export function answerRun(text: string | readonly string[], usage?: Record<string, number>): FakeClaudeRun {
  const pieces = typeof text === 'string' ? [text] : text;
  return {
    stdout: [
      { line: initLine() },
      ...pieces.map((piece) => ({ line: textDelta(piece) })),
      { line: messageDelta('end_turn') },
      { line: resultLine({ text: pieces.join(''), usage }) },
    ],
  };
}

/** A run that prints `text` as one delta and then stays alive until it is signalled. */
export function hangingRun(text = 'partial'): FakeClaudeRun {
  return { stdout: [{ line: initLine() }, { line: textDelta(text) }], hang: true };
}

// ── process checks ──────────────────────────────────────────────────────────────────────────────

/** True while a process with `pid` exists (signal 0 only checks). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Polls until `condition` holds; rejects when it is still false after `expectedMs`, but never
 * sooner than WAIT_GUARD_MS: the number a caller gives is how long it takes on an idle machine,
 * not a limit a busy 2-core machine must meet (tests must pass beside a CPU-heavy job).
 */
export function waitFor(condition: () => boolean, expectedMs: number): Promise<void> {
  return eventually(condition, Math.max(expectedMs, WAIT_GUARD_MS));
}
