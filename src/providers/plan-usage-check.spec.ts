import type { AppConfig } from '../config/app-config';
import { registerFamily } from '../core/family-registry';
import type { PlanReport } from '../core/plan-usage';
import type { PlanRead } from './shared/family-plan';
import { planLineForCheck } from './plan-usage-check';
import { partialFamily as testFamily } from '../../test/support/partial-family';

const reads: PlanRead[] = [];
const withReader = testFamily({
  id: 'plan_reader',
  readPlan: (read) => {
    reads.push(read);
    return Promise.resolve<PlanReport>({ windows: [{ name: 'week', usedRatio: 0.25 }], source: 'usage_endpoint' });
  },
});
const withoutReader = testFamily({ id: 'plan_none' });
const config = { proxy: {}, accounts: { paidUsage: 'plan_only' } } as unknown as AppConfig;

describe(planLineForCheck.name, () => {
  beforeAll(() => {
    registerFamily(withReader);
    registerFamily(withoutReader);
  });

  it("reads the login through its family's readPlan, with a proxy and a deadline", async () => {
    const line = await planLineForCheck(config, 'plan_reader', 'work', Date.now());
    expect(line).toMatch(/^plan: /);
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatchObject({ config, alias: 'work' });
    expect(reads[0].signal).toBeInstanceOf(AbortSignal);
    expect(reads[0].proxy).toBeDefined();
  });

  it('prints no plan line for a family without a usage endpoint', async () => {
    await expect(planLineForCheck(config, 'plan_none', 'work', Date.now())).resolves.toBeUndefined();
  });
});
