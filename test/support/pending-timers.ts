import { createHook } from 'node:async_hooks';
import * as path from 'node:path';

const SRC = path.resolve(__dirname, '..', '..', 'src') + path.sep;

interface TrackedTimer {
  readonly resource: { hasRef(): boolean; _destroyed?: boolean };
  readonly createdAt: string;
}

export interface TimerTracker {
  /** Where each still-pending, ref'd timer that gateway code created was created (`file:line`). */
  pending(): string[];
  stop(): void;
}

/**
 * Records the timers the gateway's own code (`src/`) creates from now on and forgets each one
 * when it fires or is cleared (async_hooks `destroy`). A ref'd timer still pending after the work
 * that created it is over keeps the process alive: Jest cannot exit, a draining gateway waits.
 * Jest's --detectOpenHandles does not report it, so tests that guard against such leaks use this.
 */
export function trackSourceTimers(): TimerTracker {
  const timers = new Map<number, TrackedTimer>();
  const hook = createHook({
    init(asyncId, type, _triggerId, resource) {
      if (type !== 'Timeout') return;
      const createdAt = new Error().stack?.split('\n').find((frame) => frame.includes(SRC));
      if (createdAt)
        timers.set(asyncId, { resource: resource as TrackedTimer['resource'], createdAt: createdAt.trim() });
    },
    destroy(asyncId) {
      timers.delete(asyncId);
    },
  }).enable();
  return {
    pending: () =>
      [...timers.values()]
        .filter((timer) => timer.resource.hasRef() && !timer.resource._destroyed)
        .map((timer) => timer.createdAt),
    stop: () => hook.disable(),
  };
}
