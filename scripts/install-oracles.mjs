#!/usr/bin/env node
// Installs oracles/ (the real Claude Code, Codex and Gemini CLIs the tests compare the gateway
// against) from oracles/package-lock.json into oracles/node_modules.
//
// They are not in the root package.json: they are only test oracles, 1 GB of them, one of which
// (@anthropic-ai/claude-code) declares Node >= 22 and three of which carry install scripts that
// npm 11 asks the user to approve. In the root install every newcomer's `npm ci`, and the
// Docker build stage, paid for them. Here they install quietly: engine-strict off (the tests run
// the platform binaries, not the packages' Node entry points), warnings below error level hidden,
// install scripts not run (the binaries come as optional platform packages).
//
// `npm test` runs this first (scripts/install-test-tools.mjs, its pretest, ends with it); it does
// nothing when the lock has not changed since the last install. `node scripts/install-oracles.mjs --force` reinstalls.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ORACLES = path.join(ROOT, 'oracles');
const LOCK = path.join(ORACLES, 'package-lock.json');
// Written after a successful install: the digest of the lock it installed.
const STAMP = path.join(ORACLES, 'node_modules', '.installed-lock.sha256');

const wanted = createHash('sha256').update(fs.readFileSync(LOCK)).digest('hex');
const installed = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, 'utf8').trim() : '';
if (installed === wanted && !process.argv.includes('--force')) process.exit(0);

process.stderr.write(
  'installing the test oracles (the vendor CLIs of oracles/package-lock.json) into oracles/node_modules\n',
);
// Under `npm test`, npm_execpath is npm's own CLI: run the install with the same npm.
const npmCli = process.env.npm_execpath;
const args = ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--engine-strict=false', '--loglevel=error'];
const result =
  npmCli && npmCli.endsWith('.js')
    ? spawnSync(process.execPath, [npmCli, ...args], { cwd: ORACLES, stdio: ['ignore', 'ignore', 'inherit'] })
    : spawnSync('npm', args, {
        cwd: ORACLES,
        stdio: ['ignore', 'ignore', 'inherit'],
        shell: process.platform === 'win32',
      });
if (result.error || result.status !== 0) {
  process.stderr.write(
    `installing oracles/ failed${result.error ? `: ${result.error.message}` : ` (npm exited ${result.status})`}\n`,
  );
  process.exit(1);
}
fs.writeFileSync(STAMP, `${wanted}\n`);
