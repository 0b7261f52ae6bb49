import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { AccountLogin } from '../../config/app-config';
import { sha256Hex } from '../../common/hashing';
import { isJsonObject } from '../../common/json';
import { errnoOf } from '../../common/errno';
import { GatewayError } from '../../core/gateway.error';
import { loginFix } from '../../core/login-state';
import { sanitizeIdentifier } from '../../common/logging/request-log';
import type { EventLogger } from '../../core/event-logger';
import { readJsonObject, writeBackRefreshed } from '../credential-file';
import type { LoginLogFields } from '../login-file-check';
import {
  keptInMemoryCost,
  refusedLoginFile,
  shellWord,
  unreadableLoginError,
  writeBackFailure,
} from '../login-file-check';
import type { LoginTokenSource } from '../login-token-cache';
import { LoginTokenCache } from '../login-token-cache';
import type { RefreshGrantAnswer } from '../refresh-grant';
import {
  failedGrantError,
  grantRefused,
  postRefreshGrant,
  tokenEndpointFailure,
  tokenEndpointFailedFix,
  tokenEndpointFix,
} from '../refresh-grant';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';

/**
 * The Gemini CLI's "installed application" OAuth client (docs/upstream/provider-b.md §2.1). These are public
 * values shipped inside that CLI: an installed-app client cannot keep a secret, and Google treats
 * them as non-confidential. Refresh tokens minted for that client only refresh with it, so they
 * live here and not in configuration.
 */
export const GEMINI_CLI_CLIENT_ID = '681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com';
export const GEMINI_CLI_CLIENT_SECRET = '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';

/**
 * The pinned Gemini CLI's auth library (google-auth-library 10.9.0 in its bundle) as it names
 * itself in every User-Agent: alone on its token refresh, after the CLI's own on Code Assist calls.
 */
export const GOOGLE_AUTH_LIBRARY_AGENT = 'google-api-nodejs-client/10.9.0';

/** `x-goog-api-client` as that library sends it on every request: the Node.js runtime version. */
export const GOOG_API_CLIENT = `gl-node/${process.versions.node}`;

/**
 * The headers of the CLI's refresh grant (captured from the pinned CLI); Node's fetch adds
 * `accept-language` and `sec-fetch-mode` to them, as to every Code Assist call.
 */
const REFRESH_HEADERS = {
  accept: '*/*',
  'accept-encoding': 'gzip, deflate, br',
  'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
  'user-agent': GOOGLE_AUTH_LIBRARY_AGENT,
  'x-goog-api-client': GOOG_API_CLIENT,
} as const;

/** Bound on one call to the OAuth token endpoint. */
export const TOKEN_REQUEST_TIMEOUT_MS = 30_000;

/** A usable access token plus a stable, non-secret key of the login it belongs to. */
export interface ProviderBCredential {
  readonly accessToken: string;
  /** Hash of the refresh token (else of the access token): a different login rediscovers its project. */
  readonly loginKey: string;
  /** Epoch ms; undefined when the file had no `expiry_date`. */
  readonly expiresAt?: number;
}

interface CredentialFile {
  readonly accessToken?: string;
  readonly refreshToken?: string;
  readonly expiresAt?: number;
}

/**
 * What logs one Gemini login in again: the Gemini CLI in the login's own home when its file is that
 * home's `.gemini/oauth_creds.json`, else a login whose file is put at the path (a mounted copy).
 */
export function geminiLoginCommand(file: string): string {
  const geminiDir = path.dirname(file);
  return path.basename(file) === 'oauth_creds.json' && path.basename(geminiDir) === '.gemini'
    ? `run \`GEMINI_CLI_HOME=${shellWord(path.dirname(geminiDir))} gemini\` on the gateway's machine and choose "Login with Google" (it rewrites ${file})`
    : `run \`gemini\`, choose "Login with Google", and put the oauth_creds.json it writes at ${file}`;
}

/** What to do when the token endpoint gave no answer, or failed: not a login problem. */
const TOKEN_ENDPOINT_FIX = tokenEndpointFix('PROVIDER_B_TOKEN_URL');

const nonEmpty = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/**
 * The Gemini CLI login file as a token source (docs/upstream/provider-b.md §1–§3): lazy read, refresh when
 * expired, write-back that keeps unknown fields, and one load in flight at a time (concurrent
 * requests await the same promise). Token values never reach logs or errors.
 */
export class ProviderBTokenSource implements LoginTokenSource<ProviderBCredential> {
  private readonly tokens: LoginTokenCache<ProviderBCredential>;
  private readonly authFile: string;
  /** What logs this login in again: its own command, else the family's (the CLI's default login). */
  private readonly loginAgain: string;
  /** What each of this login's lines names: family, alias and file. */
  private readonly logFields: LoginLogFields;

