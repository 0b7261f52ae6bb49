import { GatewayError } from '../core/gateway.error';

/** Node runs a timer longer than 2^31−1 ms at once; no deadline needs more than ~24 days. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The absolute deadline of a request (gateway-behaviours.md §6.7): `deadline_ms` from arrival,
 * capped at STRUCTURED_MAX_DEADLINE; absent or 0 means the cap.
 */
export function deadlineFor(arrivedAt: number, deadlineMs: number | undefined, maxDeadlineMs: number): number {
  return arrivedAt + (deadlineMs ? Math.min(deadlineMs, maxDeadlineMs) : maxDeadlineMs);
}

/** A setTimeout delay that ends at `deadlineAt` (epoch ms). */
export function msUntil(deadlineAt: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(0, deadlineAt - Date.now()));
}

/** The deadline ended while waiting for the model (joining a binding, or the upstream call). */
export function modelDeadlineError(): GatewayError {
  return new GatewayError('timeout', { publicMessage: 'deadline elapsed before the model responded' });
}

/** A signal that aborts with `modelDeadlineError()` at `deadlineAt`; `clear()` stops its timer. */
export function deadlineSignal(deadlineAt: number): { readonly signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(modelDeadlineError()), msUntil(deadlineAt));
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/**
 * `work`'s outcome, or a rejection with `signal.reason` the moment `signal` aborts, whichever
 * comes first: the waiter is freed at once even when the work behind `work` ignores the signal.
 */
export async function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
