import { isJsonObject } from '../../common/json';
import type { PlanReport, PlanWindow } from '../../core/plan-usage';
/**
 * Quota errors (429, and 499/503 that carry quota information) split into terminal ones — the
 * client must wait for a reset, retrying now only burns calls — and short rate limits. The rules
 * are the pinned Gemini CLI's (`utils/googleQuotaErrors.ts`, 0.61.0), so the gateway gives up
 * exactly where the CLI gives up:
 *
 * - any message with `limit: 0` (the account has no access to this model at all);
 * - a `QuotaFailure` quota id with `PerDay`/`Daily`;
 * - `ErrorInfo` `MODEL_CAPACITY_EXHAUSTED`/`_EXCEEDED`, `INSUFFICIENT_G1_CREDITS_BALANCE`, and on
 *   a Code Assist domain `QUOTA_EXHAUSTED`, or `RATE_LIMIT_EXCEEDED` without a retry delay;
 * - a retry delay (RetryInfo or "Please retry in …") over 300 s;
 * - a message about exhausted or exceeded capacity, with nothing else to go by.
 *
 * Capacity errors (the model busy for everyone) are told apart from the login's own quota: the
 * `MODEL_CAPACITY_*` reasons, and any of the terminal errors above whose message is about
 * exhausted or exceeded capacity (not a daily quota's, whose message the CLI replaces), which the
 * CLI's `retryWithBackoff` retries silently (twice, after the error's delay, else 1 s then 3 s)
 * before it gives up. It waits any delay; the gateway waits up to 300 s, and past that the error
 * is the login's quota, terminal.
 *
 * Everything else is a short rate limit with the upstream's delay, 60 s for a per-minute quota,
 * else our defaults. Terminal ones carry the real reset when known: the upstream's delay, or for a
 * daily quota the next midnight in Pacific time (when Google's daily quotas reset); otherwise a
 * long Retry-After, so clients do not retry quickly into a wall.
 */
/**
 * `:retrieveUserQuota`'s answer (the Gemini CLI's `/stats`, 0.61.0 `refreshUserQuota`): `buckets[]`,
 * each with `modelId`, `remainingFraction` (0..1), `resetTime` (RFC 3339) and maybe `tokenType`
 * and `remainingAmount`. One plan window per bucket that names a model and a fraction (the CLI
 * skips the others too): named by its model (and token type when the answer has one), used =
 * 1 − remaining. A bucket at 0 spends the plan for that model. No paid usage: the gateway never
 * asks for Google One AI credits (the envelope's `enabled_credit_types`), so none is drawn.
 */
export function planReportFromQuota(body: unknown): PlanReport | undefined {
  const buckets = isJsonObject(body) && Array.isArray(body.buckets) ? body.buckets : undefined;
  if (!buckets) return undefined;
  const windows: PlanWindow[] = [];
  for (const bucket of buckets) {
    if (!isJsonObject(bucket)) continue;
    const { modelId, remainingFraction, resetTime, tokenType } = bucket;
    if (typeof modelId !== 'string' || typeof remainingFraction !== 'number' || !Number.isFinite(remainingFraction))
      continue;
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(modelId)) continue;
    const kind = typeof tokenType === 'string' && /^[A-Z_]{1,32}$/.test(tokenType) ? tokenType : undefined;
    const resetsAt = typeof resetTime === 'string' ? Date.parse(resetTime) : NaN;
    windows.push({
      name: kind && kind !== 'REQUESTS' ? `${modelId}:${kind.toLowerCase()}` : modelId,
      usedRatio: Math.min(1, Math.max(0, 1 - remainingFraction)),
      resetsAt: Number.isFinite(resetsAt) ? resetsAt : undefined,
      model: modelId,
    });
  }
  return { windows, source: 'usage_endpoint' };
}

/** What the quota rules read from a parsed error body (provider-b.errors.ts fills it). */
export interface QuotaErrorFacts {
  readonly message?: string;
  /** `RetryInfo.retryDelay` in seconds. */
  readonly retryDelaySeconds?: number;
  readonly quotaIds: readonly string[];
  readonly reasons: readonly string[];
  /** `ErrorInfo` entries: reason, domain and `metadata.quota_limit`. */
  readonly errorInfos: readonly { readonly reason: string; readonly domain?: string; readonly quotaLimit?: string }[];
  /** How many `details[]` entries the body had (the CLI reads details only when there are some). */
  readonly detailCount: number;
}

/**
 * `terminal`: this login's quota for the model is spent until `retryAfterSeconds`, when the
 * upstream tells (else the account pool rests the model for ACCOUNT_COOLDOWN_DEFAULT, and the
 * client is told that rest); retrying now only burns calls. `retryable`: a short rate limit.
 * `capacity`: the model is short of capacity for everyone (the CLI's "high demand"), not this
 * login's quota: the CLI retries it silently a few times, then offers another model; no login is
 * at fault. Its delay is the upstream's, when given.
 */
export type QuotaVerdict =
  | { readonly kind: 'retryable'; readonly retryAfterSeconds: number }
  | { readonly kind: 'terminal' | 'capacity'; readonly retryAfterSeconds?: number };

