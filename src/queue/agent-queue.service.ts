import { Inject, Injectable } from '@nestjs/common';
import { sanitizeIdentifier } from '../common/logging/request-log';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import type { EventLogger } from '../core/event-logger';
import { familyIds } from '../core/family-registry';
import type { ProviderId } from '../core/provider-id';
import { abortedWaitReason, FairQueue, FairQueueObserver, QueueSlot } from './fair-queue';
import { queueLogObserver } from './queue-log-observer';
import { queueMetricsObserver } from './queue-metrics-observer';
import type { QueueKey } from './chat-identity';

export interface AdmitParams {
  readonly provider: ProviderId;
  /** docs/design/behaviours.md §3.2; only tool turns wait for a slot. */
  readonly toolTurn: boolean;
  readonly key: QueueKey;
  /** Aborted when the client leaves; a waiter then leaves the list at once. */
  readonly signal: AbortSignal;
  readonly logger: EventLogger;
  readonly requestId: string;
}

/** The settings behind the agent queues' bounds, named in their refusals. */
const AGENT_QUEUE_SETTINGS = {
  maxActive: 'PRIMARY_AGENT_MAX_ACTIVE',
  maxActivePerKey: 'PRIMARY_AGENT_MAX_ACTIVE_PER_KEY',
  queueLimit: 'PRIMARY_AGENT_QUEUE_LIMIT',
  queueTimeout: 'PRIMARY_AGENT_QUEUE_TIMEOUT',
};

/**
 * Who holds a key's slots, in a client's words, by the key's logged mode: in the default `chat`
 * mode that is the same chat's earlier turn. Other modes name the mode, so the client can tell
 * what "the same key" means there (`global`, `header:x-team`).
 */
function sameKeyWords(mode: string): string {
  if (mode.startsWith('chat')) return 'another turn of the same chat';
  if (mode === 'caller') return 'another turn of the same caller';
  return `another turn with the same queue key (${mode})`;
}

/** Held by requests that never queue (plain chats, or the queue switched off). */
const BYPASS_SLOT: QueueSlot = { release: () => undefined };

/**
 * The agent queues of docs/design/behaviours.md §4.1: one FairQueue per upstream family, so
 * saturating one family never delays another. Tool turns wait for a slot; every other chat
 * request bypasses at once. Logs carry only `key_mode` and `key_hash`, never the key value.
 */
@Injectable()
export class AgentQueueService {
  private readonly queues = new Map<ProviderId, FairQueue>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: GatewayMetrics,
  ) {
    const { maxActive, maxActivePerKey, queueLimit, queueTimeoutMs } = config.agentQueue;
    for (const family of familyIds()) {
      const wording = { slots: `${family} slots`, settings: AGENT_QUEUE_SETTINGS };
      this.queues.set(family, new FairQueue({ maxActive, maxActivePerKey, queueLimit, queueTimeoutMs, wording }));
      this.metrics.queueDepthChanged(family, 0);
    }
  }

  /**
   * Waits for a slot (tool turns) or returns a no-op slot at once, not wrapped in a promise (metric
   * result `bypassed`). Rejects with GatewayError `queue_full` / `queue_timeout`, or with the
   * signal's reason when the client leaves while waiting (metric result `canceled`) or the drain
   * deadline ends the wait (`draining`). The slot's
   * `release()` is idempotent and must be called when the turn ends.
   */
  admit(params: AdmitParams): QueueSlot | Promise<QueueSlot> {
    if (!params.toolTurn || !this.config.agentQueue.enabled) {
      this.metrics.queueWaited(params.provider, 'bypassed', 0);
      return BYPASS_SLOT;
    }
    return this.acquire(params);
  }

  private async acquire(params: AdmitParams): Promise<QueueSlot> {
    const { provider, signal } = params;
    if (signal.aborted) {
      this.metrics.queueWaited(provider, abortedWaitReason(signal.reason), 0);
      throw signal.reason;
    }
    const queue = this.queues.get(provider)!;
    return queue.acquire(params.key.value, {
      signal,
      observer: this.observerFor(params),
      sameKey: sameKeyWords(params.key.mode),
    });
  }

  /** Metrics and the queue_* log records for one acquire (docs/design/behaviours.md §4.2, §8). */
  private observerFor({ provider, key, logger, requestId }: AdmitParams): FairQueueObserver {
    const ids = { provider, request_id: sanitizeIdentifier(requestId), key_mode: key.mode, key_hash: key.hash };
    return queueMetricsObserver(this.metrics, provider, queueLogObserver(logger, ids));
  }
}
