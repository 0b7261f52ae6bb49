import { Inject, Injectable } from '@nestjs/common';
import { sha256Hex } from '../common/auth/caller';
import { sanitizeIdentifier } from '../common/logging/sanitize';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import type { QueueResult } from '../metrics/metric-names';
import type { EventLogger } from '../providers/provider-adapter';
import { FairQueue, FairQueueObserver, QueueSlot } from '../queue/fair-queue';

export interface StructuredAdmission {
  readonly caller: string;
  readonly signal: AbortSignal;
  /** Epoch ms; reaching it while waiting is `timeout` 504, not `rate_limited`. */
  readonly deadlineAt: number;
  /** The caller's request_id as sent (sanitized here before logging). */
  readonly requestId: string;
  readonly logger: EventLogger;
}

const REJECTION_RESULT: Record<'full' | 'timeout' | 'canceled' | 'deadline', QueueResult> = {
  full: 'full',
  timeout: 'timeout',
  canceled: 'canceled',
  deadline: 'timeout',
};

/**
 * The structured queue (gateway-behaviours.md §4.3): its own FairQueue with the STRUCTURED_*
 * budget, keyed by caller, so chat traffic never takes structured slots and the reverse.
 * Only leaders and key-less requests enter it.
 */
@Injectable()
export class StructuredQueue {
  private readonly queue: FairQueue;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: GatewayMetrics,
  ) {
    const { maxActive, maxActivePerKey, queueLimit, queueTimeoutMs } = config.structured;
    this.queue = new FairQueue({ maxActive, maxActivePerKey, queueLimit, queueTimeoutMs });
  }

  acquire(admission: StructuredAdmission): Promise<QueueSlot> {
    const keyValue = `caller:${admission.caller}`;
    return this.queue.acquire(keyValue, {
      signal: admission.signal,
      deadlineAt: admission.deadlineAt,
      observer: this.observer(admission, sha256Hex(keyValue).slice(0, 16)),
    });
  }

  /** Metrics with provider="structured"; log lines carry key_mode and key_hash, never the caller. */
  private observer({ requestId, logger }: StructuredAdmission, keyHash: string): FairQueueObserver {
    const base = { provider: 'structured', request_id: sanitizeIdentifier(requestId), key_mode: 'caller', key_hash: keyHash };
    return {
      waiting: ({ position, depth }) => {
        this.metrics.queueDepthChanged('structured', depth);
        logger.info({ event: 'queue_wait', ...base, position }, 'queue_wait');
      },
      acquired: ({ waitMs, active, activeForKey, depth }) => {
        this.metrics.queueDepthChanged('structured', depth);
        this.metrics.queueWaited('structured', 'acquired', waitMs / 1000);
        logger.info({ event: 'queue_acquire', ...base, wait_ms: waitMs, active, active_key: activeForKey }, 'queue_acquire');
      },
      rejected: ({ reason, waitMs, depth }) => {
        this.metrics.queueDepthChanged('structured', depth);
        this.metrics.queueWaited('structured', REJECTION_RESULT[reason], waitMs / 1000);
        if (reason === 'full') logger.warn({ event: 'queue_full', ...base }, 'queue_full');
        else if (reason === 'canceled') logger.info({ event: 'queue_canceled', ...base, wait_ms: waitMs }, 'queue_canceled');
        else logger.warn({ event: 'queue_timeout', ...base, wait_ms: waitMs, deadline: reason === 'deadline' }, 'queue_timeout');
      },
      released: ({ runMs, depth }) => {
        this.metrics.queueDepthChanged('structured', depth);
        logger.info({ event: 'queue_release', ...base, run_ms: runMs }, 'queue_release');
      },
    };
  }
}
