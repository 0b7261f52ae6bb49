import type { EventLogger } from '../../core/event-logger';
import { type PaidUsage, type PlanReport, type PlanWindow, spentUntilOf, vendorWord } from '../../core/plan-usage';

/**
 * What Codex says about a ChatGPT plan (docs/upstream/provider-a.md §4.3): the usage windows and
 * the credits it draws once a window is spent, read from the headers of every answer, the
 * `codex.rate_limits` event, a refusal's headers, and the `wham/usage` endpoint the CLI's
 * `/status` reads. Each read becomes one `PlanReport` for the login's account pool.
 */

/** One usage window of the ChatGPT plan. */
export interface RateLimitWindow {
  readonly usedPercent?: number;
  readonly windowMinutes?: number;
  /** Unix seconds. */
  readonly resetAt?: number;
}

/** The credits behind the plan (`x-codex-credits-*`, the event's and `wham/usage`'s `credits`). */
export interface CreditsSnapshot {
  readonly hasCredits?: boolean;
  readonly unlimited?: boolean;
  /** As the upstream wrote it (a decimal string or number). */
  readonly balance?: string;
}

export interface RateLimitSnapshot {
  readonly primary?: RateLimitWindow;
  readonly secondary?: RateLimitWindow;
  readonly credits?: CreditsSnapshot;
  /** `wham/usage`'s `rate_limit.limit_reached`: the plan is spent. */
  readonly limitReached?: boolean;
  /** `x-codex-rate-limit-reached-type` (`workspace_owner_credits_depleted`, …). */
  readonly reachedType?: string;
  readonly planType?: string;
}

const toNumber = (value: unknown): number | undefined => {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
};

const toBoolean = (value: unknown): boolean | undefined => {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const word = value.trim().toLowerCase();
  return word === 'true' || word === '1' ? true : word === 'false' || word === '0' ? false : undefined;
};

/** A balance as a short decimal, never free text. */
const toBalance = (value: unknown): string | undefined => {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  return typeof text === 'string' && /^-?\d{1,12}(\.\d{1,6})?$/.test(text.trim()) ? text.trim() : undefined;
};

function window(usedPercent: unknown, windowMinutes: unknown, resetAt: unknown): RateLimitWindow | undefined {
  const result = {
    usedPercent: toNumber(usedPercent),
    windowMinutes: toNumber(windowMinutes),
    resetAt: toNumber(resetAt),
  };
  return Object.values(result).some((value) => value !== undefined) ? result : undefined;
}

function credits(hasCredits: unknown, unlimited: unknown, balance: unknown): CreditsSnapshot | undefined {
  const result = { hasCredits: toBoolean(hasCredits), unlimited: toBoolean(unlimited), balance: toBalance(balance) };
  return Object.values(result).some((value) => value !== undefined) ? result : undefined;
}

