import { PROVIDER_C_MODEL_WINDOWS } from '../../accounts/provider-c/provider-c.quota-buckets';
import { type PaidUsage, type PlanReport, type PlanWindow, vendorWord } from '../../core/plan-usage';
import type { RateLimitInfo } from './provider-c.stream-json';

/**
 * The plan windows Claude Code names in `rateLimitType`, with their length. `overage` is not one:
 * it names the extra usage itself as the limiting meter.
 */
const PLAN_WINDOW_SECONDS: Readonly<Record<string, number>> = {
  five_hour: 5 * 3600,
  seven_day: 7 * 86_400,
  seven_day_opus: 7 * 86_400,
  seven_day_sonnet: 7 * 86_400,
  seven_day_overage_included: 7 * 86_400,
};

/** The overage statuses under which the API serves a spent plan from extra usage. */
const OVERAGE_SERVES = new Set(['allowed', 'allowed_warning']);

/**
 * The CLI's `rate_limit_event` (docs/upstream/provider-c.md "Plan meters") → what the login's plan
 * has left and its extra usage, or `undefined` when the event says nothing of either:
 * - the window is the limiting one (`rateLimitType`) with its `utilization` and `resetsAt`; a
 *   `rejected` status without a utilization means that window is spent (1); `seven_day_opus` and
 *   `seven_day_sonnet` limit one model family (`model`, PROVIDER_C_MODEL_WINDOWS);
 * - with `dailyCapPaused` the `rejected` status is the organization's pause at its daily cap, which
 *   Claude Code reports whatever the plan has left: it spends no window and not the plan;
 * - `planSpent` is the plan's status `rejected` on a window of the whole plan (a family's window
 *   spends only that family): what still answers is extra usage; it is spent
 *   until `resetsAt` whatever meter limits, and when that meter is the extra usage itself
 *   (`overage`, no plan window) until the later of that and `overageResetsAt`;
 * - extra usage is available while `overageStatus` is `allowed`/`allowed_warning` (or the CLI
 *   says `overageEnabled`), not while it is `rejected`; `overageDisabledReason` says why not;
 * - extra usage is in use when the CLI says `isUsingOverage` (plan rejected, overage allowed) or
 *   the API said `overage-in-use`: the undocumented header counts as paid, since treating a paid
 *   turn as free is the costlier mistake.
 */
export function planReportOf(info: RateLimitInfo): PlanReport | undefined {
  const windows: PlanWindow[] = [];
  const type = info.rateLimitType;
  const model = type !== undefined ? PROVIDER_C_MODEL_WINDOWS[type] : undefined;
  const paused = info.dailyCapPaused === true;
  const rejected = info.status === 'rejected' && !paused;
  if (type !== undefined && PLAN_WINDOW_SECONDS[type] !== undefined) {
    const usedRatio = info.utilization ?? (rejected ? 1 : undefined);
    windows.push({
      name: type,
      windowSeconds: PLAN_WINDOW_SECONDS[type],
      ...(usedRatio !== undefined ? { usedRatio } : {}),
      ...(positive(info.resetsAt) ? { resetsAt: info.resetsAt * 1000 } : {}),
      ...(model !== undefined ? { model } : {}),
    });
  }
  const paid = paidUsageOf(info);
  // A rejected window of one model family spends that family's window, not the whole plan.
  const planSpent = info.status === undefined || paused ? undefined : rejected && model === undefined;
  const resets = [info.resetsAt, type === 'overage' ? info.overageResetsAt : undefined].filter(positive);
  const spentUntil = planSpent && resets.length > 0 ? Math.max(...resets) * 1000 : undefined;
  if (windows.length === 0 && paid === undefined && planSpent === undefined) return undefined;
  return {
    windows,
    ...(paid ? { paid } : {}),
    ...(planSpent !== undefined ? { planSpent } : {}),
    ...(spentUntil !== undefined ? { spentUntil } : {}),
    source: 'turn',
  };
}

function paidUsageOf(info: RateLimitInfo): PaidUsage | undefined {
  const { overageStatus, overageDisabledReason, isUsingOverage, overageInUse, overageEnabled } = info;
  if (
    overageStatus === undefined &&
    overageDisabledReason === undefined &&
    isUsingOverage !== true &&
    overageInUse !== true &&
    overageEnabled === undefined
  )
    return undefined;
  const available =
    overageStatus !== undefined
      ? OVERAGE_SERVES.has(overageStatus)
      : (overageEnabled ?? (overageDisabledReason !== undefined ? false : undefined));
  const inUse = isUsingOverage === true || overageInUse === true;
  // Any reason says extra usage is off (above); only a closed word is passed on.
  const disabledReason = vendorWord(overageDisabledReason);
  return {
    kind: 'extra_usage',
    ...(available !== undefined ? { available } : {}),
    inUse,
    ...(disabledReason !== undefined ? { disabledReason } : {}),
  };
}

const positive = (value: number | undefined): value is number => value !== undefined && value > 0;
