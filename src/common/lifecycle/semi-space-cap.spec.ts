import { semiSpaceGrowthFactor } from './semi-space-cap';

const MIB = 1024 * 1024;

describe('semiSpaceGrowthFactor (docs/performance.md "Young generation")', () => {
  it('lets the semi-space double while the doubled size stays within the cap', () => {
    expect(semiSpaceGrowthFactor(1 * MIB, 16 * MIB)).toBe(2);
    expect(semiSpaceGrowthFactor(8 * MIB, 16 * MIB)).toBe(2);
  });

  it('holds it once a doubling would pass the cap, and when it is already past', () => {
    expect(semiSpaceGrowthFactor(16 * MIB, 16 * MIB)).toBe(1);
    expect(semiSpaceGrowthFactor(3 * MIB, 4 * MIB)).toBe(1);
    expect(semiSpaceGrowthFactor(32 * MIB, 16 * MIB)).toBe(1);
  });
});