function snapshot(parts: RateLimitSnapshot): RateLimitSnapshot | undefined {
  const kept = Object.fromEntries(Object.entries(parts).filter(([, value]) => value !== undefined));
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** The three headers of one window, spelled out once: a name built per lookup costs a string-table search. */
const windowHeaders = (which: 'primary' | 'secondary') =>
  [`x-codex-${which}-used-percent`, `x-codex-${which}-window-minutes`, `x-codex-${which}-reset-at`] as const;
const PRIMARY_HEADERS = windowHeaders('primary');
const SECONDARY_HEADERS = windowHeaders('secondary');

/**
 * `x-codex-{primary,secondary}-{used-percent,window-minutes,reset-at}`,
 * `x-codex-credits-{has-credits,unlimited,balance}` and `x-codex-rate-limit-reached-type`.
 */
export function rateLimitsFromHeaders(
  headers: Readonly<Record<string, string | undefined>>,
): RateLimitSnapshot | undefined {
  const read = ([usedPercent, windowMinutes, resetAt]: ReturnType<typeof windowHeaders>) =>
    window(headers[usedPercent], headers[windowMinutes], headers[resetAt]);
  return snapshot({
    primary: read(PRIMARY_HEADERS),
    secondary: read(SECONDARY_HEADERS),
    credits: credits(
      headers['x-codex-credits-has-credits'],
      headers['x-codex-credits-unlimited'],
      headers['x-codex-credits-balance'],
    ),
    reachedType: vendorWord(headers['x-codex-rate-limit-reached-type']),
  });
}

const objectOf = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** The `codex.rate_limits` stream event (`rate_limits.{primary,secondary}`, `credits`, `plan_type`). */
export function rateLimitsFromEvent(event: Record<string, unknown>): RateLimitSnapshot | undefined {
  const limits = objectOf(event.rate_limits);
  if (!limits) return undefined;
  const read = (entry: Record<string, unknown> | undefined) =>
    entry ? window(entry.used_percent, entry.window_minutes, entry.reset_at ?? entry.resets_at) : undefined;
  const credit = objectOf(event.credits) ?? objectOf(limits.credits);
  return snapshot({
    primary: read(objectOf(limits.primary)),
    secondary: read(objectOf(limits.secondary)),
    credits: credit && credits(credit.has_credits, credit.unlimited, credit.balance),
    planType: vendorWord(event.plan_type ?? limits.plan_type),
  });
}

/**
 * The answer of `GET …/wham/usage`: `plan_type`, `rate_limit.{primary_window,secondary_window}`
 * (`used_percent`, `limit_window_seconds`, `reset_after_seconds`, `reset_at`),
 * `rate_limit.limit_reached` and `credits` (`has_credits`, `unlimited`, `balance`).
 */
export function rateLimitsFromUsage(body: unknown, nowMs: number): RateLimitSnapshot | undefined {
  const root = objectOf(body);
  if (!root) return undefined;
  const limit = objectOf(root.rate_limit);
  const read = (entry: Record<string, unknown> | undefined) => {
    if (!entry) return undefined;
    const seconds = toNumber(entry.limit_window_seconds);
    const after = toNumber(entry.reset_after_seconds);
    const resetAt = toNumber(entry.reset_at) ?? (after !== undefined ? Math.round(nowMs / 1000 + after) : undefined);
    return window(entry.used_percent, seconds !== undefined ? seconds / 60 : undefined, resetAt);
  };
  const credit = objectOf(root.credits);
  return snapshot({
    primary: read(objectOf(limit?.primary_window)),
    secondary: read(objectOf(limit?.secondary_window)),
    credits: credit && credits(credit.has_credits, credit.unlimited, credit.balance),
    limitReached: toBoolean(limit?.limit_reached),
    planType: vendorWord(root.plan_type),
  });
}

/** The Codex windows as plan windows (used percent → ratio, minutes → seconds, unix s → ms). */
function planWindows(limits: RateLimitSnapshot): PlanWindow[] {
  const windows: PlanWindow[] = [];
  const add = (name: string, entry: RateLimitWindow | undefined) => {
    if (!entry) return;
    windows.push({
      name,
      usedRatio: entry.usedPercent !== undefined ? entry.usedPercent / 100 : undefined,
      windowSeconds: entry.windowMinutes !== undefined ? Math.round(entry.windowMinutes * 60) : undefined,
      resetsAt: entry.resetAt !== undefined ? entry.resetAt * 1000 : undefined,
    });
  };
  add('primary', limits.primary);
  add('secondary', limits.secondary);
  return windows;
}

/**
 * One read as a plan report. The plan is spent when a window is at 100 % (with its reset ahead)
 * or `wham/usage` says `limit_reached`, until the latest reset of the spent windows (`spentUntil`;
 * with none, or one whose reset is not given, until the next report). Codex draws credits by itself
 * once the plan is spent (nothing in the request opts in), so an answer the upstream serves on a
 * spent plan (`answered`) is a paid turn: credits are in use, as long as the plan is spent.
 */
export function planReportOf(
  limits: RateLimitSnapshot,
  source: PlanReport['source'],
  answered: boolean,
  nowMs: number,
): PlanReport {
  const windows = planWindows(limits);
  const spentWindows = windows.filter(
    (entry) =>
      entry.usedRatio !== undefined && entry.usedRatio >= 1 && (entry.resetsAt === undefined || entry.resetsAt > nowMs),
  );
  const planSpent = spentWindows.length > 0 || limits.limitReached === true;
  const spentUntil = spentUntilOf(spentWindows);
  const credit = limits.credits;
  const depleted = limits.reachedType?.includes('credits_depleted') ? limits.reachedType : undefined;
  const available =
    credit && (credit.hasCredits !== undefined || credit.unlimited !== undefined)
      ? credit.hasCredits === true || credit.unlimited === true
      : undefined;
  const paid: PaidUsage | undefined =
    credit || depleted || (answered && planSpent)
      ? {
          kind: 'credits',
          available: depleted ? false : available,
          // Credits known to be absent or spent pay for nothing: the upstream refuses the turn.
          inUse: answered && planSpent && available !== false && depleted === undefined,
          balance: credit?.balance,
          disabledReason: depleted ?? (available === false ? 'no_credits' : undefined),
        }
      : undefined;
  return {
    windows,
    paid,
    planSpent,
    ...(spentUntil !== undefined ? { spentUntil } : {}),
    planType: limits.planType,
    source,
  };
}

/**
 * What a usage-limit refusal (429 or an error event `usage_limit_reached`, with `plan_type` and
 * `resets_at`) says about the plan: it is spent until the refusal's reset (`resetsAt`, epoch ms:
 * what the login cools until; without one, until the next report), and the backend did not draw
 * credits, so none are available (`x-codex-rate-limit-reached-type` names why when a workspace ran
 * out). It names no window: the windows stay as the latest report gave them.
 */
export function planReportOfUsageLimit(
  payload: unknown,
  reachedType: string | undefined,
  resetsAt?: number,
): PlanReport {
  const root = objectOf(payload);
  const error = objectOf(root?.error) ?? objectOf(objectOf(root?.response)?.error) ?? root;
  return {
    windows: [],
    planSpent: true,
    ...(resetsAt !== undefined ? { spentUntil: resetsAt } : {}),
    planType: vendorWord(error?.plan_type),
    paid: { kind: 'credits', available: false, inUse: false, disabledReason: vendorWord(reachedType) ?? 'no_credits' },
    source: 'turn',
  };
}

/** Seconds until the earliest reset of a window at or above 100 % (docs/upstream/provider-a.md §4.3), if any. */
export function exhaustedWindowResetSeconds(
  windows: readonly PlanWindow[] | undefined,
  nowMs: number,
): number | undefined {
  const resets = (windows ?? [])
    .filter((entry) => (entry.usedRatio ?? 0) >= 1 && entry.resetsAt !== undefined)
    .map((entry) => Math.max(0, (entry.resetsAt! - nowMs) / 1000));
  return resets.length > 0 ? Math.min(...resets) : undefined;
}

/** Where a plan report of a turn goes: its attempt, which hands it to the login's account pool through the turn. */
export interface PlanReportSink {
  reportPlan(report: PlanReport): void;
}

/**
 * One login's meter: every read goes to the attempt it came with (`to`), and from there to the
 * login's account pool as a plan report (the pool keeps the latest, guards against paid usage and
 * shows it), and is logged at debug level.
 */
export class ProviderAPlanMeter {
  constructor(
    /** The pool's latest plan of this login: the fallback reset of a usage-limit error. */
    readonly latest: () => PlanReport | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** A usage-limit refusal of this login's turn, resetting at `resetsAt` when it said (see `planReportOfUsageLimit`). */
  usageLimit(payload: unknown, reachedType: string | undefined, to: PlanReportSink, resetsAt?: number): void {
    to.reportPlan(planReportOfUsageLimit(payload, reachedType, resetsAt));
  }

  /**
   * @param answered the upstream is serving the turn these limits came with (a 2xx answer or its
   *   stream), as opposed to a refusal.
   * @returns whether the limits say the turn draws credits (the caller tells its turn).
   */
  record(limits: RateLimitSnapshot | undefined, to: PlanReportSink, logger: EventLogger, answered: boolean): boolean {
    if (!limits) return false;
    const report = planReportOf(limits, 'turn', answered, this.now());
    to.reportPlan(report);
    logger.debug(
      {
        event: 'provider_a_rate_limits',
        primary_used_percent: limits.primary?.usedPercent,
        primary_reset_at: limits.primary?.resetAt,
        secondary_used_percent: limits.secondary?.usedPercent,
        secondary_reset_at: limits.secondary?.resetAt,
        plan_spent: report.planSpent,
        credits_in_use: report.paid?.inUse,
      },
      'provider_a_rate_limits',
    );
    return report.paid?.inUse === true;
  }
}
