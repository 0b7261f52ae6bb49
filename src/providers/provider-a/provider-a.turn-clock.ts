import { GatewayError } from '../../core/gateway.error';
import type { CallContext } from '../provider-adapter';

/** The whole-turn bound (provider_a.md §4.6): one signal for the caller's abort and the deadline. */
export interface TurnClock {
  /** Aborts with the caller's reason, or with GatewayError('timeout') at the deadline. */
  readonly signal: AbortSignal;
  /** Epoch ms (Infinity when unbounded); no retry may start past it. */
  readonly deadlineAt: number;
  /** Ends the turn before its deadline (its consumer closed it): aborts `signal` and stops the timer. */
  close(): void;
  dispose(): void;
}

// setTimeout fires at once for delays beyond 2^31-1 ms; such a deadline is as good as none.
const MAX_TIMER_MS = 2 ** 31 - 1;

export function turnClock(context: CallContext, turnTimeoutMs: number, now: number = Date.now()): TurnClock {
  const deadlineAt = Math.min(turnTimeoutMs > 0 ? now + turnTimeoutMs : Infinity, context.deadlineAt ?? Infinity);
  const controller = new AbortController();
  const delay = deadlineAt - now;
  let timer: NodeJS.Timeout | undefined;
  if (delay <= MAX_TIMER_MS) {
    timer = setTimeout(() => controller.abort(new GatewayError('timeout', { detail: 'provider_a turn deadline reached' })), Math.max(0, delay));
    timer.unref();
  }
  return {
    signal: AbortSignal.any([context.signal, controller.signal]),
    deadlineAt,
    close: () => {
      clearTimeout(timer);
      controller.abort(new Error('provider_a turn closed by its consumer'));
    },
    dispose: () => clearTimeout(timer),
  };
}
