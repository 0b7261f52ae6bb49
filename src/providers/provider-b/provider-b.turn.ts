import { GatewayError } from '../../core/gateway.error';

/**
 * The lifetime of one provider_b turn (provider_b.md §9.5): one signal that aborts when the
 * client leaves (reason passed through unchanged, so the chat layer sees its own abort) or when
 * the turn deadline passes (reason: a `timeout` GatewayError). Everything a turn waits on —
 * token refresh, discovery, fetches, retry sleeps — listens to `signal`.
 */
export class ProviderBTurn {
  readonly deadlineAt: number;
  private readonly controller = new AbortController();
  private readonly timer?: NodeJS.Timeout;
  private readonly onClientAbort = () => this.controller.abort(this.clientSignal.reason);

  constructor(
    private readonly clientSignal: AbortSignal,
    timeoutMs: number,
    deadlineAt?: number,
  ) {
    const start = Date.now();
    this.deadlineAt = Math.min(timeoutMs > 0 ? start + timeoutMs : Number.POSITIVE_INFINITY, deadlineAt ?? Number.POSITIVE_INFINITY);
    if (clientSignal.aborted) this.onClientAbort();
    else clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
    if (Number.isFinite(this.deadlineAt)) {
      this.timer = setTimeout(
        () => this.controller.abort(new GatewayError('timeout', { detail: 'provider_b turn deadline passed' })),
        Math.max(0, this.deadlineAt - start),
      );
      // The open upstream socket keeps the process alive while the turn runs; the timer alone must not.
      this.timer.unref();
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True when the client (not the deadline) ended the turn. */
  get clientAborted(): boolean {
    return this.clientSignal.aborted;
  }

  /** Stops the deadline timer and unhooks from the client signal; call once the turn is over. */
  dispose(): void {
    clearTimeout(this.timer);
    this.clientSignal.removeEventListener('abort', this.onClientAbort);
  }

  /**
   * What a failure means to the caller: the client's own abort reason when it left, the
   * deadline's `timeout`, a GatewayError as is, anything else (a transport error) `upstream`.
   */
  normalize(error: unknown): unknown {
    if (this.clientSignal.aborted) return this.clientSignal.reason ?? error;
    if (this.controller.signal.aborted) return this.controller.signal.reason;
    if (error instanceof GatewayError) return error;
    return new GatewayError('upstream', { detail: 'provider_b transport error', retryable: true, cause: error });
  }
}
