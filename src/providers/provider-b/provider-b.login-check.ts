import type { LoginCheck } from '../../core/login-state';
import { nonEmptyString } from '../../common/json';
import { readJsonObject } from '../shared/credential-file';
import { isExpired } from '../shared/login-token-cache';

/**
 * The state of a Gemini CLI `oauth_creds.json` without any network call (issue 23), read as a
 * request reads it (`expiry_date` in ms). Whether Code Assist serves the account is only known
 * from `loadCodeAssist`, on the first request: that verdict reaches the report through the pool.
 */
export async function checkProviderBLogin(file: string, now: number = Date.now()): Promise<LoginCheck> {
  let raw: Record<string, unknown>;
  try {
    raw = await readJsonObject(file);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? { state: 'missing', reason: 'no login file' } : { state: 'unusable', reason: 'login file unreadable' };
  }
  const accessToken = nonEmptyString(raw.access_token);
  const refreshToken = nonEmptyString(raw.refresh_token);
  if (!accessToken && !refreshToken) return { state: 'unusable', reason: 'no tokens' };
  const expiresAt = typeof raw.expiry_date === 'number' && Number.isFinite(raw.expiry_date) ? raw.expiry_date : undefined;
  if (accessToken && !isExpired(expiresAt, now)) return { state: 'usable' };
  return refreshToken ? { state: 'expired_refreshable' } : { state: 'unusable', reason: 'expired, no refresh token' };
}
