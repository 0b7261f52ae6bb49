/**
 * Records what the real Claude Code CLI prints on stdout for each case provider_c must handle,
 * into src/providers/provider-c/__fixtures__/claude-code-<version>/<case>.jsonl (real lines,
 * unedited). The CLI runs with the gateway's own argument vector and child environment against
 * the loopback fake Messages API (test/support/fake-anthropic-api.ts). Run it offline, e.g.:
 *
 *   unshare -n sh -c 'ip link set lo up; node -r ./scripts/register-ts.cjs scripts/capture-provider-c-fixtures.ts'
 *
 * ORACLE_NODE_MODULES=<dir> runs the Claude Code installed in that node_modules folder instead of
 * the pinned one, and ORACLE_OUT_DIR=<dir> writes the cases there instead of the fixture folder
 * (`npm run oracle:drift` does both; docs/providers.md, "Following the upstream CLIs").
 * `npm run oracle:claude` compares a run with the fixtures; `npm run oracle:claude -- --capture`
 * runs this and scripts/capture-claude-auth-status.mjs into the pinned version's fixture folder.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildProviderCArgs } from '../src/providers/provider-c/provider-c.argv';
import { claudeChildEnvironment } from '../src/accounts/provider-c/provider-c.child-env';
import type { FakeReply, FakeUnifiedMeters } from '../test/support/fake-anthropic-api';
import { API_ERRORS, FakeAnthropicApi, textReply, thinkingOnlyReply } from '../test/support/fake-anthropic-api';
import { REAL_CLAUDE_PATH, realClaudeEnvironment } from '../test/support/real-claude';
import { claudeBinary } from './oracle/oracle-clis';

const CLAUDE = process.env.ORACLE_NODE_MODULES ? claudeBinary(process.env.ORACLE_NODE_MODULES) : REAL_CLAUDE_PATH;

/** A limit that resets at this Unix time (fixed, so the unit tests can compute the wait). */
export const CAPTURED_LIMIT_RESET = 1_900_000_000;
/** The minimum Claude Code version the fake API's version gate asks for (above the pinned one). */
export const CAPTURED_REQUIRED_CLIENT_VERSION = '2.1.400';

/** When the extra usage of the metered cases resets (Unix seconds, fixed like CAPTURED_LIMIT_RESET). */
export const CAPTURED_OVERAGE_RESET = 1_901_000_000;
/** When the weekly window of the metered cases resets (Unix seconds). */
export const CAPTURED_WEEK_RESET = 1_900_400_000;

/** A text answer carrying `meters` (the unified rate-limit headers of a subscription). */
const meteredAnswer = (meters: FakeUnifiedMeters): FakeReply => ({
  type: 'stream',
  blocks: [{ kind: 'text', deltas: ['Hel', 'lo'] }],
  meters,
});

const FENCE = '```agent_tool_call\n{"name":"read_file","arguments":{"path":"a"}}\n```';

interface CaptureCase {
  readonly replies: FakeReply[];
  readonly loggedIn?: boolean;
  /** Run without `--include-partial-messages`: only whole `assistant` lines, as older CLIs print. */
  readonly withoutPartialMessages?: boolean;
  /** The fake API refuses Claude Code builds below this version (its `claude_code_version_too_old` 400). */
  readonly minimumClientVersion?: string;
  /** Leave the CLI's own retry of a refused answer on, as the CLI has it without the gateway's switch. */
  readonly cliRefusalRetry?: boolean;
}

/** An answer the API's safety classifier stopped: `stop_reason: "refusal"` after some text. */
const refusedAnswer: FakeReply = {
  type: 'stream',
  blocks: [{ kind: 'text', deltas: ['I will ', 'not.'] }],
  stopReason: 'refusal',
};

/** A text answer the API stopped at the output limit (`stop_reason: "max_tokens"`). */
const cutAnswer = (text: string, outputTokens: number): FakeReply => ({
  type: 'stream',
  blocks: [{ kind: 'text', deltas: [text] }],
  stopReason: 'max_tokens',
  usage: { input_tokens: 10, output_tokens: outputTokens },
});

