#!/usr/bin/env node
// Records what the pinned Claude Code CLI prints for `claude --setting-sources "" auth status --json`
// — the offline check provider_c's startup login report runs — into
// src/providers/provider-c/__fixtures__/claude-code-<version>/auth-status.json: exit code and the
// JSON, unedited except that the scratch directories become `<home>` / `<config>`. Run offline:
//
//   unshare -n sh -c 'ip link set lo up; node scripts/capture-claude-auth-status.mjs'
//
// ORACLE_NODE_MODULES=<dir> runs the Claude Code installed in that node_modules folder instead of
// the pinned one; ORACLE_OUT=<file> writes there instead of the fixture (`npm run oracle:drift`).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLAUDE = path.join(
  process.env.ORACLE_NODE_MODULES ?? path.join(ROOT, 'oracles', 'node_modules'),
  '@anthropic-ai',
  `claude-code-${process.platform}-${process.arch}`,
  'claude',
);
const QUIET = {
  DISABLE_TELEMETRY: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
};

function run(name, env, scratch) {
  const result = spawnSync(CLAUDE, ['--setting-sources', '', 'auth', 'status', '--json'], {
    env: { PATH: process.env.PATH, ...QUIET, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  let stdout = result.stdout;
  for (const [dir, label] of scratch) stdout = stdout.split(dir).join(label);
  return [name, { exit_code: result.status, stdout: JSON.parse(stdout) }];
}

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-status-home-'));
const config = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-status-config-'));
// A Console login: the CLI keeps the API key it was given in ~/.claude.json and bills it.
const consoleHome = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-status-console-'));
fs.writeFileSync(path.join(consoleHome, '.claude.json'), JSON.stringify({ primaryApiKey: 'sk-ant-api03-fake' }));
// A settings file's apiKeyHelper, which `--setting-sources ""` leaves out as it does for the children.
const helperHome = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-status-helper-'));
fs.mkdirSync(path.join(helperHome, '.claude'));
fs.writeFileSync(
  path.join(helperHome, '.claude', 'settings.json'),
  JSON.stringify({ apiKeyHelper: 'echo sk-ant-api03-fake' }),
);
const day = 24 * 3600 * 1000;
fs.writeFileSync(
  path.join(config, '.credentials.json'),
  JSON.stringify({
    claudeAiOauth: {
      accessToken: 'sk-ant-oat01-fake',
      refreshToken: 'sk-ant-ort01-fake',
      expiresAt: Date.now() - day,
      scopes: ['user:inference'],
      subscriptionType: 'max',
    },
  }),
);
try {
  const version = spawnSync(CLAUDE, ['--version'], { encoding: 'utf8' }).stdout.split(' ')[0].trim();
  const scratch = [
    [config, '<config>'],
    [home, '<home>'],
    [consoleHome, '<home>'],
    [helperHome, '<home>'],
  ];
  const token = { CLAUDE_CODE_OAUTH_TOKEN: 'fake-oauth-token-for-tests' };
  const cases = Object.fromEntries([
    run('not-logged-in', { HOME: home }, scratch),
    run('oauth-token', { HOME: home, ...token }, scratch),
    run('config-dir-expired-token', { HOME: home, CLAUDE_CONFIG_DIR: config }, scratch),
    run('bedrock', { HOME: home, ...token, CLAUDE_CODE_USE_BEDROCK: '1' }, scratch),
    run('console-api-key', { HOME: consoleHome }, scratch),
    run('settings-api-key-helper', { HOME: helperHome, ...token }, scratch),
  ]);
  const out =
    process.env.ORACLE_OUT ??
    path.join(ROOT, 'src', 'providers', 'provider-c', '__fixtures__', `claude-code-${version}`, 'auth-status.json');
  const command = 'claude --setting-sources "" auth status --json';
  fs.writeFileSync(out, `${JSON.stringify({ version, command, cases }, null, 2)}\n`);
  console.log(`wrote ${path.relative(ROOT, out)}`);
} finally {
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(config, { recursive: true, force: true });
  fs.rmSync(consoleHome, { recursive: true, force: true });
  fs.rmSync(helperHome, { recursive: true, force: true });
}
