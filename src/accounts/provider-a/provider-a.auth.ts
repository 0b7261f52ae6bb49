import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { AccountLogin } from '../../config/app-config';
import { GatewayError } from '../../core/gateway.error';
import { sha256Hex } from '../../common/hashing';
import { isJsonObject } from '../../common/json';
import { sanitizeIdentifier } from '../../common/logging/request-log';
import type { EventLogger } from '../../core/event-logger';
import { loginFix } from '../../core/login-state';
import { readJsonObject, writeBackRefreshed } from '../credential-file';
import type { LoginLogFields } from '../login-file-check';
import { keptInMemoryCost, shellWord, unreadableLoginError, writeBackFailure } from '../login-file-check';
import type { LoginToken } from '../login-token-cache';
import type { LoginTokenSource } from '../login-token-cache';
import { LoginTokenCache } from '../login-token-cache';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import type { LoginState, RefreshedTokens } from './provider-a.login-file';
import { applyRefresh, decodeJwtClaims, LoginFileError, parseLoginFile } from './provider-a.login-file';
import { requestTokenRefresh, TokenRefreshError } from './provider-a.token-refresh';
import { failedGrantError, grantRefused, tokenEndpointFailedFix, tokenEndpointFix } from '../refresh-grant';

/** What one upstream attempt needs from the login. */
export interface ProviderACredentials {
  readonly accessToken: string;
  readonly accountId: string;
}

interface CachedToken extends LoginToken {
  readonly credentials: ProviderACredentials;
}

/**
 * What logs one Codex login in again: `codex login` in the login's own Codex home when its file is
 * that home's auth.json, else a login whose auth.json is put at the file's path (a mounted copy).
 */
export function codexLoginCommand(file: string): string {
  return path.basename(file) === 'auth.json'
    ? `run \`CODEX_HOME=${shellWord(path.dirname(file))} codex login\` on the gateway's machine (it rewrites ${file})`
    : `run \`codex login\` and put the auth.json it writes at ${file}`;
}

/** What to do when the token endpoint gave no answer: not a login problem. */
const TOKEN_ENDPOINT_FIX = tokenEndpointFix('PROVIDER_A_TOKEN_URL');

/**
 * A login that cannot serve (its fix, the login's command, is named by whoever reports the turn:
 * AccountTurn.finalError); `cause`: its file alone says so, as the login check finds it (`file`),
 * or its refresh token was refused for good (`refresh`).
 */
const loginError = (reason: string, cause?: 'file' | 'refresh') =>
  new GatewayError('auth', {
    detail: `provider_a ${reason}`,
    loginFileCause: cause === 'file',
    refreshRefused: cause === 'refresh',
  });

/**
 * Refusals no retry can fix: the refresh token is dead until the user logs in again (the Codex
 * CLI's `classify_refresh_token_failure` treats these three the same way). Another refusal ends
 * the request the same way but is tried again by the next one.
 */
const PERMANENT_REFRESH_FAILURES = new Set([
  'refresh_token_expired',
  'refresh_token_reused',
  'refresh_token_invalidated',
]);

/**
 * The Codex CLI login (docs/upstream/provider-a.md §1): read lazily on the first request, cached in memory,
 * refreshed when expired or after an upstream 401 (never a 403), rotated tokens written back atomically.
 * Only process-level state lives here (the cached token); nothing per request.
 */
export class ProviderAAuth implements LoginTokenSource<ProviderACredentials> {
  private readonly tokens: LoginTokenCache<CachedToken>;
  /**
   * The login file's content when its refresh token failed permanently. Until the file changes on
   * disk (`codex login`, or the CLI refreshing), requests fail at once without a refresh request.
   */
  private deadLogin?: string;
  private readonly authFile: string;
  /** What each of this login's lines names: family, alias and file. */
  private readonly logFields: LoginLogFields;
  /** What logs this login in again: its own command, else the family's (as its state line and the 403 say). */
  private readonly loginAgain: string;

  /** `login`: the alias the pool knows the login by, and its auth.json. */
  constructor(
    login: AccountLogin,
    private readonly tokenUrl: string,
    private readonly proxy?: UpstreamProxy,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = new LoginTokenCache(now);
    this.authFile = login.loginFile;
    this.loginAgain = loginFix('provider_a', 'refresh_refused', login.loginCommand)!;
    this.logFields = { provider: 'provider_a', account: login.alias, path: login.loginFile };
  }

