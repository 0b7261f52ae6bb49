import { Counter, Gauge, register } from 'prom-client';
import type { BodyBudget } from '../common/lifecycle/body-budget';
import { BODY_ROUTES } from '../common/lifecycle/body-budget';
import { METRICS } from './metric-declarations';

/**
 * The body budget (GATEWAY_MAX_BODY_BYTES_IN_FLIGHT, docs/deployment.md "Memory budget") as three
 * series read from it at each scrape, so a request pays nothing for them: the bytes held now, the
 * limit they are held against, and the bodies refused so far by route (both routes at 0 from
 * start-up). The newest app owns the series: tests boot several apps in one process.
 */
export function registerBodyBudgetMetrics(budget: BodyBudget): void {
  const { bodyBudgetHeld, bodyBudgetLimit, bodyBudgetRefusals } = METRICS;
  for (const { name } of [bodyBudgetHeld, bodyBudgetLimit, bodyBudgetRefusals]) register.removeSingleMetric(name);
  new Gauge({
    name: bodyBudgetHeld.name,
    help: bodyBudgetHeld.help,
    collect() {
      this.set(budget.heldBytes);
    },
  });
  new Gauge({
    name: bodyBudgetLimit.name,
    help: bodyBudgetLimit.help,
    collect() {
      this.set(budget.limitBytes);
    },
  });
  new Counter({
    name: bodyBudgetRefusals.name,
    help: bodyBudgetRefusals.help,
    labelNames: [...bodyBudgetRefusals.labelNames],
    collect() {
      // The budget keeps the count; the counter shows it as it is now.
      this.reset();
      for (const route of BODY_ROUTES) this.inc({ route }, budget.refusals(route));
    },
  });
}
