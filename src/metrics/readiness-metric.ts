import { Gauge, register } from 'prom-client';
import type { DrainService } from '../common/lifecycle/drain.service';
import { METRICS } from './metric-declarations';

/**
 * `gateway_chat_api_ready`: 1 while serving, 0 from SIGTERM/SIGINT on, exactly what
 * `GET /health/ready` answers, read from the drain switch at every scrape. The readiness alert and
 * the dashboard use it. The newest app owns the series: tests boot several apps in one process,
 * and a stale gauge would report a closed app's state.
 */
export function registerReadinessGauge(drain: DrainService): Gauge {
  register.removeSingleMetric(METRICS.ready.name);
  return new Gauge({
    name: METRICS.ready.name,
    help: METRICS.ready.help,
    collect() {
      this.set(drain.isDraining ? 0 : 1);
    },
  });
}
