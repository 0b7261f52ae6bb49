import { Injectable } from '@nestjs/common';

/**
 * Server availability (docs/design/decisions.md §6): serving, or draining after SIGTERM/SIGINT. Tracks
 * requests in flight so shutdown can wait until the gateway is idle (docs/design/decisions.md §6).
 */
@Injectable()
export class DrainService {
  private drainingSince: number | undefined;
  private inFlight = 0;
  private readonly idleWaiters = new Set<() => void>();

  get isDraining(): boolean {
    return this.drainingSince !== undefined;
  }

  get inFlightCount(): number {
    return this.inFlight;
  }

  startDraining(): void {
    this.drainingSince ??= Date.now();
  }

  /** Marks one request in flight; the returned function ends it (idempotent). */
  track(): () => void {
    this.inFlight++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.inFlight--;
      if (this.inFlight === 0) for (const wake of [...this.idleWaiters]) wake();
    };
  }

  /** Resolves `true` when nothing is in flight, or `false` after `timeoutMs`. */
  waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.idleWaiters.delete(wake);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.idleWaiters.delete(wake);
        resolve(false);
      }, timeoutMs);
      this.idleWaiters.add(wake);
    });
  }
}
