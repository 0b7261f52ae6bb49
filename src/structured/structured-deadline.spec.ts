import { deadlineFor, modelDeadlineError } from './structured-deadline';

describe('deadlineFor', () => {
  it('uses deadline_ms from arrival, capped at the maximum; absent or 0 means the maximum', () => {
    expect(deadlineFor(1_000, 40, 2_000)).toBe(1_040);
    expect(deadlineFor(1_000, 600_000, 2_000)).toBe(3_000);
    expect(deadlineFor(1_000, undefined, 2_000)).toBe(3_000);
    expect(deadlineFor(1_000, 0, 2_000)).toBe(3_000);
  });
});

describe('modelDeadlineError', () => {
  it('is a 504 timeout with the contract wording', () => {
    const error = modelDeadlineError();
    expect([error.code, error.spec.structuredCode, error.publicMessage]).toEqual([
      'timeout',
      'timeout',
      'deadline elapsed before the model responded',
    ]);
  });
});
