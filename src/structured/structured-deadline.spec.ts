import { deadlineFor, deadlineSignal, modelDeadlineError, msUntil, untilAborted } from './structured-deadline';

describe('deadlineFor', () => {
  it('uses deadline_ms from arrival, capped at the maximum; absent or 0 means the maximum', () => {
    expect(deadlineFor(1_000, 40, 2_000)).toBe(1_040);
    expect(deadlineFor(1_000, 600_000, 2_000)).toBe(3_000);
    expect(deadlineFor(1_000, undefined, 2_000)).toBe(3_000);
    expect(deadlineFor(1_000, 0, 2_000)).toBe(3_000);
  });
});

describe('msUntil', () => {
  it('never goes below 0 or above what a Node timer can hold', () => {
    expect(msUntil(Date.now() - 5_000)).toBe(0);
    expect(msUntil(Date.now() + 10 * 2_147_483_647)).toBe(2_147_483_647);
    const soon = msUntil(Date.now() + 500);
    expect(soon).toBeGreaterThan(400);
    expect(soon).toBeLessThanOrEqual(500);
  });
});

describe('modelDeadlineError', () => {
  it('is a 504 timeout with the contract wording', () => {
    const error = modelDeadlineError();
    expect([error.code, error.spec.structuredCode, error.publicMessage]).toEqual(['timeout', 'timeout', 'deadline elapsed before the model responded']);
  });
});

describe('deadlineSignal', () => {
  it('aborts with the deadline error at the deadline, and never once cleared', async () => {
    const deadline = deadlineSignal(Date.now() + 20);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(deadline.signal.aborted).toBe(true);
    expect((deadline.signal.reason as ReturnType<typeof modelDeadlineError>).publicMessage).toBe('deadline elapsed before the model responded');

    const cleared = deadlineSignal(Date.now() + 20);
    cleared.clear();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(cleared.signal.aborted).toBe(false);
  });
});

describe('untilAborted', () => {
  it('settles with the work when it ends first, and stops listening', async () => {
    const controller = new AbortController();
    await expect(untilAborted(Promise.resolve('done'), controller.signal)).resolves.toBe('done');
    await expect(untilAborted(Promise.reject(new Error('failed')), controller.signal)).rejects.toThrow('failed');
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
});
