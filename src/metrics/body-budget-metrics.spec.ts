import type { ServerResponse } from 'node:http';
import { register } from 'prom-client';
import { BodyBudget } from '../common/lifecycle/body-budget';
import { registerBodyBudgetMetrics } from './body-budget-metrics';
import { METRICS } from './metric-declarations';

/** The series of one metric as a scrape reads it: label values joined by `,` (empty for none) to value. */
async function scraped(name: string): Promise<Record<string, number>> {
  const { values } = await register.getSingleMetric(name)!.get();
  return Object.fromEntries(values.map(({ labels, value }) => [Object.values(labels).join(','), value]));
}

describe(registerBodyBudgetMetrics.name, () => {
  afterEach(() => register.clear());

  it('shows the bytes held now and the limit at each scrape', async () => {
    const budget = new BodyBudget(1000);
    registerBodyBudgetMetrics(budget);
    const response = { closed: false } as ServerResponse;
    expect(budget.holdUpTo(response, 300)).toBe(true);
    expect(await scraped(METRICS.bodyBudgetHeld.name)).toEqual({ '': 300 });
    expect(await scraped(METRICS.bodyBudgetLimit.name)).toEqual({ '': 1000 });
    BodyBudget.releaseHeldBy(response);
    expect(await scraped(METRICS.bodyBudgetHeld.name)).toEqual({ '': 0 });
  });

  it('shows the refusals so far by route, both routes from start-up, the same however often it is scraped', async () => {
    const budget = new BodyBudget(1000);
    registerBodyBudgetMetrics(budget);
    expect(await scraped(METRICS.bodyBudgetRefusals.name)).toEqual({ chat: 0, structured: 0 });
    budget.countRefusal('chat');
    budget.countRefusal('chat');
    budget.countRefusal('structured');
    expect(await scraped(METRICS.bodyBudgetRefusals.name)).toEqual({ chat: 2, structured: 1 });
    expect(await scraped(METRICS.bodyBudgetRefusals.name)).toEqual({ chat: 2, structured: 1 });
  });
});
