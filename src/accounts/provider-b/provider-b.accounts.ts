import type { AccountPool } from '../account-pool';
import type { AccountPools } from '../account-pools';
import type { AppConfig } from '../../config/app-config';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import type { PlanUsageRead } from '../../core/plan-usage';
import { ProviderBTokenSource } from './provider-b.auth';
import { providerBQuotaBucket } from './provider-b.quota-buckets';

/** What the pool holds per Gemini login: its token source (cache, refresh, write-back). */
export interface ProviderBLogin {
  readonly tokens: ProviderBTokenSource;
}

/**
 * The provider_b pool: one account per configured Gemini login file (docs/accounts.md); idle
 * logins are refreshed ahead of expiry in the background. `readUsage` (the adapter's
 * `retrieveUserQuota`) gives each login its quota buckets as per-model windows; new chats are
 * spread by turns in flight, and quota errors cool the login. A spent bucket rests every model id
 * the Gemini CLI counts in it (provider-b.quota-buckets.ts).
 */
export function createProviderBPool(
  config: AppConfig,
  pools: AccountPools,
  proxy: UpstreamProxy,
  readUsage?: PlanUsageRead<ProviderBLogin>,
): AccountPool<ProviderBLogin> {
  const specs = config.providerB.accounts.map(({ alias, loginFile, loginCommand }) => {
    const tokens = new ProviderBTokenSource(
      { alias, loginFile, loginCommand },
      config.providerB.tokenUrl,
      Date.now,
      proxy,
    );
    // A rewritten oauth_creds.json (a new Gemini login, the CLI's own refresh) is read again by the next turn.
    return { alias, loginFile, loginCommand, handle: { tokens }, loginFileChanged: () => tokens.loginFileChanged() };
  });
  return pools.create(
    'provider_b',
    specs,
    (login, aheadMs, logger) => login.tokens.refreshAhead(aheadMs, logger),
    readUsage,
    providerBQuotaBucket,
  );
}
