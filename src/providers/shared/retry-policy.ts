import { sleep } from '../../common/async/abortable';

/**
 * The shared retry rule of all three families (docs/design/behaviours.md §1.1): before any output,
 * a retryable failure gets at most 2 more attempts, 250 ms then 1000 ms (±20 %), or the upstream
 * hint when it is larger; never past the deadline (applied by providers/shared/turn-runner.ts). A hint above 30 s means the upstream will not
 * take the turn soon: no retry, the client gets the failure with that Retry-After.
 */
export const RETRY_DELAYS_MS = [250, 1000] as const;
const JITTER = 0.2;
/** The longest upstream hint worth waiting for inside one turn. */
export const MAX_HINT_MS = 30_000;

/**
 * What a turn's retries read: the time, the jitter's random source and the wait itself. The
 * system's by default; specs give their own so retries neither wait in real time nor vary.
 */
export interface RetryClock {
  now(): number;
  random(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const SYSTEM_RETRY_CLOCK: RetryClock = { now: () => Date.now(), random: () => Math.random(), sleep };

/** Nest token of the application's RetryClock (`ownRetryClock`; the providers module provides it). */
export const RETRY_CLOCK = Symbol('RETRY_CLOCK');

/** The system's retry clock as an object of its own (one per application, so a spec can change its waits). */
export function ownRetryClock(): RetryClock {
  return { ...SYSTEM_RETRY_CLOCK };
}

/** The delay before retry `retryNumber`; `undefined` when the hint says not to retry at all. */
export function retryDelayMs(retryNumber: number, hintSeconds?: undefined, random?: () => number): number;
export function retryDelayMs(
  retryNumber: number,
  hintSeconds: number | undefined,
  random?: () => number,
): number | undefined;
export function retryDelayMs(
  retryNumber: number,
  hintSeconds: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  const base = RETRY_DELAYS_MS[Math.min(retryNumber, RETRY_DELAYS_MS.length - 1)];
  const jittered = base * (1 - JITTER + 2 * JITTER * random());
  if (hintSeconds === undefined) return jittered;
  const hintMs = hintSeconds * 1000;
  return hintMs > MAX_HINT_MS ? undefined : Math.max(hintMs, jittered);
}

/**
 * An HTTP `Retry-After` in seconds from `now` (RFC 9110): delta seconds or an HTTP date,
 * never negative; undefined when absent or unreadable.
 */
export function retryAfterHeaderSeconds(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, (at - now) / 1000) : undefined;
}
