import type { AccountPool } from '../../accounts/account-pool';
import type { AccountPools } from '../../accounts/account-pools';
import type { AppConfig } from '../../config/app-config';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { ProviderAAuth } from '../../accounts/provider-a/provider-a.auth';
import { ProviderAPlanMeter } from './provider-a.rate-limits';
import { readProviderAUsage, whamUsageUrl } from './provider-a.usage';
import type { CodexClient } from './provider-a.client';

/** What the pool holds per Codex login: its auth (token cache, refresh, write-back) and its plan meter. */
export interface ProviderALogin {
  readonly auth: ProviderAAuth;
  readonly plan: ProviderAPlanMeter;
}

/**
 * The provider_a pool: one account per configured Codex login file (docs/accounts.md). The
 * `x-codex-*` headers and `codex.rate_limits` events of every turn, and the `wham/usage` endpoint
 * read at startup and every ACCOUNT_USAGE_REFRESH_INTERVAL, feed the login's plan; idle logins are
 * refreshed ahead of expiry in the background.
 */
export function createProviderAPool(
  config: AppConfig,
  pools: AccountPools,
  proxy: UpstreamProxy,
  client: CodexClient,
): AccountPool<ProviderALogin> {
  let pool: AccountPool<ProviderALogin> | undefined;
  const usageUrl = whamUsageUrl(config.providerA.url);
  const specs = config.providerA.accounts.map(({ alias, loginFile, loginCommand }) => {
    const auth = new ProviderAAuth({ alias, loginFile, loginCommand }, config.providerA.tokenUrl, proxy);
    return {
      alias,
      loginFile,
      loginCommand,
      handle: {
        auth,
        plan: new ProviderAPlanMeter(() => pool?.planOf(alias)),
      },
      // A rewritten auth.json (`codex login`, the CLI's own refresh) is read again by the next turn.
      loginFileChanged: () => auth.loginFileChanged(),
    };
  });
  pool = pools.create(
    'provider_a',
    specs,
    (login, aheadMs, logger) => login.auth.refreshAhead(aheadMs, logger),
    async (login, signal, logger) =>
      readProviderAUsage({
        url: usageUrl,
        credentials: await login.auth.current(signal, logger),
        client,
        proxy,
        signal,
      }),
  );
  return pool;
}
