import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { accountPools, closeAdapterModules } from '../../../test/support/adapter-module';
import { loadConfig } from '../../config/app-config';
import { GatewayError } from '../../core/gateway.error';
import { accountBaseEnvironment, createProviderCPool } from './provider-c.accounts';

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

  const config = (listed?: string) => loadConfig({ HOME: scratch, ...(listed ? { PROVIDER_C_ACCOUNTS: listed } : {}) });

  it("points each child at its login: a config dir, or a token file's trimmed token read at every spawn", async () => {
    const listed = config(`dir=${path.join(scratch, 'dir')},file=${path.join(scratch, 'token')}`);
    const pool = createProviderCPool(listed, await accountPools(listed));
    const dir = pool.acquire(undefined);
    const file = pool.acquire(undefined);
    expect([dir.alias, dir.handle.childEnv()]).toEqual(['dir', { CLAUDE_CONFIG_DIR: path.join(scratch, 'dir') }]);
    expect([file.alias, file.handle.childEnv()]).toEqual(['file', { CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-one' }]);
    fs.writeFileSync(path.join(scratch, 'token'), '\n');
    expect(() => file.handle.childEnv()).toThrow(GatewayError);
    dir.release();
    file.release();
  });

  it("drops an inherited token or config dir only when logins are listed (the CLI's own login keeps them)", () => {
    const inherited = { PATH: '/bin', CLAUDE_CODE_OAUTH_TOKEN: 'outer', CLAUDE_CONFIG_DIR: '/outer' };
    expect(accountBaseEnvironment(config(`dir=${path.join(scratch, 'dir')}`), inherited)).toEqual({ PATH: '/bin' });
    expect(accountBaseEnvironment(config(), inherited)).toEqual(inherited);
  });
});
