import * as path from 'node:path';
import type { AccountLogin } from '../../config/app-config';
import { isJsonObject, nonEmptyString } from '../../common/json';
import type { EventLogger } from '../../core/event-logger';
import { loginFix } from '../../core/login-state';
import { errnoOf } from '../../common/errno';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { readJsonObject, writeBackRefreshed } from '../credential-file';
import { isExpired } from '../login-token-cache';
import type { LoginLogFields } from '../login-file-check';
import { LoginFileFailure, refusedLoginFile, shellWord, writeBackFailure } from '../login-file-check';
import {
  failedGrantError,
  grantRefused,
  postRefreshGrant,
  tokenEndpointFailure,
  tokenEndpointFailedFix,
  tokenEndpointFix,
} from '../refresh-grant';

/**
 * The Claude Code CLI's OAuth client and refresh grant, as the 2.1.332 binary has them (its OAuth
 * config object: `TOKEN_URL:"https://platform.claude.com/v1/oauth/token"`,
 * `CLIENT_ID:"9d1c250a-e61b-44d9-88ed-5944d1962f5e"`; the refresh posts JSON
 * `{grant_type, refresh_token, client_id, scope}` and stores `expiresAt = now + expires_in`).
 */
export const PROVIDER_C_CLIENT_ID = '9d1c250a-e61b-44d9-88ed-5944d1962f5e';
/** The scopes the CLI asks for when the stored login names none. */
const DEFAULT_SCOPES = 'user:profile user:inference user:sessions:claude_code user:mcp_servers';
/** The CLI bounds its own refresh at 30 s; an idle refresh has no reason to wait longer than ours elsewhere. */
const REFRESH_TIMEOUT_MS = 10_000;

/**
 * What to do when the token endpoint gave no answer. Only the idle refresh asks it (a running CLI
 * renews its own login), so no request is waiting on it: the children go on with the stored token.
 */
const TOKEN_ENDPOINT_FIX = tokenEndpointFix(
  'PROVIDER_C_TOKEN_URL',
  'not a login problem: its children use the current token until it expires',
);

/** What to do when the token endpoint answered `status`, neither a token nor a refusal of the login. */
const endpointFailedFix = (status: number) =>
  tokenEndpointFailedFix(
    'PROVIDER_C_TOKEN_URL',
    status,
    'the refresh is tried again at the next check (ACCOUNT_REFRESH_INTERVAL)',
  );

/**
 * One provider_c login: a Claude Code config directory (its `.credentials.json` is the watched
 * login file), a file holding a long-lived OAuth token, or (`cli`, the one `default` account when
 * PROVIDER_C_ACCOUNTS is unset) whatever login the CLI finds itself.
 */
export interface ProviderCLogin extends AccountLogin {
  readonly kind: 'cli' | 'config_dir' | 'token_file';
  /** The directory (config_dir) or the file (token_file) as configured; absent for `cli`. */
  readonly location?: string;
}

/** The file a config directory keeps its login in (plain JSON on Linux). */
export const credentialsFileOf = (configDir: string) => path.join(configDir, '.credentials.json');

/** What logs one Claude Code config directory in again. */
export function claudeLoginCommand(configDir: string): string {
  return `run \`CLAUDE_CONFIG_DIR=${shellWord(configDir)} claude\` on the gateway's machine, then \`/login\` (it rewrites ${credentialsFileOf(configDir)})`;
}

/** What gives one token-file login a new token: a long-lived token written over the file. */
export function claudeTokenFileCommand(file: string): string {
  return `run \`claude setup-token\` on the gateway's machine and write the token it prints to ${file}`;
}

/**
 * Renews the access token of a Claude Code config directory (`login`: its alias and directory)
 * when it expires within `aheadMs`, and writes it back atomically in the CLI's own shape (other
 * fields of the file survive). A refused refresh token (400/401) is `auth`: the login is dead
 * until the file changes; an unreachable or failing endpoint is retried at the next tick. A file
 * that cannot be read or written rejects with LoginFileFailure (its errno and the file's fix).
 * `proxy`: the gateway's egress proxy (HTTPS_PROXY / HTTP_PROXY / NO_PROXY), as for its other
 * upstream calls. Resolves with the renewed token's expiry; when the file holds another login by
 * the time the renewed one would be written (a new `claude` /login), that login's expiry while its
 * token is usable; undefined when no refresh was due. Never logs a token.
 */
