import { effectiveMemoryLimitBytes } from './process-metrics';

describe('effectiveMemoryLimitBytes', () => {
  const GiB = 1024 ** 3;

  it('is the container limit when one is set below the machine memory', () => {
    expect(effectiveMemoryLimitBytes(1 * GiB, 16 * GiB)).toBe(1 * GiB);
  });

  it('is the machine memory when the cgroup says "unlimited" (2^64), reports 0, or is larger', () => {
    expect(effectiveMemoryLimitBytes(2 ** 64, 16 * GiB)).toBe(16 * GiB);
    expect(effectiveMemoryLimitBytes(0, 16 * GiB)).toBe(16 * GiB);
    expect(effectiveMemoryLimitBytes(32 * GiB, 16 * GiB)).toBe(16 * GiB);
  });
});
