#!/usr/bin/env node
// A fake `claude` CLI for provider_c tests (docs/upstream/provider-c.md §10). It plays one scripted run from
// FAKE_CLAUDE_SCRIPT and records what it saw under FAKE_CLAUDE_RECORD_DIR/run-<n>/:
//   argv.json, cwd.txt, env.json (presence flags only, never values of secrets), pid.txt, stdin.txt
//   (when readStdin), signal.txt (on SIGTERM), plus started-at.txt / exited-at.txt (epoch ms)
//   so tests can check that runs did not overlap.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

// `claude auth status --json` (the gateway's startup login report) answers like the real CLI
// (src/providers/provider-c/__fixtures__/claude-code-2.1.332/auth-status.json) and is not a run:
// it takes no run index and records only its argv, one JSON array per line appended to
// FAKE_CLAUDE_RECORD_DIR/auth-status-argv.jsonl (when that is set). FAKE_CLAUDE_LOGGED_IN=0 plays a
// CLI without a login; FAKE_CLAUDE_AUTH_METHOD (default `oauth_token`) and FAKE_CLAUDE_API_PROVIDER
// (default `firstParty`) play a CLI logged in some other way, such as `api_key` (it would bill an
// API key). The gateway asks it as `claude --setting-sources "" auth status --json`.
const statusAt = process.argv.indexOf('auth');
if (statusAt >= 2 && process.argv[statusAt + 1] === 'status') {
  if (process.env.FAKE_CLAUDE_RECORD_DIR) {
    fs.mkdirSync(process.env.FAKE_CLAUDE_RECORD_DIR, { recursive: true });
    const argvLog = path.join(process.env.FAKE_CLAUDE_RECORD_DIR, 'auth-status-argv.jsonl');
    fs.appendFileSync(argvLog, `${JSON.stringify(process.argv.slice(2))}\n`);
  }
  const loggedIn = process.env.FAKE_CLAUDE_LOGGED_IN !== '0';
  const authMethod = loggedIn ? (process.env.FAKE_CLAUDE_AUTH_METHOD ?? 'oauth_token') : 'none';
  const apiProvider = process.env.FAKE_CLAUDE_API_PROVIDER ?? 'firstParty';
  process.stdout.write(`${JSON.stringify({ loggedIn, authMethod, apiProvider }, null, 2)}\n`);
  process.exit(loggedIn ? 0 : 1);
}

// `claude --version` (asked once at startup by the login report) answers like the real CLI and is
// not a run either.
if (process.argv[2] === '--version') {
  process.stdout.write('2.1.332 (Claude Code)\n');
  process.exit(0);
}

const scriptPath = process.env.FAKE_CLAUDE_SCRIPT;
const recordRoot = process.env.FAKE_CLAUDE_RECORD_DIR;
if (!scriptPath || !recordRoot) {
  process.stderr.write('fake-claude: FAKE_CLAUDE_SCRIPT and FAKE_CLAUDE_RECORD_DIR are required\n');
  process.exit(2);
}

// 1. The run index: the first run-<n> directory this process manages to create (exclusive
//    mkdir, so concurrent fakes never share an index).
fs.mkdirSync(recordRoot, { recursive: true });
let index = 0;
let recordDir;
for (;;) {
  recordDir = path.join(recordRoot, `run-${index}`);
  try {
    fs.mkdirSync(recordDir);
    break;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    index++;
  }
}
// Written whole, then renamed: a test polling the run never reads a half-written record.
const record = (name, content) => {
  const file = path.join(recordDir, name);
  fs.writeFileSync(`${file}.partial`, content);
  fs.renameSync(`${file}.partial`, file);
};
record('started-at.txt', String(Date.now()));

const script = JSON.parse(fs.readFileSync(scriptPath, 'utf8'));
const runs = Array.isArray(script.runs) && script.runs.length > 0 ? script.runs : [{}];
const run = runs[Math.min(index, runs.length - 1)];

// 6. SIGTERM → signal.txt, exit 143; or, with `ignoreSigterm`, signal.txt only: a CLI slow to
//    stop, which only the gateway's SIGKILL after its grace ends.
process.on('SIGTERM', () => {
  record('signal.txt', 'SIGTERM');
  if (run.ignoreSigterm === true) return;
  record('exited-at.txt', String(Date.now()));
  process.exit(143);
});