  /** `login`: the alias the pool knows the login by, its oauth_creds.json and its own login command. */
  constructor(
    login: AccountLogin,
    private readonly tokenUrl: string,
    private readonly now: () => number = Date.now,
    /** The egress proxy (HTTPS_PROXY / HTTP_PROXY / NO_PROXY); absent = direct. */
    private readonly proxy?: UpstreamProxy,
  ) {
    this.tokens = new LoginTokenCache(now);
    this.authFile = login.loginFile;
    this.loginAgain = loginFix('provider_b', 'refresh_refused', login.loginCommand)!;
    this.logFields = { provider: 'provider_b', account: login.alias, path: login.loginFile };
  }

  /** docs/upstream/provider-b.md §2.3: cached token, else the file's, else a refresh. */
  current(signal: AbortSignal, logger: EventLogger): Promise<ProviderBCredential> {
    return this.tokens.current((rejected) => this.loadOrRefresh(rejected, logger), signal);
  }

  /** The cached token when usable now (LoginTokenSource.cached). */
  cached(): ProviderBCredential | undefined {
    return this.tokens.usable();
  }

  /**
   * docs/upstream/provider-b.md §3: the upstream answered 401 to `rejected`. Drop it; use the file's token when it differs
   * (the CLI logged in again), otherwise force a refresh even though it did not look expired.
   */
  afterRejection(
    rejected: ProviderBCredential,
    signal: AbortSignal,
    logger: EventLogger,
  ): Promise<ProviderBCredential> {
    return this.tokens.afterRejection(rejected.accessToken, (token) => this.loadOrRefresh(token, logger), signal);
  }

  /** Background refresh (docs/accounts.md): renews the token when it expires within `aheadMs`. */
  refreshAhead(aheadMs: number, logger: EventLogger): Promise<number | undefined> {
    return this.tokens.refreshAhead(aheadMs, (rejected) => this.loadOrRefresh(rejected, logger));
  }

