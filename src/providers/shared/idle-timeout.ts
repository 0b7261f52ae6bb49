import { linkedAbort } from '../../common/async/abortable';
import { GatewayError } from '../../core/gateway.error';

/**
 * Re-yields `source`, failing with a `timeout` GatewayError when the upstream stays silent for
 * `idleMs` (GATEWAY_STREAM_IDLE_TIMEOUT; 0 = off). The timer only runs while we wait on the
 * upstream, so time spent waiting for a slow client to drain is not counted as silence.
 */
export async function* withIdleTimeout<T>(source: AsyncIterable<T>, idleMs: number, onIdle?: () => void): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  // One timer per stream, re-armed with refresh() on every wait, and one promise per wait whose
  // reject the timer holds: a stream of thousands of events allocates no timer per event, and
  // no never-settling promise collects a reaction per wait (as Promise.race against one would).
  let failWaiting: ((error: GatewayError) => void) | undefined;
  const timer =
    idleMs > 0
      ? setTimeout(() => {
          // Fired while the consumer held a value (a slow client): not upstream silence.
          if (!failWaiting) return;
          onIdle?.();
          failWaiting(new GatewayError('timeout', { detail: `no upstream event for ${idleMs} ms` }));
        }, idleMs)
      : undefined;
  try {
    for (;;) {
      let result: IteratorResult<T>;
      if (timer) {
        timer.refresh();
        try {
          result = await new Promise<IteratorResult<T>>((resolve, reject) => {
            failWaiting = reject;
            // The losing read settles a promise already settled: no unhandled rejection.
            iterator.next().then(resolve, reject);
          });
        } finally {
          failWaiting = undefined;
        }
      } else result = await iterator.next();
      if (result.done) return;
      yield result.value;
    }
  } finally {
    clearTimeout(timer);
    await iterator.return?.();
  }
}

/**
 * Runs one wait that is not a stream read (today: for a login token, which may mean a refresh
 * against the token endpoint) under `signal` and the same idle bound as every upstream wait, so a
 * hung token endpoint cannot hold a request past GATEWAY_STREAM_IDLE_TIMEOUT (0 = off) any more than
 * past the turn's deadline, which `signal` carries. The bound passing is a `timeout` GatewayError.
 */
export async function withinIdleTimeout<T>(idleMs: number, signal: AbortSignal, what: string, wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
  if (idleMs <= 0) return wait(signal);
  const bounded = linkedAbort([signal]);
  const timer = setTimeout(() => bounded.abort(new GatewayError('timeout', { detail: `no ${what} within ${idleMs} ms` })), idleMs);
  try {
    return await wait(bounded.signal);
  } finally {
    clearTimeout(timer);
    bounded.dispose();
  }
}
