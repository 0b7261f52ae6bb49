import { GatewayError } from '../core/gateway.error';
import type { LoginCheck } from '../core/login-state';
import { ownFixFailure } from '../core/login-state';
import type { ProviderId } from '../core/provider-id';
import { readJsonObject } from './credential-file';

/**
 * The login file as JSON for an offline login check (docs/accounts.md), or the check's answer when there
 * is nothing to read: no file is `missing` (a login was never made), anything else `unusable`
 * (`unreadableLoginFile`).
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
          : unreadableLoginFile(file, name, error),
    };
  }
}

/**
 * A login file that is there but cannot be read (`name`: how the reason calls it). A file the
 * system refuses carries its errno in the reason and a fix about the file, not a new login: a
 * login command run as another user (the host's, beside a container's) cannot mend a file the
 * gateway's user may not read. The fix names the path (the operator's own setting), never what
 * the file holds. Content that is not a JSON object needs a new login, the state's own fix.
 */
export function unreadableLoginFile(file: string, name: string, error: unknown): LoginCheck {
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof errno !== 'string' || !/^E[A-Z0-9]{1,15}$/.test(errno))
    return { state: 'unusable', reason: `${name} not a JSON object` };
  return { state: 'unusable', reason: `${name} unreadable: ${errno}`, fix: unreadableFileFix(file, errno) };
}

/**
 * The failure of a turn whose login file the system refused to read (errno in `error`): `auth`
 * whose message names the errno and the file's fix, as the login check says it
 * (`unreadableLoginFile`). Undefined for any other failure (no file, content that is not JSON),
 * whose fix is the family's login command.
 */
export function unreadableLoginError(
  provider: ProviderId,
  file: string,
  name: string,
  error: unknown,
): GatewayError | undefined {
  if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return undefined;
  const failure = ownFixFailure(provider, unreadableLoginFile(file, name, error));
  return failure && new GatewayError('auth', { ...failure, cause: error });
}

function unreadableFileFix(file: string, errno: string): string {
  const uid = process.getuid?.();
  const user = uid === undefined ? "the gateway's user" : `the gateway's user (uid ${uid})`;
  switch (errno) {
    case 'EACCES':
    case 'EPERM':
      return `make ${file} readable by ${user}: chown or chmod it (and let that user into its directories)`;
    case 'EISDIR':
      // What a bind mount of a host file that did not exist leaves: Docker creates a directory there.
      return `${file} is a directory, not a login file (a bind mount of a file missing on the host creates one): remove it, log in so the file exists, and point the setting or the mount at that file`;
    default:
      return `make ${file} a login file that ${user} can read`;
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