export async function refreshCredentialsAhead(
  login: { readonly alias: string; readonly configDir: string; readonly loginCommand?: string },
  tokenUrl: string,
  aheadMs: number,
  logger: EventLogger,
  now: () => number = Date.now,
  proxy?: UpstreamProxy,
): Promise<number | undefined> {
  const file = credentialsFileOf(login.configDir);
  const fields: LoginLogFields = { provider: 'provider_c', account: login.alias, path: file };
  // The login's own command, else the family's (the CLI's default directory), as its state line says.
  const loginAgain = loginFix('provider_c', 'refresh_refused', login.loginCommand)!;
  let stored: Record<string, unknown>;
  try {
    stored = await readJsonObject(file);
  } catch (error) {
    // A file the system refused has the file's own fix; no file, or one not JSON, needs a login.
    const fix = refusedLoginFile(file, 'credentials file', error)?.fix ?? loginAgain;
    throw new LoginFileFailure(errnoOf(error), fix, { cause: error });
  }
  const oauth = stored.claudeAiOauth;
  if (!isJsonObject(oauth)) return undefined;
  const refreshToken = nonEmptyString(oauth.refreshToken);
  const expiresAt = typeof oauth.expiresAt === 'number' ? oauth.expiresAt : undefined;
  if (!refreshToken || expiresAt === undefined || expiresAt - now() > aheadMs) return undefined;
  const scopes =
    Array.isArray(oauth.scopes) && oauth.scopes.length > 0 && oauth.scopes.every((scope) => typeof scope === 'string')
      ? oauth.scopes.join(' ')
      : DEFAULT_SCOPES;
  const grant = {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: PROVIDER_C_CLIENT_ID,
    scope: scopes,
  };
  let answer: Awaited<ReturnType<typeof postRefreshGrant>>;
  try {
    answer = await postRefreshGrant(tokenUrl, grant, REFRESH_TIMEOUT_MS, proxy, 'json');
  } catch (error) {
    // No line here: the background refresh's account_refresh_failed says it, with this fix.
    throw tokenEndpointFailure('provider_c', error).with({ fix: TOKEN_ENDPOINT_FIX });
  }
  if (!answer.ok) {
    const refused = grantRefused(answer);
    const fix = refused ? loginAgain : endpointFailedFix(answer.status);
    // At info: the line the failure ends in (the login's state, or account_refresh_failed) is the warning.
    logger.info(
      { event: 'provider_c_refresh_failed', ...fields, status: answer.status, fix },
      'provider_c_refresh_failed',
    );
    throw failedGrantError('provider_c', answer, refused ? undefined : fix);
  }
  const granted =
    typeof answer.body.scope === 'string' ? answer.body.scope.split(' ').filter((scope) => scope !== '') : undefined;
  const renewed = {
    accessToken: answer.accessToken,
    refreshToken: nonEmptyString(answer.body.refresh_token) ?? refreshToken,
    expiresAt: now() + (answer.expiresInSeconds ?? 3600) * 1000,
    ...(granted && granted.length > 0 ? { scopes: granted } : {}),
  };
  let kept: boolean;
  try {
    kept = await writeBackRefreshed(
      file,
      refreshToken,
      (document) => (isJsonObject(document.claudeAiOauth) ? document.claudeAiOauth.refreshToken : undefined),
      (document) => ({ ...document, claudeAiOauth: { ...(document.claudeAiOauth as object), ...renewed } }),
    );
  } catch (error) {
    // The children read the login from the file: a token not written there is used by nothing.
    const cost =
      renewed.refreshToken !== refreshToken
        ? `its children use the old token until it expires, and the refresh token the file keeps was spent: the login then needs a new login (${loginAgain})`
        : "its children use the old token until it expires; the file's refresh token still works, and the next check tries again";
    const { errno, fix } = writeBackFailure(file, error, cost, loginAgain);
    throw new LoginFileFailure(errno, fix, { cause: error });
  }
  if (!kept) {
    // The file holds another login now (a new `claude` /login): that one is the operator's choice,
    // and the one its children and usage reads take from the file. The renewed tokens are dropped.
    logger.warn({ event: 'provider_c_auth_persist_superseded', ...fields }, 'provider_c_auth_persist_superseded');
  }
  logger.info({ event: 'provider_c_token_refreshed', ...fields }, 'provider_c_token_refreshed');
  return kept ? renewed.expiresAt : await usableExpiry(file, now);
}

/**
 * The expiry of the token the login file holds when it is usable (not expired, the rule of every
 * family's tokens), else undefined: none, or a file that cannot be read now (the next check reads
 * it again and says why).
 */
async function usableExpiry(file: string, now: () => number): Promise<number | undefined> {
  const oauth = await readJsonObject(file).then(
    (document) => document.claudeAiOauth,
    () => undefined,
  );
  if (!isJsonObject(oauth) || !nonEmptyString(oauth.accessToken) || typeof oauth.expiresAt !== 'number')
    return undefined;
  return isExpired(oauth.expiresAt, now()) ? undefined : oauth.expiresAt;
}
