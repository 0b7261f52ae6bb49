import type { EventLogger } from '../../core/event-logger';

/** One usage window of the ChatGPT plan (docs/upstream/provider-a.md §4.3). */
export interface RateLimitWindow {
  readonly usedPercent?: number;
  readonly windowMinutes?: number;
  /** Unix seconds. */
  readonly resetAt?: number;
}

export interface RateLimitSnapshot {
  readonly primary?: RateLimitWindow;
  readonly secondary?: RateLimitWindow;
}

const toNumber = (value: unknown): number | undefined => {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
};

function window(usedPercent: unknown, windowMinutes: unknown, resetAt: unknown): RateLimitWindow | undefined {
  const result = {
    usedPercent: toNumber(usedPercent),
    windowMinutes: toNumber(windowMinutes),
    resetAt: toNumber(resetAt),
  };
  return Object.values(result).some((value) => value !== undefined) ? result : undefined;
}

function snapshot(
  primary: RateLimitWindow | undefined,
  secondary: RateLimitWindow | undefined,
): RateLimitSnapshot | undefined {
  return primary || secondary ? { primary, secondary } : undefined;
}

/** The three headers of one window, spelled out once: a name built per lookup costs a string-table search. */
const windowHeaders = (which: 'primary' | 'secondary') =>
  [`x-codex-${which}-used-percent`, `x-codex-${which}-window-minutes`, `x-codex-${which}-reset-at`] as const;
const PRIMARY_HEADERS = windowHeaders('primary');
const SECONDARY_HEADERS = windowHeaders('secondary');

/** `x-codex-{primary,secondary}-{used-percent,window-minutes,reset-at}` response headers. */
export function rateLimitsFromHeaders(
  headers: Readonly<Record<string, string | undefined>>,
): RateLimitSnapshot | undefined {
  const read = ([usedPercent, windowMinutes, resetAt]: ReturnType<typeof windowHeaders>) =>
    window(headers[usedPercent], headers[windowMinutes], headers[resetAt]);
  return snapshot(read(PRIMARY_HEADERS), read(SECONDARY_HEADERS));
}

/** The `codex.rate_limits` stream event. */
export function rateLimitsFromEvent(event: Record<string, unknown>): RateLimitSnapshot | undefined {
  const limits = event.rate_limits as Record<string, Record<string, unknown> | undefined> | undefined;
  if (typeof limits !== 'object' || limits === null) return undefined;
  const read = (entry: Record<string, unknown> | undefined) =>
    typeof entry === 'object' && entry !== null
      ? window(entry.used_percent, entry.window_minutes, entry.reset_at)
      : undefined;
  return snapshot(read(limits.primary), read(limits.secondary));
}

/** Seconds until the earliest reset of a window at or above 100 % (docs/upstream/provider-a.md §4.3), if any. */
export function exhaustedWindowResetSeconds(limits: RateLimitSnapshot | undefined, nowMs: number): number | undefined {
  const resets = [limits?.primary, limits?.secondary]
    .filter(
      (entry): entry is RateLimitWindow =>
        entry !== undefined && (entry.usedPercent ?? 0) >= 100 && entry.resetAt !== undefined,
    )
    .map((entry) => Math.max(0, entry.resetAt! - nowMs / 1000));
  return resets.length > 0 ? Math.min(...resets) : undefined;
}

/**
 * The latest snapshot per account, kept in memory and logged at debug level. Besides the fallback
 * Retry-After of a usage-limit error (docs/upstream/provider-a.md §4.3), each snapshot goes to `onSnapshot`: the account pool
 * steers new chats by it and shows it in the account metrics.
 */
export class RateLimitTelemetry {
  private readonly byAccount = new Map<string, RateLimitSnapshot>();

  constructor(private readonly onSnapshot?: (limits: RateLimitSnapshot) => void) {}

  record(accountId: string, limits: RateLimitSnapshot | undefined, logger: EventLogger): void {
    if (!limits) return;
    const merged = { ...this.byAccount.get(accountId), ...stripUndefined(limits) };
    this.byAccount.set(accountId, merged);
    this.onSnapshot?.(merged);
    logger.debug(
      {
        event: 'provider_a_rate_limits',
        primary_used_percent: merged.primary?.usedPercent,
        primary_reset_at: merged.primary?.resetAt,
        secondary_used_percent: merged.secondary?.usedPercent,
        secondary_reset_at: merged.secondary?.resetAt,
      },
      'provider_a_rate_limits',
    );
  }

  latest(accountId: string): RateLimitSnapshot | undefined {
    return this.byAccount.get(accountId);
  }
}

function stripUndefined(limits: RateLimitSnapshot): RateLimitSnapshot {
  return Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));
}
