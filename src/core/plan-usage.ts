import type { EventLogger } from './event-logger';

/**
 * What one login's subscription plan has left, as its upstream reported it: the plan's usage
 * windows and the paid usage (extra usage, credits) that the vendor draws once the plan is spent. Every family turns what its upstream sends (response headers, stream events,
 * the CLI's `rate_limit_event`, the vendor's own usage endpoint) into this one shape, and the
 * account pool keeps the latest per login (docs/providers.md "What each vendor meters, and what
 * the gateway does about it").
 */

/** One usage window of a plan (a rolling window of hours or days, or one model's quota bucket). */
export interface PlanWindow {
  /** The vendor's name for the window (its own word for it, or the model id of a per-model bucket). */
  readonly name: string;
  /** Share of the window used, 0..1 (above 1 when the upstream overshoots); undefined when not reported. */
  readonly usedRatio?: number;
  /** Length of the window in seconds, when reported. */
  readonly windowSeconds?: number;
  /** When the window resets, epoch ms, when reported. */
  readonly resetsAt?: number;
  /**
   * The window limits this one model only (a per-model quota bucket): spending it leaves the login's
   * other models served, so it neither spends the plan nor steers new chats.
   */
  readonly model?: string;
}

/** The kind of paid usage a vendor draws after the plan: extra usage billed on top, or prepaid credits. */
export type PaidUsageKind = 'extra_usage' | 'credits';

/**
 * A word an upstream chose for a plan (a plan type, a limit's name, why paid usage is off), kept
 * only when it is one short identifier: letters, digits, `_`, `.` and `-`, at most 64. Anything
 * else (free text, an e-mail address, a line break) is `undefined`: these words reach
 * GET /v1/accounts and log lines, and an upstream's free text has no place in either.
 */
export function vendorWord(value: unknown): string | undefined {
  return typeof value === 'string' && VENDOR_WORD.test(value) ? value : undefined;
}
const VENDOR_WORD = /^[A-Za-z0-9_.-]{1,64}$/;

/** The paid usage behind a plan, as far as the upstream said. Every field is optional: vendors say part of it. */
export interface PaidUsage {
  readonly kind: PaidUsageKind;
  /** The login may draw paid usage once the plan is spent (overage enabled, credits left or unlimited). */
  readonly available?: boolean;
  /** The turn that reported this drew, or is drawing, paid usage. */
  readonly inUse?: boolean;
  /** The vendor's balance as it wrote it (credits); shown, never computed with. */
  readonly balance?: string;
  /** Why paid usage is unavailable, in the vendor's word (`out_of_credits`, `org_level_disabled`; see vendorWord). */
  readonly disabledReason?: string;
}

/** One report of a login's plan, from one upstream answer or one read of the vendor's usage endpoint. */
export interface PlanReport {
  /** The windows this report carries; a window not named here keeps its last reported value. */
  readonly windows: readonly PlanWindow[];
  readonly paid?: PaidUsage;
  /**
   * The plan itself is spent (the upstream says it rejects on the plan, a window at 100 %, a quota
   * bucket at 0): what still gets served is paid usage, or nothing.
   */
  readonly planSpent?: boolean;
  /**
   * When this report's spent facts end (epoch ms): `planSpent` and `paid.inUse` hold until then
   * and no longer (`planAt`); without it, until the next report. The latest reset among the
   * report's spent windows, or the reset the upstream gave for the spent plan, whichever meter it
   * named as the limit, a plan window or not (Claude's `overage`: the extra usage itself).
   */
  readonly spentUntil?: number;
  /** The vendor's plan name when it says one. */
  readonly planType?: string;
  /** Where it came from: an answer to a turn, or the vendor's usage endpoint. */
  readonly source: 'turn' | 'usage_endpoint';
}

/**
 * When the spent state of a report whose spent plan windows are `spent` ends (`PlanReport.spentUntil`):
 * the latest of their resets; undefined when there is none, or one of them gave no reset (then the
 * plan stays spent until a later report says otherwise).
 */
export function spentUntilOf(spent: readonly PlanWindow[]): number | undefined {
  if (spent.length === 0 || spent.some((window) => window.resetsAt === undefined)) return undefined;
  return Math.max(...spent.map((window) => window.resetsAt!));
}

/**
 * A window of the whole plan (not one model's) at 100 % or more: the plan is spent while it lasts.
 * On a `PlanReading` a window past its reset reads 0, so this also says its reset is still ahead.
 */
export function isSpentPlanWindow(window: PlanWindow): boolean {
  return window.model === undefined && (window.usedRatio ?? 0) >= 1;
}

