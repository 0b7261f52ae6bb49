import { ProviderAAuth } from '../accounts/provider-a/provider-a.auth';
import { ProviderBTokenSource } from '../accounts/provider-b/provider-b.auth';
import { usageReadFailure, USAGE_READ_TIMEOUT_MS } from '../accounts/plan-usage-refresh';
import { UpstreamProxy } from '../common/egress/upstream-proxy';
import type { AppConfig } from '../config/app-config';
import type { EventLogger } from '../core/event-logger';
import type { PlanReport } from '../core/plan-usage';
import { planSummary, resetText } from '../core/plan-usage';
import type { ProviderId } from '../core/provider-id';
import { codexClient } from './provider-a/provider-a.client';
import { readProviderAUsage, whamUsageUrl } from './provider-a/provider-a.usage';
import { GEMINI_CLI_DEFAULT_MODEL } from './provider-b/provider-b.constants';
import { ProviderBProjectResolver } from './provider-b/provider-b.project';
import { readProviderBUsage } from './provider-b/provider-b.upstream';
import { providerCLoginToken } from '../accounts/provider-c/provider-c.accounts';
import { installedClaudeCodeVersion } from '../accounts/provider-c/provider-c.cli-version';
import { providerCUsageUrl, readProviderCUsage } from './provider-c/provider-c.usage';

/** The setup check prints its own lines; the readers' debug lines go nowhere. */
const SILENT: EventLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/**
 * The setup check's read of one login's usage endpoint (docs/troubleshooting.md, `npm run check`):
 * the family's own reader, on a proxy of its own, closed after.
 */
export async function readPlanForCheck(
  config: AppConfig,
  provider: ProviderId,
  alias: string,
): Promise<PlanReport | undefined> {
  const proxy = new UpstreamProxy(config.proxy);
  const signal = AbortSignal.timeout(USAGE_READ_TIMEOUT_MS);
  try {
    switch (provider) {
      case 'provider_a': {
        const login = config.providerA.accounts.find((account) => account.alias === alias)!;
        const auth = new ProviderAAuth(login.loginFile, config.providerA.tokenUrl, proxy);
        return await readProviderAUsage({
          url: whamUsageUrl(config.providerA.url),
          credentials: await auth.current(signal, SILENT),
          client: codexClient(config.providerA.clientVersion),
          proxy,
          signal,
        });
      }
      case 'provider_b': {
        const login = config.providerB.accounts.find((account) => account.alias === alias)!;
        const tokens = new ProviderBTokenSource(login.loginFile, config.providerB.tokenUrl, Date.now, proxy);
        const projects = new ProviderBProjectResolver(
          config.providerB.project,
          config.providerB.onboardingPollIntervalMs,
        );
        return await readProviderBUsage(
          { baseUrl: config.providerB.url, proxy, projects },
          { tokens },
          GEMINI_CLI_DEFAULT_MODEL,
          signal,
          SILENT,
        );
      }
      case 'provider_c':
        return await readProviderCUsage({
          url: providerCUsageUrl(config.providerC.childEnv),
          token: await providerCLoginToken(config, alias),
          cliVersion: installedClaudeCodeVersion(),
          proxy,
          signal,
        });
    }
  } finally {
    void proxy.close();
  }
}

/**
 * The setup check's line of what a login has left: `plan: <summary>`, what the paid-usage guard
 * would do with it, or why the read failed (a status or code, never a body).
 */
export async function planLineForCheck(
  config: AppConfig,
  provider: ProviderId,
  alias: string,
  now: number,
): Promise<string | undefined> {
  let report: PlanReport | undefined;
  try {
    report = await readPlanForCheck(config, provider, alias);
  } catch (error) {
    return `plan: not read (${usageReadFailure(error)})`;
  }
  if (!report) return 'plan: not read (the answer carried no usage)';
  const spent = report.windows.filter(
    (window) =>
      window.model === undefined &&
      (window.usedRatio ?? 0) >= 1 &&
      (window.resetsAt === undefined || window.resetsAt > now),
  );
  const resets = spent.flatMap((window) => (window.resetsAt !== undefined ? [window.resetsAt] : []));
  const guarded = report.planSpent === true || report.paid?.inUse === true;
  const verdict = !guarded
    ? ''
    : config.accounts.paidUsage === 'plan_only'
      ? ` -> no new turn on this login${resets.length > 0 ? ` until ${resetText(Math.max(...resets))}` : ''} (ACCOUNT_PAID_USAGE=plan_only)`
      : ' -> served, and each paid turn is logged and counted (ACCOUNT_PAID_USAGE=allow)';
  return `plan: ${planSummary(report)}${verdict}`;
}
