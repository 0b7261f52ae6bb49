import { ProviderBTokenSource } from '../../accounts/provider-b/provider-b.auth';
import type { PlanRead } from '../shared/family-plan';
import type { PlanReport } from '../../core/plan-usage';
import { GEMINI_CLI_DEFAULT_MODEL } from './provider-b.constants';
import { ProviderBProjectResolver } from './provider-b.project';
import { readProviderBUsage } from './provider-b.upstream';

/** The setup check's read of one Gemini login's quota buckets, for the CLI's default model. */
export async function readProviderBPlan({
  config,
  alias,
  proxy,
  signal,
  logger,
}: PlanRead): Promise<PlanReport | undefined> {
  const login = config.providerB.accounts.find((account) => account.alias === alias)!;
  const tokens = new ProviderBTokenSource(login, config.providerB.tokenUrl, Date.now, proxy);
  const projects = new ProviderBProjectResolver(config.providerB.project, config.providerB.onboardingPollIntervalMs);
  return await readProviderBUsage(
    { baseUrl: config.providerB.url, proxy, projects },
    { tokens },
    GEMINI_CLI_DEFAULT_MODEL,
    signal,
    logger,
  );
}
