import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';
import { REPO_ROOT } from './support/child-gateway';
import { writeAuthFile } from './support/provider-a-fixtures';

/**
 * The code blocks a reader would paste (shell and TypeScript/JavaScript) of README.md and every
 * page under docs/, taken out of the Markdown as they are and run so they stay true: the shell
 * blocks with bash, the TypeScript blocks type-checked and run with node, against `npm run demo`
 * (the real gateway in front of fake upstreams) started by the README's own block, or against
 * `npm start`. The one change made to a block: the documented address 127.0.0.1:8088 becomes the
 * free port the demo (or `npm start`) listens on, so parallel runs never collide. The commands the
 * demo itself prints (curl, and the `openai` SDK one-liner) are run as printed too. A block that
 * cannot run here carries a `<!-- docs-run: skip — why -->` line right above it; the first test
 * fails on a pasteable block that is neither run below nor marked so. Output, configuration and
 * diagrams (`json`, `text`, `yaml`, `promql`, an unlabelled fence) are shown, not pasted into a
 * shell, and are not run.
 *
 * No wall-clock bound: the only limit is Jest's per-test timeout below, a hang guard generous
 * enough for a busy 2-core machine (the `npm start` block may build dist/ first).
 */
const HANG_GUARD_MS = 240_000;
const DOCUMENTED_ADDRESS = '127.0.0.1:8088';
const CATALOG = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'src', 'models', 'catalog.json'), 'utf8')) as {
  default_model: string;
  models: Array<{ id: string }>;
};

interface Block {
  readonly file: string;
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  /** The reason given in a `docs-run: skip` note right above the fence. */
  readonly skip?: string;
}

/** Fenced blocks of a Markdown file, with the skip note of the line above each fence. */
function blocksOf(relative: string): Block[] {
  const lines = fs.readFileSync(path.join(REPO_ROOT, relative), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^```(\w*)\s*$/.exec(lines[index]);
    if (!open) continue;
    const end = lines.indexOf('```', index + 1);
    if (end === -1) throw new Error(`${relative}:${index + 1}: unclosed code block`);
    const skip = /^<!-- docs-run: skip — (.+) -->$/.exec(lines[index - 1] ?? '')?.[1];
    blocks.push({
      file: relative,
      line: index + 1,
      lang: open[1],
      code: lines.slice(index + 1, end).join('\n') + '\n',
      skip,
    });
    index = end;
  }
  return blocks;
}

/** Fence languages a reader pastes into a shell or a source file. */
const PASTED = new Set(['sh', 'bash', 'shell', 'console', 'zsh', 'ts', 'typescript', 'js', 'javascript', 'mjs']);
/** An unlabelled fence is output or a diagram, unless it opens with a command a reader would type. */
const COMMAND = /^(?:\$ )?(?:curl|npm|npx|node|docker|kubectl|export|cd) /;

const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(REPO_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const pasted = PAGES.flatMap(blocksOf).filter(
  (block) => PASTED.has(block.lang) || (block.lang === '' && COMMAND.test(block.code)),
);
const where = (block: Block) => `${block.file}:${block.line}`;

/** The blocks the tests below run, each claimed where its test is declared (before any test runs). */
const run = new Set<Block>();

/** The one pasteable, unskipped block of `file` that `matches`, claimed as run by the caller. */
function claim(file: string, matches: (code: string) => boolean): Block {
  const found = pasted.filter((block) => block.file === file && !block.skip && matches(block.code));
  if (found.length !== 1) throw new Error(`${file}: ${found.length} unskipped blocks match ${String(matches)}`);
  run.add(found[0]);
  return found[0];
}

/** Every unskipped block of `file`, claimed as run by the caller. */
function claimAll(file: string): Block[] {
  const found = pasted.filter((block) => block.file === file && !block.skip);
  found.forEach((block) => run.add(block));
  return found;
}

const withPort = (code: string, port: number) => code.split(DOCUMENTED_ADDRESS).join(`127.0.0.1:${port}`);

/** A free loopback port (closed again at once; the block's server takes it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Whether a process the block started (a server it put in the background) outlived its shell. */
  readonly leftRunning: boolean;
}

