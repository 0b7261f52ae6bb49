import { DrainService } from './drain.service';

describe(DrainService.name, () => {
  it('starts serving and turns draining once, for good', () => {
    const drain = new DrainService();
    expect(drain.isDraining).toBe(false);
    drain.startDraining();
    drain.startDraining();
    expect(drain.isDraining).toBe(true);
  });

  it('counts requests in flight; ending one twice counts once', () => {
    const drain = new DrainService();
    const first = drain.track();
    const second = drain.track();
    expect(drain.inFlightCount).toBe(2);
    first();
    first();
    expect(drain.inFlightCount).toBe(1);
    second();
    expect(drain.inFlightCount).toBe(0);
  });

  it('resolves waitForIdle at once when idle, and when the last request ends', async () => {
    const drain = new DrainService();
    await expect(drain.waitForIdle(10)).resolves.toBe(true);
    const done = drain.track();
    const idle = drain.waitForIdle(5000);
    setTimeout(done, 20);
    await expect(idle).resolves.toBe(true);
  });

  it('resolves waitForIdle false at the timeout while a request hangs', async () => {
    jest.useFakeTimers();
    try {
      const drain = new DrainService();
      drain.track();
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
});
