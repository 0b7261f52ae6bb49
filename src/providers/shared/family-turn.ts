import type { AccountPool } from '../../accounts/account-pool';
import { AccountTurn } from '../../accounts/account-turn';
import { untilAborted } from '../../common/async/abortable';
import type { CallContext } from './provider-adapter';
import type { RetryClock } from './retry-policy';
import type { AcceptedTurn, UpstreamAttempt, UpstreamFamily } from './turn-runner';
import { runTurn } from './turn-runner';

/** What an adapter says about one turn of its family; the login and the runner's options are built here. */
export interface FamilyTurnOptions<L> {
  /** The family's logins. */
  readonly pool: AccountPool<L>;
  /** The chat whose login the turn takes (`request.conversationId`); none for one-off work, which takes the login with the most headroom. */
  readonly chat: string | undefined;
  /** The upstream model the turn asks for: a login whose quota for it is spent is passed over. */
  readonly model?: string;
  /** The family's whole-turn bound (PROVIDER_*_TIMEOUT); 0 = none of its own. */
  readonly timeoutMs: number;
  /** GATEWAY_STREAM_IDLE_TIMEOUT: longest wait for the next frame; 0 = off. */
  readonly idleTimeoutMs: number;
  readonly context: CallContext;
  /**
   * A wait between taking the login and the first attempt (provider_c: a process slot), so a full
   * or dead pool fails before it; it resolves to what runs once the turn is closed (the slot
   * freed). When it rejects, the login is given back and the turn rejects with its error. After
   * it, the turn takes its login again: one the paid-usage guard rested meanwhile never starts.
   */
  readonly before?: () => Promise<() => void>;
  /** The time, jitter and waits of the turn's retries (TurnOptions.clock); the system's when absent. */
  readonly clock?: RetryClock;
}

/**
 * One turn of a family on the turn runner: the chat's login (a 429 or 401 at once when no login
 * can take the turn, except a login full only with turns over for their client whose resources
 * are still being freed: the turn waits for one of those, `takeLogin`), then the waits before its
 * first attempt, each followed by the login taken again (AccountTurn.retake): the login's first
 * usage read while it runs (under `plan_only`, so a plan the usage endpoint says is spent is
 * refused from the first turn), then `before`. Then `runTurn`. Resolves once the upstream accepted the turn.
 */
export function runFamilyTurn<L, F, A extends UpstreamAttempt<F>, R>(
  family: UpstreamFamily<L, F, A, R>,
  options: FamilyTurnOptions<L>,
): Promise<AcceptedTurn<A>> {
  const { pool, chat, model, timeoutMs, idleTimeoutMs, context, before, clock } = options;
  let account: AccountTurn<L>;
  try {
    account = new AccountTurn(pool, chat, model);
  } catch (error) {
    const freed = pool.whenSlotFrees(chat, model);
    if (!freed) return Promise.reject(error);
    return takeLogin(options, freed, error).then((taken) => afterWaits(family, options, taken));
  }
  // Without a wait the turn is the runner's promise itself: no layer in between (after startup,
  // a login's first usage read is over and costs one property read).
  if (!before && pool.firstUsageRead(account.alias) === undefined)
    return runTurn(family, { account, timeoutMs, idleTimeoutMs, context, clock });
  return afterWaits(family, options, account);
}

/**
 * The login for a turn the pool refused while a login that would take it is full only with turns
 * over for their client (AccountPool.whenSlotFrees: a client that stopped a turn and sent its chat
 * again, before the stopped provider_c child was gone): taken as each of those gives its slot back,
 * bounded by their release (a child's kill grace) and by the client leaving. Rejects with the
 * pool's refusal once no such turn is left to wait for.
 */
async function takeLogin<L>(
  options: FamilyTurnOptions<L>,
  freed: Promise<void>,
  refusal: unknown,
): Promise<AccountTurn<L>> {
  const { pool, chat, model, context } = options;
  context.logger.info({ event: 'account_slot_wait', provider: pool.family }, 'account_slot_wait');
  let last = refusal;
  for (let wait: Promise<void> | undefined = freed; wait; wait = pool.whenSlotFrees(chat, model)) {
    await untilAborted(wait, context.signal);
    try {
      return new AccountTurn(pool, chat, model);
    } catch (error) {
      last = error;
    }
  }
  throw last;
}

async function afterWaits<L, F, A extends UpstreamAttempt<F>, R>(
  family: UpstreamFamily<L, F, A, R>,
  options: FamilyTurnOptions<L>,
  account: AccountTurn<L>,
): Promise<AcceptedTurn<A>> {
  const { pool, timeoutMs, idleTimeoutMs, context, before, clock } = options;
  let onClosed: (() => void) | undefined;
  try {
    // A login taken again may be one whose first read still runs too (every login's may).
    for (let read = pool.firstUsageRead(account.alias); read; read = pool.firstUsageRead(account.alias)) {
      context.logger.info(
        { event: 'account_usage_wait', provider: pool.family, account: account.alias },
        'account_usage_wait',
      );
      await untilAborted(read, context.signal);
      account.retake();
    }
    if (before) {
      onClosed = await before();
      account.retake();
    }
  } catch (error) {
    account.end();
    onClosed?.();
    throw error;
  }
  return runTurn(family, { account, timeoutMs, idleTimeoutMs, context, onClosed, clock });
}
