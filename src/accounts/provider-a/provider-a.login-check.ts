import type { LoginCheck } from '../../core/login-state';
import { readLoginDocument, tokenCheck } from '../login-file-check';
import { isExpired } from '../login-token-cache';
import { LoginFileError, parseLoginFile } from './provider-a.login-file';

/**
 * The state of a Codex login file without any network call (docs/accounts.md): read and parsed as a
 * request would, expiry from `expires_at` or the JWT's `exp`. Whether the upstream still accepts
 * it is only known on use.
 */
export async function checkProviderALogin(file: string, now: number = Date.now()): Promise<LoginCheck> {
  const read = await readLoginDocument(file);
  if ('check' in read) return read.check;
  try {
    const login = parseLoginFile(read.document);
    return tokenCheck(isExpired(login.expiresAt, now), login.refreshToken !== undefined, login.expiresAt);
  } catch (error) {
    if (error instanceof LoginFileError) return { state: 'unusable', reason: error.reason };
    throw error;
  }
}
