import { deadline, Deadline } from '../../common/async/abortable';
import { GatewayError } from '../../core/gateway.error';

/**
 * The lifetime of one provider_b turn (provider_b.md §9.5): one signal that aborts when the
 * client leaves (reason passed through unchanged, so the chat layer sees its own abort) or when
 * the turn deadline passes (reason: a `timeout` GatewayError). Everything a turn waits on —
 * token refresh, discovery, fetches, retry sleeps — listens to `signal`.
 */
export class ProviderBTurn {
  private readonly deadline: Deadline;

  constructor(
    private readonly clientSignal: AbortSignal,
    timeoutMs: number,
    deadlineAt?: number,
  ) {
    const turnDeadline = Math.min(timeoutMs > 0 ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY, deadlineAt ?? Number.POSITIVE_INFINITY);
    this.deadline = deadline(turnDeadline, () => new GatewayError('timeout', { detail: 'provider_b turn deadline passed' }), [clientSignal]);
  }

  get deadlineAt(): number {
    return this.deadline.deadlineAt;
  }

  get signal(): AbortSignal {
    return this.deadline.signal;
  }

  /** True when the client (not the deadline) ended the turn. */
  get clientAborted(): boolean {
    return this.clientSignal.aborted;
  }

  /** Stops the deadline timer; call once the turn is over. */
  dispose(): void {
    this.deadline.clear();
  }

  /**
   * What a failure means to the caller: the client's own abort reason when it left, the
   * deadline's `timeout`, a GatewayError as is, anything else (a transport error) `upstream`.
   */
  normalize(error: unknown): unknown {
    if (this.clientSignal.aborted) return this.clientSignal.reason ?? error;
    if (this.deadline.signal.aborted) return this.deadline.signal.reason;
    if (error instanceof GatewayError) return error;
    return new GatewayError('upstream', { detail: 'provider_b transport error', retryable: true, cause: error });
  }
}
