import { GatewayError } from '../common/errors/gateway.error';

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
