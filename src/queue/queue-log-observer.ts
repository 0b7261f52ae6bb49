import type { EventLogger } from '../core/event-logger';
import type { FairQueueObserver } from './fair-queue';

/** What every queue log line carries (never the key value, caller, session id or IP). */
export interface QueueLogIds {
  readonly provider: string;
  /** Already sanitized. */
  readonly request_id: string;
  /** Absent for a queue whose requests all share one key (provider_c's process slots). */
  readonly key_mode?: string;
  readonly key_hash?: string;
}

/**
 * The queue_* records of docs/design/behaviours.md §4.2, one line each, for any FairQueue (agent
 * queues, the structured queue and provider_c's process slots), all at info: a refusal is told
 * at warn by the request's own line (`chat_completion`, `structured_failure`), whose message names
 * the same setting (docs/troubleshooting.md "One line per failure"). `logger` is the acquiring
 * request's own logger, so a waiter granted by another request's release or ended from its
 * client's 'close' event is still logged under its own request id.
 */
export function queueLogObserver(logger: EventLogger, ids: QueueLogIds): FairQueueObserver {
  const log = (event: string, fields: Record<string, unknown> = {}) => logger.info({ event, ...ids, ...fields }, event);
  return {
    waiting: ({ position }) => log('queue_wait', { position }),
    // Without a key of its own, a request's key slots are all the slots: `active` says it.
    acquired: ({ waitMs, active, activeForKey }) =>
      log('queue_acquire', {
        wait_ms: waitMs,
        active,
        ...(ids.key_mode === undefined ? {} : { active_key: activeForKey }),
      }),
    rejected: ({ reason, waitMs, blockedBy, setting }) => {
      // The bound that held the request back, and the setting behind it.
      const bound = { blocked_by: blockedBy, setting };
      if (reason === 'full') log('queue_full', bound);
      // The route records the request itself (499, or the drain's 503); this line says it left the list.
      else if (reason === 'canceled') log('queue_canceled', { wait_ms: waitMs });
      else if (reason === 'draining') log('queue_draining', { wait_ms: waitMs });
      else
        log('queue_timeout', {
          wait_ms: waitMs,
          ...bound,
          ...(reason === 'deadline' ? { deadline: true } : {}),
        });
    },
    released: ({ runMs }) => log('queue_release', { run_ms: runMs }),
  };
}
