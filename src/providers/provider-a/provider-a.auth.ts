import { GatewayError } from '../../common/errors/gateway.error';
import { sanitizeIdentifier } from '../../common/logging/sanitize';
import type { EventLogger } from '../provider-adapter';
import { readJsonObject, writeJsonFileAtomic } from '../shared/credential-file';
import { applyRefresh, isExpired, LoginFileError, LoginState, parseLoginFile, RefreshedTokens } from './provider-a.login-file';
import { requestTokenRefresh, TokenRefreshError } from './provider-a.token-refresh';

/** What one upstream attempt needs from the login. */
export interface ProviderACredentials {
  readonly accessToken: string;
  readonly accountId: string;
}

interface CachedToken {
  readonly credentials: ProviderACredentials;
  readonly expiresAt?: number;
}

// One chain per credential file: at most one read-or-refresh runs at a time, and callers that
// queue behind a refresh find its result in the cache instead of refreshing again (§1.4).
const chainsByFile = new Map<string, Promise<unknown>>();

function serializePerFile<T>(file: string, task: () => Promise<T>): Promise<T> {
  const previous = chainsByFile.get(file) ?? Promise.resolve();
  const next = previous.then(task, task);
  const settled = next.catch(() => undefined);
  chainsByFile.set(file, settled);
  void settled.then(() => {
    if (chainsByFile.get(file) === settled) chainsByFile.delete(file);
  });
  return next;
}

/** Waits for `promise` but gives up at once (with the signal's reason) when `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const loginError = (reason: string) => new GatewayError('auth', { detail: `provider_a ${reason}; run codex login` });

/**
 * The Codex CLI login (provider_a.md §1): read lazily on the first request, cached in memory,
 * refreshed when expired or after an upstream 401/403, rotated tokens written back atomically.
 * Only process-level state lives here (the cached token); nothing per request.
 */
export class ProviderAAuth {
  private cached?: CachedToken;

  constructor(
    private readonly authFile: string,
    private readonly tokenUrl: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** A usable token for the next upstream attempt (§1.4). */
  credentials(logger: EventLogger, signal: AbortSignal): Promise<ProviderACredentials> {
    const cached = this.cached;
    if (cached && !isExpired(cached.expiresAt, this.now())) return Promise.resolve(cached.credentials);
    return untilAborted(
      serializePerFile(this.authFile, () => this.obtain(logger, undefined)),
      signal,
    );
  }

  /**
   * After the upstream refused `rejected` with 401/403 (§1.7): drop it, use the file's token if
   * it changed meanwhile, else refresh even though it did not look expired.
   */
  afterRejection(rejected: ProviderACredentials, logger: EventLogger, signal: AbortSignal): Promise<ProviderACredentials> {
    if (this.cached?.credentials.accessToken === rejected.accessToken) this.cached = undefined;
    return untilAborted(
      serializePerFile(this.authFile, () => this.obtain(logger, rejected.accessToken)),
      signal,
    );
  }

  private async obtain(logger: EventLogger, rejectedToken: string | undefined): Promise<ProviderACredentials> {
    const cached = this.cached;
    if (cached && cached.credentials.accessToken !== rejectedToken && !isExpired(cached.expiresAt, this.now())) return cached.credentials;
    const state = await this.readLogin();
    if (state.accessToken !== rejectedToken && !isExpired(state.expiresAt, this.now())) {
      return this.remember({ credentials: { accessToken: state.accessToken, accountId: state.accountId }, expiresAt: state.expiresAt });
    }
    if (!state.refreshToken) {
      logger.warn({ event: 'provider_a_login_expired' }, 'provider_a_login_expired');
      throw loginError('login expired');
    }
    const refreshed = await this.refresh(state.refreshToken, logger);
    // Refresh tokens are single use: persist the rotated one before the new access token is used.
    await this.persist(refreshed, logger);
    logger.info({ event: 'provider_a_token_refreshed', forced: rejectedToken !== undefined }, 'provider_a_token_refreshed');
    return this.remember({ credentials: { accessToken: refreshed.accessToken, accountId: state.accountId }, expiresAt: refreshed.expiresAt });
  }

  private remember(token: CachedToken): ProviderACredentials {
    this.cached = token;
    return token.credentials;
  }

  private async readLogin(): Promise<LoginState> {
    let document: Record<string, unknown>;
    try {
      document = await readJsonObject(this.authFile);
    } catch (error) {
      throw loginError((error as NodeJS.ErrnoException).code === 'ENOENT' ? 'login file missing' : 'login file unreadable');
    }
    try {
      return parseLoginFile(document);
    } catch (error) {
      if (error instanceof LoginFileError) throw loginError(`login file unusable (${error.reason})`);
      throw error;
    }
  }

  private async refresh(refreshToken: string, logger: EventLogger): Promise<RefreshedTokens> {
    try {
      return await requestTokenRefresh(this.tokenUrl, refreshToken, this.now);
    } catch (error) {
      const failure = error instanceof TokenRefreshError ? error : new TokenRefreshError(undefined, undefined);
      // Only the endpoint's error code is logged, never its description or any token.
      logger.warn(
        { event: 'provider_a_token_refresh_failed', error_code: sanitizeIdentifier(failure.errorCode ?? 'unknown'), upstream_status: failure.status },
        'provider_a_token_refresh_failed',
      );
      throw loginError('token refresh failed');
    }
  }

  /** Write-back (§1.6); a failure is logged and the new token stays cached in memory. */
  private async persist(refreshed: RefreshedTokens, logger: EventLogger): Promise<void> {
    try {
      const current = await readJsonObject(this.authFile);
      await writeJsonFileAtomic(this.authFile, applyRefresh(current, refreshed, new Date(this.now())));
    } catch (error) {
      logger.error({ event: 'provider_a_auth_persist_failed', errno: (error as NodeJS.ErrnoException).code }, 'provider_a_auth_persist_failed');
    }
  }
}
