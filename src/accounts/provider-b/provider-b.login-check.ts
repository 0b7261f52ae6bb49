import type { LoginCheck } from '../../core/login-state';
import { nonEmptyString } from '../../common/json';
import { readLoginDocument, tokenCheck } from '../login-file-check';
import { isExpired } from '../login-token-cache';

/**
 * The state of a Gemini CLI `oauth_creds.json` without any network call (docs/accounts.md), read as a
 * request reads it (`expiry_date` in ms). Whether Code Assist serves the account is only known
 * from `loadCodeAssist`, on the first request: that verdict reaches the report through the pool.
 */
export async function checkProviderBLogin(file: string, now: number = Date.now()): Promise<LoginCheck> {
  const read = await readLoginDocument(file);
  if ('check' in read) return read.check;
  const accessToken = nonEmptyString(read.document.access_token);
  const refreshToken = nonEmptyString(read.document.refresh_token);
  if (!accessToken && !refreshToken) return { state: 'unusable', reason: 'no tokens' };
  const expiry = read.document.expiry_date;
  const expiresAt = typeof expiry === 'number' && Number.isFinite(expiry) ? expiry : undefined;
  // A file with only a refresh token is refreshed before its first use, as a request does.
  return tokenCheck(!accessToken || isExpired(expiresAt, now), refreshToken !== undefined, expiresAt);
}