// 2. What it was started with.
record('argv.json', JSON.stringify(process.argv.slice(2)));
record('cwd.txt', process.cwd());
record(
  'env.json',
  JSON.stringify({
    GATEWAY_BEARER_SECRET: process.env.GATEWAY_BEARER_SECRET !== undefined,
    ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY !== undefined,
    CLAUDE_CODE_OAUTH_TOKEN: process.env.CLAUDE_CODE_OAUTH_TOKEN !== undefined,
    CLAUDECODE: process.env.CLAUDECODE !== undefined,
    CLAUDE_CODE_ENTRYPOINT: process.env.CLAUDE_CODE_ENTRYPOINT !== undefined,
    CLAUDE_CODE_SESSION_ID: process.env.CLAUDE_CODE_SESSION_ID !== undefined,
    ANTHROPIC_AUTH_TOKEN: process.env.ANTHROPIC_AUTH_TOKEN !== undefined,
    CLAUDE_CODE_USE_BEDROCK: process.env.CLAUDE_CODE_USE_BEDROCK !== undefined,
    ANTHROPIC_FOUNDRY_API_KEY: process.env.ANTHROPIC_FOUNDRY_API_KEY !== undefined,
    ANTHROPIC_BASE_URL: process.env.ANTHROPIC_BASE_URL !== undefined,
    // Not a secret: the gateway's default for the CLI's own API retries.
    CLAUDE_CODE_MAX_RETRIES: process.env.CLAUDE_CODE_MAX_RETRIES ?? null,
  }),
);
record('pid.txt', String(process.pid));

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const write = (stream, text) =>
  new Promise((resolve) => (text === '' ? resolve() : stream.write(text, () => resolve())));

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * `{"demo": true}` runs answer any prompt (`npm run demo`): when the prompt offers tools and no
 * tool result came back yet, call the first tool with example arguments in an agent_tool_call
 * fence; otherwise answer in a few text deltas.
 */
function demoStdout(prompt) {
  const line = (value) => ({ line: value });
  const delta = (text) =>
    line({
      type: 'stream_event',
      event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    });
  const toolsLine = prompt
    .split('\n')
    .find((text, position, all) => position > 0 && all[position - 1].startsWith('Available tools (JSON):'));
  const tools = toolsLine ? JSON.parse(toolsLine) : [];
  const answered = /\n\nTool result[^\n]*:\n/.test(prompt);
  const out = [line({ type: 'system', subtype: 'init', session_id: 'demo', model: 'claude-fable-5' })];
  if (tools.length > 0 && !answered) {
    const tool = tools[0];
    const args = {};
    for (const name of tool.parameters?.required ?? Object.keys(tool.parameters?.properties ?? {}))
      args[name] = 'README.md';
    const fence =
      '```agent_tool_call\n' +
      JSON.stringify({ name: tool.name, arguments: tool.type === 'custom' ? 'demo input' : args }) +
      '\n```';
    out.push(delta('I will use a tool.\n'), delta(fence.slice(0, 20)), delta(fence.slice(20)));
  } else {
    const words = (
      answered
        ? 'The tool result arrived; here is my final answer from the fake Claude Code.'
        : 'Hello from the fake Claude Code CLI behind the gateway.'
    ).split(' ');
    for (const word of words) out.push({ ...delta(word + ' '), delayMs: 40 });
  }
  out.push(
    line({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: '',
      session_id: 'demo',
      usage: { input_tokens: 12, output_tokens: 8, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    }),
  );
  return out;
}

async function main() {
  // 3. The prompt, read to EOF first.
  const prompt = run.readStdin === true || run.demo === true ? await readStdin() : '';
  if (run.readStdin === true) record('stdin.txt', prompt);
  // A helper that holds our stdout and stderr and outlives us: in our process group, or in a
  // session of its own (out of the group's reach). Started before any output, so it is running
  // whenever the gateway acts on that output. Its pid goes to helper-pid.txt.
  if (run.helper) {
    const helper = spawn('sleep', ['300'], {
      detached: run.helper === 'session',
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    helper.unref();
    record('helper-pid.txt', String(helper.pid));
  }
  // 4. stdout items in order, then stderr.
  for (const item of run.demo === true ? demoStdout(prompt) : (run.stdout ?? [])) {
    if (item.delayMs) await delay(item.delayMs);
    if ('line' in item) await write(process.stdout, JSON.stringify(item.line) + '\n');
    else if ('raw' in item) await write(process.stdout, item.raw + '\n');
  }
  await write(process.stderr, run.stderr ?? '');
  // A crash: die by this signal (SIGKILL, SIGSEGV, …) instead of exiting.
  if (run.killWith) process.kill(process.pid, run.killWith);
  // 5. Hang until signalled.
  if (run.hang) {
    setInterval(() => undefined, 1 << 30);
    return;
  }
  record('exited-at.txt', String(Date.now()));
  process.exitCode = run.exitCode ?? 0;
}

main().catch((error) => {
  process.stderr.write(`fake-claude: ${error.message}\n`);
  process.exit(3);
});
