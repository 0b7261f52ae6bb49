import { providerCLoginToken } from '../../accounts/provider-c/provider-c.accounts';
import { installedClaudeCodeVersion } from '../../accounts/provider-c/provider-c.cli-version';
import type { PlanRead } from '../shared/family-plan';
import type { PlanReport } from '../../core/plan-usage';
import { providerCUsageUrl, readProviderCUsage } from './provider-c.usage';

/** The setup check's read of one Claude Code login's usage endpoint, as the installed CLI would ask. */
export async function readProviderCPlan({ config, alias, proxy, signal }: PlanRead): Promise<PlanReport | undefined> {
  return await readProviderCUsage({
    url: providerCUsageUrl(config.providerC.childEnv),
    token: await providerCLoginToken(config, alias),
    cliVersion: installedClaudeCodeVersion(),
    proxy,
    signal,
  });
}
