/** True when `error` is the result of an aborted signal (fetch AbortError, our abort reasons). */
export function isAbortError(error: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return true;
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'ClientDisconnectedError');
}

/** A signal that aborts when any input aborts or after `timeoutMs` (0 = never). */
export function combineSignals(signals: readonly AbortSignal[], timeoutMs = 0): AbortSignal {
  const all = timeoutMs > 0 ? [...signals, AbortSignal.timeout(timeoutMs)] : [...signals];
  return AbortSignal.any(all);
}
