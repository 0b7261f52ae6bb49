import { GatewayError } from '../core/gateway.error';
import { timeoutOrNever } from '../common/async/timer-range';
import type { QueueBound, QueueWording, Refusal } from './queue-refusal';
import { boundSetting, queueRefusal, refusalBound } from './queue-refusal';

export interface FairQueueOptions {
  /** Slots in use at once. */
  readonly maxActive: number;
  /** Slots per key at once; `Infinity` for no per-key cap. */
  readonly maxActivePerKey: number;
  /** Waiters held at once; beyond it `queue_full` at once. */
  readonly queueLimit: number;
  /** Longest wait; 0 = until the caller's signal aborts. */
  readonly queueTimeoutMs: number;
  /** How its refusals name this queue's slots and settings to the client. */
  readonly wording: QueueWording;
}

/**
 * Why a request left without a slot; `blockedBy` and `setting` name the bound that held it back
 * (not for `canceled` or `draining`).
 */
export interface RejectionInfo {
  readonly reason: 'full' | 'timeout' | 'canceled' | 'draining' | 'deadline';
  readonly waitMs: number;
  readonly depth: number;
  readonly blockedBy?: QueueBound;
  /** The setting behind `blockedBy`. */
  readonly setting?: string;
}

/** What happened to one acquire, for metrics and logs (the queue itself logs nothing). */
export interface FairQueueObserver {
  waiting?(info: { position: number; depth: number }): void;
  acquired?(info: { waitMs: number; active: number; activeForKey: number; depth: number; queued: boolean }): void;
  rejected?(info: RejectionInfo): void;
  released?(info: { runMs: number; depth: number }): void;
}

export interface AcquireOptions {
  readonly signal: AbortSignal;
  /** Epoch ms; reaching it while waiting ends the wait with `timeout` (structured deadline_ms). */
  readonly deadlineAt?: number;
  readonly observer?: FairQueueObserver;
  /** The client's words for another holder of this key's slots; `another request with the same key` when absent. */
  readonly sameKey?: string;
}

/** A held slot; `release()` is idempotent and must be called on every path. */
export interface QueueSlot {
  release(): void;
}

interface Waiter {
  readonly key: string;
  readonly enqueuedAt: number;
  readonly grant: () => void;
}

/** The caller's deadline (structured deadline_ms) ended before it had a slot. */
function admissionDeadlineError(): GatewayError {
  return new GatewayError('timeout', { publicMessage: 'deadline elapsed while waiting for admission' });
}

/**
 * Why a waiter whose signal aborted left: the drain deadline ends a request with the `draining`
 * error, whose client is still there and told so; any other reason is its client leaving.
 */
export function abortedWaitReason(reason: unknown): 'canceled' | 'draining' {
  return reason instanceof GatewayError && reason.code === 'draining' ? 'draining' : 'canceled';
}

/**
 * Admission with a global cap, a per-key cap and a bounded FIFO (docs/design/behaviours.md §4.2).
 * A freed slot goes to the oldest waiter whose key is below its cap, so a key is FIFO within
 * itself, a key at its cap never blocks other keys, and no key starves. A refusal says which bound
 * held the request back and the setting behind it (queue-refusal.ts). Hand-written: the per-key
 * fairness rule is ours and no queue library implements it.
 */
export class FairQueue {
  private active = 0;
  private readonly activeByKey = new Map<string, number>();
  private waiters: Waiter[] = [];

  constructor(private readonly options: FairQueueOptions) {}

  get depth(): number {
    return this.waiters.length;
  }

  get activeCount(): number {
    return this.active;
  }

