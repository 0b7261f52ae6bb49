import { sanitizeIdentifier } from '../../common/logging/request-log';
import type { EventLogger } from '../../core/event-logger';
import type { GatewayMetrics } from '../../metrics/gateway-metrics';
import type { FairQueueObserver, QueueSlot } from '../../queue/fair-queue';
import { FairQueue } from '../../queue/fair-queue';
import { queueLogObserver } from '../../queue/queue-log-observer';
import { queueMetricsObserver } from '../../queue/queue-metrics-observer';

/** The slots' name in the queue metrics and log lines, as the family declares it among its `queues` (provider-c.family.ts). */
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

/** Whose turn asks for a slot: its lines go to its own logger, under its request id. */
export interface SlotRequester {
  readonly signal: AbortSignal;
  readonly requestId: string;
  readonly logger: EventLogger;
  /** Epoch ms; reaching it while waiting ends the wait with `timeout` (structured deadline_ms). */
  readonly deadlineAt?: number;
}

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
 * `provider="provider_c_processes"`, in the metrics and in queue_* lines. Every turn takes a slot, so
 * only a turn that has to wait writes lines (`queue_wait`, then `queue_acquire` or its refusal); one
 * that gets its slot at once writes none, and no slot writes `queue_release` (the child's
 * `provider_c_process_exit` says when it ended).
 */
export class ProviderCProcessSlots {
  private readonly queue: FairQueue;

  constructor(
    options: ProcessSlotOptions,
    private readonly metrics: Pick<GatewayMetrics, 'queueWaited' | 'queueDepthChanged'>,
  ) {
    this.queue = new FairQueue({
      maxActive: options.maxProcesses,
      maxActivePerKey: Infinity,
      queueLimit: options.queueLimit,
      queueTimeoutMs: options.queueTimeoutMs,
      wording: PROCESS_SLOTS_WORDING,
    });
  }

  /** Waits for a slot; rejects with `queue_full`, `queue_timeout`, `timeout` (deadline) or the abort reason. */
  acquire(requester: SlotRequester): Promise<QueueSlot> {
    const { signal, deadlineAt } = requester;
    return this.queue.acquire(SLOT_KEY, { signal, deadlineAt, observer: this.observerFor(requester) });
  }

  /**
   * The metrics for every acquire, and log lines only for one that waits or is refused: its line
   * writer is made on its first line, so a slot taken at once costs no log work.
   */
  private observerFor({ logger, requestId }: SlotRequester): FairQueueObserver {
    let writer: FairQueueObserver | undefined;
    const lines = () =>
      (writer ??= queueLogObserver(logger, {
        provider: PROCESS_SLOTS_QUEUE,
        request_id: sanitizeIdentifier(requestId),
      }));
    return queueMetricsObserver(this.metrics, PROCESS_SLOTS_QUEUE, {
      waiting: (info) => lines().waiting?.(info),
      acquired: (info) => {
        if (info.queued) lines().acquired?.(info);
      },
      rejected: (info) => lines().rejected?.(info),
    });
  }
}
