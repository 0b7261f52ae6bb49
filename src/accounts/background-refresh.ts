import type { EventLogger } from '../core/event-logger';
import { GatewayError } from '../core/gateway.error';
import { errnoOf } from '../common/errno';
import type { AccountPool } from './account-pool';
import { LoginFileFailure } from './login-file-check';
import { isNever, MAX_TIMER_MS, timeoutOrNever } from '../common/async/timer-range';

/**
 * Renews one login's access token when it expires within `aheadMs` (the family's auth code).
 * Resolves with the expiry (epoch ms) of the token it renewed to, or undefined when it renewed
 * none or cannot tell that token's expiry.
 */
export type RefreshLogin<T> = (handle: T, aheadMs: number, logger: EventLogger) => Promise<number | undefined>;

export interface BackgroundRefreshOptions {
  /** 0, or longer than a timer holds (timer-range.ts) = off. */
  readonly intervalMs: number;
  readonly aheadMs: number;
  /** 0..1; default Math.random. */
  readonly random?: () => number;
}

/**
 * What failed, as a code (ours, or the file system's errno; never a message, which may quote a
 * path or an answer) and what to do about it.
 */
function refreshFailure(error: unknown): { reason: string; fix: string } {
  // The family's own fix names its token URL setting and what the login does meanwhile.
  if (error instanceof GatewayError)
    return {
      reason: error.code,
      fix:
        error.fix ??
        'the token endpoint did not answer as expected: check the network and HTTPS_PROXY; the login is used as it is until it expires',
    };
  // The family's auth code knew the file and what it failed on: its errno and the file's fix.
  if (error instanceof LoginFileFailure) return { reason: error.errno ?? 'login_file', fix: error.fix };
  const errno = errnoOf(error);
  if (errno !== undefined)
    return {
      reason: errno,
      fix: 'the login file could not be read or written: let the gateway read and write it (a read-only mount cannot take the renewed token, and a rotated refresh token that is not written back is lost)',
    };
  return { reason: 'unexpected', fix: 'see the other log lines of this login; the refresh is tried again' };
}

/** ±20 %, so replicas and accounts sharing a start time do not all hit the token endpoint together. */
const JITTER = 0.2;

/**
 * Keeps idle logins logged in (docs/accounts.md): every interval (jittered) each live account's token is
 * renewed when it is about to expire, even when no request uses it. One refresh per account at a
 * time; the family's auth code keeps its own single flight and atomic write-back, so a request
 * refreshing at the same moment joins the same refresh. A refresh that fails for good marks the
 * login dead (until its file changes); any other failure is logged and tried at the next tick.
 * Returns the stop function.
 */
export function startBackgroundRefresh<T>(
  pool: AccountPool<T>,
  refresh: RefreshLogin<T>,
  options: BackgroundRefreshOptions,
  logger: EventLogger,
): () => void {
  if (options.intervalMs <= 0 || isNever(options.intervalMs)) return () => undefined;
  const random = options.random ?? Math.random;
  const running = new Set<string>();
  /**
   * The window of each login whose new token was already inside ACCOUNT_REFRESH_AHEAD: half that
   * token's life. With the setting's own window the login would be renewed at every check.
   */
  const shortened = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const refreshOne = async (alias: string, handle: T) => {
    running.add(alias);
    const seen = pool.loginFileSeen(alias);
    try {
      const aheadMs = shortened.get(alias) ?? options.aheadMs;
      const expiresAt = await refresh(handle, aheadMs, logger);
      if (expiresAt !== undefined && expiresAt - Date.now() <= aheadMs) {
        shortenWindow(alias, expiresAt - Date.now());
      }
    } catch (error) {
      if (!pool.applyFailure(alias, error, seen)) {
        logger.warn(
          {
            event: 'account_refresh_failed',
            provider: pool.family,
            account: alias,
            path: pool.loginFileOf(alias),
            ...refreshFailure(error),
          },
          'account_refresh_failed',
        );
      }
    } finally {
      running.delete(alias);
    }
  };
  const shortenWindow = (alias: string, lifetimeMs: number) => {
    const renewsAtMs = Math.max(0, Math.floor(lifetimeMs / 2));
    const warned = shortened.has(alias);
    shortened.set(alias, renewsAtMs);
    if (warned) return;
    logger.warn(
      {
        event: 'account_refresh_ahead_over_lifetime',
        provider: pool.family,
        account: alias,
        setting: 'ACCOUNT_REFRESH_AHEAD',
        refresh_ahead_ms: options.aheadMs,
        token_lifetime_ms: lifetimeMs,
        renews_at_ms: renewsAtMs,
        fix: `set ACCOUNT_REFRESH_AHEAD below ${lifetimeMs} ms, the life of this login's tokens (the default is 5m); meanwhile the login is renewed when ${renewsAtMs} ms of its token are left`,
      },
      'account_refresh_ahead_over_lifetime',
    );
  };
  const tick = () => {
    for (const { alias, handle } of pool.liveAccounts()) if (!running.has(alias)) void refreshOne(alias, handle);
    schedule();
  };
  const schedule = () => {
    if (stopped) return;
    // The jitter never pushes an interval a timer holds beyond it.
    const delayMs = Math.min(options.intervalMs * (1 - JITTER + 2 * JITTER * random()), MAX_TIMER_MS);
    timer = timeoutOrNever(tick, delayMs)?.unref();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
