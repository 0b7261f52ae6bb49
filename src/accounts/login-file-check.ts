import type { LoginCheck } from '../core/login-state';
import { readJsonObject } from './credential-file';

/**
 * The login file as JSON for an offline login check (docs/accounts.md), or the check's answer when there
 * is nothing to read: no file is `missing` (a login was never made), anything else `unusable`.
 */
export async function readLoginDocument(
  file: string,
  name = 'login file',
): Promise<{ readonly document: Record<string, unknown> } | { readonly check: LoginCheck }> {
  try {
    return { document: await readJsonObject(file) };
  } catch (error) {
    return {
      check:
        (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? { state: 'missing', reason: `no ${name}` }
          : { state: 'unusable', reason: `${name} unreadable` },
    };
  }
}

/**
 * A token found: usable until it expires, then renewable only with a refresh token. `expiresAt`
 * (epoch ms, when the file says) travels with the answer for the setup check (docs/troubleshooting.md).
 */
export function tokenCheck(expired: boolean, refreshable: boolean, expiresAt?: number): LoginCheck {
  const expiry = expiresAt === undefined ? {} : { expiresAt };
  if (!expired) return { state: 'usable', ...expiry };
  return refreshable
    ? { state: 'expired_refreshable', ...expiry }
    : { state: 'unusable', reason: 'expired, no refresh token', ...expiry };
}
