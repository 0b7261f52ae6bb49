import { Inject, Injectable } from '@nestjs/common';
import { sha256Hex } from '../common/hashing';
import { sanitizeIdentifier } from '../common/logging/request-log';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import type { EventLogger } from '../core/event-logger';
import { FairQueue, FairQueueObserver, QueueSlot } from './fair-queue';
import { queueLogObserver } from './queue-log-observer';
import { queueMetricsObserver } from './queue-metrics-observer';

export interface StructuredAdmission {
  readonly caller: string;
  readonly signal: AbortSignal;
  /** Epoch ms; reaching it while waiting is `timeout` 504, not `rate_limited`. */
  readonly deadlineAt: number;
  /** The caller's request_id as sent (sanitized here before logging). */
  readonly requestId: string;
  readonly logger: EventLogger;
}

/** Its slots and the STRUCTURED_* settings behind its bounds, named in its refusals. */
const STRUCTURED_WORDING = {
  slots: 'structured slots',
  settings: {
    maxActive: 'STRUCTURED_MAX_ACTIVE',
    maxActivePerKey: 'STRUCTURED_MAX_ACTIVE_PER_KEY',
    queueLimit: 'STRUCTURED_QUEUE_LIMIT',
    queueTimeout: 'STRUCTURED_QUEUE_TIMEOUT',
  },
};

/**
 * The structured queue (docs/design/behaviours.md §4.3): its own FairQueue with the STRUCTURED_*
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
    this.queue = new FairQueue({ maxActive, maxActivePerKey, queueLimit, queueTimeoutMs, wording: STRUCTURED_WORDING });
  }

  acquire(admission: StructuredAdmission): Promise<QueueSlot> {
    const keyValue = `caller:${admission.caller}`;
    return this.queue.acquire(keyValue, {
      signal: admission.signal,
      deadlineAt: admission.deadlineAt,
      sameKey: 'another request of the same caller',
      observer: this.observer(admission, sha256Hex(keyValue).slice(0, 16)),
    });
  }

  /** Metrics with provider="structured"; log lines carry key_mode and key_hash, never the caller. */
  private observer({ requestId, logger }: StructuredAdmission, keyHash: string): FairQueueObserver {
    const ids = {
      provider: 'structured',
      request_id: sanitizeIdentifier(requestId),
      key_mode: 'caller',
      key_hash: keyHash,
    };
    return queueMetricsObserver(this.metrics, 'structured', queueLogObserver(logger, ids));
  }
}