  async acquire(key: string, { signal, deadlineAt, observer, sameKey }: AcquireOptions): Promise<QueueSlot> {
    if (signal.aborted) throw signal.reason;
    const arrivedAt = Date.now();
    // A deadline over before admission (it counts from the request's arrival, so a slow upload
    // spends it) gets no slot, not even a free one: the call it would start could not answer in
    // time, yet would be paid for. Nothing held it back here: no bound to name.
    if (deadlineAt !== undefined && arrivedAt >= deadlineAt) {
      observer?.rejected?.({ reason: 'deadline', waitMs: 0, depth: this.waiters.length });
      throw admissionDeadlineError();
    }
    if (
      this.active < this.options.maxActive &&
      this.keyHasRoom(key) &&
      !this.waiters.some((waiter) => this.keyHasRoom(waiter.key))
    ) {
      return this.grantSlot(key, arrivedAt, false, observer);
    }
    // What holds this request back now: its own key at its cap comes first, as a free global slot
    // would not let it run either.
    const refusal = (code: Refusal['code']): Refusal => ({
      code,
      waitingFor: this.keyHasRoom(key) ? 'global' : 'key',
      sameKey: sameKey ?? 'another request with the same key',
    });
    if (this.waiters.length >= this.options.queueLimit) {
      const full = refusal('queue_full');
      observer?.rejected?.({ reason: 'full', waitMs: 0, depth: this.waiters.length, ...this.bound(full) });
      throw queueRefusal(full, this.options.wording, this.options);
    }
    return new Promise<QueueSlot>((resolve, reject) => {
      const timers: (NodeJS.Timeout | undefined)[] = [];
      const cleanup = () => {
        timers.forEach(clearTimeout);
        signal.removeEventListener('abort', onAbort);
        this.waiters = this.waiters.filter((entry) => entry !== waiter);
      };
      const leave = (reason: RejectionInfo['reason'], error: unknown, blocked?: Refusal) => {
        cleanup();
        const waitMs = Date.now() - arrivedAt;
        observer?.rejected?.({ reason, waitMs, depth: this.waiters.length, ...(blocked && this.bound(blocked)) });
        reject(error);
        // A leaving waiter may have been the oldest eligible one; others may now run.
        this.dispatch();
      };
      const onAbort = () => leave(abortedWaitReason(signal.reason), signal.reason);
      const waiter: Waiter = {
        key,
        enqueuedAt: arrivedAt,
        grant: () => {
          cleanup();
          resolve(this.grantSlot(key, arrivedAt, true, observer));
        },
      };
      this.waiters.push(waiter);
      observer?.waiting?.({ position: this.waiters.length, depth: this.waiters.length });
      signal.addEventListener('abort', onAbort, { once: true });
      // The waiter's own request keeps the process alive; its timers alone must not (unref). A wait
      // longer than a timer holds is no bound (timer-range.ts).
      const { queueTimeoutMs } = this.options;
      if (queueTimeoutMs > 0) {
        const timedOut = () => {
          const timeout = refusal('queue_timeout');
          leave('timeout', queueRefusal(timeout, this.options.wording, this.options), timeout);
        };
        timers.push(timeoutOrNever(timedOut, queueTimeoutMs)?.unref());
      }
      if (deadlineAt !== undefined) {
        // Its log line names what the wait was for, as a queue timeout's does.
        const deadlinePassed = () => leave('deadline', admissionDeadlineError(), refusal('queue_timeout'));
        timers.push(timeoutOrNever(deadlinePassed, deadlineAt - Date.now())?.unref());
      }
    });
  }

  /** The log fields naming the bound behind a refusal. */
  private bound(refusal: Refusal): Pick<RejectionInfo, 'blockedBy' | 'setting'> {
    const blockedBy = refusalBound(refusal);
    return { blockedBy, setting: boundSetting(blockedBy, this.options.wording) };
  }

  private keyHasRoom(key: string): boolean {
    return (this.activeByKey.get(key) ?? 0) < this.options.maxActivePerKey;
  }

  private grantSlot(key: string, arrivedAt: number, queued: boolean, observer?: FairQueueObserver): QueueSlot {
    this.active++;
    const activeForKey = (this.activeByKey.get(key) ?? 0) + 1;
    this.activeByKey.set(key, activeForKey);
    const startedAt = Date.now();
    observer?.acquired?.({
      waitMs: startedAt - arrivedAt,
      active: this.active,
      activeForKey,
      depth: this.waiters.length,
      queued,
    });
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.active--;
        const remaining = (this.activeByKey.get(key) ?? 1) - 1;
        if (remaining === 0) this.activeByKey.delete(key);
        else this.activeByKey.set(key, remaining);
        observer?.released?.({ runMs: Date.now() - startedAt, depth: this.waiters.length });
        this.dispatch();
      },
    };
  }

  /** Grants every eligible waiter, oldest first, while global slots are free. */
  private dispatch(): void {
    for (const waiter of [...this.waiters]) {
      if (this.active >= this.options.maxActive) return;
      if (this.keyHasRoom(waiter.key)) waiter.grant();
    }
  }
}
