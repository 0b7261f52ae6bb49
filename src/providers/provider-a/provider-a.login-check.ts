import type { LoginCheck } from '../../core/login-state';
import { readJsonObject } from '../shared/credential-file';
import { isExpired } from '../shared/login-token-cache';
import { LoginFileError, parseLoginFile } from './provider-a.login-file';

/**
 * The state of a Codex login file without any network call (issue 23): read and parsed as a
 * request would, expiry from `expires_at` or the JWT's `exp`. Whether the upstream still accepts
 * it is only known on use.
 */
export async function checkProviderALogin(file: string, now: number = Date.now()): Promise<LoginCheck> {
  let document: Record<string, unknown>;
  try {
    document = await readJsonObject(file);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? { state: 'missing', reason: 'no login file' } : { state: 'unusable', reason: 'login file unreadable' };
  }
  try {
    const login = parseLoginFile(document);
    if (!isExpired(login.expiresAt, now)) return { state: 'usable' };
    return login.refreshToken ? { state: 'expired_refreshable' } : { state: 'unusable', reason: 'expired, no refresh token' };
  } catch (error) {
    if (error instanceof LoginFileError) return { state: 'unusable', reason: error.reason };
    throw error;
  }
}