/** The environment a reader's shell would have: PATH, a private HOME, and the page's GATEWAY_KEY. */
function readerEnvironment(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: home, GATEWAY_KEY: 'docs-run-key', ...extra };
}

/** Runs a program in its own process group, so whatever it leaves running can be stopped with it. */
function runToEnd(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A block may leave a server running in the background (`npm start &`), which holds the
    // pipes open: the block is done when its shell exits, and then its group is stopped.
    child.once('exit', (code) => {
      const leftRunning = stopGroup(child);
      child.once('close', () => resolve({ code, stdout, stderr, leftRunning }));
    });
  });
}

/** Stops every process of the child's group; whether any was still running. */
function stopGroup(child: ChildProcess): boolean {
  try {
    process.kill(-child.pid!, 'SIGKILL');
    return true;
  } catch {
    return false; // already gone
  }
}

/** The problems `tsc` finds in a reader's TypeScript file (strict, ES modules, the repo's packages). */
function typeProblems(file: string): string[] {
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [path.join(REPO_ROOT, 'node_modules', '@types')],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

/** A TypeScript block as the ES module JavaScript node runs. */
function transpiled(code: string): string {
  return ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

function runShell(code: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return runToEnd('bash', ['-euo', 'pipefail', '-c', code], env);
}

/**
 * Starts a block that serves until stopped (`npm run demo`, `npm start`) in its own process group,
 * and resolves once its output matches `listening` (the match), or rejects when it exits first.
 */
function serve(
  code: string,
  env: NodeJS.ProcessEnv,
  listening: RegExp,
): { child: ChildProcess; ready: Promise<RegExpExecArray> } {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', code], {
    cwd: REPO_ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  const ready = new Promise<RegExpExecArray>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const match = listening.exec(printed);
      if (match) resolve(match);
    });
    child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    child.once('exit', (status) => reject(new Error(`\`${code}\` exited (${status}) before it listened:\n${printed}`)));
  });
  return { child, ready };
}

/**
 * The commands `npm run demo` prints: a line opening with two spaces and `curl ` or `node `, with
 * the lines indented further right below it (a `\` continuation, or the rest of a quoted script).
 */
function printedCommands(text: string): string[] {
  const commands: string[] = [];
  let open = false;
  for (const line of text.split('\n')) {
    if (/^ {2}(?:curl|node) /.test(line)) {
      commands.push(line.slice(2));
      open = true;
    } else if (open && /^ {4}/.test(line)) commands[commands.length - 1] += `\n${line}`;
    else open = false;
  }
  return commands;
}

describe('README.md and docs/: every block a reader would paste is run, or says why not', () => {
  it('has no pasteable block that is neither run below nor marked with the reason it is skipped', () => {
    expect(pasted.filter((block) => !block.skip && !run.has(block)).map(where)).toEqual([]);
    expect(pasted.filter((block) => block.lang === '').map(where)).toEqual([]);
    // The walk itself works: the pages' blocks are found, the README's runnable four among those run.
    expect(pasted.length).toBeGreaterThanOrEqual(30);
    expect([...run].filter((block) => block.file === 'README.md').length).toBeGreaterThanOrEqual(4);
  });
});

describe("the docs name the catalog's default model", () => {
  // The tier ids are derived from the tier models, not rows of the file (docs/chat.md "Model ids").
  const modelIds = new Set([...CATALOG.models.map((model) => model.id), 'sol', 'terra', 'luna']);

  it(`calls only ${CATALOG.default_model} (src/models/catalog.json default_model) the default`, () => {
    const claims: string[] = [];
    for (const file of PAGES) {
      const text = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
      // `id` (default) / `id` (the default model) in prose and tables, and `default_model` (`id` …
      for (const match of text.matchAll(/`([^`\s]+)` \((?:the )?default(?: model)?\)|`default_model` \(`([^`\s]+)`/g)) {
        const id = match[1] ?? match[2];
        if (modelIds.has(id)) claims.push(`${file}: ${id}`);
      }
      // A code comment about "the default model" followed by the request that uses it.
      for (const match of text.matchAll(
        /#[^\n]*\bdefault model\b[^\n]*\n(?:[^\n]*\n){0,3}?[^\n]*"model":\s*"([^"]+)"/g,
      ))
        claims.push(`${file}: ${match[1]}`);
    }
    expect(claims.length).toBeGreaterThanOrEqual(3);
    expect(claims.filter((claim) => !claim.endsWith(`: ${CATALOG.default_model}`))).toEqual([]);
  });
});

