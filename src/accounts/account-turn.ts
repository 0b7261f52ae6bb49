import type { EventLogger } from '../core/event-logger';
import type { ErrorCode } from '../core/error-codes';
import { loginRequiredMessage } from '../core/error-codes';
import type { GatewayError } from '../core/gateway.error';
import type { PlanReport } from '../core/plan-usage';
import { noUsableLogin, ownFixFailure } from '../core/login-state';
import type { AccountLease, AccountPool } from './account-pool';

/**
 * The limits that rest a login for ACCOUNT_COOLDOWN_DEFAULT when the upstream tells no reset
 * (AccountPool.applyFailure): their client is told the pool's rest, not the table's fixed wait.
 * A short rate limit keeps the table's few seconds: a retry then finds another login, or asks a
 * family's only login again.
 */
const RESTS_FOR_THE_COOLDOWN: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['usage_limit', 'usage_credit_exhausted']);

/**
 * The account one turn runs on (docs/accounts.md "A turn"). It starts on the pool's choice for the
 * chat; a failure before any output that is about the account (usage limit, 429, dead login)
 * moves it, once, to another usable account; an attempt after the first takes its login again
 * (`retake`) and moves when that login stopped taking turns meanwhile. After output has begun the
 * turn never moves: a failure then only updates the account's state. `end()` gives the account
 * back (idempotent).
 */
export class AccountTurn<T> {
  private lease: AccountLease<T>;
  private moved = false;

  /** `model`: the upstream model the turn asks for (a login whose quota for it is spent is passed over). */
  constructor(
    private readonly pool: AccountPool<T>,
    private readonly chatKey: string | undefined,
    private readonly model?: string,
  ) {
    this.lease = pool.acquire(chatKey, model);
  }

  get alias(): string {
    return this.lease.alias;
  }

  get handle(): T {
    return this.lease.handle;
  }

  /**
   * After a failure before any output: true when the turn now runs on another account and should
   * try again there. When it stays, the error to report is `finalError(error)`.
   */
  moveAfter(error: unknown): boolean {
    if (this.moved) {
      this.pool.applyFailure(this.lease.alias, error, this.lease.loginFileSeen, this.model);
      return false;
    }
    const next = this.pool.moveAfter(this.lease, error, this.chatKey, this.model);
    if (!next) return false;
    this.moved = true;
    this.lease = next;
    return true;
  }

  /**
   * Before the turn sends anything after a wait (a process slot, a retry's sleep, a token
   * refresh, a failed attempt): the turn takes its account again, or the pool's choice now when
   * it rests since (AccountPool.retake). True when the turn now runs on another account. Throws
   * the pool's answer when no account can take the turn; the account taken before is then given back.
   */
  retake(): boolean {
    const before = this.lease;
    this.lease = this.pool.retake(before, this.chatKey, this.model);
    return this.lease.alias !== before.alias;
  }

  /** Whether the pool would still give the turn its account now (AccountPool.keeps); changes nothing. */
  kept(): boolean {
    return this.pool.keeps(this.lease, this.model);
  }

  /** A failure after output began: the account's state changes, the turn stays where it is. */
  noteFailure(error: unknown): void {
    this.pool.applyFailure(this.lease.alias, error, this.lease.loginFileSeen, this.model);
  }

  /**
   * The error a turn that could not move reports. A 429 when no account is usable any more carries
   * the pool's Retry-After (the earliest reset), so a client waits no longer than it must; a usage
   * limit or spent credit whose reset is unknown carries the wait until the family's first resting
   * login is back (AccountPool.restWaitSeconds: ACCOUNT_COOLDOWN_DEFAULT after this one's limit);
   * a login failure on a login the offline check ruled out says the check's own fix, when it has one.
   */
  finalError(error: GatewayError): GatewayError {
    // A login the offline check ruled out for a cause with its own fix (a login file the gateway's
    // user may not read, which a family's CLI reads itself): the check's cause and fix, not a new login.
    if (error.code === 'auth' && error.publicMessage === undefined && error.fix === undefined) {
      const own = ownFixFailure(this.pool.family, this.pool.ruledOutBy(this.lease.alias));
      if (own)
        return error.with({
          ...own,
          detail: error.detail ? `${own.detail}; ${error.detail}` : own.detail,
          cause: error,
        });
      // The upstream refused this login and the turn had nowhere to move: every other login was
      // ruled out by the offline check. When their shared fix is not a new login (a login file the
      // gateway may not read), the message names both: a new login alone leaves the family down.
      const others = this.pool.ruledOutOthers(this.lease.alias);
      const login = this.pool.loginFixOf(this.lease.alias);
      const shared = others && noUsableLogin(this.pool.family, others).fix;
      if (shared !== undefined && shared !== login)
        return error.with({
          provider: this.pool.family,
          publicMessage: `${this.pool.family} has no usable login: the upstream refused login "${this.lease.alias}" (${login}), and the login check ruled out every other one (${shared})`,
          fix: `${login}; ${shared}`,
          cause: error,
        });
      // Every login is dead now: the pool's words name each one's own fix, or the one they share,
      // when that is not the family's plain login command.
      const everyLogin = this.pool.unavailableError(this.model);
      if (everyLogin?.code === 'auth' && everyLogin.fix !== undefined)
        return error.with({
          provider: this.pool.family,
          publicMessage: everyLogin.publicMessage,
          fix: everyLogin.fix,
          cause: error,
        });
      // A login its CLI does not keep by default: the family's plain login command would write
      // another file, so the message and the line name this login's own.
      const command = this.pool.loginCommandOf(this.lease.alias);
      if (command !== undefined)
        return error.with({
          provider: this.pool.family,
          publicMessage: loginRequiredMessage(this.pool.family, command),
          fix: command,
          cause: error,
        });
    }
    const pooled = error.spec.status === 429 ? this.pool.unavailableError(this.model) : undefined;
    if (pooled?.code === 'rate_limited')
      return error.with({ retryAfterSeconds: pooled.retryAfterSeconds, cause: error });
    // Every login has spent its quota for this model: the pool's words name the model and the way out.
    if (pooled?.code === 'usage_limit' && error.limitsModel)
      return error.with({
        retryAfterSeconds: pooled.retryAfterSeconds,
        publicMessage: pooled.publicMessage,
        cause: error,
      });
    if (error.retryAfterSeconds === undefined && RESTS_FOR_THE_COOLDOWN.has(error.code))
      return error.with({ retryAfterSeconds: this.pool.restWaitSeconds(this.model), cause: error });
    return error;
  }

  /**
   * The attempt running now reported drawing paid usage: the turn counts as one paid turn of its
   * login when it ends, delivered or not (AccountLease.paidReported); `logger` is the turn's.
   */
  paidReported(logger: EventLogger): void {
    this.lease.paidReported(logger);
  }

  /**
   * What the upstream said of the login's plan during the turn (AttemptInfo.reportPlan): the
   * login's own, unless the login file came to hold another account's login since the turn took
   * it (then the pool drops it).
   */
  reportPlan(report: PlanReport): void {
    this.pool.reportPlan(this.lease.alias, report, this.lease.loginFileSeen);
  }

  /** The turn ended as the upstream meant it to (not a failure): what the login's success says is applied. */
  succeeded(): void {
    this.pool.succeeded(this.lease.alias, this.lease.loginFileSeen);
  }

  /**
   * The turn is over for its client (answered, failed or left) while its attempt's resources are
   * still being freed: its chat may start another turn now; the login stays taken until `end()`.
   */
  closing(): void {
    this.lease.closing();
  }

  end(): void {
    this.lease.release();
  }
}
