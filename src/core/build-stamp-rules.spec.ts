import { buildDateProblem, commitProblem, utcTimestamp } from './build-stamp-rules';

describe(utcTimestamp.name, () => {
  it('formats UTC without milliseconds', () => {
    expect(utcTimestamp(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)))).toBe('2026-01-02T03:04:05Z');
  });
});

describe(commitProblem.name, () => {
  it('takes the full 40 hexadecimal characters, in either case, and nothing shorter', () => {
    expect(commitProblem('ABCDEF0123456789abcdef0123456789ABCDEF01')).toBeUndefined();
    expect(commitProblem('abc1234')).toBe('must be a full 40-character hexadecimal commit id');
  });
});

describe(buildDateProblem.name, () => {
  it('takes a UTC second that exists, and says which rule another breaks', () => {
    expect(buildDateProblem('2026-02-28T23:59:59Z')).toBeUndefined();
    expect(buildDateProblem('2026-02-28 23:59:59')).toBe('must be a UTC timestamp YYYY-MM-DDTHH:MM:SSZ');
    expect(buildDateProblem('2026-02-30T00:00:00Z')).toMatch(/that exists/);
    expect(buildDateProblem('2026-02-28T24:00:00Z')).toMatch(/that exists/);
  });
});
