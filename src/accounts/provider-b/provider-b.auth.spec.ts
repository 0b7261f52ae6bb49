import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeCodeAssist } from '../../../test/support/fake-provider-b';
import { writeCredsFile } from '../../../test/support/provider-b-fixtures';
import type { RecordingLogger } from '../../../test/support/recorders';
import { recordingLogger } from '../../../test/support/recorders';
import type { GatewayError } from '../../core/gateway.error';
import { geminiLoginCommand, ProviderBTokenSource } from './provider-b.auth';

describe(ProviderBTokenSource.name, () => {
  let fake: FakeCodeAssist;
  let dir: string;
  let logger: RecordingLogger;
  const signal = new AbortController().signal;

  beforeAll(async () => (fake = await FakeCodeAssist.start()));
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.reset();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-auth-'));
    logger = recordingLogger();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const readFile = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
  // A login outside the CLI's default home, with the command the settings give such a login.
  const sourceFor = (file: string, tokenUrl = fake.tokenUrl) =>
    new ProviderBTokenSource({ alias: 'work', loginFile: file, loginCommand: geminiLoginCommand(file) }, tokenUrl);

  /**
   * The one line of `event`: it names the login (its alias and file) and carries a fix, and no
   * token of the login is anywhere in the log.
   */
  function loginLine(event: string, file: string, tokens: readonly string[]): Record<string, unknown> {
    const lines = logger.records.filter((record) => record.event === event);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ provider: 'provider_b', account: 'work', path: file, fix: expect.any(String) });
    for (const token of tokens) expect(logger.text()).not.toContain(token);
    return lines[0];
  }

  /** A home whose `.gemini/oauth_creds.json` is the login, as `GEMINI_CLI_HOME=<home> gemini` writes it. */
  const geminiHome = () => path.join(dir, 'home');
  const loginCommand = () =>
    `run \`GEMINI_CLI_HOME=${geminiHome()} gemini\` on the gateway's machine and choose "Login with Google"`;

  it.each([
    ['missing', () => path.join(geminiHome(), '.gemini', 'oauth_creds.json')],
    ['no_tokens', () => writeCredsFile(path.join(geminiHome(), '.gemini'), { accessToken: null, refreshToken: null })],
    [
      'no_refresh_token',
      () =>
        writeCredsFile(path.join(geminiHome(), '.gemini'), {
          accessToken: 'access-secret',
          refreshToken: null,
          expiryDateMs: Date.now() - 1000,
        }),
    ],
  ])('says which login is not usable (%s) and its own login command', async (reason, prepare) => {
    const file = prepare();
    await expect(sourceFor(file).current(signal, logger)).rejects.toMatchObject({ code: 'auth' });
    const line = loginLine('provider_b_auth_unavailable', file, ['access-secret']);
    expect(line.reason).toBe(reason);
    expect(line.fix).toContain(loginCommand());
  });

  it("names the family's own fix for a login without a command of its own (the CLI's default login)", async () => {
    const file = path.join(geminiHome(), '.gemini', 'oauth_creds.json');
    await expect(
      new ProviderBTokenSource({ alias: 'work', loginFile: file }, fake.tokenUrl).current(signal, logger),
    ).rejects.toMatchObject({ code: 'auth' });
    expect(loginLine('provider_b_auth_unavailable', file, []).fix).toBe(
      'run `gemini` on the gateway\'s machine and choose "Login with Google"',
    );
  });

  it('says which login could not be refreshed and its login command when the token endpoint refuses it', async () => {
    const file = writeCredsFile(path.join(geminiHome(), '.gemini'), {
      accessToken: 'access-secret',
      refreshToken: 'refresh-secret',
      expiryDateMs: Date.now() - 1000,
    });
    fake.enqueue('token', {
      status: 400,
      body: { error: 'invalid_grant', error_description: 'Token has been expired' },
    });
    await expect(sourceFor(file).current(signal, logger)).rejects.toMatchObject({ code: 'auth' });
    const line = loginLine('provider_b_auth_refresh_failed', file, ['access-secret', 'refresh-secret']);
    expect(line).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(line.fix).toContain(loginCommand());
  });

  it.each([
    ['a server error', { status: 503, body: { error: 'backend_error', error_description: 'Backend Error' } }],
    ['a rate limit', { status: 429, body: { error: 'rate_limit_exceeded' } }],
    // The fake writes no body at all: an answer that is not JSON.
    ['an empty 200', { status: 200 }],
  ])(
    "says the token endpoint failed, not the login, when it answers with %s: retryable, the endpoint's fix",
    async (_name, answer) => {
      const file = writeCredsFile(path.join(geminiHome(), '.gemini'), {
        accessToken: 'access-secret',
        refreshToken: 'refresh-secret',
        expiryDateMs: Date.now() - 1000,
      });
      fake.enqueue('token', answer);
      await expect(sourceFor(file).current(signal, logger)).rejects.toMatchObject({
        code: 'upstream',
        retryable: true,
        fix: expect.stringContaining('PROVIDER_B_TOKEN_URL'),
      });
      const line = loginLine('provider_b_auth_refresh_failed', file, ['access-secret', 'refresh-secret']);
      expect(line.status).toBe(answer.status);
      expect(line.fix).toContain('the token endpoint (PROVIDER_B_TOKEN_URL)');
      expect(line.fix).not.toContain(loginCommand());
    },
  );

  it('says which login could not be refreshed when the token endpoint does not answer, and that it is no login problem', async () => {
    const file = writeCredsFile(dir, { refreshToken: 'refresh-secret', expiryDateMs: Date.now() - 1000 });
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    await expect(sourceFor(file, 'http://127.0.0.1:1/token').current(signal, logger)).rejects.toMatchObject({
      code: 'upstream',
    });
    const line = loginLine('provider_b_auth_refresh_failed', file, ['refresh-secret']);
    expect(line).toMatchObject({ reason: 'unreachable', fix: expect.stringContaining('PROVIDER_B_TOKEN_URL') });
  });

  /**
   * The persist-failed line of a refresh answered with `answer` whose write-back fails: a directory
   * where the file was, as on a read-only mount (as root too).
   */
  async function failedWriteBackLine(answer: Record<string, unknown>) {
    const file = writeCredsFile(dir, { refreshToken: 'refresh-secret', expiryDateMs: Date.now() - 1000 });
    fake.enqueue('token', {
      delayMs: 150,
      body: { access_token: 'access-secret-refreshed', expires_in: 3600, ...answer },
    });
    const pending = sourceFor(file).current(signal, logger);
    await fake.waitForRequests('token', 1);
    fs.rmSync(file);
    fs.mkdirSync(file);
    expect((await pending).accessToken).toBe('access-secret-refreshed');
    return {
      file,
      line: loginLine('provider_b_auth_persist_failed', file, ['refresh-secret', 'access-secret-refreshed']),
    };
  }

  it('says which login file could not take the refreshed token, what that costs and the fix', async () => {
    const { file, line } = await failedWriteBackLine({});
    expect(line.code).toBe('EISDIR');
    expect(line.fix).toContain(`the refreshed token could not be written to ${file} (EISDIR)`);
    // Google kept the refresh token: the one in the file still works after a restart.
    expect(line.fix).toContain("the file's refresh token still works, so the login survives a restart");
    expect(line.fix).toContain(`${file} is a directory, not a login file`);
  });

  it('writes the refreshed token back into the file it refreshed, keeping its other members (docs/upstream/provider-b.md §2.4)', async () => {
    const file = writeCredsFile(dir, {
      accessToken: 'access-old',
      refreshToken: 'rt-old',
      expiryDateMs: Date.now() - 1000,
      extra: { id_token: 'id-old' },
    });
    fake.enqueue('token', { body: { access_token: 'access-refreshed', expires_in: 3600 } });
    const credential = await sourceFor(file).current(signal, logger);
    expect(credential.accessToken).toBe('access-refreshed');
    expect(readFile(file)).toMatchObject({
      access_token: 'access-refreshed',
      refresh_token: 'rt-old',
      id_token: 'id-old',
    });
    expect(logger.records.map((record) => record.event)).not.toContain('provider_b_auth_persist_superseded');
  });

  it('writes a refresh token Google rotated and the new expiry back, so a restarted gateway uses the file as it is', async () => {
    const file = writeCredsFile(dir, {
      accessToken: 'access-old',
      refreshToken: 'rt-old',
      expiryDateMs: Date.now() - 1000,
    });
    fake.enqueue('token', {
      body: { access_token: 'access-refreshed', refresh_token: 'rt-rotated', expires_in: 3600 },
    });
    const now = Date.now();
    const source = new ProviderBTokenSource({ alias: 'work', loginFile: file }, fake.tokenUrl, () => now);
    const credential = await source.current(signal, logger);
    expect(readFile(file)).toMatchObject({
      access_token: 'access-refreshed',
      refresh_token: 'rt-rotated',
      expiry_date: now + 3_600_000,
    });
    // The key of the login the file holds now: the same login, so its project is not discovered again.
    expect(credential.loginKey).toBe(source.loginFileChanged());
    // A restart reads the file alone: its token is current, so no second refresh.
    const restarted = await sourceFor(file).current(signal, logger);
    expect(restarted.accessToken).toBe('access-refreshed');
    expect(fake.requests('token')).toHaveLength(1);
  });

  it('says the login will not survive a restart when a refresh token Google rotated could not be written back', async () => {
    const { line } = await failedWriteBackLine({ refresh_token: 'refresh-secret-rotated' });
    // The file's refresh token is spent: a restart leaves only a new login.
    expect(line.fix).toContain('the login works until the gateway restarts, then needs a new login (run `gemini`');
    expect(line.fix).not.toContain('survives a restart');
  });

  it('tells the login of a file that holds only an access token from another such login', () => {
    const first = sourceFor(writeCredsFile(path.join(dir, 'a'), { accessToken: 'access-a', refreshToken: null }));
    const second = sourceFor(writeCredsFile(path.join(dir, 'b'), { accessToken: 'access-b', refreshToken: null }));
    const key = first.loginFileChanged();
    expect(key).toEqual(expect.any(String));
    expect(second.loginFileChanged()).not.toBe(key);
    expect(
      sourceFor(writeCredsFile(path.join(dir, 'c'), { accessToken: null, refreshToken: null })).loginFileChanged(),
    ).toBeUndefined();
  });

  it('fails a login file the system refuses with its errno and the file fix, not a new login', async () => {
    // A directory where the file should be: EISDIR, the refusal a test running as root meets too.
    const file = path.join(dir, 'oauth_creds.json');
    fs.mkdirSync(file);
    const failure = (await sourceFor(file)
      .current(signal, logger)
      .catch((error: unknown) => error)) as GatewayError;
    expect(failure).toMatchObject({
      code: 'auth',
      provider: 'provider_b',
      detail: 'provider_b login file unreadable: EISDIR',
      fix: expect.stringContaining(`${file} is a directory, not a login file`),
    });
    expect(failure.publicMessage).toContain('(login file unreadable: EISDIR;');
    expect(failure.publicMessage).not.toContain('"Login with Google"');
    expect(logger.records).toEqual([
      expect.objectContaining({ event: 'provider_b_auth_unavailable', reason: 'unreadable', errno: 'EISDIR' }),
    ]);
    expect(loginLine('provider_b_auth_unavailable', file, []).fix).toBe(failure.fix);
  });

  it('never writes the old login over a file rewritten during the refresh (a new gemini login), and uses the new one', async () => {
    const file = writeCredsFile(dir, {
      accessToken: 'access-old',
      refreshToken: 'rt-old',
      expiryDateMs: Date.now() - 1000,
      extra: { id_token: 'id-old' },
    });
    fake.enqueue('token', {
      delayMs: 300,
      body: { access_token: 'access-old-refreshed', expires_in: 3600, id_token: 'id-old-refreshed' },
    });
    const source = sourceFor(file);
    const pending = source.current(signal, logger);
    await fake.waitForRequests('token', 1);
    // `gemini` logged in again (perhaps with another account) while the refresh was on its way.
    writeCredsFile(dir, {
      accessToken: 'access-new-login',
      refreshToken: 'rt-new-login',
      expiryDateMs: Date.now() + 3_600_000,
      extra: { id_token: 'id-new-login' },
    });
    const fresh = readFile(file);
    const credential = await pending;
    expect(readFile(file)).toEqual(fresh);
    expect(credential.accessToken).toBe('access-new-login');
    expect(source.cached()?.accessToken).toBe('access-new-login');
    expect(logger.records.map((record) => record.event)).toContain('provider_b_auth_persist_superseded');
    expect(logger.text()).not.toMatch(/access-|rt-|id-/);
  });
});
