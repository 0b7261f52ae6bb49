import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { GatewayError } from '../../core/gateway.error';
import { loginFix } from '../../core/login-state';
import type { RecordingLogger } from '../../../test/support/recorders';
import { recordingLogger } from '../../../test/support/recorders';
import { closedLoopbackPort } from '../../../test/support/closed-port';
import { LoginFileFailure } from '../login-file-check';
import {
  claudeLoginCommand,
  claudeTokenFileCommand,
  credentialsFileOf,
  refreshCredentialsAhead,
} from './provider-c.credentials';

const silent = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };

describe(refreshCredentialsAhead.name, () => {
  let dir: string;
  let server: http.Server;
  let url: string;
  let answer: { status: number; body: unknown; before?: () => void };
  const grants: unknown[] = [];

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        grants.push({ contentType: request.headers['content-type'], body: JSON.parse(text) });
        answer.before?.();
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/oauth/token`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-credentials-'));
    grants.length = 0;
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const store = (expiresAt: number, oauth: Record<string, unknown> = {}) =>
    fs.writeFileSync(
      credentialsFileOf(dir),
      JSON.stringify({
        claudeAiOauth: { accessToken: 'old', refreshToken: 'r1', expiresAt, subscriptionType: 'max', ...oauth },
        other: 1,
      }),
    );
  const stored = () => JSON.parse(fs.readFileSync(credentialsFileOf(dir), 'utf8'));
  const login = () => ({ alias: 'team', configDir: dir, loginCommand: claudeLoginCommand(dir) });
  const loginCommand = () => `run \`CLAUDE_CONFIG_DIR=${dir} claude\` on the gateway's machine, then \`/login\``;

  it('leaves a login alone until it expires within the window', async () => {
    store(Date.now() + 3600_000);
    expect(await refreshCredentialsAhead(login(), url, 300_000, silent)).toBeUndefined();
    expect(grants).toEqual([]);
  });

  it('leaves a login alone that has no refresh token or no expiry to renew by, however near its end', async () => {
    store(1_000_000 + 60_000, { refreshToken: '' });
    expect(await refreshCredentialsAhead(login(), url, 300_000, silent, () => 1_000_000)).toBeUndefined();
    store(1_000_000 + 60_000, { refreshToken: undefined });
    expect(await refreshCredentialsAhead(login(), url, 300_000, silent, () => 1_000_000)).toBeUndefined();
    // No expiry (or one not a number) says nothing about when the token ends: not a reason to spend the refresh token.
    store(1_000_000 + 60_000, { expiresAt: undefined });
    expect(await refreshCredentialsAhead(login(), url, 300_000, silent, () => 1_000_000)).toBeUndefined();
    store(1_000_000 + 60_000, { expiresAt: '1060000' });
    expect(await refreshCredentialsAhead(login(), url, 300_000, silent, () => 1_000_000)).toBeUndefined();
    expect(grants).toEqual([]);
    expect(stored().claudeAiOauth.accessToken).toBe('old');
  });

  it("renews a login about to expire with the CLI's JSON grant and keeps every other field", async () => {
    store(1_000_000 + 60_000);
    answer = { status: 200, body: { access_token: 'new', expires_in: 3600 } };
    // Resolves with the new token's expiry, which the background refresh holds against the window.
    expect(await refreshCredentialsAhead(login(), url, 300_000, silent, () => 1_000_000)).toBe(1_000_000 + 3_600_000);
    expect(grants).toEqual([
      {
        contentType: 'application/json',
        body: {
          grant_type: 'refresh_token',
          refresh_token: 'r1',
          client_id: '9d1c250a-e61b-44d9-88ed-5944d1962f5e',
          scope: 'user:profile user:inference user:sessions:claude_code user:mcp_servers',
        },
      },
    ]);
    expect(stored()).toEqual({
      claudeAiOauth: {
        accessToken: 'new',
        refreshToken: 'r1',
        expiresAt: 1_000_000 + 3600_000,
        subscriptionType: 'max',
      },
      other: 1,
    });
  });

  it('renews a login whose token expires exactly at the edge of the window', async () => {
    store(1_000_000 + 300_000);
    answer = { status: 200, body: { access_token: 'new', expires_in: 3600 } };
    expect(await refreshCredentialsAhead(login(), url, 300_000, silent, () => 1_000_000)).toBe(1_000_000 + 3_600_000);
    expect(grants).toHaveLength(1);
    expect(stored().claudeAiOauth.accessToken).toBe('new');
  });

  it("asks for the stored login's scopes, and for the CLI's default scopes when the file lists none", async () => {
    answer = { status: 200, body: { access_token: 'new', expires_in: 3600 } };
    store(1_000_000 + 60_000, { scopes: ['user:inference', 'user:profile'] });
    await refreshCredentialsAhead(login(), url, 300_000, silent, () => 1_000_000);
    store(1_000_000 + 60_000, { scopes: [] });
    await refreshCredentialsAhead(login(), url, 300_000, silent, () => 1_000_000);
    expect(grants.map((grant) => (grant as { body: { scope: string } }).body.scope)).toEqual([
      'user:inference user:profile',
      'user:profile user:inference user:sessions:claude_code user:mcp_servers',
    ]);
  });

  it('writes the scopes the token endpoint granted back to the file, so the next refresh asks for those', async () => {
    store(1_000_000 + 60_000, { scopes: ['user:inference', 'user:profile', 'org:create_api_key'] });
    answer = { status: 200, body: { access_token: 'new', expires_in: 3600, scope: 'user:inference  user:profile' } };
    await refreshCredentialsAhead(login(), url, 300_000, silent, () => 1_000_000);
    expect(stored().claudeAiOauth).toMatchObject({ accessToken: 'new', scopes: ['user:inference', 'user:profile'] });
  });

  it('writes an expiry one hour ahead when the answer names none', async () => {
    store(1_000_000 + 60_000);
    answer = { status: 200, body: { access_token: 'new' } };
    expect(await refreshCredentialsAhead(login(), url, 300_000, silent, () => 1_000_000)).toBe(1_000_000 + 3_600_000);
    expect(stored().claudeAiOauth).toMatchObject({ accessToken: 'new', expiresAt: 1_000_000 + 3_600_000 });
  });

  it('calls a refused refresh token a dead login, and any other failure worth another try', async () => {
    store(Date.now() + 60_000);
    answer = { status: 400, body: { error: 'invalid_grant' } };
    await expect(refreshCredentialsAhead(login(), url, 300_000, silent)).rejects.toMatchObject({ code: 'auth' });
    answer = { status: 503, body: {} };
    const failure = await refreshCredentialsAhead(login(), url, 300_000, silent).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).code).toBe('upstream');
    expect(stored().claudeAiOauth.accessToken).toBe('old');
  });

  describe('its lines and failures', () => {
    let logger: RecordingLogger;
    beforeEach(() => (logger = recordingLogger()));

    /** The one line of `event`: the login, its file and a fix, and no token of the login. */
    function loginLine(event: string): Record<string, unknown> {
      const lines = logger.records.filter((record) => record.event === event);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        provider: 'provider_c',
        account: 'team',
        path: credentialsFileOf(dir),
        fix: expect.any(String),
      });
      expect(logger.text()).not.toMatch(/"old"|"r1"|"new"|secret/);
      return lines[0];
    }

    it('says which login it renewed, and nothing else, when the refresh succeeds', async () => {
      store(Date.now() + 60_000);
      answer = { status: 200, body: { access_token: 'new', expires_in: 3600 } };
      await refreshCredentialsAhead(login(), url, 300_000, logger);
      expect(logger.records).toEqual([
        {
          event: 'provider_c_token_refreshed',
          provider: 'provider_c',
          account: 'team',
          path: credentialsFileOf(dir),
          msg: 'provider_c_token_refreshed',
        },
      ]);
      expect(logger.text()).not.toMatch(/"old"|"r1"|"new"/);
    });

    it("says which login's refresh token was refused and that login's own login command", async () => {
      store(Date.now() + 60_000);
      answer = { status: 400, body: { error: 'invalid_grant', error_description: 'secret words' } };
      await expect(refreshCredentialsAhead(login(), url, 300_000, logger)).rejects.toMatchObject({ code: 'auth' });
      const line = loginLine('provider_c_refresh_failed');
      expect(line.status).toBe(400);
      expect(line.fix).toContain(loginCommand());
    });

    it("names the family's plain command for a login without one of its own (the CLI's default directory)", async () => {
      store(Date.now() + 60_000);
      answer = { status: 401, body: { error: 'invalid_grant' } };
      const { alias, configDir } = login();
      await expect(refreshCredentialsAhead({ alias, configDir }, url, 300_000, logger)).rejects.toMatchObject({
        code: 'auth',
      });
      const fix = loginLine('provider_c_refresh_failed').fix as string;
      expect(fix).toBe(loginFix('provider_c', 'refresh_refused'));
      expect(fix).not.toContain('CLAUDE_CONFIG_DIR');
    });

    it('says an endpoint failure passes by itself, on its line and in the failure the refresh line names', async () => {
      store(Date.now() + 60_000);
      answer = { status: 503, body: {} };
      const failure = await refreshCredentialsAhead(login(), url, 300_000, logger).catch((error: unknown) => error);
      const fix = loginLine('provider_c_refresh_failed').fix;
      expect(fix).toContain('(PROVIDER_C_TOKEN_URL) answered HTTP 503');
      expect(fix).toContain('tried again at the next check');
      expect(failure).toMatchObject({ code: 'upstream', fix });
    });

    it('says a token endpoint that gave no answer is the network or the proxy to check, not the login', async () => {
      store(Date.now() + 60_000);
      const unreachable = `http://127.0.0.1:${await closedLoopbackPort()}/v1/oauth/token`;
      const failure = await refreshCredentialsAhead(login(), unreachable, 300_000, logger).catch(
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({
        code: 'upstream',
        fix: 'the token endpoint (PROVIDER_C_TOKEN_URL) did not answer: check the network and HTTPS_PROXY / NO_PROXY; not a login problem: its children use the current token until it expires',
      });
      expect(stored().claudeAiOauth.accessToken).toBe('old');
    });

    it("names a refreshed login's file and errno when the renewed token cannot be written, what it costs and the fix", async () => {
      store(Date.now() + 60_000);
      // A directory where the file was when the answer comes: the write fails as on a read-only mount, as root too.
      answer = {
        status: 200,
        body: { access_token: 'new', refresh_token: 'r2-secret', expires_in: 3600 },
        before: () => {
          fs.rmSync(credentialsFileOf(dir));
          fs.mkdirSync(credentialsFileOf(dir));
        },
      };
      const failure = await refreshCredentialsAhead(login(), url, 300_000, logger).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(LoginFileFailure);
      const { errno, fix } = failure as LoginFileFailure;
      expect(errno).toBe('EISDIR');
      expect(fix).toContain(`the refreshed token could not be written to ${credentialsFileOf(dir)} (EISDIR)`);
      expect(fix).toContain(`the login then needs a new login (${loginCommand()}`);
      expect(fix).toContain(`${credentialsFileOf(dir)} is a directory, not a login file`);
      expect(fix).not.toMatch(/r2-secret|"new"/);
      expect(logger.records).toEqual([]);
    });

    it('keeps a new login written while the refresh was in flight, and says so once', async () => {
      const now = () => 1_000_000;
      store(now() + 60_000);
      const newLogin = {
        claudeAiOauth: { accessToken: 'a-secret', refreshToken: 'r-secret', expiresAt: now() + 7_200_000 },
        other: 2,
      };
      // `claude login` on the same directory while the token endpoint has the grant and has not answered.
      answer = {
        status: 200,
        body: { access_token: 'new', refresh_token: 'r2-secret', expires_in: 3600 },
        before: () => fs.writeFileSync(credentialsFileOf(dir), JSON.stringify(newLogin)),
      };
      const expiresAt = await refreshCredentialsAhead(login(), url, 300_000, logger, now);
      expect(grants).toHaveLength(1);
      expect(stored()).toEqual(newLogin);
      // The login the children use now is the new one: its expiry, not the spent login's renewal.
      expect(expiresAt).toBe(newLogin.claudeAiOauth.expiresAt);
      const lines = logger.records.filter((record) => record.event === 'provider_c_auth_persist_superseded');
      expect(lines).toEqual([
        expect.objectContaining({ provider: 'provider_c', account: 'team', path: credentialsFileOf(dir) }),
      ]);
      expect(logger.text()).not.toMatch(/secret|"old"|"r1"|"new"/);
    });

    it('resolves no expiry when the login written while the refresh was in flight is already expired', async () => {
      const now = () => 1_000_000;
      store(now() + 60_000);
      const expiredLogin = {
        claudeAiOauth: { accessToken: 'a-secret', refreshToken: 'r-secret', expiresAt: now() - 1 },
      };
      answer = {
        status: 200,
        body: { access_token: 'new', refresh_token: 'r2-secret', expires_in: 3600 },
        before: () => fs.writeFileSync(credentialsFileOf(dir), JSON.stringify(expiredLogin)),
      };
      // The file's login is the one the children use; its token is spent, so there is no usable expiry to hold.
      expect(await refreshCredentialsAhead(login(), url, 300_000, logger, now)).toBeUndefined();
      expect(stored()).toEqual(expiredLogin);
      expect(logger.records.filter((record) => record.event === 'provider_c_auth_persist_superseded')).toHaveLength(1);
    });

    it("names the login file's errno and the file's fix when it cannot be read", async () => {
      fs.mkdirSync(credentialsFileOf(dir));
      const failure = await refreshCredentialsAhead(login(), url, 300_000, logger).catch((error: unknown) => error);
      expect(failure).toMatchObject({
        errno: 'EISDIR',
        fix: expect.stringContaining(`${credentialsFileOf(dir)} is a directory, not a login file`),
      });
      expect(grants).toEqual([]);
    });

    it('names the login command when there is no credentials file at all', async () => {
      const failure = await refreshCredentialsAhead(login(), url, 300_000, logger).catch((error: unknown) => error);
      expect(failure).toMatchObject({ errno: 'ENOENT', fix: expect.stringContaining(loginCommand()) });
      expect(grants).toEqual([]);
    });
  });
});

describe('the provider_c login commands', () => {
  it('quotes a config directory for the shell in the command that logs it in again', () => {
    expect(claudeLoginCommand('/srv/claude team')).toBe(
      "run `CLAUDE_CONFIG_DIR='/srv/claude team' claude` on the gateway's machine, then `/login` (it rewrites /srv/claude team/.credentials.json)",
    );
  });

  it('says where the long-lived token the CLI prints goes', () => {
    expect(claudeTokenFileCommand('/srv/claude/token')).toBe(
      "run `claude setup-token` on the gateway's machine and write the token it prints to /srv/claude/token",
    );
  });
});
