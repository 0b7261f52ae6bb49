import { errnoOf } from '../common/errno';
import { gatewayUser } from '../common/gateway-user';
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
  const errno = errnoOf(error);
  if (errno === undefined) return { state: 'unusable', reason: `${name} not a JSON object` };
  return { state: 'unusable', reason: `${name} unreadable: ${errno}`, fix: unreadableFileFix(file, errno) };
}

/**
 * What the login check says of a login file the system refused to read (errno in `error`, a fix
 * about the file: `unreadableLoginFile`). Undefined for any other failure to read it (no file,
 * content that is not JSON), whose fix is the family's login command.
 */
export function refusedLoginFile(file: string, name: string, error: unknown): LoginCheck | undefined {
  if (errnoOf(error) === 'ENOENT') return undefined;
  const check = unreadableLoginFile(file, name, error);
  return check.fix === undefined ? undefined : check;
}

/**
 * The failure of a turn whose login file the system refused to read (`refusedLoginFile`): `auth`
 * whose message names the errno and the file's fix, as the login check says it. Undefined for any
 * other failure, whose fix is the family's login command.
 */
export function unreadableLoginError(
  provider: ProviderId,
  file: string,
  name: string,
  error: unknown,
): GatewayError | undefined {
  const failure = ownFixFailure(provider, refusedLoginFile(file, name, error));
  return failure && new GatewayError('auth', { ...failure, loginFileCause: true, cause: error });
}

/** A path as one shell word, quoted only when it needs to be, for a command a fix names. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./~-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Who a log line about one login is about: its family, its alias (as the pool, the login report
 * and GET /v1/accounts name it) and its login file. The path is the operator's own setting; what
 * the file holds never goes into a line.
 */
export interface LoginLogFields {
  readonly provider: ProviderId;
  readonly account: string;
  readonly path: string;
}

/**
 * A login file the gateway could not read or write outside a request (a background refresh): its
 * errno and the file's fix travel with it, so the refresh's log line (`account_refresh_failed`)
 * says both.
 */
export class LoginFileFailure extends Error {
  constructor(
    readonly errno: string | undefined,
    readonly fix: string,
    options?: ErrorOptions,
  ) {
    super(`login file failure${errno ? ` (${errno})` : ''}`, options);
    this.name = 'LoginFileFailure';
  }
}

/**
 * What a refreshed token that lives only in the gateway's memory costs: when the token endpoint
 * rotated the refresh token, the one the file keeps is spent and the login lasts until the
 * gateway restarts; else the file's refresh token still works.
 */
export function keptInMemoryCost(rotated: boolean, loginAgain: string): string {
  return rotated
    ? `the login works until the gateway restarts, then needs a new login (${loginAgain})`
    : "the file's refresh token still works, so the login survives a restart";
}

/**
 * What to do after a refreshed login could not be written back to `file`: the errno, what the
 * failure costs (`cost`, as the family keeps the new token), and the file's fix. `loginAgain` is
 * the login's own login command.
 */
export function writeBackFailure(
  file: string,
  error: unknown,
  cost: string,
  loginAgain: string,
): { readonly errno: string | undefined; readonly fix: string } {
  const errno = errnoOf(error);
  const what = `the refreshed token could not be written to ${file}${errno ? ` (${errno})` : ''}`;
  const user = gatewayUser();
  let remedy: string;
  switch (errno) {
    case 'EROFS':
      // Kubernetes mounts Secret and ConfigMap volumes read-only whatever the pod asks, so "read-write"
      // alone would send the operator after a setting that does not exist there.
      remedy = `mount the file read-write for ${user}; a Kubernetes Secret or ConfigMap mount is always read-only: copy the file into a writable volume (the login claim of docker/k8s/base)`;
      break;
    case 'EACCES':
    case 'EPERM':
      remedy = `let ${user} write the file and its directory: chown or chmod them`;
      break;
    case 'ENOENT':
      remedy = `the file was removed meanwhile: put the login back (${loginAgain})`;
      break;
    case 'EISDIR':
      remedy = unreadableFileFix(file, errno);
      break;
    default:
      remedy = `make ${file} a login file that ${user} can read and write`;
  }
  return { errno, fix: `${what}; ${cost}; ${remedy}` };
}

function unreadableFileFix(file: string, errno: string): string {
  const user = gatewayUser();
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
