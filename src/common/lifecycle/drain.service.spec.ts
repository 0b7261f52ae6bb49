import { EventEmitter } from 'node:events';
import { DrainService } from './drain.service';

describe(DrainService.name, () => {
  it('starts serving and turns draining once, for good', () => {
    const drain = new DrainService();
    expect(drain.isDraining).toBe(false);
    drain.startDraining();
    drain.startDraining();
    expect(drain.isDraining).toBe(true);
  });

  it('counts requests in flight until their responses close; a second close counts nothing', () => {
    const drain = new DrainService();
    const first = new EventEmitter();
    const second = new EventEmitter();
    drain.track(first);
    drain.track(second);
    expect(drain.inFlightCount).toBe(2);
    first.emit('close');
    first.emit('close');
    expect(drain.inFlightCount).toBe(1);
    second.emit('close');
    expect(drain.inFlightCount).toBe(0);
  });

  it('lists the responses in flight, so the drain deadline can reach each one', () => {
    const drain = new DrainService();
    const first = new EventEmitter();
    const second = new EventEmitter();
    drain.track(first);
    drain.track(second);
    expect(drain.inFlightResponses()).toEqual([first, second]);
    first.emit('close');
    expect(drain.inFlightResponses()).toEqual([second]);
  });

  it('resolves waitForIdle at once when idle, and when the last request ends', async () => {
    const drain = new DrainService();
    await expect(drain.waitForIdle(10)).resolves.toBe(true);
    const response = new EventEmitter();
    drain.track(response);
    const idle = drain.waitForIdle(5000);
    setTimeout(() => response.emit('close'), 20);
    await expect(idle).resolves.toBe(true);
  });

  it('resolves waitForIdle false at the timeout while a request hangs', async () => {
    jest.useFakeTimers();
    try {
      const drain = new DrainService();
      drain.track(new EventEmitter());
      const idle = drain.waitForIdle(30_000);
      jest.advanceTimersByTime(29_999);
      let settled = false;
      void idle.then(() => (settled = true));
      await Promise.resolve();
      expect(settled).toBe(false);
      jest.advanceTimersByTime(1);
      await expect(idle).resolves.toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  it('leaves no timer behind once the last request ends, so a drained process exits at once', async () => {
    jest.useFakeTimers();
    try {
      const drain = new DrainService();
      const response = new EventEmitter();
      drain.track(response);
      const idle = drain.waitForIdle(30_000);
      expect(jest.getTimerCount()).toBe(1);
      response.emit('close');
      await expect(idle).resolves.toBe(true);
      // A drain timer still armed would hold the event loop open until GATEWAY_DRAIN_TIMEOUT.
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('waits for the last request without a bound when the timeout is longer than a timer can hold', async () => {
    const drain = new DrainService();
    const response = new EventEmitter();
    drain.track(response);
    let outcome: boolean | undefined;
    void drain.waitForIdle(2 ** 32).then((idle) => (outcome = idle));
    // setTimeout turns such a delay into 1 ms: a timer armed with it would have fired by now.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(outcome).toBeUndefined();
    response.emit('close');
    await Promise.resolve();
    expect(outcome).toBe(true);
  });

  describe('waitForQuiet', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    /** A drain with one request in flight, and what its wait for quiet has resolved to so far. */
    function waiting(timeoutMs: number, settleMs: number) {
      const drain = new DrainService();
      const first = new EventEmitter();
      drain.track(first);
      const result: { outcome?: boolean } = {};
      void drain.waitForQuiet(timeoutMs, settleMs).then((quiet) => (result.outcome = quiet));
      return { drain, first, result };
    }

    it('waits for nothing in flight for the settle time, counting what arrives meanwhile', async () => {
      const { drain, first, result } = waiting(10_000, 500);
      first.emit('close');
      await jest.advanceTimersByTimeAsync(300);
      // The client's next request on the same connection arrives within the settle time.
      const next = new EventEmitter();
      drain.track(next);
      await jest.advanceTimersByTimeAsync(1000);
      expect(result.outcome).toBeUndefined();
      next.emit('close');
      await jest.advanceTimersByTimeAsync(499);
      expect(result.outcome).toBeUndefined();
      await jest.advanceTimersByTimeAsync(1);
      expect(result.outcome).toBe(true);
    });

    it('settles no longer than the timeout leaves', async () => {
      const { first, result } = waiting(1000, 500);
      await jest.advanceTimersByTimeAsync(900);
      first.emit('close');
      // 100 ms of the drain were left: the settle ends with them, not 500 ms later.
      await jest.advanceTimersByTimeAsync(100);
      expect(result.outcome).toBe(true);
    });

    it('gives up at the timeout', async () => {
      const { result } = waiting(2000, 500);
      await jest.advanceTimersByTimeAsync(2000);
      expect(result.outcome).toBe(false);
    });
  });
});
