import * as os from 'node:os';
import { collectDefaultMetrics, Gauge, register } from 'prom-client';
import { METRIC_PREFIX, METRICS } from './metric-declarations';

/**
 * cgroup v1 reports "no limit" as a huge page-aligned number and Node returns 2^64 (or 0) for
 * it; anything at or above the machine's memory is no real limit either.
 */
export function effectiveMemoryLimitBytes(constrained: number, total: number): number {
  return constrained > 0 && constrained < total ? constrained : total;
}

/**
 * prom-client's default Node metrics (process CPU and memory, event-loop lag, GC, heap, handles)
 * under the gateway's own prefix, so every series of the gateway starts with `gateway_chat_api_`
 * (docs/endpoints.md "Process metrics"), plus the memory limit the process runs under, which
 * the memory alert divides by. Registered once per process on the shared registry: Jest boots
 * several gateways in one process and a second registration would throw.
 */
export function registerProcessMetrics(): void {
  if (register.getSingleMetric(METRICS.memoryLimit.name)) return;
  collectDefaultMetrics({ prefix: METRIC_PREFIX });
  new Gauge({
    name: METRICS.memoryLimit.name,
    help: METRICS.memoryLimit.help,
    collect() {
      this.set(effectiveMemoryLimitBytes(process.constrainedMemory?.() ?? 0, os.totalmem()));
    },
  });
}