  /**
   * The pool's sweep saw the login file change on disk (PoolAccountSpec.loginFileChanged): the
   * cached token may be the previous login's, so the next call reads the file again. Returns whose
   * login the file holds now, as the family tells logins apart (`loginKey`: its refresh token,
   * which a Gemini login keeps across refreshes); undefined for a file that holds no token.
   */
  loginFileChanged(): string | undefined {
    this.tokens.forget();
    try {
      const file: unknown = JSON.parse(readFileSync(this.authFile, 'utf8'));
      if (!isJsonObject(file)) return undefined;
      const refreshToken = nonEmpty(file.refresh_token);
      const accessToken = nonEmpty(file.access_token);
      return refreshToken || accessToken ? loginKey({ refreshToken, accessToken }) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The login's lines are the detail, at info: what a failure comes to is said once, at warn, by the
   * request's line (its fix included) or the login's state line (docs/troubleshooting.md).
   */
  private async loadOrRefresh(rejected: string | undefined, logger: EventLogger): Promise<ProviderBCredential> {
    const file = await this.readFile(logger);
    if (file.accessToken && this.tokens.isUsable(file, rejected)) {
      return { accessToken: file.accessToken, expiresAt: file.expiresAt, loginKey: loginKey(file) };
    }
    if (!file.refreshToken) {
      logger.info(
        {
          event: 'provider_b_auth_unavailable',
          ...this.logFields,
          reason: 'no_refresh_token',
          fix: this.loginAgain,
        },
        'provider_b_auth_unavailable',
      );
      throw new GatewayError('auth', {
        detail: 'provider_b login expired and has no refresh token',
        loginFileCause: true,
      });
    }
    return this.refresh(file.refreshToken, logger);
  }

  private async readFile(logger: EventLogger): Promise<CredentialFile> {
    let raw: Record<string, unknown>;
    try {
      raw = await readJsonObject(this.authFile);
    } catch (error) {
      const missing = errnoOf(error) === 'ENOENT';
      const reason = missing ? 'missing' : 'unreadable';
      logger.info(
        {
          event: 'provider_b_auth_unavailable',
          ...this.logFields,
          reason,
          errno: missing ? undefined : errnoOf(error),
          // A file the system refuses has the file's fix; no file, or content that is no login, a new login.
          fix: refusedLoginFile(this.authFile, 'login file', error)?.fix ?? this.loginAgain,
        },
        'provider_b_auth_unavailable',
      );
      // A file the system refuses names its errno and the file's fix: a new login would not mend it.
      throw (
        unreadableLoginError('provider_b', this.authFile, 'login file', error) ??
        new GatewayError('auth', { detail: `provider_b login file ${reason}`, loginFileCause: true })
      );
    }
    const file: CredentialFile = {
      accessToken: nonEmpty(raw.access_token),
      refreshToken: nonEmpty(raw.refresh_token),
      expiresAt: typeof raw.expiry_date === 'number' && Number.isFinite(raw.expiry_date) ? raw.expiry_date : undefined,
    };
    if (!file.accessToken && !file.refreshToken) {
      logger.info(
        {
          event: 'provider_b_auth_unavailable',
          ...this.logFields,
          reason: 'no_tokens',
          fix: this.loginAgain,
        },
        'provider_b_auth_unavailable',
      );
      throw new GatewayError('auth', { detail: 'provider_b login file holds no token', loginFileCause: true });
    }
    return file;
  }

  /** docs/upstream/provider-b.md §2.2 refresh, then §2.4 write-back (a write failure is logged and does not fail the request). */
  private async refresh(refreshToken: string, logger: EventLogger): Promise<ProviderBCredential> {
    let answer: RefreshGrantAnswer;
    try {
      answer = await postRefreshGrant(
        this.tokenUrl,
        // The CLI's field order.
        {
          refresh_token: refreshToken,
          client_id: GEMINI_CLI_CLIENT_ID,
          client_secret: GEMINI_CLI_CLIENT_SECRET,
          grant_type: 'refresh_token',
        },
        TOKEN_REQUEST_TIMEOUT_MS,
        this.proxy,
        'form',
        REFRESH_HEADERS,
      );
    } catch (error) {
      // Not an auth problem: the token endpoint did not answer (the classification is shared with provider_a).
      const failure = tokenEndpointFailure('provider_b', error);
      logger.info(
        {
          event: 'provider_b_auth_refresh_failed',
          ...this.logFields,
          reason: failure.code === 'timeout' ? 'timeout' : 'unreachable',
          fix: TOKEN_ENDPOINT_FIX,
        },
        'provider_b_auth_refresh_failed',
      );
      throw failure.with({ fix: TOKEN_ENDPOINT_FIX });
    }
    if (!answer.ok) {
      // Only a refusal is the login's: anything else the endpoint answers passes by itself (the split is shared).
      const refused = grantRefused(answer);
      const failedFix = tokenEndpointFailedFix('PROVIDER_B_TOKEN_URL', answer.status);
      logger.info(
        {
          event: 'provider_b_auth_refresh_failed',
          ...this.logFields,
          status: answer.status,
          error: answer.errorCode !== undefined ? sanitizeIdentifier(answer.errorCode) : undefined,
          // A refusal leaves the login dead until its file changes: a new login is the way back.
          fix: refused ? this.loginAgain : failedFix,
        },
        'provider_b_auth_refresh_failed',
      );
      throw failedGrantError('provider_b', answer, failedFix);
    }
    const { accessToken, body } = answer;
    const expiresAt = answer.expiresInSeconds !== undefined ? this.now() + answer.expiresInSeconds * 1000 : undefined;
    const kept = await this.persist(body, accessToken, expiresAt, refreshToken, logger);
    logger.info({ event: 'provider_b_auth_refreshed', ...this.logFields }, 'provider_b_auth_refreshed');
    if (!kept) {
      // The file holds another login now (a new `gemini` login): that one is the operator's choice.
      const now = await this.readFile(logger);
      if (now.accessToken && this.tokens.isUsable(now, undefined))
        return { accessToken: now.accessToken, expiresAt: now.expiresAt, loginKey: loginKey(now) };
    }
    return {
      accessToken,
      expiresAt,
      loginKey: loginKey({ refreshToken: nonEmpty(body.refresh_token) ?? refreshToken, accessToken }),
    };
  }

  /**
   * docs/upstream/provider-b.md §2.4: the file as it is now (its unknown fields survive) with the
   * refreshed tokens; a failure is logged and the new token stays cached in memory. `false` when the
   * file no longer holds the refresh token that was `spent`: it was written meanwhile (a new
   * `gemini` login), and writing the old login's tokens over it would lose that login.
   */
  private async persist(
    body: Record<string, unknown>,
    accessToken: string,
    expiresAt: number | undefined,
    spent: string,
    logger: EventLogger,
  ): Promise<boolean> {
    try {
      const kept = await writeBackRefreshed(
        this.authFile,
        spent,
        (document) => document.refresh_token,
        (document) => {
          const updated: Record<string, unknown> = { ...document, access_token: accessToken };
          if (expiresAt !== undefined) updated.expiry_date = expiresAt;
          for (const key of ['refresh_token', 'id_token', 'scope', 'token_type']) {
            const value = nonEmpty(body[key]);
            if (value) updated[key] = value;
          }
          return updated;
        },
      );
      if (!kept) {
        logger.warn(
          { event: 'provider_b_auth_persist_superseded', ...this.logFields },
          'provider_b_auth_persist_superseded',
        );
        return false;
      }
    } catch (error) {
      // Google may send a new refresh token; when it did, the one the file keeps may not work again.
      const renewed = nonEmpty(body.refresh_token);
      const { errno, fix } = writeBackFailure(
        this.authFile,
        error,
        keptInMemoryCost(renewed !== undefined && renewed !== spent, this.loginAgain),
        this.loginAgain,
      );
      logger.warn(
        { event: 'provider_b_auth_persist_failed', ...this.logFields, code: errno, fix },
        'provider_b_auth_persist_failed',
      );
    }
    return true;
  }
}

function loginKey(file: { refreshToken?: string; accessToken?: string }): string {
  return sha256Hex(`provider_b.login:${file.refreshToken ?? file.accessToken ?? ''}`).slice(0, 32);
}
