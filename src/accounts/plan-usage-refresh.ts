import type { EventLogger } from '../core/event-logger';
import { GatewayError } from '../core/gateway.error';
import type { ProviderId } from '../core/provider-id';
import type { LoginCheck } from '../core/login-state';
import { loginFix } from '../core/login-state';
import type { PlanUsageRead } from '../core/plan-usage';
import { planSummary } from '../core/plan-usage';
import type { AccountPool } from './account-pool';
import { untilAborted } from '../common/async/abortable';
import { errnoAlong } from '../common/errno';

/** Bound on one read of a vendor's usage endpoint (token refresh included). */
export const USAGE_READ_TIMEOUT_MS = 30_000;

/**
 * The login's credential cannot be read by the gateway (the CLI's own login kept in a keychain,
 * or a missing credentials file), or the login serves nothing because the family's CLI is missing
 * (`cli_missing`, its login report's state): there is nothing to send, so nothing is asked.
 * `refused`: a file the system refused to read, as the login check says it (its errno in the
 * reason, and the file's fix, not a new login).
 */
export class LoginNotReadable extends Error {
  constructor(
    readonly state: 'missing' | 'cli_missing' = 'missing',
    readonly refused?: LoginCheck,
  ) {
    super('login not readable');
    this.name = 'LoginNotReadable';
  }
}

/** Why a read failed, in words safe for a log: an error code, an HTTP status, an errno — never a body. */
export function usageReadFailure(error: unknown): string {
  if (error instanceof LoginNotReadable)
    return error.state === 'cli_missing' ? 'cli missing' : (error.refused?.reason ?? 'not readable');
  // A connection that never reached an endpoint (the usage one, or the token one on the way) is
  // told by its errno: the family's connection cause holds it, or the socket error an `upstream`
  // failure wraps (another code's cause, a login file's errno, keeps the code and its fix).
  if (error instanceof GatewayError) {
    if (error.upstreamStatus !== undefined) return `status ${error.upstreamStatus}`;
    const errno = error.upstream?.errno ?? (error.code === 'upstream' ? errnoAlong(error.cause) : undefined);
    return errno ?? error.code;
  }
  const code = errnoAlong(error);
  // A timeout signal's reason is a DOMException, not an Error in every realm: read by its name.
  return code ?? ((error as { name?: unknown } | undefined)?.name === 'TimeoutError' ? 'timeout' : 'network');
}

/**
 * What to do about a failed usage read, as the `login_state` line says it: a missing CLI is
 * installed; a file the system refused to read gets the file's fix; a login the endpoint
 * refused, or one that cannot be read, needs a new login; anything else passes by itself.
 */
function usageReadFix(provider: ProviderId, reason: string, error: unknown, loginCommand: string | undefined): string {
  if (error instanceof LoginNotReadable && error.refused?.fix) return error.refused.fix;
  if (reason === 'cli missing') return loginFix(provider, 'cli_missing') ?? 'install the CLI';
  if (reason === 'not readable' || reason === 'auth' || reason === 'status 401' || reason === 'status 403')
    return loginFix(provider, 'refresh_refused', loginCommand) ?? 'log in again with the CLI';
  return 'nothing, if it passes: the next read comes after ACCOUNT_USAGE_REFRESH_INTERVAL';
}

/** A read failure whose cause the login report's offline check finds by itself, with the same fix. */
function reportedByTheLoginCheck(error: unknown): boolean {
  if (error instanceof GatewayError) return error.loginFileCause;
  return error instanceof LoginNotReadable && (error.state === 'cli_missing' || error.refused !== undefined);
}

/** The logins of each pool already reported not readable: said once, until a read gets further. */
const reportedUnreadable = new WeakMap<object, Set<string>>();

/**
 * Reads every live login of a pool once from its vendor's usage endpoint and gives each answer to
 * the pool (`source: usage_endpoint`), which guards and shows it. Each login gets one `plan_usage`
 * info line (family, alias, the summary), or `plan_usage_read_failed` (warn, with a safe reason).
 * A login whose credential cannot be read (LoginNotReadable) is warned about once, then only at
 * debug; a cause the login report tells by itself (its file, its CLI, a login it ruled out) only at debug.
 *
 * The `first` round, at startup, reads every login at once (one request per login, each its own
 * account) and tells the pool each read as it starts (`firstUsageReadStarted`): under `plan_only`
 * a turn on a login waits for that login's read, so a plan the endpoint says is spent is refused
 * from the first turn. Later rounds read logins one after another: nothing waits on them, and a
 * few requests every few minutes never come as a burst. Each read is bounded by `timeoutMs`, also
 * when the family's reader does not notice its signal.
 */
