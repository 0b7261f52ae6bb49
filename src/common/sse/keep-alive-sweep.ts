import { Inject, Injectable, OnModuleDestroy, Optional } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import { isNever } from '../async/timer-range';

/** The longest silence an open stream is left in: well inside the 60 s idle limit of common proxies. */
export const KEEP_ALIVE_INTERVAL_MS = 15_000;

/** How often the open streams are looked at: a stream quiet for a whole period is at most two periods silent. */
export const KEEP_ALIVE_SWEEP_MS = KEEP_ALIVE_INTERVAL_MS / 2;

/** What the sweep asks of an open stream. */
export interface KeepAliveStream {
  /**
   * Called once per sweep: writes a comment when nothing went out since the last call, and ends
   * the stream when its client has taken nothing for `stalledRoundsLimit` rounds.
   */
  sweep(stalledRoundsLimit: number): void;
}

/**
 * The keep-alive of every open SSE stream of one gateway, on one timer. A stream only raises a
 * flag when it writes, instead of re-arming a timer per chunk (a clock read and a timer-list move
 * each) and holding one for its whole life. The timer starts with the first open stream, stops at
 * the first round that finds none, and is unref'd: it never keeps the process up by itself.
 */
@Injectable()
export class KeepAliveSweep implements OnModuleDestroy {
  private readonly streams = new Set<KeepAliveStream>();
  private timer?: NodeJS.Timeout;
  /**
   * Rounds a client may take nothing of a stream waiting to write before it counts as gone: the
   * stream idle bound (GATEWAY_STREAM_IDLE_TIMEOUT), which bounds silence on the client's side as
   * on the upstream's; none when that is 0, longer than a timer holds (it bounds nothing upstream
   * either: timer-range.ts), or no configuration is given.
   */
  private readonly stalledRoundsLimit: number;
  /** Rounds run on the timer; false once `sweepOnlyWhenCalled` handed them to its caller. */
  private timed = true;

  constructor(@Optional() @Inject(APP_CONFIG) config?: Pick<AppConfig, 'server'>) {
    const idleMs = config?.server.streamIdleTimeoutMs ?? 0;
    this.stalledRoundsLimit = idleMs > 0 && !isNever(idleMs) ? Math.ceil(idleMs / KEEP_ALIVE_SWEEP_MS) : Infinity;
  }

  /** The streams open now. */
  get size(): number {
    return this.streams.size;
  }

  add(stream: KeepAliveStream): void {
    this.streams.add(stream);
    if (this.timed) this.timer ??= setInterval(sweepAll, KEEP_ALIVE_SWEEP_MS, this).unref();
  }

  /**
   * From now on a round runs only when `sweep()` is called, never on the timer: for a caller that
   * decides when rounds happen (an e2e spec sees the round it asks for, without waiting 7.5 s).
   */
  sweepOnlyWhenCalled(): void {
    this.timed = false;
    this.stop();
  }

  delete(stream: KeepAliveStream): void {
    this.streams.delete(stream);
  }

  /** One round: every open stream writes its comment if it was quiet; no stream left stops the timer. */
  sweep(): void {
    if (this.streams.size === 0) {
      this.stop();
      return;
    }
    for (const stream of this.streams) stream.sweep(this.stalledRoundsLimit);
  }

  onModuleDestroy(): void {
    this.stop();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

// The timer's callback is a module function given the sweep: no closure.
function sweepAll(sweep: KeepAliveSweep): void {
  sweep.sweep();
}
