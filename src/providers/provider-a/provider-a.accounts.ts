import type { AccountPool, QuotaWindow } from '../../accounts/account-pool';
import type { AccountPools } from '../../accounts/account-pools';
import type { AppConfig } from '../../config/app-config';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { ProviderAAuth } from '../../accounts/provider-a/provider-a.auth';
import type { RateLimitSnapshot, RateLimitWindow } from './provider-a.rate-limits';
import { RateLimitTelemetry } from './provider-a.rate-limits';

/** What the pool holds per Codex login: its auth (token cache, refresh, write-back) and its rate-limit telemetry. */
export interface ProviderALogin {
  readonly auth: ProviderAAuth;
  readonly rateLimits: RateLimitTelemetry;
}

/** The Codex usage windows as the pool's quota windows (used percent → ratio, unix s → ms). */
export function quotaWindows(limits: RateLimitSnapshot): QuotaWindow[] {
  const windows: QuotaWindow[] = [];
  const add = (name: string, window: RateLimitWindow | undefined) => {
    if (window?.usedPercent === undefined) return;
    windows.push({
      name,
      usedRatio: window.usedPercent / 100,
      resetAt: window.resetAt !== undefined ? window.resetAt * 1000 : undefined,
    });
  };
  add('primary', limits.primary);
  add('secondary', limits.secondary);
  return windows;
}

/**
 * The provider_a pool: one account per configured Codex login file (docs/accounts.md). The
 * `x-codex-*` headers and `codex.rate_limits` events of every turn feed the login's quota windows,
 * and idle logins are refreshed ahead of expiry in the background.
 */
export function createProviderAPool(
  config: AppConfig,
  pools: AccountPools,
  proxy: UpstreamProxy,
): AccountPool<ProviderALogin> {
  let pool: AccountPool<ProviderALogin> | undefined;
  const specs = config.providerA.accounts.map(({ alias, loginFile }) => ({
    alias,
    loginFile,
    handle: {
      auth: new ProviderAAuth(loginFile, config.providerA.tokenUrl, proxy),
      rateLimits: new RateLimitTelemetry((limits) => pool?.reportQuota(alias, quotaWindows(limits))),
    },
  }));
  pool = pools.create('provider_a', specs, (login, aheadMs, logger) => login.auth.refreshAhead(aheadMs, logger));
  return pool;
}
