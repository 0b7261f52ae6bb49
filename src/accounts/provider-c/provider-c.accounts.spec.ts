import * as fs from 'node:fs';
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
      providerCLoginToken(config(undefined, { CLAUDE_CODE_OAUTH_TOKEN: 'env-token' }), 'default'),
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
});
