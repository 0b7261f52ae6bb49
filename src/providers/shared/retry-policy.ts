import { sleep } from '../../common/async/abortable';
import { GatewayError } from '../../core/gateway.error';

/**
 * The shared retry rule of all three families (gateway-behaviours.md §1.1): before any output,
 * a retryable failure gets at most 2 more attempts, 250 ms then 1000 ms (±20 %), or the upstream
 * hint when it is larger; never past the deadline. A hint above 30 s means the upstream will not
 * take the turn soon: no retry, the client gets the failure with that Retry-After.
 */
export const RETRY_DELAYS_MS = [250, 1000] as const;
const JITTER = 0.2;
/** The longest upstream hint worth waiting for inside one turn. */
export const MAX_HINT_MS = 30_000;

/** The delay before retry `retryNumber`; `undefined` when the hint says not to retry at all. */
export function retryDelayMs(retryNumber: number, hintSeconds?: undefined, random?: () => number): number;
export function retryDelayMs(retryNumber: number, hintSeconds: number | undefined, random?: () => number): number | undefined;
export function retryDelayMs(retryNumber: number, hintSeconds: number | undefined, random: () => number = Math.random): number | undefined {
  const base = RETRY_DELAYS_MS[Math.min(retryNumber, RETRY_DELAYS_MS.length - 1)];
  const jittered = base * (1 - JITTER + 2 * JITTER * random());
  if (hintSeconds === undefined) return jittered;
  const hintMs = hintSeconds * 1000;
  return hintMs > MAX_HINT_MS ? undefined : Math.max(hintMs, jittered);
}

export interface RetryOptions {
  readonly signal: AbortSignal;
  /** Epoch ms after which no new attempt may start. */
  readonly deadlineAt: number;
  /** Extra attempts after the first; 2 by the shared rule. */
  readonly maxRetries?: number;
  readonly onRetry?: (error: GatewayError, retryNumber: number, delayMs: number) => void;
  readonly now?: () => number;
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or the budget is spent.
 * `attempt` must itself stop retrying once it has yielded output (it then resolves).
 */
export async function runWithRetries<T>(attempt: (attemptNumber: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const maxRetries = options.maxRetries ?? RETRY_DELAYS_MS.length;
  const now = options.now ?? Date.now;
  for (let attemptNumber = 0; ; attemptNumber++) {
    try {
      return await attempt(attemptNumber);
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason ?? error;
      if (!(error instanceof GatewayError) || !error.retryable || attemptNumber >= maxRetries) throw error;
      const delayMs = retryDelayMs(attemptNumber, error.retryAfterSeconds);
      if (delayMs === undefined || now() + delayMs >= options.deadlineAt) throw error;
      options.onRetry?.(error, attemptNumber + 1, delayMs);
      await sleep(delayMs, options.signal);
    }
  }
}
