import { errorSpec, formatWait } from '../core/error-codes';
import { GatewayError } from '../core/gateway.error';

/**
 * The bound that kept a request from its slot: its key's per-key cap (another request of the same
 * key holds the key's slots), the queue's global cap (every slot is busy), or the waiter list's
 * limit (no room to wait). Logged as `blocked_by`.
 */
export type QueueBound = 'key' | 'global' | 'queue_limit';

/** How one queue's refusals name it: what its slots are and the setting behind each bound. */
export interface QueueWording {
  /** Its slots, plural, as a client reads them (`provider_b slots`, `structured slots`). */
  readonly slots: string;
  readonly settings: {
    readonly maxActive: string;
    /** Absent for a queue without a per-key cap. */
    readonly maxActivePerKey?: string;
    readonly queueLimit: string;
    readonly queueTimeout: string;
  };
}

/** The values of the bounds, as the queue was built with them. */
export interface QueueBoundValues {
  readonly maxActive: number;
  readonly maxActivePerKey: number;
  readonly queueLimit: number;
  readonly queueTimeoutMs: number;
}

export interface Refusal {
  readonly code: 'queue_full' | 'queue_timeout';
  /** What held the request back from a slot: its key at its cap, or every slot busy. */
  readonly waitingFor: 'key' | 'global';
  /** The client's words for whoever holds the key's slots (`another turn of the same chat`). */
  readonly sameKey: string;
}

/** The bound a refusal names in its log line: the list's limit for `queue_full`, else what it waited for. */
export function refusalBound({ code, waitingFor }: Pick<Refusal, 'code' | 'waitingFor'>): QueueBound {
  return code === 'queue_full' ? 'queue_limit' : waitingFor;
}

/** The setting behind a bound. */
export function boundSetting(bound: QueueBound, wording: QueueWording): string {
  const { settings } = wording;
  if (bound === 'queue_limit') return settings.queueLimit;
  if (bound === 'global') return settings.maxActive;
  return settings.maxActivePerKey ?? 'the per-key cap';
}

/**
 * A queue's 429: what refused the request, which setting is behind it and what to do. When the
 * request's own key holds the slots (one chat's earlier turn still running, the usual case for a
 * single user), retrying in a few seconds only meets the same turn: the message says to retry once
 * it has ended instead. The JSON shape, code and Retry-After stay the table's.
 */
export function queueRefusal(refusal: Refusal, wording: QueueWording, values: QueueBoundValues): GatewayError {
  const { code, waitingFor, sameKey } = refusal;
  const { settings } = wording;
  const perKey = boundSetting('key', wording);
  const what =
    code === 'queue_timeout'
      ? `waited ${durationSetting(values.queueTimeoutMs)} (${settings.queueTimeout}) for a slot`
      : `the waiting list is full (${settings.queueLimit}=${values.queueLimit})`;
  const longer = code === 'queue_timeout' ? settings.queueTimeout : settings.queueLimit;
  const why =
    waitingFor === 'key'
      ? `${sameKey} is still running (${perKey}=${values.maxActivePerKey}); retry once it has ended, or raise ${longer} to wait for it, or ${perKey} to run them side by side`
      : `all ${wording.slots} are busy (${settings.maxActive}=${values.maxActive}); retry in ${formatWait(errorSpec(code).retryAfterSeconds ?? 5)}, or raise ${settings.maxActive} or ${longer}`;
  return new GatewayError(code, { publicMessage: `${what}: ${why}` });
}

/** A duration as the settings take it (`300ms`, `90s`, `5m`, `1h`). */
function durationSetting(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