  /** A usable token for the next upstream attempt (docs/upstream/provider-a.md §1.4). */
  async current(signal: AbortSignal, logger: EventLogger): Promise<ProviderACredentials> {
    return (await this.tokens.current((rejected) => this.load(logger, rejected), signal)).credentials;
  }

  /** The cached token when usable now (LoginTokenSource.cached). */
  cached(): ProviderACredentials | undefined {
    return this.tokens.usable()?.credentials;
  }

  /**
   * After the upstream refused `rejected` with 401/403 (docs/upstream/provider-a.md §1.7): drop it, use the file's token if
   * it changed meanwhile, else refresh even though it did not look expired.
   */
  async afterRejection(
    rejected: ProviderACredentials,
    signal: AbortSignal,
    logger: EventLogger,
  ): Promise<ProviderACredentials> {
    return (await this.tokens.afterRejection(rejected.accessToken, (token) => this.load(logger, token), signal))
      .credentials;
  }

  /** Background refresh (docs/accounts.md): renews the token when it expires within `aheadMs`. */
  refreshAhead(aheadMs: number, logger: EventLogger): Promise<number | undefined> {
    return this.tokens.refreshAhead(aheadMs, (rejected) => this.load(logger, rejected));
  }

  /**
   * The pool's sweep saw the login file change on disk (PoolAccountSpec.loginFileChanged): the
   * cached token may be the previous login's, so the next attempt reads the file again. Returns
   * whose login the file holds now: its ChatGPT account and, when its id token names one, the user
   * (a team workspace's members share the account id), as a hash; undefined for a file that holds
   * no usable login. A refresh of the same login keeps it; `codex login` with another account
   * changes it.
   */
  loginFileChanged(): string | undefined {
    this.tokens.forget();
    try {
      const document: unknown = JSON.parse(readFileSync(this.authFile, 'utf8'));
      if (!isJsonObject(document)) return undefined;
      const { accountId, idToken } = parseLoginFile(document);
      const user = decodeJwtClaims(idToken)?.sub;
      return sha256Hex(`provider_a.login:${accountId}:${typeof user === 'string' ? user : ''}`);
    } catch {
      return undefined;
    }
  }

  /** docs/upstream/provider-a.md §1.4 steps 2–4: the file's token unless rejected or expired, else refresh and write back. */
  private async load(logger: EventLogger, rejectedToken: string | undefined): Promise<CachedToken> {
    const { state, fingerprint } = await this.readLogin();
    if (this.tokens.isUsable(state, rejectedToken))
      return cachedToken(state.accessToken, state.accountId, state.expiresAt);
    // The login's lines are the detail, at info: what the failure comes to is said once, at warn, by
    // the request's line (its fix included) or the login's state line (docs/troubleshooting.md).
    if (!state.refreshToken) {
      logger.info(
        { event: 'provider_a_login_expired', ...this.logFields, fix: this.loginAgain },
        'provider_a_login_expired',
      );
      throw loginError('login expired', 'file');
    }
    if (this.deadLogin === fingerprint) {
      logger.info(
        { event: 'provider_a_login_revoked', ...this.logFields, fix: this.loginAgain },
        'provider_a_login_revoked',
      );
      throw loginError('refresh token no longer valid', 'refresh');
    }
    this.deadLogin = undefined;
    const refreshed = await this.refresh(state.refreshToken, fingerprint, logger);
    // Refresh tokens are single use: persist the rotated one before the new access token is used.
    const kept = await this.persist(refreshed, state.refreshToken, logger);
    logger.info(
      { event: 'provider_a_token_refreshed', ...this.logFields, forced: rejectedToken !== undefined },
      'provider_a_token_refreshed',
    );
    if (!kept) {
      // The file holds another login now (a new `codex login`): that one is the operator's choice.
      const now = await this.readLogin();
      if (this.tokens.isUsable(now.state, undefined))
        return cachedToken(now.state.accessToken, now.state.accountId, now.state.expiresAt);
    }
    return cachedToken(refreshed.accessToken, state.accountId, refreshed.expiresAt);
  }

