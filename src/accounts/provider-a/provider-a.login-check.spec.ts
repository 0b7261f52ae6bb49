import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkProviderALogin } from './provider-a.login-check';
import { makeJwt } from '../../../test/support/provider-a-fixtures';

const NOW = 1_800_000_000_000;

describe(checkProviderALogin.name, () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-login-check-'));
    file = path.join(dir, 'auth.json');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (tokens: Record<string, unknown>) => fs.writeFileSync(file, JSON.stringify({ tokens }));

  it('reads the login as a request would, offline', async () => {
    expect(await checkProviderALogin(file, NOW)).toEqual({ state: 'missing', reason: 'no login file' });
    fs.writeFileSync(file, 'not json');
    expect(await checkProviderALogin(file, NOW)).toMatchObject({ state: 'unusable' });
    write({ access_token: makeJwt({ exp: NOW / 1000 + 3600 }) });
    expect(await checkProviderALogin(file, NOW)).toEqual({ state: 'unusable', reason: 'no account id' });
    write({ access_token: makeJwt({ exp: NOW / 1000 + 3600 }), account_id: 'acct' });
    expect(await checkProviderALogin(file, NOW)).toEqual({ state: 'usable', expiresAt: NOW + 3_600_000 });
    write({ access_token: makeJwt({ exp: NOW / 1000 - 10 }), account_id: 'acct', refresh_token: 'rt' });
    expect(await checkProviderALogin(file, NOW)).toEqual({ state: 'expired_refreshable', expiresAt: NOW - 10_000 });
    write({ access_token: makeJwt({ exp: NOW / 1000 - 10 }), account_id: 'acct' });
    expect(await checkProviderALogin(file, NOW)).toEqual({
      state: 'unusable',
      reason: 'expired, no refresh token',
      expiresAt: NOW - 10_000,
    });
  });

  it('names the errno of a file it cannot read, and a fix about the file rather than a new login', async () => {
    // A directory where the file should be (what a bind mount of a missing host file leaves):
    // EISDIR, the one refusal a test running as root meets too (root reads any mode).
    fs.mkdirSync(file);
    expect(await checkProviderALogin(file, NOW)).toEqual({
      state: 'unusable',
      reason: 'login file unreadable: EISDIR',
      fix: expect.stringContaining(`${file} is a directory, not a login file`),
    });
    fs.rmdirSync(file);
    fs.writeFileSync(file, '[1]');
    // Content that is no login is still the login command's to mend (the state's own fix).
    expect(await checkProviderALogin(file, NOW)).toEqual({
      state: 'unusable',
      reason: 'login file not a JSON object',
    });
  });
});
