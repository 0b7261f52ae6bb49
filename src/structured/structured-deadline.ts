import { GatewayError } from '../core/gateway.error';

/**
 * The absolute deadline of a request (docs/design/behaviours.md §6.7): `deadline_ms` from arrival,
 * capped at STRUCTURED_MAX_DEADLINE; absent or 0 means the cap.
 */
export function deadlineFor(arrivedAt: number, deadlineMs: number | undefined, maxDeadlineMs: number): number {
  return arrivedAt + (deadlineMs ? Math.min(deadlineMs, maxDeadlineMs) : maxDeadlineMs);
}

/** The deadline ended while waiting for the model (joining a binding, or the upstream call). */
export function modelDeadlineError(): GatewayError {
  return new GatewayError('timeout', { publicMessage: 'deadline elapsed before the model responded' });
}