const CASES: Record<string, CaptureCase> = {
  text: { replies: [textReply(['Hel', 'lo'])] },
  thinking: {
    replies: [
      {
        type: 'stream',
        blocks: [
          { kind: 'thinking', deltas: ['Pon', 'dering'] },
          { kind: 'text', deltas: ['Answer'] },
        ],
      },
    ],
  },
  'thinking-fence': {
    replies: [
      {
        type: 'stream',
        blocks: [
          { kind: 'thinking', deltas: ['I should read it.\n', FENCE] },
          { kind: 'text', deltas: ['Reading.\n', FENCE] },
        ],
      },
    ],
  },
  'without-partial-messages': {
    replies: [
      {
        type: 'stream',
        blocks: [
          { kind: 'thinking', deltas: ['Hmm.'] },
          { kind: 'text', deltas: ['Hi ', FENCE] },
        ],
      },
    ],
    withoutPartialMessages: true,
  },
  'tool-fence': { replies: [textReply(['Checking.\n' + FENCE.slice(0, 7), FENCE.slice(7, 30), FENCE.slice(30)])] },
  'not-logged-in': { replies: [textReply('never sent')], loggedIn: false },
  'unauthorized-401': { replies: [API_ERRORS.unauthorized()] },
  'limit-429': { replies: [API_ERRORS.limit(CAPTURED_LIMIT_RESET)] },
  'rate-limit-429-no-reset': { replies: [API_ERRORS.temporaryLimit()] },
  // The plan's limit (`usage_limit_reached`) with a bare `rejected` event: no window, no reset.
  'daily-cap-paused-429': { replies: [API_ERRORS.dailyCapPaused()] },
  'overloaded-529': { replies: [API_ERRORS.overloaded()] },
  'credit-balance-too-low': { replies: [API_ERRORS.creditTooLow()] },
  'server-error-500': { replies: [API_ERRORS.internal()] },
  'client-too-old-400': { replies: [textReply('never sent')], minimumClientVersion: CAPTURED_REQUIRED_CLIENT_VERSION },
  // The plan's five-hour window is spent and extra usage pays for the answer (the CLI's `isUsingOverage`).
  'extra-usage-in-use': {
    replies: [
      meteredAnswer({
        status: 'rejected',
        reset: CAPTURED_LIMIT_RESET,
        representativeClaim: 'five_hour',
        windows: {
          '5h': { status: 'rejected', reset: CAPTURED_LIMIT_RESET, utilization: 1.02 },
          '7d': { status: 'allowed', reset: CAPTURED_WEEK_RESET, utilization: 0.41 },
        },
        overage: { status: 'allowed', reset: CAPTURED_OVERAGE_RESET, inUse: true },
      }),
    ],
  },
  // Within the plan; extra usage is on but not drawn.
  'extra-usage-available': {
    replies: [
      meteredAnswer({
        status: 'allowed',
        reset: CAPTURED_LIMIT_RESET,
        representativeClaim: 'five_hour',
        windows: {
          '5h': { status: 'allowed', reset: CAPTURED_LIMIT_RESET, utilization: 0.35 },
          '7d': { status: 'allowed', reset: CAPTURED_WEEK_RESET, utilization: 0.2 },
        },
        overage: { status: 'allowed', reset: CAPTURED_OVERAGE_RESET },
      }),
    ],
  },
  // Within the plan; extra usage refused because it is spent.
  'extra-usage-out-of-credits': {
    replies: [
      meteredAnswer({
        status: 'allowed',
        reset: CAPTURED_LIMIT_RESET,
        representativeClaim: 'five_hour',
        windows: { '5h': { status: 'allowed', reset: CAPTURED_LIMIT_RESET, utilization: 0.5 } },
        overage: { status: 'rejected', reset: CAPTURED_OVERAGE_RESET, disabledReason: 'out_of_credits' },
      }),
    ],
  },
  // Within the plan; the organisation turned extra usage off.
  'extra-usage-org-disabled': {
    replies: [
      meteredAnswer({
        status: 'allowed',
        reset: CAPTURED_LIMIT_RESET,
        representativeClaim: 'seven_day',
        windows: { '7d': { status: 'allowed', reset: CAPTURED_WEEK_RESET, utilization: 0.6 } },
        overage: { status: 'rejected', disabledReason: 'org_level_disabled' },
      }),
    ],
  },
  // Anthropic's third-party refusal in each wording (extra usage off or spent).
  'third-party-400': { replies: [API_ERRORS.thirdParty('plain')] },
  'third-party-credit-400': { replies: [API_ERRORS.thirdParty('credit')] },
  'third-party-organization-400': { replies: [API_ERRORS.thirdParty('organization')] },
  'out-of-extra-usage-400': { replies: [API_ERRORS.thirdParty('outOfExtraUsage')] },
  // Anthropic's long-context refusal (a conversation past 200,000 tokens without extra usage).
  'long-context-429': { replies: [API_ERRORS.longContext('extraUsage')] },
  'long-context-credits-429': { replies: [API_ERRORS.longContext('usageCredits')] },
  'failed-after-output': {
    replies: [
      {
        type: 'stream',
        blocks: [{ kind: 'text', deltas: ['Half an ', 'answer'] }],
        failMidway: { errorType: 'overloaded_error', message: 'Overloaded' },
        // The CLI's non-streaming retry fails too: it gets the broken stream again.
        alwaysStream: true,
      },
    ],
  },
  // The stream breaks mid-answer and the CLI asks again without streaming: the whole new answer.
  'abandoned-text': {
    replies: [
      {
        type: 'stream',
        blocks: [{ kind: 'text', deltas: ['Half an ', 'answer'] }],
        failMidway: { errorType: 'overloaded_error', message: 'Overloaded' },
      },
      textReply('Full new answer'),
    ],
  },
  // The stream breaks inside a fence; the non-streaming answer has the whole fence.
  'abandoned-tool-fence': {
    replies: [
      {
        type: 'stream',
        blocks: [{ kind: 'text', deltas: ['Checking.\n' + FENCE.slice(0, 7), FENCE.slice(7, 32)] }],
        failMidway: { errorType: 'overloaded_error', message: 'Overloaded' },
      },
      textReply('Checking.\n' + FENCE),
    ],
  },
  // A refused answer with the gateway's environment: the CLI ends the run on it (the second reply is never asked for).
  refusal: { replies: [refusedAnswer, textReply('Another answer.')] },
  // The same with the CLI's refusal retry on: it asks once more, with a note, and takes that answer.
  'refusal-retried': { replies: [refusedAnswer, textReply('Another answer.')], cliRefusalRetry: true },
  // A complete thinking block, then the text breaks: only the blocks from the text on are abandoned.
  'abandoned-after-thinking': {
    replies: [
      {
        type: 'stream',
        blocks: [
          { kind: 'thinking', deltas: ['Pon', 'dering'] },
          { kind: 'text', deltas: ['Half an ', 'answer'] },
        ],
        failMidway: { errorType: 'overloaded_error', message: 'Overloaded' },
      },
      {
        type: 'stream',
        blocks: [
          { kind: 'thinking', deltas: ['Pondering again'] },
          { kind: 'text', deltas: ['Full new answer'] },
        ],
      },
    ],
  },
  // An answer of thinking only (an empty text block): the CLI asks it again, with a note, and takes the new one.
  'thinking-only-asked-again': {
    replies: [
      thinkingOnlyReply(['Pon', 'dering']),
      {
        type: 'stream',
        blocks: [
          { kind: 'thinking', deltas: ['Pondering again'] },
          { kind: 'text', deltas: ['Answer'] },
        ],
      },
    ],
  },
  // The new answer is thinking only too: the CLI asks no third time, and the run succeeds without text.
  'thinking-only-twice': { replies: [thinkingOnlyReply(['Pon', 'dering'])] },
  // An answer cut at the output limit: the CLI asks the model to resume, and the next message continues it.
  'max-tokens-resumed': {
    replies: [cutAnswer('First half, ', 900), textReply('second half.', { input_tokens: 14, output_tokens: 4 })],
  },
  // Cut every time: after three resumes the CLI ends the run with an error result (`max_output_tokens`).
  'max-tokens-exhausted': {
    replies: [
      cutAnswer('Part 1. ', 9),
      cutAnswer('Part 2. ', 9),
      cutAnswer('Part 3. ', 9),
      cutAnswer('Part 4. ', 9),
      textReply('never asked'),
    ],
  },
};

