import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLAUDE_CODE_PIN, claudeCapturePath } from '../../../test/support/oracle-pins';
import { FAKE_CLAUDE_PATH, readAuthStatusArgv } from '../../../test/support/provider-c-fixtures';
import type { ProviderCLogin } from './provider-c.credentials';
import { checkProviderCLogin, parseAuthStatus, resolveCommand } from './provider-c.login-check';

const FIXTURE = claudeCapturePath('auth-status.json');

describe(parseAuthStatus.name, () => {
  const { version, cases } = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as {
    version: string;
    cases: Record<string, { exit_code: number; stdout: unknown }>;
  };

  it('reads what the real CLI printed (the pinned Claude Code)', () => {
    expect(version).toBe(CLAUDE_CODE_PIN);
    expect(parseAuthStatus(JSON.stringify(cases['not-logged-in'].stdout))).toEqual({
      state: 'missing',
      reason: 'claude auth status: not logged in',
    });
    expect(cases['not-logged-in'].exit_code).toBe(1);
    expect(parseAuthStatus(JSON.stringify(cases['oauth-token'].stdout))).toEqual({ state: 'usable' });
    expect(parseAuthStatus(JSON.stringify(cases['config-dir-expired-token'].stdout))).toEqual({ state: 'usable' });
    // Asked as the children run, without settings files: a settings file's apiKeyHelper is not what they use.
    expect(parseAuthStatus(JSON.stringify(cases['settings-api-key-helper'].stdout))).toEqual({ state: 'usable' });
  });

  it('finds a CLI set to bill a cloud account or an API key unusable, naming why and the fix, and says it would bill elsewhere', () => {
    expect(parseAuthStatus(JSON.stringify(cases.bedrock.stdout))).toEqual({
      state: 'unusable',
      reason: "claude auth status: apiProvider bedrock, not Anthropic's API",
      fix: expect.stringMatching(/CLAUDE_CODE_USE_\*.*only serves the CLI's Claude login/),
      billsElsewhere: true,
    });
    expect(parseAuthStatus(JSON.stringify(cases['console-api-key'].stdout))).toEqual({
      state: 'unusable',
      reason: 'claude auth status: api_key, not a Claude login',
      fix: expect.stringContaining('Claude subscription'),
      billsElsewhere: true,
    });
    expect(parseAuthStatus('{"loggedIn":true,"authMethod":"api_key_helper","apiProvider":"firstParty"}')).toMatchObject(
      {
        state: 'unusable',
        reason: 'claude auth status: api_key_helper, not a Claude login',
        billsElsewhere: true,
      },
    );
    // Another backend is the cause even when it reports no login (a cloud gateway not signed in).
    expect(parseAuthStatus('{"loggedIn":false,"authMethod":"none","apiProvider":"gateway"}')).toMatchObject({
      state: 'unusable',
      reason: "claude auth status: apiProvider gateway, not Anthropic's API",
      billsElsewhere: true,
    });
    // Only a closed word of the answer reaches the reason.
    expect(parseAuthStatus('{"loggedIn":true,"apiProvider":"evil provider\\nline"}')).toMatchObject({
      reason: "claude auth status: apiProvider unknown, not Anthropic's API",
    });
  });

  it('never takes anything else from the answer (it carries the e-mail)', () => {
    const check = parseAuthStatus(JSON.stringify({ loggedIn: true, email: 'jane@example.com', orgName: 'Acme' }));
    expect(JSON.stringify(check)).not.toMatch(/jane|Acme/);
    // An answer naming no backend is Anthropic's API (the CLI's default).
    expect(check).toEqual({ state: 'usable' });
  });

  it('does not mistake garbage for a logout', () => {
    expect(parseAuthStatus('Usage: claude …')).toEqual({
      state: 'unusable',
      reason: 'claude auth status gave no answer',
    });
    expect(parseAuthStatus('{"loggedIn":"yes"}')).toEqual({
      state: 'unusable',
      reason: 'claude auth status gave no answer',
    });
  });
});

describe(checkProviderCLogin.name, () => {
  let dir: string;
  const now = 1_800_000_000_000;
  const settings = () => ({ command: process.execPath, childEnv: { PATH: '' } });
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-login-check-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const configDir = (oauth?: Record<string, unknown>): ProviderCLogin => {
    if (oauth) fs.writeFileSync(path.join(dir, '.credentials.json'), JSON.stringify({ claudeAiOauth: oauth }));
    return { alias: 'team', kind: 'config_dir', location: dir, loginFile: path.join(dir, '.credentials.json') };
  };

  it('reports a missing executable before anything else', async () => {
    expect(
      await checkProviderCLogin(
        configDir({ accessToken: 'a' }),
        { command: 'no-such-claude-here', childEnv: { PATH: dir } },
        now,
      ),
    ).toEqual({ state: 'cli_missing', reason: 'command not found' });
  });

  it('tells a PROVIDER_C_COMMAND path that is a directory or not executable from one not found, with its own fix', async () => {
    const login = configDir({ accessToken: 'a' });
    const check = (command: string) => checkProviderCLogin(login, { command, childEnv: { PATH: '' } }, now);
    expect(await check(dir)).toEqual({
      state: 'cli_missing',
      reason: 'PROVIDER_C_COMMAND is a directory',
      fix: `${dir} is a directory, not the claude executable: set PROVIDER_C_COMMAND to the executable file itself, or unset it to run claude from the PATH`,
    });
    const script = path.join(dir, 'claude');
    fs.writeFileSync(script, '#!/bin/sh\n', { mode: 0o644 });
    expect(await check(script)).toEqual({
      state: 'cli_missing',
      reason: 'PROVIDER_C_COMMAND is not executable',
      fix: `${script} is not executable: run \`chmod +x ${script}\` (or set PROVIDER_C_COMMAND to the claude executable)`,
    });
    // A path relative to the working directory is a path too, not a name to look up on the PATH.
    expect(await check(path.relative(process.cwd(), dir))).toMatchObject({
      reason: 'PROVIDER_C_COMMAND is a directory',
    });
    // The fix's command is quoted for the shell.
    const spaced = path.join(dir, 'my claude');
    fs.writeFileSync(spaced, '#!/bin/sh\n', { mode: 0o644 });
    expect(await check(spaced)).toMatchObject({
      fix: `${spaced} is not executable: run \`chmod +x '${spaced}'\` (or set PROVIDER_C_COMMAND to the claude executable)`,
    });
    // No such file: the install is the fix, as for a name not on the PATH.
    expect(await check(path.join(dir, 'nowhere', 'claude'))).toEqual({
      state: 'cli_missing',
      reason: 'command not found',
    });
  });

  it('reads a config directory as the CLI would', async () => {
    expect(await checkProviderCLogin(configDir(), settings(), now)).toMatchObject({ state: 'missing' });
    // A refresh token and an expiry without an access token are no login the CLI could use.
    expect(
      await checkProviderCLogin(configDir({ refreshToken: 'r', expiresAt: now + 3_600_000 }), settings(), now),
    ).toEqual({ state: 'missing', reason: 'no login in .credentials.json' });
    expect(
      await checkProviderCLogin(configDir({ accessToken: 'a', expiresAt: now + 3_600_000 }), settings(), now),
    ).toEqual({ state: 'usable', expiresAt: now + 3_600_000 });
    expect(
      await checkProviderCLogin(
        configDir({ accessToken: 'a', refreshToken: 'r', expiresAt: now - 1 }),
        settings(),
        now,
      ),
    ).toEqual({ state: 'expired_refreshable', expiresAt: now - 1 });
    expect(
      await checkProviderCLogin(configDir({ accessToken: 'a', expiresAt: now - 1 }), settings(), now),
    ).toMatchObject({ state: 'unusable' });
  });

  it('asks the CLI for its own login as the children run it, without settings files', async () => {
    const login: ProviderCLogin = {
      alias: 'default',
      kind: 'cli',
      loginFile: path.join(dir, '.credentials.json'),
    };
    // The shared fake CLI answers as the real one does and writes down each argv it is asked with.
    const childEnv = { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, FAKE_CLAUDE_RECORD_DIR: dir };
    expect(await checkProviderCLogin(login, { command: FAKE_CLAUDE_PATH, childEnv }, now)).toMatchObject({
      state: 'usable',
    });
    expect(readAuthStatusArgv(dir)).toEqual([['--setting-sources', '', 'auth', 'status', '--json']]);
  });

  it('reads a token file', async () => {
    const file = path.join(dir, 'claude.token');
    const login: ProviderCLogin = { alias: 'ci', kind: 'token_file', location: file, loginFile: file };
    expect(await checkProviderCLogin(login, settings(), now)).toMatchObject({ state: 'missing' });
    fs.writeFileSync(file, '  \n');
    expect(await checkProviderCLogin(login, settings(), now)).toMatchObject({ state: 'missing' });
    fs.writeFileSync(file, 'sk-ant-oat01-x\n');
    expect(await checkProviderCLogin(login, settings(), now)).toEqual({ state: 'usable' });
  });

  it('names the errno of a token file it cannot read and the fix for the file, not a login command', async () => {
    const file = path.join(dir, 'claude.token');
    fs.mkdirSync(file);
    const login: ProviderCLogin = { alias: 'ci', kind: 'token_file', location: file, loginFile: file };
    expect(await checkProviderCLogin(login, settings(), now)).toEqual({
      state: 'unusable',
      reason: 'token file unreadable: EISDIR',
      fix: expect.stringContaining(`${file} is a directory, not a login file`),
    });
    fs.rmdirSync(file);
    expect(await checkProviderCLogin(login, settings(), now)).toEqual({ state: 'missing', reason: 'no token file' });
  });
});

describe(resolveCommand.name, () => {
  it('takes a command with a slash, relative ones included, as a path rather than a name on the PATH', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-resolve-'));
    try {
      const claude = path.join(dir, 'claude');
      fs.writeFileSync(claude, '#!/bin/sh\n', { mode: 0o755 });
      const relative = path.relative(process.cwd(), claude);
      expect(relative).toContain('/');
      expect(resolveCommand(relative, '')).toBe(relative);
      expect(resolveCommand('claude', dir)).toBe(claude);
      expect(resolveCommand('claude', '')).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
