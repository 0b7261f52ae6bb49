import { GatewayError } from '../core/gateway.error';
import type { FairQueueOptions, QueueSlot } from './fair-queue';
import { FairQueue } from './fair-queue';
import { queueRefusal } from './queue-refusal';

const WORDING = {
  slots: 'spec slots',
  settings: {
    maxActive: 'SPEC_MAX_ACTIVE',
    maxActivePerKey: 'SPEC_MAX_ACTIVE_PER_KEY',
    queueLimit: 'SPEC_QUEUE_LIMIT',
    queueTimeout: 'SPEC_QUEUE_TIMEOUT',
  },
};

const options = (overrides: Partial<FairQueueOptions> = {}): FairQueueOptions => ({
  maxActive: 2,
  maxActivePerKey: 1,
  queueLimit: 10,
  queueTimeoutMs: 0,
  wording: WORDING,
  ...overrides,
});

/** Lets pending promise callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Starts an acquire and records when it resolves, in a shared order log. */
function track(queue: FairQueue, key: string, order: string[], label: string, signal = new AbortController().signal) {
  const entry: { slot?: QueueSlot; error?: unknown } = {};
  const promise = queue.acquire(key, { signal }).then(
    (slot) => {
      order.push(label);
      entry.slot = slot;
    },
    (error) => {
      entry.error = error;
    },
  );
  return Object.assign(entry, { promise });
}

