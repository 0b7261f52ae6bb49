import { deadlineFor, modelDeadlineError, msUntil } from './structured-deadline';

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