/** A login's latest plan report as it stands at a given time (`planAt`). */
export interface PlanReading {
  /** The report's windows; one whose reset has passed reads as reset: used 0, `resetsAt` when it reset. */
  readonly windows: readonly PlanWindow[];
  /** The report's paid usage; `inUse` only while the report's spent facts hold. */
  readonly paid?: PaidUsage;
  /**
   * The plan is spent: the report said so and its `spentUntil` is still ahead (or not given), or a
   * window of the whole plan reads 100 % or more with its reset ahead (or not given).
   */
  readonly planSpent: boolean;
  /** The next time (epoch ms) this reading changes by itself: a window's reset, or `spentUntil`. */
  readonly changesAt?: number;
}

/**
 * What a login's latest plan report says at `now`: the one reading the account pool's paid-usage
 * guard, GET /v1/accounts, the account gauges and the setup check share. A report describes the
 * moment it was made; its windows reset and its spent state ends at times it gave, and past those
 * times it no longer reads as it did, whether or not another report came since. A window past its
 * reset reads as a fresh window (used 0): the upstream counts it from zero, and the next report
 * says how much of it is used.
 */
export function planAt(plan: PlanReport | undefined, now: number): PlanReading {
  if (plan === undefined) return { windows: [], planSpent: false };
  let changesAt: number | undefined;
  const ahead = (at: number | undefined) => {
    if (at !== undefined && at > now && (changesAt === undefined || at < changesAt)) changesAt = at;
  };
  // A window that reset with some of it used; copied only then: most readings change nothing.
  const reset = (window: PlanWindow) =>
    window.resetsAt !== undefined && window.resetsAt <= now && window.usedRatio !== undefined && window.usedRatio !== 0;
  const windows = plan.windows.some(reset)
    ? plan.windows.map((window) => (reset(window) ? { ...window, usedRatio: 0 } : window))
    : plan.windows;
  for (const window of windows) ahead(window.resetsAt);
  ahead(plan.spentUntil);
  const factsHold = plan.spentUntil === undefined || plan.spentUntil > now;
  const planSpent = (factsHold && plan.planSpent === true) || windows.some(isSpentPlanWindow);
  const paid = plan.paid?.inUse === true && !factsHold ? { ...plan.paid, inUse: false } : plan.paid;
  return { windows, paid, planSpent, changesAt };
}

/**
 * Reads one login's plan from the vendor's own usage endpoint (the one its CLI reads for `/status`
 * or `/stats`): at startup, every ACCOUNT_USAGE_REFRESH_INTERVAL and in the setup check, never per
 * request. Resolves `undefined` when the answer carries nothing readable; rejects on a failed call.
 */
export type PlanUsageRead<T> = (login: T, signal: AbortSignal, logger: EventLogger) => Promise<PlanReport | undefined>;

/** Where a family sends what it read of a login's plan: the login's account pool. */
export interface PlanReporter {
  reportPlan(alias: string, report: PlanReport): void;
}

const PAID_NAMES: Record<PaidUsageKind, string> = { extra_usage: 'extra usage', credits: 'credits' };

/** `5h`, `7d`, `90 min`: a window length as a person reads it. */
function spanText(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400}d`;
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  return `${Math.round(seconds / 60)} min`;
}

/** `2026-11-29T05:00:00Z`: a reset as the views write it. */
export function resetText(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * One line of what a login's plan has left and its paid usage, for the setup check and the
 * `plan_usage` log line: `primary 42 % used (5h, resets …); secondary …; credits: available, not in use`.
 * Never a token, e-mail or account id: only the vendor's window names, ratios, times and words.
 */
export function planSummary(plan: {
  readonly windows: readonly PlanWindow[];
  readonly paid?: PaidUsage;
  readonly planSpent?: boolean;
  readonly planType?: string;
}): string {
  const parts: string[] = [];
  if (plan.planType) parts.push(`plan ${plan.planType}`);
  for (const window of plan.windows) {
    const used =
      window.usedRatio !== undefined ? `${Math.round(window.usedRatio * 1000) / 10} % used` : 'usage unknown';
    const details = [
      window.windowSeconds !== undefined ? spanText(window.windowSeconds) : undefined,
      window.resetsAt !== undefined ? `resets ${resetText(window.resetsAt)}` : undefined,
    ].filter((part) => part !== undefined);
    parts.push(`${window.name} ${used}${details.length > 0 ? ` (${details.join(', ')})` : ''}`);
  }
  if (plan.windows.length === 0) parts.push('no usage windows reported');
  if (plan.planSpent) parts.push('plan spent');
  if (plan.paid) {
    const paid = plan.paid;
    const facts = [
      paid.available === undefined ? undefined : paid.available ? 'available' : 'not available',
      paid.inUse ? 'IN USE' : 'not in use',
      paid.balance !== undefined ? `balance ${paid.balance}` : undefined,
      paid.disabledReason,
    ].filter((part) => part !== undefined);
    parts.push(`${PAID_NAMES[paid.kind]}: ${facts.join(', ')}`);
  }
  return parts.join('; ');
}
