import { setTimeout as delay } from 'node:timers/promises';
import { isNever, timeoutOrNever } from './timer-range';

/**
 * The gateway's waits that a signal or a silence can cut short, once: a sleep, waiting on shared
 * work, linked signals and deadlines, and the idle bound on a wait for a login token (the idle
 * bound on upstream frames is the turn runner's, providers/shared/turn-runner.ts). Every
 * rejection carries the signal's own reason (the client's ClientDisconnectedError, a turn's
 * `timeout` GatewayError), which callers pass through as is.
 */

/**
 * Resolves after `ms`, or rejects with the signal's reason as soon as it aborts; a sleep longer
 * than a timer holds never ends by itself (timer-range.ts).
 */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (isNever(ms)) return untilAborted(new Promise<never>(() => undefined), signal);
  // timers/promises rejects with its own AbortError; callers want the reason the signal carries.
  await delay(ms, undefined, { signal }).catch((error: unknown) => {
    throw signal.aborted ? signal.reason : error;
  });
}

/**
 * `work`'s outcome, or a rejection with `signal.reason` the moment `signal` aborts, whichever comes
 * first: the waiter is freed at once even when the work ignores the signal, and work shared with
 * other waiters (a single-flight refresh or discovery) carries on for them.
 */
export async function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  // A waiter that leaves early must not turn the work's later failure into an unhandled rejection.
  work.catch(() => undefined);
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A signal of its own that also follows its parents. */
export interface LinkedAbort {
  readonly signal: AbortSignal;
  /** Aborts it with `reason` and stops following the parents. */
  abort(reason: unknown): void;
  /** Stops following the parents (the work it guarded is over). */
  dispose(): void;
}

/**
 * A signal that aborts with the reason of the first parent to abort, or when its owner calls
 * `abort`. Hand-written instead of `AbortSignal.any`: on Node 20 each `any` costs 12–20 µs (it
 * tracks its parents through weak references, since it cannot know when it is done) and a
 * turn composed several; here every link has an owner that ends it (`abort`/`dispose` in a
 * `finally` or `return()`), and an owner that forgets only leaves a listener on a parent that
 * lives no longer than its own request.
 */
export function linkedAbort(parents: readonly AbortSignal[]): LinkedAbort {
  const own = new AbortController();
  const onParentAbort = (event: Event) => abort((event.target as AbortSignal).reason);
  const dispose = () => {
    for (const parent of parents) parent.removeEventListener('abort', onParentAbort);
  };
  const abort = (reason: unknown) => {
    dispose();
    own.abort(reason);
  };
  const alreadyAborted = parents.find((parent) => parent.aborted);
  if (alreadyAborted) own.abort(alreadyAborted.reason);
  else for (const parent of parents) parent.addEventListener('abort', onParentAbort, { once: true });
  return { signal: own.signal, abort, dispose };
}

/** A deadline as a signal: aborts with a parent's reason, or with `reason()` at `deadlineAt`. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Epoch ms; Infinity when unbounded. */
  readonly deadlineAt: number;
  /** Ends it early with `reason` (its owner is done, or gave up). */
  abort(reason: unknown): void;
  /** Stops the timer; call when the work is over. */
  clear(): void;
}

/**
 * The one deadline builder (turns of all three families, structured deadlines): a linked signal
 * over the parents and one timer, so a caller's abort passes its reason through unchanged and the
 * deadline's own reason is the caller's choice (AbortSignal.timeout would force a TimeoutError).
 */
export function deadline(deadlineAt: number, reason: () => unknown, parents: readonly AbortSignal[] = []): Deadline {
  const link = linkedAbort(parents);
  // A deadline further away than a timer holds is none (timer-range.ts).
  const timer = link.signal.aborted ? undefined : timeoutOrNever(() => link.abort(reason()), deadlineAt - Date.now());
  // The work being timed keeps the process alive; the deadline alone must not.
  timer?.unref();
  return {
    signal: link.signal,
    deadlineAt,
    abort: (abortReason) => {
      clearTimeout(timer);
      link.abort(abortReason);
    },
    // Only the timer: holders may still rely on a parent's abort reaching the signal.
    clear: () => clearTimeout(timer),
  };
}
