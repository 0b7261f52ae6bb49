/**
 * The one rule for a delay longer than a timer holds. setTimeout and setInterval run any delay
 * above 2^31−1 ms (about 24.8 days) after 1 ms instead, with only a TimeoutOverflowWarning: a
 * timeout of 720h would fire at once and an interval of 720h would repeat every millisecond. Here
 * such a delay means never: no timer is armed, so a timeout or deadline bounds nothing and an
 * interval does not repeat (docs/configuration.md, under the formats). Every timer whose delay comes from a
 * setting, a request or an upstream is armed through these; a fixed delay of our own may use
 * setTimeout directly (timer-range.spec.ts checks both).
 */

/** The longest delay a Node timer (setTimeout, setInterval, AbortSignal.timeout) holds. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Whether a delay of `ms` means never: longer than a timer holds, or not a number. */
export function isNever(ms: number): boolean {
  return !(ms <= MAX_TIMER_MS);
}

/**
 * setTimeout(callback, ms, ...args), or no timer (undefined) when `ms` means never. A delay already
 * past (negative) fires at once.
 */
export function timeoutOrNever<A extends unknown[]>(
  callback: (...args: A) => void,
  ms: number,
  ...args: A
): NodeJS.Timeout | undefined {
  return isNever(ms) ? undefined : setTimeout(callback, Math.max(0, ms), ...args);
}

/** setInterval(callback, ms, ...args), or no timer (undefined) when `ms` means never: no repetition. */
export function intervalOrNever<A extends unknown[]>(
  callback: (...args: A) => void,
  ms: number,
  ...args: A
): NodeJS.Timeout | undefined {
  return isNever(ms) ? undefined : setInterval(callback, ms, ...args);
}
