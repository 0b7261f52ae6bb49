/** True when `error` is the result of an aborted signal (fetch AbortError, our abort reasons). */
export function isAbortError(error: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return true;
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'ClientDisconnectedError');
}

/**
 * Waits for a promise shared with other requests (a single-flight refresh or discovery) but
 * stops waiting the moment this request's signal aborts; the shared work carries on for others.
 */
export function awaitUnlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  // A waiter that leaves early must not turn the shared promise's failure into an unhandled rejection.
  promise.catch(() => undefined);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
