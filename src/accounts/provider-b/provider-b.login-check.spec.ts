import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkProviderBLogin } from './provider-b.login-check';

const NOW = 1_800_000_000_000;

describe(checkProviderBLogin.name, () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-login-check-'));
    file = path.join(dir, 'oauth_creds.json');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (creds: Record<string, unknown>) => fs.writeFileSync(file, JSON.stringify(creds));

  it('reads oauth_creds.json as a request would, offline (expiry_date in ms)', async () => {
    expect(await checkProviderBLogin(file, NOW)).toEqual({ state: 'missing', reason: 'no login file' });
    write({ token_type: 'Bearer' });
    expect(await checkProviderBLogin(file, NOW)).toEqual({ state: 'unusable', reason: 'no tokens' });
    write({ access_token: 'a', refresh_token: 'r', expiry_date: NOW + 3_600_000 });
    expect(await checkProviderBLogin(file, NOW)).toEqual({ state: 'usable', expiresAt: NOW + 3_600_000 });
    write({ access_token: 'a', refresh_token: 'r', expiry_date: NOW - 1 });
    expect(await checkProviderBLogin(file, NOW)).toEqual({ state: 'expired_refreshable', expiresAt: NOW - 1 });
    write({ refresh_token: 'r' });
    expect(await checkProviderBLogin(file, NOW)).toEqual({ state: 'expired_refreshable' });
    write({ access_token: 'a', expiry_date: NOW - 1 });
    expect(await checkProviderBLogin(file, NOW)).toEqual({
      state: 'unusable',
      reason: 'expired, no refresh token',
      expiresAt: NOW - 1,
    });
  });

  it('tells a file that is not a login, or that the system refuses, from no login file, with the fix for the file', async () => {
    fs.writeFileSync(file, 'not json');
    expect(await checkProviderBLogin(file, NOW)).toEqual({ state: 'unusable', reason: 'login file not a JSON object' });
    // A directory in its place (EISDIR, which root meets too): the errno and what to do with the file.
    fs.rmSync(file);
    fs.mkdirSync(file);
    expect(await checkProviderBLogin(file, NOW)).toEqual({
      state: 'unusable',
      reason: 'login file unreadable: EISDIR',
      fix: expect.stringContaining(`${file} is a directory, not a login file`),
    });
  });
});