describe("the blocks, run against `npm run demo` started by the README's block", () => {
  jest.setTimeout(HANG_GUARD_MS);
  const demoBlock = claim('README.md', (code) => /^npm run demo\b/m.test(code));
  const tourBlock = claim('README.md', (code) => code.includes('/health/ready') && code.includes('/metrics'));
  const bearerBlock = claim('README.md', (code) => /^npm start &$/m.test(code));
  const checkBlock = claim('README.md', (code) => /^npm run check\b/m.test(code));
  const structuredBlock = claim('docs/structured.md', (code) => code.includes('/v1/structured/inference'));
  const familiesBlock = claim('docs/providers.md', (code) => code.startsWith('GATEWAY_PROVIDERS='));
  const clientBlocks = claimAll('docs/clients.md');
  const headerLimitBlock = claim('docs/queue-and-context.md', (code) => code.includes("from 'undici'"));
  let demo: ChildProcess | undefined;
  let port = 0;
  let home = '';
  let snippets = '';
  /** What the demo printed, from its address line to its last line. */
  let instructions = '';

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-run-home-'));
    snippets = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-run-snippets-'));
    // The snippets import the SDKs as a reader's project would, from its node_modules.
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(snippets, 'node_modules'), 'dir');
    // GATEWAY_PORT=0: the demo picks a free port and prints it.
    const started = serve(
      demoBlock.code,
      readerEnvironment(home, { GATEWAY_PORT: '0' }),
      /gateway\s+http:\/\/127\.0\.0\.1:(\d+)[\s\S]*Press Ctrl-C to stop\.\n/,
    );
    demo = started.child;
    const ready = await started.ready;
    port = Number(ready[1]);
    instructions = ready[0];
  }, HANG_GUARD_MS);

  afterAll(() => {
    if (demo) stopGroup(demo);
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(snippets, { recursive: true, force: true });
  });

  it('has only TypeScript blocks in docs/clients.md', () => {
    expect(clientBlocks.map((block) => block.lang)).toEqual(['ts', 'ts', 'ts']);
  });

  it('README "A short tour with curl": every command succeeds against the demo', async () => {
    const ran = await runShell(withPort(tourBlock.code, port), readerEnvironment(home));
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
    expect(ran.stdout).toContain('"contract_version":"2.0.0"');
    expect(ran.stdout).toContain('{"status":"ready"}');
    expect(ran.stdout).toContain(`"id":"${CATALOG.default_model}"`);
    expect(ran.stdout).toMatch(/^data: \{.*"chat\.completion\.chunk"/m);
    expect(ran.stdout).toContain('"paid_usage_setting":"plan_only"');
    expect(ran.stdout).toMatch(
      new RegExp(
        `^gateway_chat_api_requests_total\\{provider="provider_a",model="${CATALOG.default_model.replace(/\./g, '\\.')}",status="200"\\} 1$`,
        'm',
      ),
    );
  });

  it('README "Try it without any login": every command the demo prints succeeds, run as printed', async () => {
    const commands = printedCommands(instructions);
    // Every curl and node command in the text is one of those run, so none is printed in a shape missed here.
    expect(commands.length).toBe(instructions.match(/\b(?:curl|node) -/g)?.length);
    expect(commands.length).toBeGreaterThanOrEqual(7);
    expect(commands.filter((command) => command.includes('/v1/structured/inference'))).toHaveLength(1);
    expect(commands.filter((command) => command.startsWith('node -e'))).toHaveLength(1);
    // A reader's curl, told to fail on an HTTP error status (`curl -s` exits 0 on a 404 otherwise):
    // the commands stay as printed, their curl reads this HOME's .curlrc.
    const curlHome = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-run-curl-home-'));
    try {
      fs.writeFileSync(path.join(curlHome, '.curlrc'), 'fail-with-body\n');
      // In the printed order: the metrics line counts the chats before it.
      for (const command of commands) {
        const ran = await runShell(command, readerEnvironment(curlHome));
        // An error answer (or one inside a stream) is shown in full.
        const error = /"error"/.test(ran.stdout) && ran.stdout;
        expect({ command, code: ran.code, error, answered: ran.stdout.trim() !== '' }).toEqual({
          command,
          code: 0,
          error: false,
          answered: true,
        });
      }
    } finally {
      fs.rmSync(curlHome, { recursive: true, force: true });
    }
  });

  it('README bearer example: `npm start` with a generated secret serves /v1/models to that bearer, and stops', async () => {
    const gatewayPort = await freePort();
    // GATEWAY_PORT stands in for the documented default port, as the URL substitution does.
    const ran = await runShell(
      withPort(bearerBlock.code, gatewayPort),
      readerEnvironment(home, { GATEWAY_PORT: String(gatewayPort) }),
    );
    // stdout also carries the gateway's own log lines (it runs in the same terminal).
    expect({ code: ran.code, models: /\{"object":"list","data":\[\{"id":"[^"]+"/.test(ran.stdout) }).toEqual({
      code: 0,
      models: true,
    });
    expect(ran.stdout).toContain('"event":"gateway_listening"');
    // The block's own stop line stopped the gateway: it drained, and nothing it started outlived it.
    expect(ran.stdout).toContain('"event":"drain_end"');
    expect(ran.leftRunning).toBe(false);
  });

  it('README "First run": `npm run check` names what it found and the fix for what it did not', async () => {
    // A reader who has run `codex login` only: a Codex login in HOME, no Gemini login, and
    // whatever Claude Code this PATH has (none, or one that is not logged in under this HOME).
    const readerHome = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-run-check-home-'));
    try {
      writeAuthFile(path.join(readerHome, '.codex'));
      const ran = await runShell(checkBlock.code, readerEnvironment(readerHome));
      expect(ran.code).toBe(1);
      expect(ran.stdout).toContain('provider_a login "default" (Codex CLI): usable');
      expect(ran.stdout).toMatch(/^ {4}token expires: \S+ \(in [^)]+\)$/m);
      expect(ran.stdout).toContain(
        `provider_b login "default" (Gemini CLI): missing (no login file at ${path.join(readerHome, '.gemini', 'oauth_creds.json')}); to fix: run \`gemini\` on the gateway's machine and choose "Login with Google"`,
      );
      expect(ran.stdout).toMatch(
        /^provider_c \(Claude Code CLI\)\n {2}provider_c login "default" \(Claude Code CLI[^)]*\): .*; to fix: /m,
      );
      expect(ran.stdout).toMatch(/^setup check failed: .*\(provider_b, provider_c\)/m);
    } finally {
      fs.rmSync(readerHome, { recursive: true, force: true });
    }
  });

  it('docs/structured.md: the curl request is answered with an object valid against its schema', async () => {
    const ran = await runShell(withPort(structuredBlock.code, port), readerEnvironment(home));
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
    const answer = JSON.parse(ran.stdout) as { data: Record<string, unknown>; request_id: string };
    expect(answer).toMatchObject({ request_id: 'req-0001', idempotent_replay: false });
    expect(answer.data).toEqual({ headline: expect.any(String), growth_percent: expect.any(Number) });
    expect(Number.isInteger(answer.data.growth_percent)).toBe(true);
  });

  it('docs/providers.md "Disabling a family": `npm start` without provider_c serves no provider_c model', async () => {
    const gatewayPort = await freePort();
    const started = serve(
      familiesBlock.code,
      readerEnvironment(home, { GATEWAY_PORT: String(gatewayPort) }),
      /"event":"gateway_listening".*\n/,
    );
    try {
      const listening = (await started.ready)[0];
      expect(listening).toContain('"providers":["provider_a","provider_b"]');
      const models = (await (await fetch(`http://127.0.0.1:${gatewayPort}/v1/models`)).json()) as {
        data: Array<{ owned_by: string }>;
      };
      expect([...new Set(models.data.map((model) => model.owned_by))].sort()).toEqual(['provider_a', 'provider_b']);
    } finally {
      stopGroup(started.child);
    }
  });

  describe(`docs/queue-and-context.md: the fetch with a longer header limit (${where(headerLimitBlock)})`, () => {
    it('type-checks as written (strict, ES modules)', () => {
      const file = path.join(snippets, 'header-limit.mts');
      fs.writeFileSync(file, headerLimitBlock.code);
      expect(typeProblems(file)).toEqual([]);
    });

    it('serves each client its comments name, through its own dispatcher', async () => {
      // The block only builds the fetch; the clients below use it as its comments say. A request
      // that waits minutes for its headers (the limit it lifts) is not made here: that is undici's.
      const clients = [
        "import OpenAI from 'openai';",
        "import { createOpenAICompatible } from '@ai-sdk/openai-compatible';",
        "import { generateText } from 'ai';",
        "import { ChatOpenAICompletions } from '@langchain/openai';",
        `const baseURL = 'http://127.0.0.1:${port}/v1';`,
        'const apiKey = process.env.GATEWAY_KEY;',
        "const messages = [{ role: 'user', content: 'Say hello' }];",
        'const openai = new OpenAI({ baseURL, apiKey, fetch, timeout: 10 * 60_000 });',
        "const sdk = await openai.chat.completions.create({ model: 'sol', messages });",
        "console.log('openai:', sdk.choices[0].message.content);",
        "const gateway = createOpenAICompatible({ name: 'gateway', baseURL, apiKey, fetch });",
        "const ai = await generateText({ model: gateway.chatModel('sol'), prompt: 'Say hello' });",
        "console.log('ai:', ai.text);",
        "const langchain = new ChatOpenAICompletions({ model: 'sol', apiKey, configuration: { baseURL, fetch } });",
        "console.log('langchain:', (await langchain.invoke('Say hello')).content);",
        "console.log('dispatcher:', JSON.stringify(Object.keys(dispatcher.stats)));",
        'await dispatcher.close();',
      ].join('\n');
      const file = path.join(snippets, 'header-limit.mjs');
      fs.writeFileSync(file, `${transpiled(withPort(headerLimitBlock.code, port))}\n${clients}\n`);
      const ran = await runToEnd(process.execPath, [file], readerEnvironment(home));
      expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
      for (const client of ['openai', 'ai', 'langchain'])
        expect(ran.stdout).toMatch(new RegExp(`^${client}: \\S`, 'm'));
      expect(ran.stdout).toContain(`dispatcher: ["http://127.0.0.1:${port}"]`);
    });
  });

  describe.each(clientBlocks.map((block) => [where(block), block] as const))(
    'docs/clients.md TypeScript block at %s',
    (_where, block) => {
      const name = `snippet-${block.line}`;

      it('type-checks as written (strict, ES modules)', () => {
        const file = path.join(snippets, `${name}.mts`);
        fs.writeFileSync(file, block.code);
        expect(typeProblems(file)).toEqual([]);
      });

      it('runs to the end against the demo: a tool call, its result, and usage', async () => {
        const file = path.join(snippets, `${name}.mjs`);
        fs.writeFileSync(file, transpiled(withPort(block.code, port)));
        const ran = await runToEnd(process.execPath, [file], readerEnvironment(home));
        expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
        expect(ran.stdout).toMatch(/usage: \{.*("prompt_tokens"|"inputTokens"|"input_tokens"):\s*[1-9]/);
        // Each snippet either shows the call (openai) or the answer the fake gives once the result is back.
        expect(ran.stdout).toMatch(/"name":"read_file"|The tool result arrived/);
      });
    },
  );
});
