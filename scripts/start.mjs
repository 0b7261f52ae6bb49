#!/usr/bin/env node
// `npm start`: runs the compiled gateway (dist/main.js) with this script's arguments, building
// it first when dist/main.js is missing (a fresh clone).
//
// The gateway runs IN THIS PROCESS (require), not as a child: it then receives SIGTERM/SIGINT
// itself and its exit code is this process's exit code, with nothing in between. A forwarding
// parent would deliver Ctrl-C twice (once from the terminal's process group, once forwarded,
// and npm forwards too), and the gateway treats a second signal as "exit now, skip draining".
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = path.join(ROOT, 'dist', 'main.js');

function build() {
  process.stderr.write('dist/main.js is missing; running `npm run build` first\n');
  // Under `npm start`, npm_execpath is npm's own CLI: run the build with the same npm.
  const npmCli = process.env.npm_execpath;
  const result = npmCli && npmCli.endsWith('.js')
    ? spawnSync(process.execPath, [npmCli, 'run', 'build'], { cwd: ROOT, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.error) {
    process.stderr.write(`build failed to start: ${result.error.message}\n`);
    process.exit(1);
  }
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (!fs.existsSync(MAIN)) build();
// dist/main.js reads process.argv.slice(2), which here is exactly the arguments given to this script.
createRequire(import.meta.url)(MAIN);
