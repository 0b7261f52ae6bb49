import { planAt, spentUntilOf } from './plan-usage';

const NOW = Date.parse('2026-11-29T03:00:00Z');
const MINUTE = 60_000;

describe(planAt.name, () => {
  const spent = {
    windows: [
      { name: 'primary', usedRatio: 1, windowSeconds: 18_000, resetsAt: NOW + 30 * MINUTE },
      { name: 'secondary', usedRatio: 0.4, resetsAt: NOW + 90 * MINUTE },
      { name: 'weekly', usedRatio: 0.2 },
    ],
    paid: { kind: 'credits' as const, available: true, inUse: true },
    planSpent: true,
    spentUntil: NOW + 30 * MINUTE,
    source: 'turn' as const,
  };

  it('reads a report as it was while its resets are ahead, and says when that changes', () => {
    expect(planAt(spent, NOW)).toEqual({
      windows: spent.windows,
      paid: spent.paid,
      planSpent: true,
      changesAt: NOW + 30 * MINUTE,
    });
  });

  it('past a reset: that window is a fresh one, and the spent state and paid usage in use are over', () => {
    const reading = planAt(spent, NOW + 31 * MINUTE);
    expect(reading.windows).toEqual([
      { name: 'primary', usedRatio: 0, windowSeconds: 18_000, resetsAt: NOW + 30 * MINUTE },
      spent.windows[1],
      spent.windows[2],
    ]);
    expect(reading).toMatchObject({
      planSpent: false,
      paid: { kind: 'credits', available: true, inUse: false },
      changesAt: NOW + 90 * MINUTE,
    });
    expect(planAt(spent, NOW + 91 * MINUTE).changesAt).toBeUndefined();
  });

  it('a spent state the report gave no end for holds until the next report', () => {
    const { spentUntil: _, ...untimed } = spent;
    expect(planAt({ ...untimed, windows: [] }, NOW + 1000 * MINUTE)).toMatchObject({
      planSpent: true,
      paid: { inUse: true },
    });
    // A window at 100 % with no reset given stays spent as well.
    expect(planAt({ windows: [{ name: 'daily', usedRatio: 1 }], source: 'turn' }, NOW).planSpent).toBe(true);
  });

  it('a window of one model spends that model, not the plan', () => {
    const report = {
      windows: [{ name: 'pro', model: 'pro', usedRatio: 1, resetsAt: NOW + MINUTE }],
      source: 'turn' as const,
    };
    expect(planAt(report, NOW).planSpent).toBe(false);
  });
});

describe(spentUntilOf.name, () => {
  it('is the latest reset of the spent windows, unknown when one of them gave none', () => {
    expect(spentUntilOf([])).toBeUndefined();
    expect(
      spentUntilOf([
        { name: 'a', resetsAt: NOW },
        { name: 'b', resetsAt: NOW + MINUTE },
      ]),
    ).toBe(NOW + MINUTE);
    expect(spentUntilOf([{ name: 'a', resetsAt: NOW }, { name: 'b' }])).toBeUndefined();
  });
});
