import { performance } from 'node:perf_hooks';
import { ClientDisconnectedError } from '../core/gateway.error';

/** Milliseconds from any fixed origin; must never go backwards. */
export type Clock = () => number;
export const monotonicClock: Clock = () => performance.now();

/**
 * Injection token of the store's clock in the app: a `{ now(): number }` object (monotonic ms),
 * one per app, so an e2e spec can move a running gateway's TTLs forward instead of sleeping.
 */
export const IDEMPOTENCY_CLOCK = Symbol('IDEMPOTENCY_CLOCK');

export interface IdempotencyStoreOptions {
  /** Live bindings (in flight, or stored and unexpired) held at once. */
  readonly capacity: number;
  /** How long a stored value replays, counted from the moment it is stored. */
  readonly ttlMs: number;
}

/**
 * An in-flight binding: the one upstream call every participant (the leader and its joiners)
 * waits for. `signal` aborts when every participant has left, so the call stops costing.
 */
export interface InFlightBinding<T> {
  readonly replayKey: string;
  readonly fingerprint: string;
  readonly outcome: Promise<T>;
  readonly signal: AbortSignal;
}

export type Admission<T> =
  | { readonly kind: 'lead'; readonly binding: InFlightBinding<T> }
  | { readonly kind: 'join'; readonly binding: InFlightBinding<T> }
  | { readonly kind: 'replay'; readonly value: T }
  | { readonly kind: 'conflict' }
  /** The store is full of live bindings; retry after this many seconds. */
  | { readonly kind: 'capacity'; readonly retryAfterSeconds: number };

interface Flight<T> extends InFlightBinding<T> {
  state: 'in_flight';
  participants: number;
  readonly controller: AbortController;
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
}

interface Stored<T> {
  state: 'stored';
  readonly fingerprint: string;
  readonly value: T;
  readonly expiresAt: number;
}

/** Retry-After when every live binding is in flight (their end is unknown). */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 5;

/**
 * The structured idempotency store (docs/design/behaviours.md §6.6): memory-only,
 * process-local, bounded. It never evicts a live binding; failures are never stored; expired
 * bindings are purged on the next access. Hand-written because the state machine (joiners,
 * conflicts, capacity answers, abandonment) is the contract's own; caches like lru-cache would
 * evict live bindings.
 */
export class IdempotencyStore<T> {
  private readonly bindings = new Map<string, Flight<T> | Stored<T>>();
  /**
   * Stored keys in storing order. The TTL is constant and the clock monotonic, so this is also
   * expiry order: purging and "earliest expiry" only look at the front.
   */
  private readonly storedOrder = new Map<string, number>();

  constructor(
    private readonly options: IdempotencyStoreOptions,
    private readonly clock: Clock = monotonicClock,
  ) {}

  /** Live bindings (after purging expired ones). */
  get size(): number {
    this.purgeExpired();
    return this.bindings.size;
  }

  /** One request with a non-empty idempotency key arrives. */
  admit(replayKey: string, fingerprint: string): Admission<T> {
    this.purgeExpired();
    const existing = this.bindings.get(replayKey);
    if (existing?.state === 'stored') {
      return existing.fingerprint === fingerprint ? { kind: 'replay', value: existing.value } : { kind: 'conflict' };
    }
    if (existing?.state === 'in_flight') {
      if (existing.fingerprint !== fingerprint) return { kind: 'conflict' };
      existing.participants++;
      return { kind: 'join', binding: existing };
    }
    if (this.bindings.size >= this.options.capacity)
      return { kind: 'capacity', retryAfterSeconds: this.retryAfterSeconds() };
    const flight = newFlight<T>(replayKey, fingerprint);
    this.bindings.set(replayKey, flight);
    return { kind: 'lead', binding: flight };
  }

  /** The leader's call succeeded: every participant gets `value`, and it replays for the TTL. */
  succeed(binding: InFlightBinding<T>, value: T): void {
    const flight = binding as Flight<T>;
    flight.resolve(value);
    if (this.bindings.get(binding.replayKey) !== flight) return;
    if (this.options.ttlMs <= 0) {
      this.bindings.delete(binding.replayKey);
      return;
    }
    const expiresAt = this.clock() + this.options.ttlMs;
    this.bindings.set(binding.replayKey, { state: 'stored', fingerprint: flight.fingerprint, value, expiresAt });
    this.storedOrder.set(binding.replayKey, expiresAt);
  }

  /** The leader's call failed: every participant gets `error`; nothing is stored, so a retry re-runs. */
  fail(binding: InFlightBinding<T>, error: unknown): void {
    const flight = binding as Flight<T>;
    flight.reject(error);
    if (this.bindings.get(binding.replayKey) === flight) this.bindings.delete(binding.replayKey);
  }

  /**
   * A participant stopped waiting (client gone, or its own deadline). When the last one leaves
   * before the outcome, the upstream call is aborted with `reason` and the binding removed: the
   * drain deadline's `draining` error ends the call for the drain, as it ended that participant.
   */
  leave(binding: InFlightBinding<T>, reason: unknown = new ClientDisconnectedError()): void {
    const flight = binding as Flight<T>;
    if (this.bindings.get(binding.replayKey) !== flight) return;
    flight.participants = Math.max(0, flight.participants - 1);
    if (flight.participants > 0) return;
    this.bindings.delete(binding.replayKey);
    flight.reject(reason);
    flight.controller.abort(reason);
  }

  private purgeExpired(): void {
    const now = this.clock();
    for (const [key, expiresAt] of this.storedOrder) {
      if (expiresAt > now) return;
      this.storedOrder.delete(key);
      if (this.bindings.get(key)?.state === 'stored') this.bindings.delete(key);
    }
  }

  /** Whole seconds until the earliest stored binding expires; 5 when all are in flight. */
  private retryAfterSeconds(): number {
    const first = this.storedOrder.values().next();
    if (first.done) return IN_FLIGHT_RETRY_AFTER_SECONDS;
    return Math.max(1, Math.ceil((first.value - this.clock()) / 1000));
  }
}

function newFlight<T>(replayKey: string, fingerprint: string): Flight<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const outcome = new Promise<T>((onValue, onError) => {
    resolve = onValue;
    reject = onError;
  });
  // Participants attach their own handlers; an abandoned flight must not be an unhandled rejection.
  outcome.catch(() => undefined);
  const controller = new AbortController();
  return {
    state: 'in_flight',
    replayKey,
    fingerprint,
    outcome,
    signal: controller.signal,
    participants: 1,
    controller,
    resolve,
    reject,
  };
}
