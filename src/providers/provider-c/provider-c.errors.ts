import { GatewayError } from '../../core/gateway.error';

/** §8.3: without a parseable reset hint a limit message means "retry in a minute". */
export const DEFAULT_LIMIT_RETRY_AFTER_SECONDS = 60;

const AUTH_PATTERNS = [/not logged in/, /log in/, /login/, /unauthorized/, /authentication/, /oauth/, /invalid api key/, /\b401\b/];
const LIMIT_PATTERNS = [/rate limit/, /usage limit/, /limit reached/, /too many requests/, /\b429\b/, /quota/];

/** Why a run ended without a usable answer, as the turn saw it. */
export type RunFailure =
  /** We terminated it for PROVIDER_C_TIMEOUT or the idle timer. */
  | { readonly kind: 'timeout'; readonly idle: boolean }
  /** spawn() itself failed (ENOENT, EACCES, …). */
  | { readonly kind: 'spawn'; readonly errno: string }
  /** A stdout line over 16 MiB. */
  | { readonly kind: 'line_too_long' }
  /** The process exited non-zero, was killed by a signal we did not send, or printed nothing. */
  | { readonly kind: 'exit'; readonly code: number | null; readonly signal: string | null; readonly stderr: string }
  /** A `result` line with `is_error` or an `error…` subtype. */
  | { readonly kind: 'error_result'; readonly text: string; readonly stderr: string };

/**
 * §8.3: a failed run → our error code. Case-insensitive, checked in the table's order. Only
 * the classification result leaves this function: the stderr and result text never reach a
 * client or a log. Only plain `upstream` failures from the CLI are `retryable` (never a spawn
 * failure, a login error, a limit message or a timeout).
 */
export function classifyRunFailure(failure: RunFailure, now: () => number = Date.now): GatewayError {
  switch (failure.kind) {
    case 'timeout':
      return new GatewayError('timeout', { detail: failure.idle ? 'provider_c idle timeout' : 'provider_c turn timeout' });
    case 'spawn':
      return new GatewayError('upstream', { detail: `spawn failed: ${failure.errno}` });
    case 'line_too_long':
      return new GatewayError('upstream', { detail: 'stdout line over 16 MiB' });
    case 'exit':
      return classifyText(failure.stderr, `exit ${failure.code ?? failure.signal}`, now);
    case 'error_result':
      return classifyText(failure.text !== '' ? failure.text : failure.stderr, 'error result', now);
  }
}

function classifyText(text: string, what: string, now: () => number): GatewayError {
  const lower = text.toLowerCase();
  if (AUTH_PATTERNS.some((pattern) => pattern.test(lower))) return new GatewayError('auth', { detail: `${what}: login required` });
  if (LIMIT_PATTERNS.some((pattern) => pattern.test(lower))) {
    return new GatewayError('rate_limited', {
      detail: `${what}: limit reached`,
      retryAfterSeconds: parseRetryAfterSeconds(lower, now) ?? DEFAULT_LIMIT_RETRY_AFTER_SECONDS,
    });
  }
  return new GatewayError('upstream', { detail: what, retryable: true });
}

const UNIT_SECONDS: Record<string, number> = { s: 1, sec: 1, second: 1, m: 60, min: 60, minute: 60, h: 3600, hr: 3600, hour: 3600 };

/**
 * A wait hint in a limit message: `retry after <n> [unit]`, `resets in <n> <unit>`, or a reset
 * given as Unix seconds (`resets 1767225600`, `…limit reached|1767225600`). Clock times such as
 * `resets 3pm` carry a zone we cannot trust, so they fall back to the default.
 */
export function parseRetryAfterSeconds(lowerText: string, now: () => number = Date.now): number | undefined {
  const relative = /(?:retry after|resets in|try again in)\s+(\d+(?:\.\d+)?)\s*(s|sec|second|m|min|minute|h|hr|hour)?s?\b/.exec(lowerText);
  if (relative) {
    const seconds = Number(relative[1]) * UNIT_SECONDS[relative[2] ?? 's'];
    if (seconds > 0) return Math.ceil(seconds);
  }
  const epoch = /(?:resets?(?:\s+at)?\s+|\|)(\d{10})\b/.exec(lowerText);
  if (epoch) {
    const seconds = Number(epoch[1]) - Math.floor(now() / 1000);
    if (seconds > 0) return seconds;
  }
  return undefined;
}