describe(FairQueue.name, () => {
  const signal = () => new AbortController().signal;

  it('runs at once while global and per-key slots are free', async () => {
    const queue = new FairQueue(options());
    const a = await queue.acquire('a', { signal: signal() });
    const b = await queue.acquire('b', { signal: signal() });
    expect(queue.activeCount).toBe(2);
    a.release();
    b.release();
    expect(queue.activeCount).toBe(0);
  });

  it('keeps one key FIFO and grants the next only after a release', async () => {
    const queue = new FairQueue(options({ maxActive: 8 }));
    const order: string[] = [];
    const first = track(queue, 'a', order, 'a1');
    const second = track(queue, 'a', order, 'a2');
    const third = track(queue, 'a', order, 'a3');
    await settle();
    expect(order).toEqual(['a1']);
    expect(queue.depth).toBe(2);
    first.slot!.release();
    await settle();
    expect(order).toEqual(['a1', 'a2']);
    second.slot!.release();
    await settle();
    expect(order).toEqual(['a1', 'a2', 'a3']);
    third.slot!.release();
    expect(queue.activeCount).toBe(0);
  });

  it('never lets a key at its cap block another key (no head-of-line blocking)', async () => {
    const queue = new FairQueue(options({ maxActive: 4 }));
    const order: string[] = [];
    const a1 = track(queue, 'a', order, 'a1');
    track(queue, 'a', order, 'a2');
    track(queue, 'a', order, 'a3');
    const b1 = track(queue, 'b', order, 'b1');
    await settle();
    expect(order).toEqual(['a1', 'b1']);
    expect(b1.slot).toEqual({ release: expect.any(Function) });
    expect(queue.activeCount).toBe(2);
    a1.slot!.release();
    await settle();
    expect(order).toEqual(['a1', 'b1', 'a2']);
  });

  it('gives a freed global slot to the oldest eligible waiter', async () => {
    const queue = new FairQueue(options({ maxActive: 2 }));
    const order: string[] = [];
    const a = track(queue, 'a', order, 'a');
    const b = track(queue, 'b', order, 'b');
    track(queue, 'c', order, 'c');
    track(queue, 'd', order, 'd');
    await settle();
    expect(order).toEqual(['a', 'b']);
    b.slot!.release();
    await settle();
    expect(order).toEqual(['a', 'b', 'c']);
    a.slot!.release();
    await settle();
    expect(order).toEqual(['a', 'b', 'c', 'd']);
  });

  it('with limit 0 rejects queue_full at once while the slot is busy', async () => {
    const queue = new FairQueue(options({ maxActive: 1, queueLimit: 0 }));
    const rejected = jest.fn();
    const held = await queue.acquire('a', { signal: signal() });
    // "At once" is what waitMs 0 in the observer's record says; no clock reading of the test's own.
    const error = await queue.acquire('b', { signal: signal(), observer: { rejected } }).catch((caught) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('queue_full');
    expect(rejected).toHaveBeenCalledWith(expect.objectContaining({ reason: 'full', waitMs: 0, depth: 0 }));
    held.release();
  });

  it('rejects queue_full when the waiter list holds QUEUE_LIMIT entries', async () => {
    const queue = new FairQueue(options({ maxActive: 1, queueLimit: 1 }));
    const held = await queue.acquire('a', { signal: signal() });
    const waiter = track(queue, 'b', [], 'b');
    await expect(queue.acquire('c', { signal: signal() })).rejects.toMatchObject({ code: 'queue_full' });
    held.release();
    await waiter.promise;
    expect(waiter.slot).toEqual({ release: expect.any(Function) });
    expect([queue.activeCount, queue.depth]).toEqual([1, 0]);
    waiter.slot!.release();
  });

  it('times a waiter out with queue_timeout and frees its place', async () => {
    const queue = new FairQueue(options({ maxActive: 1, queueTimeoutMs: 50 }));
    const held = await queue.acquire('a', { signal: signal() });
    const rejected = jest.fn();
    const startedAt = Date.now();
    const error = await queue.acquire('b', { signal: signal(), observer: { rejected } }).catch((caught) => caught);
    const waited = Date.now() - startedAt;
    expect((error as GatewayError).code).toBe('queue_timeout');
    // Not before the timeout; that it ends at all is what Jest's timeout guards.
    expect(waited).toBeGreaterThanOrEqual(45);
    expect(rejected).toHaveBeenCalledWith(expect.objectContaining({ reason: 'timeout', depth: 0 }));
    expect(queue.depth).toBe(0);
    held.release();
  });

  it('waits without a timer when the timeout is 0', async () => {
    jest.useFakeTimers();
    try {
      const queue = new FairQueue(options({ maxActive: 1, queueTimeoutMs: 0 }));
      const held = await queue.acquire('a', { signal: signal() });
      const order: string[] = [];
      const waiter = track(queue, 'b', order, 'b');
      jest.advanceTimersByTime(24 * 60 * 60 * 1000);
      expect(queue.depth).toBe(1);
      held.release();
      await waiter.promise;
      expect(order).toEqual(['b']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('waits without a bound when the timeout or the deadline is longer than a timer can hold', async () => {
    const beyondTimers = 2 ** 32;
    const queue = new FairQueue(options({ maxActive: 1, queueTimeoutMs: beyondTimers }));
    const held = await queue.acquire('a', { signal: signal() });
    const waiter = queue.acquire('b', { signal: signal(), deadlineAt: Date.now() + beyondTimers });
    let outcome = 'waiting';
    void waiter.then(
      () => (outcome = 'granted'),
      (error: GatewayError) => (outcome = error.code),
    );
    // setTimeout turns such a delay into 1 ms: a timer armed with it would have fired by now.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(outcome).toBe('waiting');
    held.release();
    (await waiter).release();
    expect(outcome).toBe('granted');
  });

  it('removes an aborted waiter at once and grants the next waiter first', async () => {
    const queue = new FairQueue(options({ maxActive: 1 }));
    const held = await queue.acquire('a', { signal: signal() });
    const order: string[] = [];
    const leaving = new AbortController();
    const reason = new Error('client disconnected');
    const gone = track(queue, 'b', order, 'b', leaving.signal);
    const next = track(queue, 'c', order, 'c');
    await settle();
    expect(queue.depth).toBe(2);
    leaving.abort(reason);
    await gone.promise;
    expect(gone.error).toBe(reason);
    expect(queue.depth).toBe(1);
    held.release();
    await next.promise;
    expect(order).toEqual(['c']);
  });

  it('throws the reason at once for an already aborted signal', async () => {
    const queue = new FairQueue(options());
    const controller = new AbortController();
    const reason = new Error('gone');
    controller.abort(reason);
    await expect(queue.acquire('a', { signal: controller.signal })).rejects.toBe(reason);
    expect(queue.activeCount).toBe(0);
  });

  it('ends a wait at the deadline with timeout', async () => {
    const queue = new FairQueue(options({ maxActive: 1 }));
    const held = await queue.acquire('a', { signal: signal() });
    await expect(queue.acquire('b', { signal: signal(), deadlineAt: Date.now() + 20 })).rejects.toMatchObject({
      code: 'timeout',
    });
    expect(queue.depth).toBe(0);
    held.release();
  });

  it('refuses a deadline already over with timeout, even when a slot is free', async () => {
    const queue = new FairQueue(options({ maxActive: 1 }));
    const rejected = jest.fn();
    const acquired = jest.fn();
    await expect(
      queue.acquire('a', { signal: signal(), deadlineAt: Date.now() - 1, observer: { rejected, acquired } }),
    ).rejects.toMatchObject({ code: 'timeout', publicMessage: 'deadline elapsed while waiting for admission' });
    expect([queue.activeCount, queue.depth]).toEqual([0, 0]);
    expect(acquired).not.toHaveBeenCalled();
    // Nothing held it back: no bound or setting is named.
    expect(rejected).toHaveBeenCalledWith({ reason: 'deadline', waitMs: 0, depth: 0 });
  });

  it('refuses a deadline that ends the very millisecond it asks for a slot', async () => {
    const now = 1_800_000_000_000;
    jest.spyOn(Date, 'now').mockReturnValue(now);
    try {
      const queue = new FairQueue(options({ maxActive: 1 }));
      await expect(queue.acquire('a', { signal: signal(), deadlineAt: now })).rejects.toMatchObject({
        code: 'timeout',
      });
      expect(queue.activeCount).toBe(0);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('releases exactly once however often release() is called', async () => {
    const queue = new FairQueue(options({ maxActive: 2, maxActivePerKey: 2 }));
    const released = jest.fn();
    const one = await queue.acquire('a', { signal: signal(), observer: { released } });
    const two = await queue.acquire('a', { signal: signal() });
    one.release();
    one.release();
    one.release();
    expect(queue.activeCount).toBe(1);
    expect(released).toHaveBeenCalledTimes(1);
    const three = await queue.acquire('a', { signal: signal() });
    expect(queue.activeCount).toBe(2);
    two.release();
    three.release();
    expect(queue.activeCount).toBe(0);
  });

  it('reports waiting positions, waits and run times to the observer', async () => {
    const queue = new FairQueue(options({ maxActive: 1 }));
    const held = await queue.acquire('a', { signal: signal() });
    const waiting = jest.fn();
    const acquired = jest.fn();
    const released = jest.fn();
    const older = track(queue, 'x', [], 'x');
    const promise = queue.acquire('b', { signal: signal(), observer: { waiting, acquired, released } });
    expect(waiting).toHaveBeenCalledWith({ position: 2, depth: 2 });
    held.release();
    await settle();
    // The older waiter 'x' got the only slot; 'b' still waits.
    expect(older.slot).toEqual({ release: expect.any(Function) });
    expect(queue.activeCount).toBe(1);
    expect(acquired).not.toHaveBeenCalled();
    expect(queue.depth).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 15));
    older.slot!.release();
    const slot = await promise;
    expect(acquired).toHaveBeenCalledWith(
      expect.objectContaining({ active: 1, activeForKey: 1, depth: 0, queued: true }),
    );
    expect(acquired.mock.calls[0][0].waitMs).toBeGreaterThanOrEqual(10);
    slot.release();
    expect(released).toHaveBeenCalledWith(expect.objectContaining({ depth: 0 }));
  });

  it('reports the waiters still queued as the depth when a slot is granted or released', async () => {
    const queue = new FairQueue(options({ maxActive: 2, maxActivePerKey: 1 }));
    const acquired = jest.fn();
    const released = jest.fn();
    const a = await queue.acquire('a', { signal: signal() });
    const b = await queue.acquire('b', { signal: signal(), observer: { released } });
    // Both wait on key a's cap; a free global slot does not let them run.
    const first = queue.acquire('a', { signal: signal(), observer: { acquired } });
    const second = track(queue, 'a', [], 'a3');
    b.release();
    expect(released).toHaveBeenCalledWith(expect.objectContaining({ depth: 2 }));
    expect(queue.depth).toBe(2);
    a.release();
    const slot = await first;
    expect(acquired).toHaveBeenCalledWith(expect.objectContaining({ queued: true, depth: 1 }));
    slot.release();
    await second.promise;
    second.slot!.release();
  });

  it('tells a waiter ended by the drain deadline (draining) from one whose client left (canceled)', async () => {
    const queue = new FairQueue(options({ maxActive: 1 }));
    const held = await queue.acquire('a', { signal: signal() });
    const reasons: string[] = [];
    for (const reason of [new GatewayError('draining'), new Error('client disconnected')]) {
      const ended = new AbortController();
      const waiting = queue
        .acquire('b', { signal: ended.signal, observer: { rejected: (info) => reasons.push(info.reason) } })
        .catch((error: unknown) => error);
      ended.abort(reason);
      expect(await waiting).toBe(reason);
    }
    expect(reasons).toEqual(['draining', 'canceled']);
    held.release();
  });

  describe('names the bound that held a refused request back', () => {
    /** The refusal of one acquire and what its observer heard. */
    async function refusalOf(queue: FairQueue, key: string, extra: { deadlineAt?: number } = {}) {
      const rejected = jest.fn();
      const error = (await queue
        .acquire(key, { signal: signal(), observer: { rejected }, sameKey: 'another turn of the same chat', ...extra })
        .catch((caught: unknown) => caught)) as GatewayError;
      return { error, info: rejected.mock.calls[0][0] as Record<string, unknown> };
    }

    it('times out on its own key when the same key holds the slot while global slots are free', async () => {
      const queue = new FairQueue(options({ maxActive: 2, queueTimeoutMs: 30 }));
      const held = await queue.acquire('a', { signal: signal() });
      const { error, info } = await refusalOf(queue, 'a');
      expect(queue.activeCount).toBe(1);
      expect(info).toMatchObject({ reason: 'timeout', blockedBy: 'key', setting: 'SPEC_MAX_ACTIVE_PER_KEY' });
      expect(error.code).toBe('queue_timeout');
      expect(error.publicMessage).toBe(
        'waited 30ms (SPEC_QUEUE_TIMEOUT) for a slot: another turn of the same chat is still running ' +
          '(SPEC_MAX_ACTIVE_PER_KEY=1); retry once it has ended, or raise SPEC_QUEUE_TIMEOUT to wait for it, ' +
          'or SPEC_MAX_ACTIVE_PER_KEY to run them side by side',
      );
      held.release();
    });

    it('times out on the global cap when every slot is busy with other keys', async () => {
      const queue = new FairQueue(options({ maxActive: 1, queueTimeoutMs: 60_000 * 5 }));
      jest.useFakeTimers();
      try {
        const held = await queue.acquire('a', { signal: signal() });
        const refused = refusalOf(queue, 'b');
        jest.advanceTimersByTime(60_000 * 5);
        const { error, info } = await refused;
        expect(info).toMatchObject({ reason: 'timeout', blockedBy: 'global', setting: 'SPEC_MAX_ACTIVE' });
        expect(error.publicMessage).toBe(
          'waited 5m (SPEC_QUEUE_TIMEOUT) for a slot: all spec slots are busy (SPEC_MAX_ACTIVE=1); ' +
            'retry in 5 s, or raise SPEC_MAX_ACTIVE or SPEC_QUEUE_TIMEOUT',
        );
        held.release();
      } finally {
        jest.useRealTimers();
      }
    });

    it('names its own key when both its key and the global cap are reached', async () => {
      const queue = new FairQueue(options({ maxActive: 1, queueTimeoutMs: 20 }));
      const held = await queue.acquire('a', { signal: signal() });
      const { info } = await refusalOf(queue, 'a');
      expect(info).toMatchObject({ blockedBy: 'key' });
      held.release();
    });

    it('names the waiter limit for queue_full, and in the message what it would have waited for', async () => {
      const queue = new FairQueue(options({ maxActive: 2, queueLimit: 0 }));
      const held = await queue.acquire('a', { signal: signal() });
      const ownKey = await refusalOf(queue, 'a');
      expect(ownKey.info).toMatchObject({ reason: 'full', blockedBy: 'queue_limit', setting: 'SPEC_QUEUE_LIMIT' });
      expect(ownKey.error.code).toBe('queue_full');
      expect(ownKey.error.publicMessage).toBe(
        'the waiting list is full (SPEC_QUEUE_LIMIT=0): another turn of the same chat is still running ' +
          '(SPEC_MAX_ACTIVE_PER_KEY=1); retry once it has ended, or raise SPEC_QUEUE_LIMIT to wait for it, ' +
          'or SPEC_MAX_ACTIVE_PER_KEY to run them side by side',
      );
      const other = await queue.acquire('b', { signal: signal() });
      const busy = await refusalOf(queue, 'c');
      expect(busy.info).toMatchObject({ blockedBy: 'queue_limit' });
      expect(busy.error.publicMessage).toBe(
        'the waiting list is full (SPEC_QUEUE_LIMIT=0): all spec slots are busy (SPEC_MAX_ACTIVE=2); ' +
          'retry in 5 s, or raise SPEC_MAX_ACTIVE or SPEC_QUEUE_LIMIT',
      );
      held.release();
      other.release();
    });

    it('writes the queue timeout in the unit the setting takes: ms, s, m or h', () => {
      const waited = (queueTimeoutMs: number) =>
        queueRefusal(
          { code: 'queue_timeout', waitingFor: 'global', sameKey: 'another turn of the same chat' },
          WORDING,
          options({ queueTimeoutMs }),
        ).publicMessage!.split(' (')[0];
      expect([300, 5_000, 90_000, 300_000, 5_400_000, 3_600_000, 7_200_000].map(waited)).toEqual([
        'waited 300ms',
        'waited 5s',
        'waited 90s',
        'waited 5m',
        'waited 90m',
        'waited 1h',
        'waited 2h',
      ]);
    });

    it('names the bound of a wait ended by the deadline, and none for a client that left', async () => {
      const queue = new FairQueue(options({ maxActive: 1 }));
      const held = await queue.acquire('a', { signal: signal() });
      const { error, info } = await refusalOf(queue, 'b', { deadlineAt: Date.now() + 20 });
      expect(error.code).toBe('timeout');
      expect(info).toMatchObject({ reason: 'deadline', blockedBy: 'global', setting: 'SPEC_MAX_ACTIVE' });

      const leaving = new AbortController();
      const rejected = jest.fn();
      const waiting = queue.acquire('c', { signal: leaving.signal, observer: { rejected } }).catch(() => undefined);
      leaving.abort(new Error('gone'));
      await waiting;
      expect(rejected.mock.calls[0][0]).not.toHaveProperty('blockedBy');
      held.release();
    });
  });
});
