import type { GatewayMetrics } from '../../metrics/gateway-metrics';
import type { FairQueueObserver, QueueSlot } from '../../queue/fair-queue';
import { FairQueue } from '../../queue/fair-queue';
import { queueMetricsObserver } from '../../queue/queue-metrics-observer';

/** The slots' name in the queue metrics, as the family declares it among its `queues` (provider-c.family.ts). */
const PROCESS_SLOTS_QUEUE = 'provider_c_processes';

/** All requests share one key: the cap is global, FIFO across requests (docs/upstream/provider-c.md §2). */
const SLOT_KEY = 'provider_c';

/** The settings behind the slots' bounds, named in their refusals; one shared key, so no per-key cap. */
const PROCESS_SLOTS_WORDING = {
  slots: 'provider_c process slots',
  settings: {
    maxActive: 'PROVIDER_C_MAX_PROCESSES',
    queueLimit: 'PRIMARY_AGENT_QUEUE_LIMIT',
    queueTimeout: 'PRIMARY_AGENT_QUEUE_TIMEOUT',
  },
};

export interface ProcessSlotOptions {
  /** PROVIDER_C_MAX_PROCESSES. */
  readonly maxProcesses: number;
  /** PRIMARY_AGENT_QUEUE_LIMIT: waiters beyond it get 429 `queue_full` at once. */
  readonly queueLimit: number;
  /** PRIMARY_AGENT_QUEUE_TIMEOUT; 0 = wait until the client leaves. */
  readonly queueTimeoutMs: number;
}

/**
 * provider_c process slots (docs/upstream/provider-c.md §2, docs/design/behaviours.md §4.4): at most
 * `maxProcesses` children at once across all requests, taken after the family queue and before
 * spawning, held across retries, released after the last child was reaped. Full or timed out →
 * 429 with `Retry-After: 5` (`queue_full` / `queue_timeout`). Waits are recorded under
 * `provider="provider_c_processes"`.
 */
export class ProviderCProcessSlots {
  private readonly queue: FairQueue;
  private readonly observer: FairQueueObserver;

  constructor(options: ProcessSlotOptions, metrics: Pick<GatewayMetrics, 'queueWaited' | 'queueDepthChanged'>) {
    this.queue = new FairQueue({
      maxActive: options.maxProcesses,
      maxActivePerKey: Infinity,
      queueLimit: options.queueLimit,
      queueTimeoutMs: options.queueTimeoutMs,
      wording: PROCESS_SLOTS_WORDING,
    });
    this.observer = queueMetricsObserver(metrics, PROCESS_SLOTS_QUEUE);
  }

  /** Waits for a slot; rejects with `queue_full`, `queue_timeout`, `timeout` (deadline) or the abort reason. */
  acquire(signal: AbortSignal, deadlineAt?: number): Promise<QueueSlot> {
    return this.queue.acquire(SLOT_KEY, { signal, deadlineAt, observer: this.observer });
  }
}
