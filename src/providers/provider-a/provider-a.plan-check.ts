import { ProviderAAuth } from '../../accounts/provider-a/provider-a.auth';
import type { PlanRead } from '../shared/family-plan';
import type { PlanReport } from '../../core/plan-usage';
import { codexClient } from './provider-a.client';
import { readProviderAUsage, whamUsageUrl } from './provider-a.usage';

/** The setup check's read of one Codex login's usage endpoint, with its own token. */
export async function readProviderAPlan({
  config,
  alias,
  proxy,
  signal,
  logger,
}: PlanRead): Promise<PlanReport | undefined> {
  const login = config.providerA.accounts.find((account) => account.alias === alias)!;
  const auth = new ProviderAAuth(login, config.providerA.tokenUrl, proxy);
  return await readProviderAUsage({
    url: whamUsageUrl(config.providerA.url),
    credentials: await auth.current(signal, logger),
    client: codexClient(config.providerA.clientVersion),
    proxy,
    signal,
  });
}
