import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { QueueLabel, QueueResult } from '../metrics/metric-declarations';
import type { FairQueueObserver } from './fair-queue';

type RejectionReason = Parameters<NonNullable<FairQueueObserver['rejected']>>[0]['reason'];

/** A caller deadline reached while waiting is a timeout to the metrics (docs/design/behaviours.md §8). */
const REJECTION_RESULT: Record<RejectionReason, QueueResult> = {
  full: 'full',
  timeout: 'timeout',
  canceled: 'canceled',
  draining: 'draining',
  deadline: 'timeout',
};

/**
 * The metrics every FairQueue records under its `provider` label (docs/design/behaviours.md §8):
 * the wait histogram per result and the depth gauge after every change. `also` receives the
 * same notifications afterwards, for a queue that logs as well. One place, so the agent queues
 * and the provider_c process slots cannot drift apart in what they measure.
 */
export function queueMetricsObserver(
  metrics: Pick<GatewayMetrics, 'queueWaited' | 'queueDepthChanged'>,
  label: QueueLabel,
  also: FairQueueObserver = {},
): FairQueueObserver {
  return {
    waiting: (info) => {
      metrics.queueDepthChanged(label, info.depth);
      also.waiting?.(info);
    },
    acquired: (info) => {
      metrics.queueWaited(label, 'acquired', info.waitMs / 1000);
      metrics.queueDepthChanged(label, info.depth);
      also.acquired?.(info);
    },
    rejected: (info) => {
      metrics.queueWaited(label, REJECTION_RESULT[info.reason], info.waitMs / 1000);
      metrics.queueDepthChanged(label, info.depth);
      also.rejected?.(info);
    },
    released: (info) => {
      metrics.queueDepthChanged(label, info.depth);
      also.released?.(info);
    },
  };
}