async function capture(
  name: string,
  { replies, loggedIn = true, withoutPartialMessages = false, minimumClientVersion, cliRefusalRetry }: CaptureCase,
): Promise<string> {
  const api = await FakeAnthropicApi.start(replies);
  if (minimumClientVersion !== undefined) api.requireClientVersion(minimumClientVersion);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'capture-pc-home-'));
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'capture-pc-cwd-'));
  try {
    const env = claudeChildEnvironment({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...realClaudeEnvironment({ apiBaseUrl: api.baseUrl, home, loggedIn }),
    });
    if (cliRefusalRetry) delete env.CLAUDE_CODE_DISABLE_REFUSAL_RETRY;
    const args = buildProviderCArgs({ upstreamModel: 'claude-fable-5', reasoningEffort: null }).filter(
      (arg) => !(withoutPartialMessages && arg === '--include-partial-messages'),
    );
    const child = spawn(CLAUDE, args, { cwd, env, stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdin.end('User:\nSay hello\n');
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    console.log(
      `${name}: exit ${code}, ${stdout.split('\n').filter(Boolean).length} lines, ${api.messages().length} API call(s)`,
    );
    return stdout;
  } finally {
    await api.close();
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(cwd, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const version = execFileSync(CLAUDE, ['--version'], { encoding: 'utf8' }).split(' ')[0].trim();
  const dir =
    process.env.ORACLE_OUT_DIR ??
    path.join(__dirname, '..', 'src', 'providers', 'provider-c', '__fixtures__', `claude-code-${version}`);
  fs.mkdirSync(dir, { recursive: true });
  // Optional arguments: only these cases (e.g. after adding one), else every case.
  const only = process.argv.slice(2);
  for (const [name, captureCase] of Object.entries(CASES).filter(
    ([name]) => only.length === 0 || only.includes(name),
  )) {
    fs.writeFileSync(path.join(dir, `${name}.jsonl`), await capture(name, captureCase));
  }
}

if (require.main === module)
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
