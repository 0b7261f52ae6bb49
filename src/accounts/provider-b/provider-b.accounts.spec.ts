import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { accountPools, closeAdapterModules } from '../../../test/support/adapter-module';
import { recordingLogger } from '../../../test/support/recorders';
import { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { loadConfig } from '../../config/app-config';
import { createProviderBPool } from './provider-b.accounts';

describe('provider_b logins', () => {
  let scratch: string;
  beforeEach(() => (scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-accounts-unit-'))));
  afterEach(async () => {
    await closeAdapterModules();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it("names a listed login's own command in its fixes, where the family's plain one would log in another file", async () => {
    const file = path.join(scratch, 'work', '.gemini', 'oauth_creds.json');
    const command = `run \`GEMINI_CLI_HOME=${path.join(scratch, 'work')} gemini\` on the gateway's machine and choose "Login with Google" (it rewrites ${file})`;
    const config = loadConfig({ HOME: scratch, PROVIDER_B_ACCOUNTS: `work=${file}` });
    const pool = createProviderBPool(config, await accountPools(config), new UpstreamProxy({}));
    // The pool's own fix for the login (its state lines and reports).
    expect(pool.loginFixOf('work')).toContain(command);
    // A turn on a login with no file yet: its line names that login's command as the fix.
    const logger = recordingLogger();
    const lease = pool.acquire(undefined);
    await expect(lease.handle.tokens.current(new AbortController().signal, logger)).rejects.toMatchObject({
      code: 'auth',
    });
    lease.release();
    expect(logger.records).toEqual([
      expect.objectContaining({
        event: 'provider_b_auth_unavailable',
        account: 'work',
        path: file,
        reason: 'missing',
        fix: expect.stringContaining(command),
      }),
    ]);
  });
});
