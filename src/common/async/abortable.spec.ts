import { getEventListeners } from 'node:events';
import { deadline, linkedAbort, sleep, untilAborted } from './abortable';

describe(linkedAbort.name, () => {
  const countAborts = (signal: AbortSignal) => {
    let fired = 0;
    signal.addEventListener('abort', () => fired++);
    return () => fired;
  };

  it("aborts with the first parent's reason, or with its owner's, and then stops following", () => {
    const first = new AbortController();
    const second = new AbortController();
    const link = linkedAbort([first.signal, second.signal]);
    const fired = countAborts(link.signal);
    const reason = new Error('client left');
    second.abort(reason);
    first.abort(new Error('later'));
    expect(link.signal.reason).toBe(reason);
    expect(fired()).toBe(1);

    const owned = linkedAbort([new AbortController().signal]);
    owned.abort('mine');
    expect(owned.signal.reason).toBe('mine');
  });

  it('is aborted at once when a parent already is', () => {
    const parent = new AbortController();
    parent.abort('gone');
    expect(linkedAbort([parent.signal]).signal.reason).toBe('gone');
  });

  it('no longer follows its parents once disposed', () => {
    const parent = new AbortController();
    const link = linkedAbort([parent.signal]);
    link.dispose();
    parent.abort('late');
    expect(link.signal.aborted).toBe(false);
  });

  it('leaves no listener on its parents once its owner aborted it', () => {
    const parent = new AbortController();
    const link = linkedAbort([parent.signal]);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    link.abort('turn over');
    // A request's signal outlives each of its turns: a listener per turn would pile up on it.
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });
});

describe('deadline', () => {
  it('aborts with its reason at the deadline, and never once cleared', async () => {
    const reason = new Error('deadline elapsed');
    const timed = deadline(Date.now() + 20, () => reason);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(timed.signal.aborted).toBe(true);
    expect(timed.signal.reason).toBe(reason);

    const cleared = deadline(Date.now() + 20, () => reason);
    cleared.clear();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(cleared.signal.aborted).toBe(false);
  });

  it("passes a parent's abort reason through unchanged, and can be ended early by its owner", () => {
    const parent = new AbortController();
    const timed = deadline(Date.now() + 60_000, () => new Error('late'), [parent.signal]);
    const gone = new Error('client gone');
    parent.abort(gone);
    expect(timed.signal.reason).toBe(gone);
    timed.clear();

    const ended = deadline(Date.now() + 60_000, () => new Error('late'));
    ended.abort('closed');
    expect(ended.signal.reason).toBe('closed');
  });

  it('treats a deadline beyond what a Node timer can hold as none (it would fire at once)', async () => {
    const far = deadline(Date.now() + 10 * 2_147_483_647, () => new Error('late'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(far.signal.aborted).toBe(false);
    expect(deadline(Infinity, () => new Error('late')).signal.aborted).toBe(false);
  });

  it('does not keep the process alive by itself while it waits', () => {
    const activeTimers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const before = activeTimers();
    const pending = deadline(Date.now() + 60_000, () => new Error('late'));
    // Node lists only the timers that hold the event loop open.
    expect(activeTimers()).toBe(before);
    pending.clear();
  });
});

describe('sleep', () => {
  it('resolves after the delay, or rejects with the abort reason at once', async () => {
    const controller = new AbortController();
    const started = Date.now();
    await sleep(20, controller.signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    const reason = new Error('gone');
    const waiting = sleep(60_000, controller.signal);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect(sleep(10, controller.signal)).rejects.toBe(reason);
  });

  it('never ends by itself when longer than a timer holds (Node would end it after 1 ms), only at the abort', async () => {
    const controller = new AbortController();
    let ended = false;
    const waiting = sleep(720 * 3_600_000, controller.signal).finally(() => (ended = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ended).toBe(false);
    controller.abort('gone');
    await expect(waiting).rejects.toBe('gone');
  });
});

describe('untilAborted', () => {
  it('settles with the work when it ends first, and stops listening', async () => {
    const controller = new AbortController();
    await expect(untilAborted(Promise.resolve('done'), controller.signal)).resolves.toBe('done');
    await expect(untilAborted(Promise.reject(new Error('failed')), controller.signal)).rejects.toThrow('failed');
    // Many waiters share one request signal: each must take its listener with it.
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    controller.abort(new Error('late'));
  });

  it('rejects with the abort reason at once, even when the work never ends', async () => {
    const controller = new AbortController();
    const waiting = untilAborted(new Promise<never>(() => undefined), controller.signal);
    const reason = new Error('gone');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect(untilAborted(new Promise<never>(() => undefined), controller.signal)).rejects.toBe(reason);
  });

  it('leaves no unhandled rejection when shared work fails after its waiter left', async () => {
    const controller = new AbortController();
    let fail!: (error: Error) => void;
    const shared = new Promise<never>((_resolve, reject) => (fail = reject));
    const waiting = untilAborted(shared, controller.signal);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    fail(new Error('refresh failed'));
    await new Promise((resolve) => setImmediate(resolve));
  });
});
