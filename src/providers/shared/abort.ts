/** True when `error` is the result of an aborted signal (fetch AbortError, our abort reasons). */
export function isAbortError(error: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return true;
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'ClientDisconnectedError');
}
