/**
 * An accepted turn's events whose cleanup also runs when the consumer calls `return()` without
 * ever calling `next()`: an async generator that never started completes on `return()` without
 * entering its body, so its own `finally` (closing the upstream, stopping the turn timer) would
 * never run and the turn would live until its timeout. The chat layer always calls `return()`
 * when a turn ends (src/chat/chat-orchestrator.ts); this makes that call sufficient.
 */
export function closingEvents<T>(events: AsyncGenerator<T>, cleanup: () => Promise<void> | void): AsyncIterable<T> {
  let started = false;
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        started = true;
        return events.next();
      },
      return: async (value?: unknown) => {
        const result = await events.return(value as never);
        // A started generator ran its own finally; an unstarted one needs the cleanup here.
        if (!started) {
          started = true;
          await cleanup();
        }
        return result;
      },
    }),
  };
}
