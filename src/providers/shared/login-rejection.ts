import type { LoginTokenSource } from '../../accounts/login-token-cache';
import type { EventLogger } from '../../core/event-logger';
import { GatewayError } from '../../core/gateway.error';
import type { ProviderId } from '../../core/provider-id';

/** The upstream refused the login's token (401; a 403 is a refusal of the login, not of its token). */
export function isUpstreamAuthRejection(error: unknown): error is GatewayError {
  return error instanceof GatewayError && error.code === 'auth' && error.upstreamStatus === 401;
}

/**
 * A turn's token of a CLI login file, with the one forced refresh a turn gets after the upstream
 * refused the token (docs/accounts.md): a family's `request` takes its token here, and its
 * `reopenAfter` asks `reopenAfter` here, so the next attempt opens at once on the file's newer
 * token or a refreshed one, outside the retry budget. A second refusal in the turn is final.
 */
export class LoginTokenTurn<C extends { readonly accessToken: string }> {
  private retried = false;
  /** The token the upstream refused: the next `token()` replaces it. */
  private refused?: C;
  private last?: C;

  constructor(
    private readonly provider: ProviderId,
    private readonly logger: EventLogger,
  ) {}

  /**
   * The token for the next attempt: the cached one at once when it is usable (no promise), else a
   * promise waited for like any upstream answer (the caller's `signal`).
   */
  token(source: LoginTokenSource<C>, signal: AbortSignal): C | Promise<C> {
    const refused = this.refused;
    this.refused = undefined;
    const cached = refused ? undefined : source.cached?.();
    if (cached) return (this.last = cached);
    return (refused ? source.afterRejection(refused, signal, this.logger) : source.current(signal, this.logger)).then(
      (token) => (this.last = token),
    );
  }

  /** True once per turn, for a refusal of the token the last attempt used: open again now. */
  reopenAfter(failure: GatewayError): boolean {
    if (this.retried || !this.last || !isUpstreamAuthRejection(failure)) return false;
    this.retried = true;
    this.refused = this.last;
    const event = `${this.provider}_auth_retry`;
    this.logger.info({ event, upstream_status: failure.upstreamStatus }, event);
    return true;
  }
}