  /** The parsed login and a fingerprint of the file's content (to notice it changed on disk). */
  private async readLogin(): Promise<{ state: LoginState; fingerprint: string }> {
    let document: Record<string, unknown>;
    try {
      document = await readJsonObject(this.authFile);
    } catch (error) {
      // A file the system refuses names its errno and the file's fix: a new login would not mend it.
      throw (
        unreadableLoginError('provider_a', this.authFile, 'login file', error) ??
        loginError(
          (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'login file missing' : 'login file unreadable',
          'file',
        )
      );
    }
    try {
      return { state: parseLoginFile(document), fingerprint: sha256Hex(JSON.stringify(document)) };
    } catch (error) {
      if (error instanceof LoginFileError) throw loginError(`login file unusable (${error.reason})`, 'file');
      throw error;
    }
  }

  private async refresh(refreshToken: string, fingerprint: string, logger: EventLogger): Promise<RefreshedTokens> {
    try {
      return await requestTokenRefresh(this.tokenUrl, refreshToken, this.now, this.proxy);
    } catch (error) {
      if (error instanceof GatewayError) {
        // The endpoint gave no answer: not a login problem (see tokenEndpointFailure).
        logger.info(
          {
            event: 'provider_a_token_refresh_failed',
            ...this.logFields,
            error_code: error.code === 'timeout' ? 'timeout' : 'unreachable',
            fix: TOKEN_ENDPOINT_FIX,
          },
          'provider_a_token_refresh_failed',
        );
        throw error.with({ fix: TOKEN_ENDPOINT_FIX });
      }
      if (!(error instanceof TokenRefreshError)) throw error;
      // Only a refusal of the grant is the login's; anything else the endpoint answers (5xx, 429, no
      // token, not JSON) is its own failure, retried like one that gave no answer (refresh-grant.ts).
      const { answer } = error;
      const refused = grantRefused(answer);
      // A refusal leaves the login dead until its file changes: a new login is the way back.
      const fix = refused ? this.loginAgain : tokenEndpointFailedFix('PROVIDER_A_TOKEN_URL', answer.status);
      // Only the endpoint's error code is logged, never its description or any token.
      logger.info(
        {
          event: 'provider_a_token_refresh_failed',
          ...this.logFields,
          error_code: sanitizeIdentifier(answer.errorCode ?? 'unknown'),
          upstream_status: answer.status,
          fix,
        },
        'provider_a_token_refresh_failed',
      );
      if (refused && answer.errorCode !== undefined && PERMANENT_REFRESH_FAILURES.has(answer.errorCode))
        this.deadLogin = fingerprint;
      throw failedGrantError('provider_a', answer, refused ? undefined : fix);
    }
  }

  /**
   * Write-back (docs/upstream/provider-a.md §1.6); a failure is logged and the new token stays
   * cached in memory. `false` when the file no longer holds the refresh token that was spent: it
   * was written meanwhile (a new `codex login`, or the CLI's own refresh), and writing the old
   * login's tokens over it would lose that login.
   */
  private async persist(refreshed: RefreshedTokens, spent: string, logger: EventLogger): Promise<boolean> {
    try {
      const kept = await writeBackRefreshed(
        this.authFile,
        spent,
        (document) => (isJsonObject(document.tokens) ? document.tokens.refresh_token : undefined),
        (document) => applyRefresh(document, refreshed, new Date(this.now())),
      );
      if (!kept) {
        logger.warn(
          { event: 'provider_a_auth_persist_superseded', ...this.logFields },
          'provider_a_auth_persist_superseded',
        );
        return false;
      }
    } catch (error) {
      // A rotated refresh token lives only in memory now: the line says what that costs and the fix.
      const rotated = refreshed.refreshToken !== undefined && refreshed.refreshToken !== spent;
      logger.error(
        {
          event: 'provider_a_auth_persist_failed',
          ...this.logFields,
          ...writeBackFailure(this.authFile, error, keptInMemoryCost(rotated, this.loginAgain), this.loginAgain),
        },
        'provider_a_auth_persist_failed',
      );
    }
    return true;
  }
}

function cachedToken(accessToken: string, accountId: string, expiresAt: number | undefined): CachedToken {
  return { accessToken, expiresAt, credentials: { accessToken, accountId } };
}
