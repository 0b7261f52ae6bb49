import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { accountPools, closeAdapterModules } from '../../../test/support/adapter-module';
import { loadConfig } from '../../config/app-config';
import { GatewayError } from '../../core/gateway.error';
import { recordingLogger } from '../../../test/support/recorders';
import { LoginNotReadable, readPoolUsage, usageReadFailure } from '../plan-usage-refresh';
import { accountBaseEnvironment, createProviderCPool, providerCLoginToken } from './provider-c.accounts';

describe('provider_c logins', () => {
  let scratch: string;
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-accounts-unit-'));
    fs.mkdirSync(path.join(scratch, 'dir'));
    fs.writeFileSync(path.join(scratch, 'token'), '  sk-ant-oat01-one \n');
  });
  afterEach(async () => {
    await closeAdapterModules();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  const config = (listed?: string, env: Record<string, string> = {}) =>
    loadConfig({ HOME: scratch, ...env, ...(listed ? { PROVIDER_C_ACCOUNTS: listed } : {}) });
  const credentials = (dir: string, accessToken: unknown) =>
    fs.writeFileSync(
      path.join(dir, '.credentials.json'),
      JSON.stringify({ claudeAiOauth: { accessToken, refreshToken: 'r', expiresAt: 4102444800000 } }),
    );

  it("points each child at its login: a config dir, or a token file's trimmed token as the pool's sweep last read it", async () => {
    const listed = config(`dir=${path.join(scratch, 'dir')},file=${path.join(scratch, 'token')}`);
    const pool = createProviderCPool(listed, await accountPools(listed));
    pool.sweep();
    const dir = pool.acquire(undefined);
    const file = pool.acquire(undefined);
    expect([dir.alias, dir.handle.childEnv()]).toEqual(['dir', { CLAUDE_CONFIG_DIR: path.join(scratch, 'dir') }]);
    expect([file.alias, file.handle.childEnv()]).toEqual(['file', { CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-one' }]);
    // A spawn reads memory: the rewritten file counts from the sweep that sees it changed.
    fs.writeFileSync(path.join(scratch, 'token'), 'sk-ant-oat01-two');
    expect(file.handle.childEnv()).toEqual({ CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-one' });
    pool.sweep();
    expect(file.handle.childEnv()).toEqual({ CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-two' });
    fs.writeFileSync(path.join(scratch, 'token'), '\n');
    pool.sweep();
    expect(() => file.handle.childEnv()).toThrow(GatewayError);
    // A token file the system refuses (a directory now: EISDIR, which root meets too) says the
    // errno and the file's fix, not a new login.
    fs.rmSync(path.join(scratch, 'token'));
    fs.mkdirSync(path.join(scratch, 'token'));
    pool.sweep();
    let refused: GatewayError | undefined;
    try {
      file.handle.childEnv();
    } catch (error) {
      refused = error as GatewayError;
    }
    expect(refused).toMatchObject({
      code: 'auth',
      provider: 'provider_c',
      detail: 'provider_c token file unreadable: EISDIR',
    });
    expect(refused?.publicMessage).toContain(`${path.join(scratch, 'token')} is a directory, not a login file`);
    expect(refused?.publicMessage).not.toContain('`/login`');
    dir.release();
    file.release();
  });

  it('fails a turn on an empty token file as a fault of the file, not a refusal by the API', async () => {
    const listed = config(`file=${path.join(scratch, 'token')}`);
    const pool = createProviderCPool(listed, await accountPools(listed));
    fs.writeFileSync(path.join(scratch, 'token'), ' \n');
    pool.sweep();
    const file = pool.acquire(undefined);
    let failure: GatewayError | undefined;
    try {
      file.handle.childEnv();
    } catch (error) {
      failure = error as GatewayError;
    }
    expect(failure).toMatchObject({
      code: 'auth',
      detail: 'provider_c token file is missing or empty',
    });
    file.release();
    // Dead until the file changes, and no answer of the API to be disproved by a later turn.
    pool.applyFailure('file', failure!);
    expect(pool.stateOf('file').kind).toBe('login_dead');
    expect(pool.stateOf('file')).not.toHaveProperty('refusedBy');
  });

  it('takes a token file emptied and filled again with the same token for the same login', async () => {
    const listed = config(`file=${path.join(scratch, 'token')}`);
    const pool = createProviderCPool(listed, await accountPools(listed));
    pool.sweep();
    pool.applyFailure('file', new GatewayError('usage_limit', { retryAfterSeconds: 600 }));
    // An empty file names no login: what the pool knew of the login stays.
    fs.writeFileSync(path.join(scratch, 'token'), '');
    pool.sweep();
    expect(pool.stateOf('file').kind).toBe('cooling');
    fs.writeFileSync(path.join(scratch, 'token'), 'sk-ant-oat01-one\n');
    pool.sweep();
    expect(pool.stateOf('file').kind).toBe('cooling');
  });

  it('says another token in a token file is a new login; a config directory names none, so its state stays', async () => {
    const listed = config(`dir=${path.join(scratch, 'dir')},file=${path.join(scratch, 'token')}`);
    credentials(path.join(scratch, 'dir'), 'access-one');
    const pools = await accountPools(listed);
    const pool = createProviderCPool(listed, pools);
    pool.sweep();
    for (const alias of ['dir', 'file'])
      pool.applyFailure(alias, new GatewayError('usage_limit', { retryAfterSeconds: 600 }));
    fs.writeFileSync(path.join(scratch, 'token'), 'sk-ant-oat01-another-login');
    credentials(path.join(scratch, 'dir'), 'access-another-one');
    pool.sweep();
    expect(pool.stateOf('file').kind).toBe('ready');
    expect(pool.stateOf('dir').kind).toBe('cooling');
  });

  it("drops an inherited token or config dir only when logins are listed (the CLI's own login keeps them)", () => {
    const inherited = { PATH: '/bin', CLAUDE_CODE_OAUTH_TOKEN: 'outer', CLAUDE_CONFIG_DIR: '/outer' };
    expect(accountBaseEnvironment(config(`dir=${path.join(scratch, 'dir')}`), inherited)).toEqual({ PATH: '/bin' });
    expect(accountBaseEnvironment(config(), inherited)).toEqual(inherited);
  });

  it('reads for the usage endpoint the token a child of each login would send', async () => {
    const listed = config(`dir=${path.join(scratch, 'dir')},file=${path.join(scratch, 'token')}`);
    await expect(providerCLoginToken(listed, 'file')).resolves.toBe('sk-ant-oat01-one');
    await expect(providerCLoginToken(listed, 'dir')).rejects.toBeInstanceOf(LoginNotReadable);
    credentials(path.join(scratch, 'dir'), 'dir-access');
    await expect(providerCLoginToken(listed, 'dir')).resolves.toBe('dir-access');
    credentials(path.join(scratch, 'dir'), '');
    await expect(providerCLoginToken(listed, 'dir')).rejects.toBeInstanceOf(LoginNotReadable);
    fs.writeFileSync(path.join(scratch, 'token'), '');
    await expect(providerCLoginToken(listed, 'file')).rejects.toBeInstanceOf(LoginNotReadable);
    // What plan_usage_read_failed says of it: nothing was sent.
    expect(usageReadFailure(new LoginNotReadable())).toBe('not readable');
  });

  it("says by plan_usage_read_failed which login file the system refuses, its errno and the file's fix, not a new login", async () => {
    // Directories where the files should be: EISDIR, the refusal a test running as root meets too.
    const credentialsFile = path.join(scratch, 'dir', '.credentials.json');
    const tokenFile = path.join(scratch, 'token');
    fs.mkdirSync(credentialsFile);
    const listed = config(`dir=${path.join(scratch, 'dir')},file=${tokenFile}`);
    const pool = createProviderCPool(listed, await accountPools(listed));
    // The token file was a file at startup, so it is one; a directory now.
    fs.rmSync(tokenFile);
    fs.mkdirSync(tokenFile);
    const logger = recordingLogger();
    await readPoolUsage(pool, async (account) => (await account.oauthToken(), undefined), logger);
    const lines = logger.records.filter((record) => record.event === 'plan_usage_read_failed');
    expect(lines).toEqual([
      expect.objectContaining({
        provider: 'provider_c',
        account: 'dir',
        path: credentialsFile,
        reason: 'credentials file unreadable: EISDIR',
        fix: expect.stringContaining(`${credentialsFile} is a directory, not a login file`),
      }),
      expect.objectContaining({
        provider: 'provider_c',
        account: 'file',
        path: tokenFile,
        reason: 'token file unreadable: EISDIR',
        fix: expect.stringContaining(`${tokenFile} is a directory, not a login file`),
      }),
    ]);
    expect(logger.text()).not.toContain('/login');
  });

  it("reads the CLI's own login from its environment token, else its config dir's credentials, else not at all", async () => {
    await expect(
      providerCLoginToken(config(undefined, { CLAUDE_CODE_OAUTH_TOKEN: ' env-token\n' }), 'default'),
    ).resolves.toBe('env-token');
    await expect(providerCLoginToken(config(), 'default')).rejects.toBeInstanceOf(LoginNotReadable);
    fs.mkdirSync(path.join(scratch, '.claude'));
    credentials(path.join(scratch, '.claude'), 'cli-access');
    await expect(providerCLoginToken(config(), 'default')).resolves.toBe('cli-access');
    credentials(path.join(scratch, 'dir'), 'moved-access');
    await expect(
      providerCLoginToken(config(undefined, { CLAUDE_CONFIG_DIR: path.join(scratch, 'dir') }), 'default'),
    ).resolves.toBe('moved-access');
  });

  describe('the background refresh of a config directory', () => {
    let server: http.Server;
    let tokenUrl: string;
    let grants: number;
    /** While set, the token endpoint holds its answers until `answer()`; afterwards it answers at once. */
    let held: Array<() => void> | undefined;
    let granted: () => void;
    let grantArrived: Promise<void>;

    beforeAll(async () => {
      server = http.createServer((request, response) => {
        request.resume();
        request.on('end', () => {
          grants++;
          granted();
          const send = () =>
            response
              .writeHead(200, { 'content-type': 'application/json' })
              .end(JSON.stringify({ access_token: 'renewed', expires_in: 3600 }));
          if (held) held.push(send);
          else send();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      tokenUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/oauth/token`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));
    beforeEach(() => {
      grants = 0;
      held = undefined;
      grantArrived = new Promise((resolve) => (granted = resolve));
      // A login expiring within the window: due for a refresh.
      fs.writeFileSync(
        path.join(scratch, 'dir', '.credentials.json'),
        JSON.stringify({ claudeAiOauth: { accessToken: 'a', refreshToken: 'r', expiresAt: Date.now() + 60_000 } }),
      );
    });
    const answer = () => {
      const waiting = held ?? [];
      held = undefined;
      for (const send of waiting) send();
    };
    const dirAccount = async () => {
      const listed = config(`dir=${path.join(scratch, 'dir')}`, { PROVIDER_C_TOKEN_URL: tokenUrl });
      const lease = createProviderCPool(listed, await accountPools(listed)).acquire(undefined);
      lease.release();
      return lease.handle;
    };
    const stored = () =>
      JSON.parse(fs.readFileSync(path.join(scratch, 'dir', '.credentials.json'), 'utf8')).claudeAiOauth.accessToken;

    it('leaves the login to a running child (the CLI renews it itself), and renews it once none runs', async () => {
      const account = await dirAccount();
      const childEnded = account.childStarting();
      await expect(account.refreshAhead(300_000, recordingLogger())).resolves.toBeUndefined();
      expect(grants).toBe(0);
      expect(stored()).toBe('a');
      childEnded();
      await expect(account.refreshAhead(300_000, recordingLogger())).resolves.toEqual(expect.any(Number));
      expect(grants).toBe(1);
      expect(stored()).toBe('renewed');
    });

    it('runs one refresh at a time, and a turn waits for the one in flight before its child starts', async () => {
      const account = await dirAccount();
      expect(account.refreshInFlight()).toBeUndefined();
      held = [];
      const first = account.refreshAhead(300_000, recordingLogger());
      await grantArrived;
      // A second check while the first refresh is in flight spends no second grant.
      const second = account.refreshAhead(300_000, recordingLogger());
      const inFlight = account.refreshInFlight();
      expect(inFlight).toBeInstanceOf(Promise);
      let settled = false;
      void inFlight!.then(() => (settled = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(settled).toBe(false);
      answer();
      await expect(first).resolves.toEqual(expect.any(Number));
      await expect(second).resolves.toBeUndefined();
      await expect(inFlight).resolves.toBeUndefined();
      expect(grants).toBe(1);
      expect(account.refreshInFlight()).toBeUndefined();
    });
  });
});
