import { GatewayError } from '../../core/gateway.error';

/**
 * Re-yields `source`, failing with a `timeout` GatewayError when the upstream stays silent for
 * `idleMs` (GATEWAY_STREAM_IDLE_TIMEOUT; 0 = off). The timer only runs while we wait on the
 * upstream, so time spent waiting for a slow client to drain is not counted as silence.
 */
export async function* withIdleTimeout<T>(source: AsyncIterable<T>, idleMs: number, onIdle?: () => void): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = iterator.next();
      const result = idleMs > 0 ? await raceIdle(next, idleMs, onIdle) : await next;
      if (result.done) return;
      yield result.value;
    }
  } finally {
    await iterator.return?.();
  }
}

function raceIdle<T>(next: Promise<IteratorResult<T>>, idleMs: number, onIdle?: () => void): Promise<IteratorResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onIdle?.();
      reject(new GatewayError('timeout', { detail: `no upstream event for ${idleMs} ms` }));
    }, idleMs);
  });
  // The losing promise of the race must not surface as an unhandled rejection.
  next.catch(() => undefined);
  return Promise.race([next, idle]).finally(() => clearTimeout(timer));
}

/**
 * Runs one wait that is not a stream read (today: for a login token, which may mean a refresh
 * against the token endpoint) under `signal` and the same idle bound as every upstream wait, so a
 * hung token endpoint cannot hold a request past GATEWAY_STREAM_IDLE_TIMEOUT (0 = off) any more than
 * past the turn's deadline, which `signal` carries. The bound passing is a `timeout` GatewayError.
 */
export async function withinIdleTimeout<T>(idleMs: number, signal: AbortSignal, what: string, wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
  if (idleMs <= 0) return wait(signal);
  const idle = new AbortController();
  const timer = setTimeout(() => idle.abort(new GatewayError('timeout', { detail: `no ${what} within ${idleMs} ms` })), idleMs);
  try {
    return await wait(AbortSignal.any([signal, idle.signal]));
  } finally {
    clearTimeout(timer);
  }
}
