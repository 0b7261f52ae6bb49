import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GatewayError } from '../../core/gateway.error';
import { FakeProviderA } from '../../../test/support/fake-provider-a';
import { makeJwt, writeAuthFile } from '../../../test/support/provider-a-fixtures';
import type { RecordingLogger } from '../../../test/support/recorders';
import { recordingLogger } from '../../../test/support/recorders';
import { codexLoginCommand, ProviderAAuth } from './provider-a.auth';
import { loginFix } from '../../core/login-state';
import { CODEX_OAUTH_CLIENT_ID } from './provider-a.token-refresh';

const now = () => Math.floor(Date.now() / 1000);

describe(ProviderAAuth.name, () => {
  let fake: FakeProviderA;
  let dir: string;
  let logger: RecordingLogger;
  const signal = new AbortController().signal;

  beforeAll(async () => (fake = await FakeProviderA.start()));
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.reset();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-auth-'));
    logger = recordingLogger();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  // A login outside the CLI's default home carries its own command (provider-a.settings.ts); null: none.
  const authFor = (file: string, loginCommand: string | null = codexLoginCommand(file)) =>
    new ProviderAAuth({ alias: 'team', loginFile: file, loginCommand: loginCommand ?? undefined }, fake.tokenUrl);

  /**
   * The one line of `event`: it names the login (its alias and file) and carries a fix, and no
   * token of the login is anywhere in the log.
   */
  function loginLine(event: string, file: string, tokens: ReadonlyArray<string | undefined>): Record<string, unknown> {
    const lines = logger.records.filter((record) => record.event === event);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ provider: 'provider_a', account: 'team', path: file, fix: expect.any(String) });
    for (const token of tokens) if (token) expect(logger.text()).not.toContain(token);
    return lines[0];
  }

  /** Resolves once the fake token endpoint received a request: the login file was read before it. */
  async function tokenRequestArrived(): Promise<void> {
    // A hang guard only: the request comes in milliseconds on an idle machine.
    const deadline = Date.now() + 30_000;
    while (fake.tokenRequests().length === 0) {
      if (Date.now() > deadline) throw new Error('no token request');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  it('uses a valid token from the file without calling the token endpoint', async () => {
    const written = writeAuthFile(dir);
    const credentials = await authFor(written.path).current(signal, logger);
    expect(credentials).toEqual({ accessToken: written.accessToken, accountId: 'acct-test-1' });
    expect(fake.tokenRequests()).toHaveLength(0);
  });

  it('refreshes a token that expires in 30 s with one form POST carrying the refresh token and client id', async () => {
    const written = writeAuthFile(dir, { exp: now() + 30, refreshToken: 'rt-stored' });
    const credentials = await authFor(written.path).current(signal, logger);
    expect(fake.tokenRequests()).toEqual([
      { grant_type: 'refresh_token', refresh_token: 'rt-stored', client_id: CODEX_OAUTH_CLIENT_ID },
    ]);
    expect(credentials.accessToken).not.toBe(written.accessToken);
    expect(credentials.accountId).toBe('acct-test-1');
  });

  it('runs one refresh for ten concurrent callers and gives all of them the new token', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10 });
    fake.enqueueToken({
      status: 200,
      delayMs: 100,
      body: { access_token: makeJwt({ exp: now() + 3600, jti: 'shared' }), refresh_token: 'rt-next' },
    });
    const auth = authFor(written.path);
    const results = await Promise.all(Array.from({ length: 10 }, () => auth.current(signal, logger)));
    expect(fake.tokenRequests()).toHaveLength(1);
    expect(new Set(results.map((result) => result.accessToken)).size).toBe(1);
    expect(JSON.parse(Buffer.from(results[0].accessToken.split('.')[1], 'base64url').toString()).jti).toBe('shared');
  });

  it('writes back the new tokens, keeps unknown keys, mode 0600 and leaves no temp file', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10, extra: { custom_key: { nested: [1, 2] }, another: 'kept' } });
    const before = JSON.parse(fs.readFileSync(written.path, 'utf8'));
    const credentials = await authFor(written.path).current(signal, logger);
    const after = JSON.parse(fs.readFileSync(written.path, 'utf8'));
    expect(after.tokens.access_token).toBe(credentials.accessToken);
    expect(after.tokens.refresh_token).toBe('rt-1');
    expect(after.tokens.id_token).not.toBe(before.tokens.id_token);
    expect(after.tokens.account_id).toBe('acct-test-1');
    expect(after.last_refresh).not.toBe(before.last_refresh);
    expect(Date.parse(after.last_refresh)).toBeGreaterThan(Date.now() - 60_000);
    expect(after.custom_key).toEqual({ nested: [1, 2] });
    expect(after.another).toBe('kept');
    expect(after.OPENAI_API_KEY).toBeNull();
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    expect(after.tokens).not.toHaveProperty('expires_at');
    expect(fs.statSync(written.path).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual(['auth.json']);
    expect(fs.readFileSync(written.path, 'utf8').endsWith('}\n')).toBe(true);
  });

  it('never writes the old login over a file rewritten during the refresh (a new codex login), and uses the new one', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10, refreshToken: 'rt-old', accountId: 'acct-old' });
    fake.enqueueToken({
      status: 200,
      delayMs: 300,
      body: { access_token: makeJwt({ exp: now() + 3600, jti: 'old-refreshed' }), refresh_token: 'rt-old-rotated' },
    });
    const pending = authFor(written.path).current(signal, logger);
    await tokenRequestArrived();
    const fresh = writeAuthFile(dir, { exp: now() + 3600, refreshToken: 'rt-new-login', accountId: 'acct-new' });
    const credentials = await pending;
    const after = JSON.parse(fs.readFileSync(written.path, 'utf8'));
    expect(after.tokens).toMatchObject({ refresh_token: 'rt-new-login', account_id: 'acct-new' });
    expect(credentials).toEqual({ accessToken: fresh.accessToken, accountId: 'acct-new' });
    expect(logger.records.map((record) => record.event)).toContain('provider_a_auth_persist_superseded');
  });

  it('keeps the old refresh token when the endpoint returns none, and updates expires_at only when present', async () => {
    const written = writeAuthFile(dir, { exp: now() + 3600, expiresAt: now() - 5, refreshToken: 'rt-keep' });
    fake.enqueueToken({
      status: 200,
      body: { access_token: makeJwt({ exp: now() + 3600 }), refresh_token: '', expires_in: 600 },
    });
    await authFor(written.path).current(signal, logger);
    const after = JSON.parse(fs.readFileSync(written.path, 'utf8'));
    expect(after.tokens.refresh_token).toBe('rt-keep');
    expect(after.tokens.expires_at).toBeGreaterThanOrEqual(now() + 590);
  });

  it('takes the renewed expiry from the JWT `exp` of a token that came without `expires_in`', async () => {
    // Usable still (more than the 60 s skew left), but inside the 5 min the background refresh renews ahead.
    const written = writeAuthFile(dir, { exp: now() + 180 });
    const exp = now() + 3600;
    fake.enqueueToken({ status: 200, body: { access_token: makeJwt({ exp }), refresh_token: 'rt-next' } });
    // The background refresh learns when to renew next from the expiry of the token it renewed to.
    expect(await authFor(written.path).refreshAhead(300_000, logger)).toBe(exp * 1000);
    expect(fake.tokenRequests()).toHaveLength(1);
  });

  it("tells two members of one team workspace apart by the id token's user, and keeps a login across its refresh", () => {
    const file = writeAuthFile(dir, { idTokenSubject: 'user-1', refreshToken: 'rt-1' }).path;
    const auth = authFor(file);
    const first = auth.loginFileChanged();
    writeAuthFile(dir, { idTokenSubject: 'user-1', refreshToken: 'rt-2' });
    expect(auth.loginFileChanged()).toBe(first);
    // `codex login` as another member: the same account id, another user.
    writeAuthFile(dir, { idTokenSubject: 'user-2', refreshToken: 'rt-3' });
    expect(auth.loginFileChanged()).not.toBe(first);
  });

  it('fails with auth and calls nothing when the token expired and there is no refresh token', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10, refreshToken: null });
    const failure = await authFor(written.path)
      .current(signal, logger)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).code).toBe('auth');
    expect((failure as GatewayError).detail).toBe('provider_a login expired');
    expect((failure as GatewayError).loginFileCause).toBe(true);
    expect(fake.tokenRequests()).toHaveLength(0);
    expect(loginLine('provider_a_login_expired', written.path, [written.accessToken]).fix).toBe(
      `run \`CODEX_HOME=${dir} codex login\` on the gateway's machine (it rewrites ${written.path})`,
    );
  });

  it('says which login was revoked and its own login command, once its refresh token failed for good', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10, refreshToken: 'rt-secret-spent', fileName: 'team.json' });
    fake.enqueueToken({ status: 401, body: { error: { code: 'refresh_token_reused' } } });
    const auth = authFor(written.path);
    // A refusal of the refresh token, then that refusal remembered: no answered turn brings it back.
    await expect(auth.current(signal, logger)).rejects.toMatchObject({ code: 'auth', refreshRefused: true });
    await expect(auth.current(signal, logger)).rejects.toMatchObject({
      code: 'auth',
      detail: 'provider_a refresh token no longer valid',
      refreshRefused: true,
    });
    expect(fake.tokenRequests()).toHaveLength(1);
    // A file that is not a Codex home's auth.json (a mounted copy): the login goes there by hand.
    expect(loginLine('provider_a_login_revoked', written.path, ['rt-secret-spent', written.accessToken]).fix).toBe(
      `run \`codex login\` and put the auth.json it writes at ${written.path}`,
    );
  });

  it('says which login could not be refreshed when the token endpoint does not answer, and that it is no login problem', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10, refreshToken: 'rt-secret-value' });
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const failure = await new ProviderAAuth({ alias: 'team', loginFile: written.path }, 'http://127.0.0.1:1/token')
      .current(signal, logger)
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'upstream' });
    const line = loginLine('provider_a_token_refresh_failed', written.path, ['rt-secret-value', written.accessToken]);
    expect(line).toMatchObject({ error_code: 'unreachable', fix: expect.stringContaining('PROVIDER_A_TOKEN_URL') });
  });

  it.each([
    [
      'a server error',
      { status: 503, body: { error: 'temporarily_unavailable', error_description: 'DESCRIPTION-SECRET' } },
    ],
    ['a rate limit', { status: 429, body: { error: { code: 'rate_limit_exceeded' } } }],
    // Only a refusal of the grant spends a login: a failing endpoint's code is not one.
    [
      'a server error naming a reused refresh token',
      { status: 503, body: { error: { code: 'refresh_token_reused' } } },
    ],
    ['a 200 without a token', { status: 200, body: { token_type: 'Bearer' } }],
    // The fake writes no body at all: an answer that is not JSON.
    ['an empty 200', { status: 200, body: undefined }],
  ])(
    "says the token endpoint failed, not the login, when it answers with %s: retryable upstream, the endpoint's fix",
    async (_name, answer) => {
      const written = writeAuthFile(dir, { exp: now() - 10, refreshToken: 'rt-secret-value' });
      fake.enqueueToken(answer);
      const auth = authFor(written.path);
      const failure = (await auth.current(signal, logger).catch((error: unknown) => error)) as GatewayError;
      const fix = `the token endpoint (PROVIDER_A_TOKEN_URL) answered HTTP ${answer.status} without a token, not a refusal of the login: nothing to do if it passes, else check the endpoint, the network and HTTPS_PROXY / NO_PROXY; the next request refreshes again`;
      expect(failure).toMatchObject({ code: 'upstream', retryable: true, upstreamStatus: answer.status, fix });
      const line = loginLine('provider_a_token_refresh_failed', written.path, ['rt-secret-value', written.accessToken]);
      expect(line).toMatchObject({ upstream_status: answer.status, fix });
      expect(logger.text()).not.toContain('DESCRIPTION-SECRET');
      // Not remembered as a dead login: the next call refreshes again and gets a token.
      await expect(auth.current(signal, logger)).resolves.toMatchObject({ accountId: 'acct-test-1' });
      expect(fake.tokenRequests()).toHaveLength(2);
    },
  );

  it('maps a token endpoint invalid_grant to auth and logs only the error code', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10, refreshToken: 'rt-secret-value' });
    fake.enqueueToken({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'token sk-DESCRIPTION-SECRET was reused' },
    });
    const failure = (await authFor(written.path)
      .current(signal, logger)
      .catch((error: unknown) => error)) as GatewayError;
    expect(failure.code).toBe('auth');
    const logged = JSON.stringify(logger.records) + failure.message + (failure.detail ?? '');
    expect(logged).toContain('invalid_grant');
    expect(logged).not.toContain('DESCRIPTION-SECRET');
    expect(logged).not.toContain('rt-secret-value');
    expect(logged).not.toContain(written.accessToken);
    const line = loginLine('provider_a_token_refresh_failed', written.path, ['rt-secret-value']);
    expect(line).toMatchObject({ error_code: 'invalid_grant', upstream_status: 400 });
    expect(line.fix).toContain(`CODEX_HOME=${dir} codex login`);
  });

  it("names the family's plain `codex login` for a login without a command of its own (the CLI's default home)", async () => {
    const written = writeAuthFile(dir, { exp: now() - 10, refreshToken: 'rt-secret-value' });
    fake.enqueueToken({ status: 401, body: { error: 'invalid_grant' } });
    await authFor(written.path, null)
      .current(signal, logger)
      .catch(() => undefined);
    const line = loginLine('provider_a_token_refresh_failed', written.path, ['rt-secret-value']);
    expect(line.fix).toBe(loginFix('provider_a', 'refresh_refused'));
    expect(line.fix).not.toContain('CODEX_HOME');
  });

  it.each([
    ['missing', (file: string) => file + '.nope', 'login file missing'],
    ['bad JSON', (file: string) => (fs.writeFileSync(file, '{'), file), 'login file unreadable'],
    [
      'no account id',
      (file: string) => (writeAuthFile(path.dirname(file), { accountId: null }), file),
      'no account id',
    ],
  ])('fails a %s login file with auth', async (_name, prepare, reason) => {
    const file = prepare(writeAuthFile(dir).path);
    const failure = (await authFor(file)
      .current(signal, logger)
      .catch((error: unknown) => error)) as GatewayError;
    expect(failure.code).toBe('auth');
    expect(failure.detail).toContain(reason);
  });

  it('fails a login file the system refuses with its errno and the file fix, not a new login', async () => {
    // A directory where the file should be: EISDIR, the refusal a test running as root meets too.
    const file = path.join(dir, 'auth.json');
    fs.mkdirSync(file);
    const failure = (await authFor(file)
      .current(signal, logger)
      .catch((error: unknown) => error)) as GatewayError;
    expect(failure).toMatchObject({
      code: 'auth',
      provider: 'provider_a',
      detail: 'provider_a login file unreadable: EISDIR',
      fix: expect.stringContaining(`${file} is a directory, not a login file`),
    });
    expect(failure.publicMessage).toContain('(login file unreadable: EISDIR;');
    expect(failure.publicMessage).toContain(failure.fix);
    expect(failure.publicMessage).not.toContain('`codex login`');
  });

  it('forces a refresh after an upstream rejection even though the token did not look expired', async () => {
    const written = writeAuthFile(dir);
    const auth = authFor(written.path);
    const first = await auth.current(signal, logger);
    const second = await auth.afterRejection(first, signal, logger);
    expect(fake.tokenRequests()).toHaveLength(1);
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(await auth.current(signal, logger)).toEqual(second);
  });

  it('uses a different valid token found in the file after a rejection without calling the endpoint', async () => {
    const written = writeAuthFile(dir);
    const auth = authFor(written.path);
    const first = await auth.current(signal, logger);
    const replaced = writeAuthFile(dir, { refreshToken: 'rt-other' });
    const second = await auth.afterRejection(first, signal, logger);
    expect(second.accessToken).toBe(replaced.accessToken);
    expect(fake.tokenRequests()).toHaveLength(0);
  });

  it('keeps the refreshed token in memory when the write-back fails, and logs it without values', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10 });
    fake.enqueueToken({
      status: 200,
      delayMs: 150,
      body: { access_token: makeJwt({ exp: now() + 3600, jti: 'kept' }), refresh_token: 'rt-x' },
    });
    const auth = authFor(written.path);
    const pending = auth.current(signal, logger);
    // Delete the file once it was read (the refresh is underway), not after a guessed sleep.
    await tokenRequestArrived();
    fs.rmSync(written.path);
    const credentials = await pending;
    expect(credentials.accessToken).toContain('.');
    expect(logger.records.map((record) => record.event)).toContain('provider_a_auth_persist_failed');
    expect(JSON.stringify(logger.records)).not.toContain(credentials.accessToken);
    expect(await auth.current(signal, logger)).toEqual(credentials);
  });

  /** The one `provider_a_auth_persist_failed` line of a refresh that rotated `rt-secret-old` to `rt-secret-rotated`. */
  function persistFailedLine(file: string, credentials: { accessToken: string }) {
    return loginLine('provider_a_auth_persist_failed', file, [
      'rt-secret-old',
      'rt-secret-rotated',
      credentials.accessToken,
    ]);
  }

  it('says which login file could not take the rotated token, what that costs and the fix', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10, refreshToken: 'rt-secret-old' });
    fake.enqueueToken({
      status: 200,
      delayMs: 150,
      body: { access_token: makeJwt({ exp: now() + 3600, jti: 'kept' }), refresh_token: 'rt-secret-rotated' },
    });
    const pending = authFor(written.path).current(signal, logger);
    await tokenRequestArrived();
    // A directory where the file was: the write-back fails as it would on a read-only mount, as root too.
    fs.rmSync(written.path);
    fs.mkdirSync(written.path);
    const line = persistFailedLine(written.path, await pending);
    expect(line.errno).toBe('EISDIR');
    expect(line.fix).toContain(`the refreshed token could not be written to ${written.path} (EISDIR)`);
    expect(line.fix).toContain(
      `the login works until the gateway restarts, then needs a new login (run \`CODEX_HOME=${dir} codex login\``,
    );
    expect(line.fix).toContain(`${written.path} is a directory, not a login file`);
  });

  it('names the Kubernetes case when the login file sits on a read-only mount (EROFS)', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10, refreshToken: 'rt-secret-old' });
    fake.enqueueToken({
      status: 200,
      body: { access_token: makeJwt({ exp: now() + 3600, jti: 'kept' }), refresh_token: 'rt-secret-rotated' },
    });
    // What a read-only mount answers, as root too, without mount privileges: the kernel's EROFS
    // when the write-back opens its file beside the login file (reads still pass).
    const open = fs.promises.open;
    const refused = jest.spyOn(fs.promises, 'open').mockImplementation((file, ...rest) =>
      String(file).startsWith(`${written.path}.`)
        ? Promise.reject(
            Object.assign(new Error(`EROFS: read-only file system, open '${String(file)}'`), {
              code: 'EROFS',
              syscall: 'open',
            }),
          )
        : open(file, ...rest),
    );
    try {
      const line = persistFailedLine(written.path, await authFor(written.path).current(signal, logger));
      expect(line.errno).toBe('EROFS');
      expect(line.fix).toContain(`the refreshed token could not be written to ${written.path} (EROFS)`);
      expect(line.fix).toContain('the login works until the gateway restarts, then needs a new login');
      expect(line.fix).toMatch(/mount the file read-write for the gateway's user/);
      // A Secret or ConfigMap cannot be mounted read-write: the fix says where the file goes instead.
      expect(line.fix).toContain(
        'a Kubernetes Secret or ConfigMap mount is always read-only: copy the file into a writable volume (the login claim of docker/k8s/base)',
      );
      expect(line.fix).not.toContain('\n');
    } finally {
      refused.mockRestore();
    }
  });

  it('stops waiting at once when the caller aborts', async () => {
    const written = writeAuthFile(dir, { exp: now() - 10 });
    fake.enqueueToken({ status: 200, delayMs: 3000, body: { access_token: makeJwt({ exp: now() + 3600 }) } });
    const controller = new AbortController();
    const auth = authFor(written.path);
    const pending = auth.current(controller.signal, logger);
    await tokenRequestArrived();
    // A caller that kept waiting would get the token (3 s later) instead of this rejection.
    controller.abort(new Error('gone'));
    await expect(pending).rejects.toThrow('gone');
    // The refresh was not the caller's to cancel: a new caller joins it and gets its token.
    expect((await auth.current(signal, logger)).accessToken).toContain('.');
  });
});
