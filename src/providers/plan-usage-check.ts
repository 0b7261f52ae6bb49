import { usageReadFailure, USAGE_READ_TIMEOUT_MS } from '../accounts/plan-usage-refresh';
import { UpstreamProxy } from '../common/egress/upstream-proxy';
import type { AppConfig } from '../config/app-config';
import type { EventLogger } from '../core/event-logger';
import { familyOf } from '../core/family-registry';
import type { PlanReport } from '../core/plan-usage';
import { isSpentPlanWindow, planAt, planSummary, resetText } from '../core/plan-usage';
import type { ProviderId } from '../core/provider-id';

/** The setup check prints its own lines; the readers' debug lines go nowhere. */
const SILENT: EventLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/**
 * The setup check's read of one login's usage endpoint (docs/troubleshooting.md, `npm run check`):
 * the family's own reader (its `readPlan`), on a proxy of its own, closed after; `undefined` for a
 * family without a usage endpoint.
 */
export async function readPlanForCheck(
  config: AppConfig,
  provider: ProviderId,
  alias: string,
): Promise<PlanReport | undefined> {
  const readPlan = familyOf(provider).readPlan;
  if (!readPlan) return undefined;
  const proxy = new UpstreamProxy(config.proxy);
  const signal = AbortSignal.timeout(USAGE_READ_TIMEOUT_MS);
  try {
    return await readPlan({ config, alias, proxy, signal, logger: SILENT });
  } finally {
    void proxy.close();
  }
}

/**
 * The setup check's line of what a login has left: `plan: <summary>`, what the paid-usage guard
 * would do with it, or why the read failed (a status or code, never a body); none for a family
 * without a usage endpoint.
 */
export async function planLineForCheck(
  config: AppConfig,
  provider: ProviderId,
  alias: string,
  now: number,
): Promise<string | undefined> {
  if (!familyOf(provider).readPlan) return undefined;
  let report: PlanReport | undefined;
  try {
    report = await readPlanForCheck(config, provider, alias);
  } catch (error) {
    return `plan: not read (${usageReadFailure(error)})`;
  }
  if (!report) return 'plan: not read (the answer carried no usage)';
  // As the pool reads it: a window whose reset passed is a fresh one, a spent state ends at its time.
  const reading = planAt(report, now);
  const spent = reading.windows.filter(isSpentPlanWindow);
  const resets = spent.flatMap((window) => (window.resetsAt !== undefined ? [window.resetsAt] : []));
  // As the pool's guard: a spent plan with no paid usage left to draw is the upstream's to refuse.
  const nothingToDraw = reading.planSpent && reading.paid?.available === false && reading.paid.inUse !== true;
  const guarded = !nothingToDraw && (reading.planSpent || reading.paid?.inUse === true);
  // A spent window of one model with paid usage behind it holds that model only (docs/accounts.md).
  const heldModels =
    reading.paid?.available === true
      ? reading.windows.filter((window) => window.model !== undefined && (window.usedRatio ?? 0) >= 1)
      : [];
  const until = (times: number[]) => (times.length > 0 ? ` until ${resetText(Math.max(...times))}` : '');
  const verdict = nothingToDraw
    ? ` -> the upstream refuses its turns${until(resets)}: the plan is spent and no paid usage is left to draw`
    : !guarded && heldModels.length === 0
      ? ''
      : config.accounts.paidUsage === 'allow'
        ? ' -> served, and each paid turn is logged and counted (ACCOUNT_PAID_USAGE=allow)'
        : guarded
          ? ` -> no new turn on this login${until(resets)} (ACCOUNT_PAID_USAGE=plan_only)`
          : ` -> no new ${heldModels.map((window) => window.model).join(' or ')} turn on this login${until(heldModels.flatMap((window) => window.resetsAt ?? []))} (ACCOUNT_PAID_USAGE=plan_only)`;
  return `plan: ${planSummary({ ...report, ...reading })}${verdict}`;
}
