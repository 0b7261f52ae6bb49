import { Injectable } from '@nestjs/common';
import type { EventEmitter } from 'node:events';
import { timeoutOrNever } from '../async/timer-range';
import { BodyBudget } from './body-budget';

/**
 * Server availability (docs/design/decisions.md §6): serving, or draining after SIGTERM/SIGINT/SIGHUP. Tracks
 * requests in flight so shutdown can wait until the gateway is idle, and can reach those still in
 * flight at the drain deadline to end them (docs/deployment.md, "Draining on SIGTERM").
 */
@Injectable()
export class DrainService {
  private drainingSince: number | undefined;
  private deadlinePassed = false;
  /** The responses of the requests in flight: a set, so the drain deadline can reach each one. */
  private readonly inFlight = new Set<EventEmitter>();
  private readonly idleWaiters = new Set<() => void>();

  get isDraining(): boolean {
    return this.drainingSince !== undefined;
  }

  /**
   * The drain deadline (GATEWAY_DRAIN_TIMEOUT) passed: what was in flight is being ended, and a
   * request that arrives now is refused at once rather than started and cut at the exit.
   */
  get pastDeadline(): boolean {
    return this.deadlinePassed;
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** The responses of the requests in flight now (a copy: ending one changes the set). */
  inFlightResponses(): EventEmitter[] {
    return [...this.inFlight];
  }

  startDraining(): void {
    this.drainingSince ??= Date.now();
  }

  /** The drain deadline passed (draining since, if it was not yet). */
  passDeadline(): void {
    this.startDraining();
    this.deadlinePassed = true;
  }

  /**
   * Counts one request in flight until its response closes (once, whatever ends it). The
   * listener is a module function given the service through the response: no closure per request.
   */
  track(response: EventEmitter): void {
    this.inFlight.add(response);
    (response as TrackedResponse)[DRAIN] = this;
    response.once('close', requestClosed);
  }

  /** A tracked request's response closed. */
  ended(response: EventEmitter): void {
    this.inFlight.delete(response);
    if (this.inFlight.size === 0) for (const wake of [...this.idleWaiters]) wake();
  }

  /**
   * Resolves `true` once nothing has been in flight for `settleMs`, or `false` at `timeoutMs` (no
   * bound, for a wait longer than a timer can hold). A keep-alive client sends its next request on
   * the connection its last answer just ended: that request is counted and answered, not cut off by
   * the idle connections closing in the same moment.
   */
  async waitForQuiet(timeoutMs: number, settleMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!(await this.waitForIdle(Math.max(0, deadline - Date.now())))) return false;
      // Never past the deadline: the exit comes when the drain said it would.
      const settle = Math.max(0, Math.min(settleMs, deadline - Date.now()));
      await new Promise<void>((resolve) => timeoutOrNever(() => resolve(), settle));
      if (this.inFlight.size === 0) return true;
    }
  }

  /**
   * Resolves `true` when nothing is in flight, or `false` after `timeoutMs` (never, for a wait
   * longer than a timer holds: timer-range.ts).
   */
  waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.inFlight.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.idleWaiters.delete(wake);
        resolve(true);
      };
      const timer = timeoutOrNever(() => {
        this.idleWaiters.delete(wake);
        resolve(false);
      }, timeoutMs);
      this.idleWaiters.add(wake);
    });
  }
}

const DRAIN = Symbol('drain');
type TrackedResponse = EventEmitter & { [DRAIN]?: DrainService };

/**
 * The 'close' listener of a tracked response (`this` is the response; 'close' is emitted once,
 * whatever ended the request): also the one place its body's bytes are given back to the budget.
 */
function requestClosed(this: TrackedResponse): void {
  this[DRAIN]?.ended(this);
  BodyBudget.releaseHeldBy(this);
}
