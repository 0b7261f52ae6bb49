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
 * The code blocks of README.md and docs/clients.md, taken out of the Markdown as they are and run
 * so they stay true: the shell blocks with bash, the TypeScript blocks type-checked and run with node,
 * against `npm run demo` (the real gateway in front of fake upstreams) started by the README's
 * own block. The one change made to a block: the documented address 127.0.0.1:8088 becomes the
 * free port the demo (or `npm start`) listens on, so parallel runs never collide. A block that
 * cannot run here carries a `<!-- docs-run: skip — why -->` line right above it.
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

const readme = blocksOf('README.md');
const clients = blocksOf('docs/clients.md');
const where = (block: Block) => `${block.file}:${block.line}`;
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
      child.once('close', () => resolve({ code, stdout, stderr }));
      stopGroup(child);
    });
  });
}

function stopGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

function runShell(code: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return runToEnd('bash', ['-euo', 'pipefail', '-c', code], env);
}

describe('README.md and docs/clients.md: every block is run, or says why not', () => {
  it('has no block that is neither runnable here (sh, ts) nor marked with the reason it is skipped', () => {
    const unaccounted = [...readme, ...clients]
      .filter((block) => !block.skip && !['sh', 'ts'].includes(block.lang))
      .map(where);
    expect(unaccounted).toEqual([]);
    expect(readme.filter((block) => !block.skip).length).toBeGreaterThanOrEqual(3);
    expect(clients.filter((block) => !block.skip).map((block) => block.lang)).toEqual(['ts', 'ts', 'ts']);
  });
});

describe("the docs name the catalog's default model", () => {
  const docs = [
    'README.md',
    ...fs
      .readdirSync(path.join(REPO_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];
  // The tier ids are derived from the tier models, not rows of the file (docs/chat.md "Model ids").
  const modelIds = new Set([...CATALOG.models.map((model) => model.id), 'sol', 'terra', 'luna']);

  it(`calls only ${CATALOG.default_model} (src/models/catalog.json default_model) the default`, () => {
    const claims: string[] = [];
    for (const file of docs) {
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
  let demo: ChildProcess | undefined;
  let port = 0;
  let home = '';
  let snippets = '';

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-run-home-'));
    snippets = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-run-snippets-'));
    // The snippets import the SDKs as a reader's project would, from its node_modules.
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(snippets, 'node_modules'), 'dir');
    const block = readme.find((candidate) => /^npm run demo\b/m.test(candidate.code));
    if (!block) throw new Error('README.md has no `npm run demo` block');
    // GATEWAY_PORT=0: the demo picks a free port and prints it.
    demo = spawn('bash', ['-euo', 'pipefail', '-c', block.code], {
      cwd: REPO_ROOT,
      env: readerEnvironment(home, { GATEWAY_PORT: '0' }),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let printed = '';
    port = await new Promise<number>((resolve, reject) => {
      demo!.stdout!.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
        const match = /gateway\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(printed);
        if (match) resolve(Number(match[1]));
      });
      demo!.stderr!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      demo!.once('exit', (code) => reject(new Error(`npm run demo exited (${code}) before it listened:\n${printed}`)));
    });
  }, HANG_GUARD_MS);

  afterAll(() => {
    if (demo) stopGroup(demo);
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(snippets, { recursive: true, force: true });
  });

  it('README "A short tour with curl": every command succeeds against the demo', async () => {
    const block = readme.find(
      (candidate) => candidate.code.includes('/health/ready') && candidate.code.includes('/metrics'),
    )!;
    const ran = await runShell(withPort(block.code, port), readerEnvironment(home));
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

  it('README bearer example: `npm start` with a generated secret serves /v1/models to that bearer', async () => {
    const block = readme.find((candidate) => /^npm start &$/m.test(candidate.code))!;
    const gatewayPort = await freePort();
    // GATEWAY_PORT stands in for the documented default port, as the URL substitution does.
    const ran = await runShell(
      withPort(block.code, gatewayPort),
      readerEnvironment(home, { GATEWAY_PORT: String(gatewayPort) }),
    );
    // stdout also carries the gateway's own log lines (it runs in the same terminal).
    expect({ code: ran.code, models: /\{"object":"list","data":\[\{"id":"[^"]+"/.test(ran.stdout) }).toEqual({
      code: 0,
      models: true,
    });
    expect(ran.stdout).toContain('"event":"gateway_listening"');
  });

  it('README "First run": `npm run check` names what it found and the fix for what it did not', async () => {
    const block = readme.find((candidate) => /^npm run check\b/m.test(candidate.code))!;
    // A reader who has run `codex login` only: a Codex login in HOME, no Gemini login, and
    // whatever Claude Code this PATH has (none, or one that is not logged in under this HOME).
    const readerHome = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-run-check-home-'));
    try {
      writeAuthFile(path.join(readerHome, '.codex'));
      const ran = await runShell(block.code, readerEnvironment(readerHome));
      expect(ran.code).toBe(1);
      expect(ran.stdout).toContain('provider_a login "default" (Codex CLI): usable');
      expect(ran.stdout).toMatch(/^ {4}token expires: \S+ \(in [^)]+\)$/m);
      expect(ran.stdout).toContain(
        'provider_b login "default" (Gemini CLI): missing (no login file); to fix: run `gemini` on the gateway\'s machine and choose "Login with Google"',
      );
      expect(ran.stdout).toMatch(
        /^provider_c \(Claude Code CLI\)\n {2}provider_c login "default" \(Claude Code CLI[^)]*\): .*; to fix: /m,
      );
      expect(ran.stdout).toMatch(/^setup check failed: .*\(provider_b, provider_c\)/m);
    } finally {
      fs.rmSync(readerHome, { recursive: true, force: true });
    }
  });

  describe.each(clients.filter((block) => !block.skip).map((block) => [where(block), block] as const))(
    'docs/clients.md TypeScript block at %s',
    (_where, block) => {
      const name = `snippet-${block.line}`;

      it('type-checks as written (strict, ES modules)', () => {
        const file = path.join(snippets, `${name}.mts`);
        fs.writeFileSync(file, block.code);
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
        const problems = ts
          .getPreEmitDiagnostics(program)
          .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
        expect(problems).toEqual([]);
      });

      it('runs to the end against the demo: a tool call, its result, and usage', async () => {
        const output = ts.transpileModule(withPort(block.code, port), {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
        }).outputText;
        const file = path.join(snippets, `${name}.mjs`);
        fs.writeFileSync(file, output);
        const ran = await runToEnd(process.execPath, [file], readerEnvironment(home));
        expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
        expect(ran.stdout).toMatch(/usage: \{.*("prompt_tokens"|"inputTokens"|"input_tokens"):\s*[1-9]/);
        // Each snippet either shows the call (openai) or the answer the fake gives once the result is back.
        expect(ran.stdout).toMatch(/"name":"read_file"|The tool result arrived/);
      });
    },
  );
});