export const QUOTA_STATUSES = new Set([429, 499, 503]);
/** The CLI's boundary between a retryable and a terminal delay. */
const MAX_RETRYABLE_DELAY_SECONDS = 300;
const CLOUDCODE_DOMAINS = new Set([
  'cloudcode-pa.googleapis.com',
  'staging-cloudcode-pa.googleapis.com',
  'autopush-cloudcode-pa.googleapis.com',
]);
const NO_ACCESS_MESSAGE = /limit:\s*0(?!\d|\.\d)/;
const CAPACITY_MESSAGE = /exhausted your capacity|capacity exceeded|MODEL_CAPACITY_EXHAUSTED/i;
const RETRY_IN_MESSAGE = /Please retry in ([0-9.]+)(ms|s)\b/;

/** undefined: not a quota error (a plain 503 stays an upstream failure). */
export function classifyQuota(status: number, info: QuotaErrorFacts, now: number): QuotaVerdict | undefined {
  const message = info.message ?? '';
  const terminal = (seconds?: number): QuotaVerdict => ({ kind: 'terminal', retryAfterSeconds: seconds });
  const retryable = (seconds: number): QuotaVerdict => ({ kind: 'retryable', retryAfterSeconds: seconds });
  const capacity = (seconds?: number): QuotaVerdict => ({ kind: 'capacity', retryAfterSeconds: seconds });

  if (NO_ACCESS_MESSAGE.test(message.toLowerCase())) return terminal();
  if (info.detailCount === 0) {
    const hinted = retryHintFromMessage(message);
    if (hinted !== undefined) return hinted > MAX_RETRYABLE_DELAY_SECONDS ? terminal(hinted) : retryable(hinted);
    if (CAPACITY_MESSAGE.test(message)) return capacity();
    if (status === 429) return retryable(5);
    if (status === 499) return retryable(5);
    return undefined;
  }
  if (info.quotaIds.some((id) => id.includes('PerDay') || id.includes('Daily')))
    return terminal(secondsUntilPacificMidnight(now));
  const delay = info.retryDelaySeconds;
  // A terminal verdict that keeps the upstream's message: the CLI's retryWithBackoff retries it
  // when that message is about capacity, whatever the reason code (QUOTA_EXHAUSTED with "Your
  // quota will reset after 5s.", say), after the error's delay. Past the retryable bound the
  // gateway does not wait: that is the login's spent quota.
  const spent = (seconds?: number): QuotaVerdict =>
    CAPACITY_MESSAGE.test(message) && (seconds === undefined || seconds <= MAX_RETRYABLE_DELAY_SECONDS)
      ? capacity(seconds)
      : terminal(seconds);
  for (const entry of info.errorInfos) {
    if (entry.reason === 'MODEL_CAPACITY_EXHAUSTED' || entry.reason === 'MODEL_CAPACITY_EXCEEDED')
      return capacity(delay);
    if (entry.reason === 'INSUFFICIENT_G1_CREDITS_BALANCE') return spent(delay);
    if (entry.domain !== undefined && CLOUDCODE_DOMAINS.has(entry.domain.replace(/[^a-zA-Z0-9.-]/g, ''))) {
      if (entry.reason === 'RATE_LIMIT_EXCEEDED')
        return delay === undefined || delay > MAX_RETRYABLE_DELAY_SECONDS ? spent(delay) : retryable(delay);
      if (entry.reason === 'QUOTA_EXHAUSTED') return spent(delay);
    }
  }
  if (delay !== undefined && delay > 0) return delay > MAX_RETRYABLE_DELAY_SECONDS ? terminal(delay) : retryable(delay);
  if (info.quotaIds.some((id) => id.includes('PerMinute'))) return retryable(60);
  if (info.errorInfos.some((entry) => entry.quotaLimit?.includes('PerMinute'))) return retryable(60);
  if (CAPACITY_MESSAGE.test(message)) return capacity();
  if (info.reasons.includes('RATE_LIMIT_EXCEEDED')) return retryable(10);
  return status === 503 ? undefined : retryable(5);
}

/**
 * A verdict with the reply's `Retry-After` header (`headerSeconds`) read as one more delay: the
 * later of it and the body's counts, and past the retryable bound a short limit or a busy model
 * becomes terminal, as a body's delay that long does. Not a quota error stays one, and so does a
 * terminal one with no reset of its own: its long default rest is the safer reading.
 */
export function withHeaderHint(verdict: QuotaVerdict | undefined, headerSeconds?: number): QuotaVerdict | undefined {
  if (verdict === undefined || headerSeconds === undefined) return verdict;
  if (verdict.kind === 'terminal' && verdict.retryAfterSeconds === undefined) return verdict;
  const seconds = Math.max(verdict.retryAfterSeconds ?? 0, headerSeconds);
  if (verdict.kind !== 'terminal' && seconds > MAX_RETRYABLE_DELAY_SECONDS)
    return { kind: 'terminal', retryAfterSeconds: seconds };
  return { ...verdict, retryAfterSeconds: seconds };
}

/** Only the number is taken from the upstream message; the text itself is never kept. */
function retryHintFromMessage(message: string): number | undefined {
  const match = RETRY_IN_MESSAGE.exec(message);
  if (!match) return undefined;
  const amount = Number(match[1]);
  if (!Number.isFinite(amount)) return undefined;
  return match[2] === 'ms' ? amount / 1000 : amount;
}

/** Seconds from `now` to the next 00:00 in America/Los_Angeles (DST-aware through Intl). */
export function secondsUntilPacificMidnight(now: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/Los_Angeles',
    hour12: false,
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(now);
  const field = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  // hour12: false still prints midnight as "24" on some ICU versions.
  const elapsed = (field('hour') % 24) * 3600 + field('minute') * 60 + field('second');
  return Math.max(1, 86_400 - elapsed);
}