export async function readPoolUsage<T>(
  pool: AccountPool<T>,
  read: PlanUsageRead<T>,
  logger: EventLogger,
  timeoutMs: number = USAGE_READ_TIMEOUT_MS,
  first = false,
): Promise<void> {
  const readOne = (alias: string, handle: T) => readLoginUsage(pool, read, logger, alias, handle, timeoutMs);
  if (first) {
    const reads = pool.liveAccounts().map(({ alias, handle }) => {
      const settled = readOne(alias, handle);
      pool.firstUsageReadStarted(alias, settled);
      return settled;
    });
    await Promise.all(reads);
    return;
  }
  for (const { alias, handle } of pool.liveAccounts()) await readOne(alias, handle);
}

/**
 * Reads one login's usage endpoint now, as a round reads it (reported to the pool and logged,
 * never rejects): the first read of a new login written over a login's file
 * (AccountPool.readsUsageWith).
 */
export function readLoginUsage<T>(
  pool: AccountPool<T>,
  read: PlanUsageRead<T>,
  logger: EventLogger,
  alias: string,
  handle: T,
  timeoutMs: number = USAGE_READ_TIMEOUT_MS,
): Promise<void> {
  let unreadable = reportedUnreadable.get(pool);
  if (!unreadable) reportedUnreadable.set(pool, (unreadable = new Set()));
  return readLogin(pool, read, logger, timeoutMs, unreadable, alias, handle);
}

/**
 * One login's read, reported to the pool and logged; never rejects. A read that was running when
 * the file came to hold another login (AccountPool.loginGeneration) is that login's: dropped.
 */
async function readLogin<T>(
  pool: AccountPool<T>,
  read: PlanUsageRead<T>,
  logger: EventLogger,
  timeoutMs: number,
  unreadable: Set<string>,
  alias: string,
  handle: T,
): Promise<void> {
  const generation = pool.loginGeneration(alias);
  try {
    const signal = AbortSignal.timeout(timeoutMs);
    const report = await untilAborted(read(handle, signal, logger), signal);
    if (pool.loginGeneration(alias) !== generation) return;
    unreadable.delete(alias);
    if (!report) throw new GatewayError('upstream', { detail: 'usage answer unreadable' });
    pool.reportPlan(alias, report);
    const view = pool.planView(alias);
    logger.info(
      {
        event: 'plan_usage',
        provider: pool.family,
        account: alias,
        state: view.state,
        plan_spent: view.planSpent,
        paid_usage: view.paid?.kind,
        paid_available: view.paid?.available,
        paid_in_use: view.paid?.inUse,
        windows: view.windows.map((window) => ({
          name: window.name,
          used_ratio: window.usedRatio,
          resets_at: window.resetsAt !== undefined ? new Date(window.resetsAt).toISOString() : undefined,
        })),
      },
      `${pool.family} login ${alias}: ${planSummary(view)}`,
    );
  } catch (error) {
    if (pool.loginGeneration(alias) !== generation) return;
    const reason = usageReadFailure(error);
    const record = {
      event: 'plan_usage_read_failed',
      provider: pool.family,
      account: alias,
      path: pool.loginFileOf(alias),
      reason,
      fix: usageReadFix(pool.family, reason, error, pool.loginCommandOf(alias)),
    };
    // What the login report finds and tells by itself (a login file missing, unreadable or no
    // login, a CLI missing, a login its check ruled out) is only the detail here: its line is the one.
    if (reportedByTheLoginCheck(error) || (error instanceof LoginNotReadable && pool.ruledOutBy(alias) !== undefined)) {
      logger.debug(record, 'plan_usage_read_failed');
      return;
    }
    if (!(error instanceof LoginNotReadable)) unreadable.delete(alias);
    else if (unreadable.has(alias)) {
      logger.debug(record, 'plan_usage_read_failed');
      return;
    } else unreadable.add(alias);
    logger.warn(record, 'plan_usage_read_failed');
  }
}
