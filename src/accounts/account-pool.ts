import { LRUCache } from 'lru-cache';
import { growingLru } from '../common/growing-lru';
import type { EventLogger } from '../core/event-logger';
import type { PlanReport, PlanReporter, PlanWindow } from '../core/plan-usage';
import { isSpentPlanWindow, planAt } from '../core/plan-usage';
import { GatewayError } from '../core/gateway.error';
import { formatWait } from '../core/error-codes';
import { familyOf } from '../core/family-registry';
import type { LoginCheck } from '../core/login-state';
import type { LoginFinding } from '../core/login-state';
import { isUsable, loginFix, noUsableLogin } from '../core/login-state';
import type { ProviderId } from '../core/provider-id';
import { loginFingerprint } from './login-fingerprint';

/** A login file's version as the pool read it (`Account.onDisk`): `null` no file, `undefined` not read yet. */
export interface LoginFileSeen {
  readonly onDisk: string | null | undefined;
  /**
   * Which login the file held (`AccountPool.loginGeneration`): what work started on an earlier one
   * reports is that login's, and never lands on the one the file holds now.
   */
  readonly generation: number;
}

/** A pin is forgotten after a day without a turn of its chat (docs/accounts.md). */
export const PIN_IDLE_TTL_MS = 24 * 60 * 60 * 1000;
/** Retry-After when every usable login is at its in-flight cap: a slot frees within seconds. */
const ALL_BUSY_RETRY_AFTER_SECONDS = 1;

/** One login as the family gives it: the alias, its login file (watched by the sweep) and the family's handle. */
export interface PoolAccountSpec<T> {
  readonly alias: string;
  readonly loginFile?: string;
  /** AccountLogin.loginCommand: what logs this login in again when the family's plain command would not. */
  readonly loginCommand?: string;
  readonly handle: T;
  /**
   * Reads again what the family keeps in memory from the login file (a cached token), so a turn
   * reads memory, never the file: `sweep()` calls it at its first reading and whenever the file
   * changed. Returns whose login the file holds now, as an opaque key (a hash) that stays the same
   * across a refresh of one login and differs for another account's login; `undefined` when the
   * family cannot tell (no usable file, or a file that names no account). When the key changes,
   * what the pool knew of the previous login (its plan, its rest, its cooldown) is dropped.
   */
  readonly loginFileChanged?: () => string | undefined;
}

export interface AccountPoolOptions {
  /** ACCOUNT_MAX_IN_FLIGHT: turns at once per login, and per chat across the family; 0 = no cap. */
  readonly maxInFlight: number;
  readonly cooldownDefaultMs: number;
  readonly pinnedChatsMax: number;
  /** ACCOUNT_PAID_USAGE: `plan_only` rests a login whose plan is spent; `allow` serves it and counts paid turns. */
  readonly paidUsage?: 'plan_only' | 'allow';
  /**
   * The family's quota bucket of an upstream model id, where its vendor counts several ids as one
   * quota: a spent window of any id of a bucket rests all of them on that login. Unset: each id is
   * its own bucket.
   */
  readonly quotaBucketOf?: (model: string) => string;
}

/** The account series of GatewayMetrics; labels are family and alias only. */
export interface AccountMetrics {
  /** Starts every series of the account (counters at 0), so dashboards see it from boot. */
  accountRegistered(provider: ProviderId, account: string): void;
  accountState(
    provider: ProviderId,
    account: string,
    state: AccountStateKind,
    coolingUntilMs: number | undefined,
  ): void;
  accountInFlight(provider: ProviderId, account: string, count: number): void;
  accountPinnedChats(provider: ProviderId, account: string, count: number): void;
  accountSelected(provider: ProviderId, account: string, kind: SelectionKind): void;
  accountCooldown(provider: ProviderId, account: string, reason: CooldownReason): void;
  accountMovedAway(provider: ProviderId, account: string): void;
  /** What the login's plan has left and its paid usage, after every report and flag change. */
  accountPlan(provider: ProviderId, account: string, plan: LoginPlanView): void;
  /** One turn the upstream reported as paid (ACCOUNT_PAID_USAGE=allow). */
  accountPaidTurn(provider: ProviderId, account: string): void;
}

export interface AccountPoolDeps {
  readonly clock: AccountClock;
  /** Process-level logger for the state-change lines (aliases only, never login contents). */
  readonly logger: EventLogger;
  readonly metrics: AccountMetrics;
}

/** A turn's hold on one account; `release()` is idempotent. */
export interface AccountLease<T> {
  readonly alias: string;
  readonly handle: T;
  /**
   * The login file as the pool had last read it when the lease was taken (or renewed): the version
   * the turn used. What the turn reports of a login the file no longer holds is dropped.
   */
  readonly loginFileSeen: LoginFileSeen;
  /** The login file as the pool last read it becomes the version the turn uses (`AccountPool.retake`). */
  renew(): void;
  /**
   * The turn is over for its client (its answer is complete, or it failed, or the client left)
   * while what it ran on is still being freed (a provider_c child stopping): from now on it no
   * longer counts against its chat's bound, but it keeps its login's in-flight slot until
   * `release()`. Idempotent; without it `release()` ends both.
   */
  closing(): void;
  /**
   * The upstream said this turn draws paid usage (a report of one of its attempts with `paid.inUse`):
   * when the lease is given back the turn is one paid turn of the login, delivered or not (paid
   * usage was drawn either way), logged with `logger` (the turn's: its line names the request).
   */
  paidReported(logger: EventLogger): void;
  release(): void;
}

/** The pool's lease: one object per turn, its methods on the prototype. */
class PoolLease<T> implements AccountLease<T> {
  private isReleased = false;
  /** `closing()` was called: the chat's bound was given back already. */
  private isClosing = false;
  /** Set by `paidReported`: the logger of the turn that drew paid usage on this lease. */
  private paidBy?: EventLogger;
  loginFileSeen: LoginFileSeen;

  constructor(
    private readonly pool: AccountPool<T>,
    private readonly account: Account<T>,
    /** The chat the turn belongs to, counted against its bound (`AccountPool.chatTurns`) until `closing` or release. */
    private readonly chatKey: string | undefined,
  ) {
    this.loginFileSeen = { onDisk: account.onDisk, generation: account.generation };
  }

  get alias(): string {
    return this.account.alias;
  }

  get handle(): T {
    return this.account.handle;
  }

  paidReported(logger: EventLogger): void {
    this.paidBy ??= logger;
  }

  renew(): void {
    this.loginFileSeen = this.pool.loginFileSeen(this.account.alias);
  }

  closing(): void {
    if (this.isClosing || this.isReleased) return;
    this.isClosing = true;
    this.pool.closing(this.account, this.chatKey);
  }

  release(): void {
    if (this.isReleased) return;
    // A turn released without `closing` first gives its chat's bound back now.
    this.closing();
    this.isReleased = true;
    this.pool.released(this.account, this.paidBy);
  }
}

interface Account<T> {
  readonly alias: string;
  readonly loginFile?: string;
  readonly loginCommand?: string;
  readonly handle: T;
  readonly loginFileChanged?: () => string | undefined;
  /** Whose login the file held when the sweep last read one (`PoolAccountSpec.loginFileChanged`). */
  loginOf?: string;
  /** Counts the logins the file came to hold (`loginReplaced`): a usage read started before one is dropped. */
  generation: number;
  state: AccountState;
  /** Turns holding this login, `closing` ones included: what its cap (`maxInFlight`) counts. */
  inFlight: number;
  /**
   * Of `inFlight`, the turns that are over for their client and whose resources are still being
   * freed (`AccountLease.closing`): a slot a new turn may wait for (`whenSlotFrees`).
   */
  closing: number;
  lastSelectedAt: number;
  /** The latest plan report of this login, windows merged by name (docs/providers.md "What each vendor meters"). */
  plan?: PlanReport;
  /** When the last report arrived (epoch ms). */
  planUpdatedAt?: number;
  /**
   * When what the gauges show of the plan changes by itself (`PlanReading.changesAt`, as of the
   * last publication): `heal` publishes it again then.
   */
  planChangesAt?: number;
  /**
   * Since when (epoch ms) the upstream has refused requests of this login as needing extra usage
   * (`extra_usage_required`); cleared by the login's next successful turn.
   */
  needsExtraUsageSince?: number;
  /**
   * The login file's fingerprint when the upstream said it does not serve this account (provider_b's
   * ineligible tiers). Not a pool state: the account stays selectable; read by the login report.
   */
  unsupportedFingerprint?: string | null;
  /**
   * The login file's fingerprint as `sweep()` last read it (`null`: no file), `undefined` before
   * the first read. Requests compare against this and never touch the disk.
   */
  onDisk?: string | null;
  /** Died before the file was first read: the next sweep's reading is the dead login's fingerprint. */
  deathUnread?: boolean;
  /** The login report's check has reported on this login (`loginChecked`) at least once. */
  checked?: boolean;
}

/**
 * The logins of one family (docs/accounts.md): which one serves a turn, and the state of each.
 * Family-independent: the adapter supplies a handle per login (its auth object) and reports
 * failures and quota windows; the pool decides.
 *
 * - States heal by themselves: a cooldown is over when the clock passes its end; a login the
 *   upstream refused is usable again once its file changed on disk (one its API refused also once
 *   a turn on it is answered: `succeeded`). Both are checked on every
 *   selection and by the periodic `sweep()`, so neither a restart nor a request is needed for the
 *   state to change. Only `sweep()` reads the login files (a stat each); a selection compares what
 *   it last read. A login the login report's offline check finds not usable is dead too, until a
 *   later check finds it usable (`loginChecked`). A file that came to hold another account's login
 *   drops what was known of the previous one (`loginReplaced`).
 * - Chats stick to their account (soft pins in a bounded LRU that forgets a chat after a day of
 *   silence); a pinned account that stops serving gives way to the best other one, and one that is
 *   only full lends that turn to another without moving the pin. With a cap, one chat runs at most
 *   as many turns at once as one login takes (`chatBound`). A turn over for its client keeps its
 *   login's slot until what it ran on is freed (a child stopping), but not its chat's bound; a
 *   turn refused only for such slots waits for one (`whenSlotFrees`).
 * - New chats go to the usable account with the most headroom: the unused share of its tightest
 *   quota window divided by its turns in flight plus one; ties go to the least recently chosen.
 */
export class AccountPool<T> implements PlanReporter {
  private readonly accounts: Account<T>[];
  private readonly pins: LRUCache<string, string>;
  private readonly pinCounts = new Map<string, number>();
  /**
   * Under `plan_only`, the logins whose first usage-endpoint read is still running, each with its
   * read (`firstUsageReadStarted`); undefined once every one settled, so no selection pays for it
   * after startup.
   */
  private firstReads?: Map<string, Promise<void>>;
  /**
   * Turns in flight per chat, across the family's logins (only chats with one running): one chat
   * holds at most `maxInFlight` at once, so others keep getting served (`chatBound`). A turn over
   * for its client (`AccountLease.closing`) no longer counts: a client that stopped a turn and sends
   * its chat again is not refused for the turn it ended.
   */
  private readonly chatTurns = new Map<string, number>();
  /** Resolved at the next lease given back, made only while a turn waits for a slot (`whenSlotFrees`). */
  private slotFreed?: { readonly promise: Promise<void>; readonly resolve: () => void };
  /** Reads one login's usage endpoint now (`readsUsageWith`): after its file came to hold another login. */
  private readUsage?: (alias: string) => Promise<void>;

  constructor(
    readonly family: ProviderId,
    specs: readonly PoolAccountSpec<T>[],
    private readonly options: AccountPoolOptions,
    private readonly deps: AccountPoolDeps,
  ) {
    if (specs.length === 0) throw new Error(`${family}: an account pool needs at least one login`);
    this.accounts = specs.map((spec) => ({
      ...spec,
      state: { kind: 'ready' },
      inFlight: 0,
      closing: 0,
      lastSelectedAt: 0,
      generation: 0,
    }));
    this.pins = new LRUCache<string, string>({
      ...growingLru(options.pinnedChatsMax),
      ttl: PIN_IDLE_TTL_MS,
      updateAgeOnGet: true,
      // Read the injected clock on every check (the default caches "now" for a millisecond).
      ttlResolution: 0,
      perf: { now: () => deps.clock.now() },
      dispose: (alias) => this.countPin(alias, -1),
    });
    for (const account of this.accounts) {
      this.deps.metrics.accountRegistered(family, account.alias);
      this.publishState(account);
      this.deps.metrics.accountInFlight(family, account.alias, 0);
      this.deps.metrics.accountPinnedChats(family, account.alias, 0);
      this.publishPlan(account);
    }
  }

  /** ACCOUNT_PAID_USAGE as this pool applies it. */
  get paidUsage(): 'plan_only' | 'allow' {
    return this.options.paidUsage ?? 'plan_only';
  }

  get aliases(): readonly string[] {
    return this.accounts.map((account) => account.alias);
  }

  /** The file that holds one account's login (for its log lines), when it has one. */
  loginFileOf(alias: string): string | undefined {
    return this.account(alias).loginFile;
  }

  /** The login file of one account as the sweep last read it: what work starting now uses. */
  loginFileSeen(alias: string): LoginFileSeen {
    const account = this.account(alias);
    return { onDisk: account.onDisk, generation: account.generation };
  }

  /** The current state of one account (after healing what is due). */
  stateOf(alias: string): AccountState {
    const account = this.account(alias);
    this.heal(account);
    return account.state;
  }

  /**
   * The account for a turn of `chatKey` (a new chat, or none for one-off work such as structured
   * inference) on the upstream `model`: its pinned account while usable, else the one with the
   * most headroom. A login whose quota for `model` is spent is not usable for that model. The chat
   * is pinned to the account chosen, unless its pinned account still serves and is only full: that
   * turn overflows to another login and the chat stays where its prompt cache is. Throws
   * `rate_limited` (Retry-After 1 s) when the chat already runs `maxInFlight` turns, `rate_limited`
   * (Retry-After = the earliest reset) when every login is cooling or busy, and `auth` naming the
   * family when every login is dead.
   */
  acquire(chatKey: string | undefined, model?: string, exclude?: string): AccountLease<T> {
    if (chatKey !== undefined) this.chatBound(chatKey);
    this.accounts.forEach((account) => this.heal(account));
    const pinned = chatKey !== undefined ? this.pins.get(chatKey) : undefined;
    const pinnedAccount =
      pinned !== undefined && pinned !== exclude
        ? this.accounts.find((account) => account.alias === pinned)
        : undefined;
    const kind = exclude !== undefined ? 'moved' : 'new';
    if (pinnedAccount && this.servesNow(pinnedAccount, model)) {
      if (this.hasRoom(pinnedAccount)) return this.lease(pinnedAccount, chatKey, 'pinned', true);
      const overflow = this.candidate(exclude, model);
      if (!overflow) throw this.unavailable(model);
      return this.lease(overflow, chatKey, kind, false);
    }
    const best = this.candidate(exclude, model);
    if (!best) throw this.unavailable(model);
    return this.lease(best, chatKey, kind, true);
  }

  /**
   * A turn about to send again (an attempt after its first, or a first attempt that waited, as
   * provider_c's for a process slot) takes its login again, as if it took it now: the same lease while the pool would still
   * give that login to the turn (its in-flight cap aside: the turn holds its place), else the lease
   * is given back and the pool chooses again. So a login the paid-usage guard rested, or that
   * cooled or died, during the wait is never started on; throws the pool's answer (the
   * paid-usage refusal among them) when no login can take the turn.
   */
  retake(lease: AccountLease<T>, chatKey: string | undefined, model?: string): AccountLease<T> {
    if (!this.keeps(lease, model)) {
      lease.release();
      return this.acquire(chatKey, model);
    }
    // Another login was written over the file since the lease was taken: the attempt about to
    // send uses it (its family read the file again), so what that attempt reports is its own.
    if (lease.loginFileSeen.generation !== this.account(lease.alias).generation) lease.renew();
    return lease;
  }

  /**
   * Whether the pool would still give the login of `lease` to its turn on `model` now (its
   * in-flight cap aside): ready with the model not resting on it, or for a family's only login,
   * not held back by the paid-usage guard. A login the offline check ruled out, given to the turn
   * because every login is dead, stays the turn's own while that lasts: a turn is not walked
   * through the logins the check ruled out. What `retake` keeps a lease on.
   */
  keeps(lease: AccountLease<T>, model?: string): boolean {
    const account = this.account(lease.alias);
    this.heal(account);
    if (this.accounts.length === 1) return !this.guardHolds(account, model);
    if (this.servesNow(account, model)) return true;
    // Every login dead: the one the check ruled out that the turn was given stays (no walk
    // through them), unless the paid-usage guard holds it.
    return (
      account.state.kind === 'login_dead' &&
      account.state.check !== undefined &&
      this.accounts.every((other) => other.state.kind === 'login_dead') &&
      !this.guardHolds(account, model)
    );
  }

  /**
   * The startup round's read of `alias` started (plan-usage-refresh.ts); `settled` never rejects.
   * Under `plan_only` what it says may rest the login, so until it settles a turn on the login
   * waits for it (`firstUsageRead`) and new turns prefer logins already read (`best`).
   */
  firstUsageReadStarted(alias: string, settled: Promise<void>): void {
    if (this.paidUsage === 'allow') return;
    (this.firstReads ??= new Map()).set(alias, settled);
    void settled.then(() => {
      // A later read of the login (its file came to hold another one meanwhile) stays waited for.
      if (this.firstReads?.get(alias) !== settled) return;
      this.firstReads.delete(alias);
      if (this.firstReads.size === 0) this.firstReads = undefined;
    });
  }

  /**
   * The first usage read of `alias` a turn on it waits for, while it runs: the startup one, or the
   * one of a new login written over its file (`firstUsageReadStarted`, `loginReplaced`).
   */
  firstUsageRead(alias: string): Promise<void> | undefined {
    return this.firstReads?.get(alias);
  }

  /**
   * How the family reads one login's usage endpoint now (AccountPools sets it while usage reads
   * are on): the first read of a new login written over a login's file, which its turns wait for
   * under `plan_only` as they wait for the startup read.
   */
  readsUsageWith(read: (alias: string, handle: T) => Promise<void>): void {
    this.readUsage = (alias) => read(alias, this.account(alias).handle);
  }

  /**
   * Which login a login file holds, counted from 0 (a new one written over it counts one more): a
   * usage read started for one generation reports nothing once the file holds another.
   */
  loginGeneration(alias: string): number {
    return this.account(alias).generation;
  }

  /**
   * A turn on `lease` failed before any output. Applies what the failure says about the account
   * (cooldown, dead login) and returns a lease on another usable account for one more try, or
   * `undefined` when the failure is not about the account or no other account can take the turn.
   */
  moveAfter(
    lease: AccountLease<T>,
    error: unknown,
    chatKey: string | undefined,
    model?: string,
  ): AccountLease<T> | undefined {
    if (!this.applyFailure(lease.alias, error, lease.loginFileSeen, model)) return undefined;
    lease.release();
    let next: AccountLease<T>;
    try {
      next = this.acquire(chatKey, model, lease.alias);
    } catch {
      return undefined;
    }
    this.deps.metrics.accountMovedAway(this.family, lease.alias);
    // The turn runner logs the move (`upstream_account_moved`, with the failure that caused it).
    return next;
  }

  /**
   * Records what a failure says about an account (usage limit or 429: cooldown until the reset the
   * upstream reported, else the default; a limit of one model's quota: that model rests on this
   * login until then; usage paused by the login's organization: `usage_paused` for the error's
   * Retry-After; authentication: dead until the login file changes). `model` is the upstream
   * model the failed turn asked for; `seen` the login file the work used: a failure of a login the
   * file no longer holds changes nothing (`staleReport`). Returns whether the failure was about
   * the account.
   */
  applyFailure(alias: string, error: unknown, seen?: LoginFileSeen, model?: string): boolean {
    if (!(error instanceof GatewayError)) return false;
    const account = this.account(alias);
    const stale = seen !== undefined && seen.generation !== account.generation;
    if (error.code === 'extra_usage_required') {
      if (stale) return this.staleReport(account, error.code, false);
      // The vendor bills this request's content as a third-party app: the login still serves others on its plan.
      if (account.needsExtraUsageSince === undefined) {
        account.needsExtraUsageSince = this.deps.clock.now();
        this.deps.logger.warn(
          { event: 'account_needs_extra_usage', provider: this.family, account: alias },
          'account_needs_extra_usage',
        );
        this.publishPlan(account);
      }
      return false;
    }
    // The login has no access to this model (another login may): the turn tries another one.
    if (error.code === 'not_found' && error.limitsModel) return true;
    if (error.spec.refusesAccount) {
      if (stale) return this.staleReport(account, error.code, false);
      // The upstream refuses this kind of account: parked until the login file changes, no move.
      account.unsupportedFingerprint = account.loginFile ? (account.onDisk ?? null) : null;
      return false;
    }
    if (error.code === 'usage_paused') {
      if (stale) return this.staleReport(account, error.code, true);
      this.pause(account, error);
      return true;
    }
    // A spent usage credit rests the login like a spent usage limit: until the reset it reported.
    if (error.code === 'usage_limit' || error.code === 'rate_limited' || error.code === 'usage_credit_exhausted') {
      if (stale) return this.staleReport(account, error.code, true);
      const reason = error.code === 'rate_limited' ? 'rate_limited' : 'usage_limit';
      const resetMs =
        error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : this.options.cooldownDefaultMs;
      const until = this.deps.clock.now() + Math.max(resetMs, 1000);
      if (error.limitsModel && model !== undefined) {
        this.restModel(account, model, until);
        return true;
      }
      // A later reset reported meanwhile (another window) wins; never shorten a cooldown, a pause,
      // nor the paid-usage guard's rest.
      if ((restsUntil(account.state) ?? 0) >= until) return true;
      this.deps.metrics.accountCooldown(this.family, alias, reason);
      this.transition(account, { kind: 'cooling', until, reason });
      return true;
    }
    if (error.code === 'auth') {
      if (stale) return this.staleReport(account, error.code, true);
      // Who refused it: its token endpoint the refresh token, else the upstream's API in its answer
      // (a later answered turn on it disproves that), unless the login's own file failed.
      const refusedBy = error.refreshRefused ? 'token_endpoint' : error.loginFileCause ? undefined : 'api';
      const state = account.state;
      if (state.kind !== 'login_dead') {
        // The file that failed is the one the work used, not a newer one the sweep saw since (a
        // `codex login` while a refresh was refused must bring the login back).
        const onDisk = seen ? seen.onDisk : account.onDisk;
        account.deathUnread = account.loginFile !== undefined && onDisk === undefined;
        this.transition(account, {
          kind: 'login_dead',
          fingerprint: onDisk ?? undefined,
          ...(refusedBy ? { refusedBy } : {}),
        });
      } else if (state.refusedBy === 'api' && refusedBy !== 'api' && !state.check) {
        // Its refresh token or its file failed too: only a new login brings it back now.
        account.state = { kind: 'login_dead', fingerprint: state.fingerprint, ...(refusedBy ? { refusedBy } : {}) };
      }
      return true;
    }
    return false;
  }

  /**
   * A report of work that started on a login the file held before another account's was written
   * over it (`loginReplaced`): it is that login's, so it changes nothing of the account, which
   * stands for the new login now. Logged (`report`: `plan`, or the failure's code); returns `about`.
   */
  private staleReport(account: Account<T>, report: string, about: boolean): boolean {
    this.deps.logger.info(
      { event: 'account_report_stale', provider: this.family, account: account.alias, report },
      'account_report_stale',
    );
    return about;
  }

  /**
   * What the login report's offline check found (docs/accounts.md "Login report"), each time it
   * ran. A login it finds not usable (no login, a file that cannot serve, the family's CLI missing)
   * is `login_dead` like one the upstream refused: the views say so, and new turns go to the other
   * logins. Only a later check that finds it usable brings it back (a refused login keeps its own
   * cause and heals when its file changes).
   */
  loginChecked(alias: string, check: LoginCheck): void {
    const account = this.account(alias);
    this.heal(account);
    const state = account.state;
    // The check's first finding on a login no turn has used sets where it starts, no change: the
    // report's own `login_state` line is the one that tells it (docs/troubleshooting.md).
    const first = !account.checked && account.lastSelectedAt === 0 && state.kind === 'ready';
    account.checked = true;
    if (isUsable(check.state)) {
      if (state.kind === 'login_dead' && state.check) this.recover(account);
    } else if (state.kind !== 'login_dead') {
      this.transition(account, { kind: 'login_dead', fingerprint: account.onDisk ?? undefined, check }, first);
    } else if (state.check) {
      // Still ruled out, maybe for another cause: the newest one is what a move or a view names.
      account.state = { ...state, check };
    }
  }

  /** What the offline check found when it is why a login is dead (`loginChecked`); undefined otherwise. */
  ruledOutBy(alias: string): LoginCheck | undefined {
    const state = this.account(alias).state;
    return state.kind === 'login_dead' ? state.check : undefined;
  }

  /**
   * What the offline check found of every login but `alias`, when each of them is dead because of
   * it (`loginChecked`); undefined while another login is alive or was refused by the upstream.
   */
  ruledOutOthers(alias: string): LoginFinding[] | undefined {
    const others = this.accounts.filter((account) => account.alias !== alias);
    const findings = others.flatMap((account) => {
      this.heal(account);
      return account.state.kind === 'login_dead' && account.state.check
        ? [{ alias: account.alias, check: account.state.check, loginCommand: account.loginCommand }]
        : [];
    });
    return others.length > 0 && findings.length === others.length ? findings : undefined;
  }

  /** What logs one login in again: its own command (PoolAccountSpec.loginCommand), else the family's. */
  loginFixOf(alias: string): string {
    return loginFix(this.family, 'refresh_refused', this.account(alias).loginCommand)!;
  }

  /** The login's own command when the family's plain one would log in another file; undefined otherwise. */
  loginCommandOf(alias: string): string | undefined {
    return this.account(alias).loginCommand;
  }

  /**
   * What requests learned about a login that its files cannot show (for the login report): the
   * upstream's API refused it (`login_refused`, until a turn on it is answered or the login file
   * changes), its token endpoint refused its refresh token (`refresh_refused`, until the login file
   * changes), or the upstream does not serve the account (until the login file changes).
   */
  loginVerdict(alias: string): 'refresh_refused' | 'login_refused' | 'account_unsupported' | undefined {
    const account = this.account(alias);
    this.heal(account);
    // A login the check ruled out is the check's own finding, not something requests learned; a
    // file that failed a request is what the check reads itself (`refusalOf`).
    if (account.state.kind === 'login_dead') return account.state.check ? undefined : refusalOf(account.state);
    if (account.unsupportedFingerprint === undefined) return undefined;
    const current = account.loginFile ? (account.onDisk ?? null) : null;
    if (current === account.unsupportedFingerprint) return 'account_unsupported';
    account.unsupportedFingerprint = undefined;
    return undefined;
  }

  /**
   * What the upstream said about a login's plan and paid usage. Windows are merged by name with
   * the ones reported before; the paid-usage facts and `planSpent` are the latest report's. A
   * turn's report comes with the login file its lease saw (`seen`): one of a login the file no
   * longer holds is dropped (`staleReport`).
   */
  reportPlan(alias: string, report: PlanReport, seen?: LoginFileSeen): void {
    const account = this.account(alias);
    if (seen !== undefined && seen.generation !== account.generation) {
      this.staleReport(account, 'plan', false);
      return;
    }
    account.plan = {
      ...report,
      windows: mergedWindows(account.plan?.windows, report.windows),
      // Paid-usage facts not repeated by this report stand, but only this report can say they are in use now.
      paid: report.paid ?? (account.plan?.paid && { ...account.plan.paid, inUse: false }),
      planType: report.planType ?? account.plan?.planType,
    };
    account.planUpdatedAt = this.deps.clock.now();
    this.guard(account);
    this.publishPlan(account);
  }

  /**
   * A successful turn of a login: it is served on its plan again, so a standing refusal for extra
   * usage (one request's content) no longer describes it, and a refusal by its API (a family's only
   * login is still asked) is over: the login is back (`recover`). Not a login dead for another
   * cause: the offline check's finding ends at a later check, and a turn served on the access token
   * the login still had proves nothing of a refused refresh token or a failed login file. Not when
   * `seen` is a login the file no longer holds: that login's success says nothing of the one it
   * holds now.
   */
  succeeded(alias: string, seen?: LoginFileSeen): void {
    const account = this.account(alias);
    if (seen !== undefined && seen.generation !== account.generation) return;
    const state = account.state;
    if (state.kind === 'login_dead' && state.refusedBy === 'api' && !state.check) this.recover(account);
    if (account.needsExtraUsageSince === undefined) return;
    account.needsExtraUsageSince = undefined;
    this.publishPlan(account);
  }

  /** What the views show of one login's plan (the JSON route, the metrics, the setup check). */
  planView(alias: string): LoginPlanView {
    const account = this.account(alias);
    this.heal(account);
    return this.viewOf(account);
  }

  /** The latest plan report of a login, if any upstream answer or usage read carried one. */
  planOf(alias: string): PlanReport | undefined {
    return this.account(alias).plan;
  }

  /**
   * Seconds until the first of the family's resting logins is back for a turn on `model`: the end
   * of its state's rest (`restsUntil`: a cooldown, the paid-usage guard's rest, its organization's
   * pause), or later while `model` rests on it too. ACCOUNT_COOLDOWN_DEFAULT when no login rests. A limit whose reset is unknown tells its client
   * this wait (`AccountTurn.finalError`): the gateway's own rest of the login is what it knows.
   */
  restWaitSeconds(model?: string): number {
    const now = this.deps.clock.now();
    let first = Infinity;
    for (const account of this.accounts) {
      const back = Math.max(restsUntil(account.state) ?? 0, this.modelRestsUntil(account, model) ?? 0);
      if (back > now && back < first) first = back;
    }
    const until = first === Infinity ? now + this.options.cooldownDefaultMs : first;
    return Math.max(1, Math.ceil((until - now) / 1000));
  }

  /** The error a new turn on `model` would get now, or `undefined` while some account is usable. */
  unavailableError(model?: string): GatewayError | undefined {
    this.accounts.forEach((account) => this.heal(account));
    return this.candidate(undefined, model) ? undefined : this.unavailable(model);
  }

  /** Reads the login files, heals what is due, forgets silent chats and refreshes the gauges; run on a timer. */
  sweep(): void {
    this.accounts.forEach((account) => this.readLoginFile(account));
    this.accounts.forEach((account) => this.heal(account));
    this.pins.purgeStale();
  }

  /** Accounts whose login may be refreshed in the background (every one whose login is not dead). */
  liveAccounts(): ReadonlyArray<{ readonly alias: string; readonly handle: T }> {
    return this.accounts.filter((account) => (this.heal(account), account.state.kind !== 'login_dead'));
  }

  private account(alias: string): Account<T> {
    const account = this.accounts.find((candidate) => candidate.alias === alias);
    if (!account) throw new Error(`${this.family}: unknown account alias`);
    return account;
  }

  private usable(account: Account<T>, model: string | undefined): boolean {
    return this.hasRoom(account) && this.servesNow(account, model);
  }

  /** Under its in-flight cap (`maxInFlight`; 0 = no cap). */
  private hasRoom(account: Account<T>): boolean {
    const { maxInFlight } = this.options;
    return maxInFlight === 0 || account.inFlight < maxInFlight;
  }

  /**
   * One chat runs at most as many turns at once as one login takes (`maxInFlight`), whichever
   * logins they run on: a chat sending many turns at once (plain turns bypass the agent queue)
   * would otherwise take every slot of the family. Throws the pool's 429 saying so.
   */
  private chatBound(chatKey: string): void {
    const cap = this.options.maxInFlight;
    if (cap === 0 || (this.chatTurns.get(chatKey) ?? 0) < cap) return;
    const seconds = ALL_BUSY_RETRY_AFTER_SECONDS;
    throw new GatewayError('rate_limited', {
      retryAfterSeconds: seconds,
      publicMessage: `this chat already has ${cap} ${cap === 1 ? 'turn' : 'turns'} running on ${this.family} logins, as many as one login takes at once (ACCOUNT_MAX_IN_FLIGHT=${cap}); retry in ${formatWait(seconds)}, once one of them has ended, or raise ACCOUNT_MAX_IN_FLIGHT`,
      detail: `${this.family} chat at its in-flight bound`,
    });
  }

  /** Ready, and `model` does not rest on it: a login with several others would be given the turn, its cap aside. */
  private servesNow(account: Account<T>, model: string | undefined): boolean {
    return account.state.kind === 'ready' && this.modelRestsUntil(account, model) === undefined;
  }

  /**
   * The paid-usage guard holds the login back, even from the turns a family's last logins still
   * get (`soleLogin`, `ruledOutByCheck`, `retake`): it rests on a spent plan; its plan is spent
   * until a known reset, or at all while it is dead (a dead login keeps its state, `guard`); the
   * window of `model` is spent with paid usage behind it (`paidModelRest`); or the check found
   * that its turns would be billed outside the plan (`LoginCheck.billsElsewhere`).
   */
  private guardHolds(account: Account<T>, model?: string): boolean {
    const state = account.state;
    if (state.kind === 'plan_spent' || (state.kind === 'login_dead' && state.check?.billsElsewhere === true))
      return true;
    if (this.paidModelRest(account, model) !== undefined) return true;
    const risk = this.paidRisk(account);
    return risk !== undefined && (risk.resetsAt !== undefined || state.kind === 'login_dead');
  }

  /**
   * Under `plan_only`, until when turns on `model` stay off this login because its window for that
   * model (a per-model window, `modelRestsUntil`) is spent while paid usage stands behind the plan
   * (available, or reported in use): the upstream would serve that model from paid usage. Unlike a
   * rest of the model alone, this holds a family's only login too.
   */
  private paidModelRest(account: Account<T>, model: string | undefined): number | undefined {
    const paid = account.plan?.paid;
    if (this.paidUsage === 'allow' || (paid?.available !== true && paid?.inUse !== true)) return undefined;
    return this.modelRestsUntil(account, model);
  }

  /**
   * Until when `model` rests on this login: its quota window for that model, or for another id of
   * its quota bucket (`quotaBucketOf`), is spent and resets later (a per-model bucket the usage
   * endpoint reported, or a model's limit a turn hit).
   */
  private modelRestsUntil(account: Account<T>, model: string | undefined): number | undefined {
    if (model === undefined) return undefined;
    const windows = account.plan?.windows;
    if (windows === undefined || windows.length === 0) return undefined;
    const bucketOf = this.options.quotaBucketOf;
    // The turn's bucket only once a spent model window is there to compare: most logins have none.
    let bucket: string | undefined;
    const now = this.deps.clock.now();
    let until: number | undefined;
    for (const window of windows) {
      if (window.model === undefined || window.usedRatio === undefined || window.usedRatio < 1) continue;
      bucket ??= bucketOf ? bucketOf(model) : model;
      if ((bucketOf ? bucketOf(window.model) : window.model) !== bucket) continue;
      if (window.resetsAt !== undefined && window.resetsAt > now) until = Math.max(until ?? 0, window.resetsAt);
    }
    return until;
  }

  /**
   * A turn hit this login's limit for one model: the model's window reads spent until `until` (a
   * later reset already known stands), so new turns on that model go to another login while the
   * login's other models still serve. The usage endpoint's next reading replaces it.
   */
  private restModel(account: Account<T>, model: string, until: number): void {
    if ((this.modelRestsUntil(account, model) ?? 0) >= until) return;
    const spent: PlanWindow = { name: model, model, usedRatio: 1, resetsAt: until };
    account.plan = { source: 'turn', ...account.plan, windows: mergedWindows(account.plan?.windows, [spent]) };
    account.planUpdatedAt = this.deps.clock.now();
    this.deps.metrics.accountCooldown(this.family, account.alias, 'usage_limit');
    this.deps.logger.warn(
      {
        event: 'account_model_resting',
        provider: this.family,
        account: account.alias,
        model,
        until: new Date(until).toISOString(),
      },
      'account_model_resting',
    );
    this.publishPlan(account);
  }

  /**
   * The upstream paused all usage of the login's organization (`usage_paused`): the login rests
   * for the error's Retry-After (the reset the upstream gave, else the table's hour), as a state of
   * its own, so no view reads it as a spent plan or a limit of the login; the line names the
   * error's fix. A longer rest already running stands.
   */
  private pause(account: Account<T>, error: GatewayError): void {
    const until = this.deps.clock.now() + Math.max(1, error.retryAfterHeader ?? 0) * 1000;
    if ((restsUntil(account.state) ?? 0) >= until || account.state.kind === 'login_dead') return;
    this.transition(account, { kind: 'usage_paused', until, fix: error.fix });
  }

  private best(exclude: string | undefined, model: string | undefined): Account<T> | undefined {
    let best: Account<T> | undefined;
    let bestScore = -Infinity;
    for (const account of this.accounts) {
      if (account.alias === exclude || !this.usable(account, model)) continue;
      // A login whose first usage read still runs comes after every login already read.
      const score = this.firstReads?.has(account.alias) ? this.headroom(account) - 2 : this.headroom(account);
      if (score > bestScore || (score === bestScore && best && account.lastSelectedAt < best.lastSelectedAt)) {
        best = account;
        bestScore = score;
      }
    }
    return best;
  }

  /**
   * A family with one login keeps working as it did before pooling: with no other login to turn
   * to, the upstream is asked even while the login is cooling or dead (it answers the same 429 or
   * 401, and notices at once when the plan or the login changed). Its state is still tracked and
   * shown. Only an explicit in-flight cap holds it back, and the paid-usage guard (`guardHolds`): a
   * spent plan, or a login the check found billing an API key, would be served from the owner's
   * money, so it is never bypassed.
   */
  private soleLogin(exclude: string | undefined, model: string | undefined): Account<T> | undefined {
    const [only, ...others] = this.accounts;
    const { maxInFlight } = this.options;
    if (
      others.length > 0 ||
      only.alias === exclude ||
      this.guardHolds(only, model) ||
      (maxInFlight !== 0 && only.inFlight >= maxInFlight)
    )
      return undefined;
    return only;
  }

  /** The login a new turn would get, leaving the chat's pin aside: the best usable, else a fallback. */
  private candidate(exclude: string | undefined, model: string | undefined): Account<T> | undefined {
    return this.best(exclude, model) ?? this.soleLogin(exclude, model) ?? this.ruledOutByCheck(exclude, model);
  }

  /**
   * When every login is dead and some only because the offline check ruled them out
   * (`loginChecked`), the least recently chosen of those still takes a new turn, as a family's
   * only login does (`soleLogin`): the family's own error then names the cause (a missing CLI is
   * 502 `provider_cli_missing`) where the pool's would only say to log in, and a login the check
   * cannot see (a keychain) still serves. Never for a turn moving away (`exclude`): one turn is
   * not walked through every login the check ruled out. Never a login the paid-usage guard holds
   * (`guardHolds`): one whose check says it would bill an API key or a cloud account, or whose
   * plan is spent; with none left the pool answers, naming the check's fix.
   */
  private ruledOutByCheck(exclude: string | undefined, model: string | undefined): Account<T> | undefined {
    if (exclude !== undefined || this.accounts.some((account) => account.state.kind !== 'login_dead')) return undefined;
    const { maxInFlight } = this.options;
    let chosen: Account<T> | undefined;
    for (const account of this.accounts) {
      if (account.state.kind !== 'login_dead' || !account.state.check || this.guardHolds(account, model)) continue;
      if (maxInFlight !== 0 && account.inFlight >= maxInFlight) continue;
      if (!chosen || account.lastSelectedAt < chosen.lastSelectedAt) chosen = account;
    }
    return chosen;
  }

  /** Unused share of the tightest window still running, per turn the account would then carry. */
  private headroom(account: Account<T>): number {
    const now = this.deps.clock.now();
    let used = 0;
    for (const window of account.plan?.windows ?? []) {
      const running = window.resetsAt === undefined || window.resetsAt > now;
      if (running && window.usedRatio !== undefined && window.model === undefined)
        used = Math.max(used, window.usedRatio);
    }
    return Math.max(0, 1 - used) / (account.inFlight + 1);
  }

  /** `pin`: the chat sticks to `account` from now on (not for a turn that only overflowed its full login). */
  private lease(account: Account<T>, chatKey: string | undefined, kind: SelectionKind, pin: boolean): AccountLease<T> {
    account.inFlight++;
    account.lastSelectedAt = this.deps.clock.now();
    if (chatKey !== undefined) {
      this.chatTurns.set(chatKey, (this.chatTurns.get(chatKey) ?? 0) + 1);
      if (pin && this.pins.get(chatKey) !== account.alias) {
        this.pins.set(chatKey, account.alias);
        this.countPin(account.alias, +1);
      }
    }
    this.deps.metrics.accountSelected(this.family, account.alias, kind);
    this.deps.metrics.accountInFlight(this.family, account.alias, account.inFlight);
    return new PoolLease(this, account, chatKey);
  }

  /**
   * A lease of `account` was given back (`PoolLease.release`, once, after its `closing`); `paidBy` is set when the
   * turn reported drawing paid usage on it: one paid turn (logged once, however many reports),
   * counted here because a family may report after its answer.
   */
  released(account: Account<T>, paidBy: EventLogger | undefined): void {
    account.inFlight--;
    account.closing--;
    this.deps.metrics.accountInFlight(this.family, account.alias, account.inFlight);
    if (paidBy) this.paidTurn(account, paidBy);
    const freed = this.slotFreed;
    if (freed) {
      this.slotFreed = undefined;
      freed.resolve();
    }
  }

  /**
   * A lease's turn is over for its client (`PoolLease.closing`, which `release` implies): its
   * chat's bound is given back, its login slot not yet (`released`).
   */
  closing(account: Account<T>, chatKey: string | undefined): void {
    account.closing++;
    if (chatKey === undefined) return;
    const turns = (this.chatTurns.get(chatKey) ?? 1) - 1;
    if (turns > 0) this.chatTurns.set(chatKey, turns);
    else this.chatTurns.delete(chatKey);
  }

  /**
   * After `acquire` refused a turn of `chatKey` on `model`: resolves at the next lease given back
   * when a login that would take the turn is full only for now, holding a turn that is over for
   * its client but still being freed (`AccountLease.closing`: a provider_c child stopping, which
   * takes at most its kill grace). Undefined when no such turn could make room (no cap, the chat
   * at its own bound with turns still running, or no login that would take it is closing one): the
   * refusal stands. The caller then asks `acquire` again.
   */
  whenSlotFrees(chatKey: string | undefined, model?: string): Promise<void> | undefined {
    const cap = this.options.maxInFlight;
    if (cap === 0 || (chatKey !== undefined && (this.chatTurns.get(chatKey) ?? 0) >= cap)) return undefined;
    const sole = this.accounts.length === 1;
    const freeing = this.accounts.some(
      (account) => account.closing > 0 && (sole ? !this.guardHolds(account, model) : this.servesNow(account, model)),
    );
    if (!freeing) return undefined;
    if (!this.slotFreed) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.slotFreed = { promise, resolve };
    }
    return this.slotFreed.promise;
  }

  private countPin(alias: string, delta: number): void {
    const count = Math.max(0, (this.pinCounts.get(alias) ?? 0) + delta);
    this.pinCounts.set(alias, count);
    this.deps.metrics.accountPinnedChats(this.family, alias, count);
  }

  /**
   * The login file's fingerprint now (a stat), for `sweep()` only; a changed file is read again by
   * its family, which says whose login it holds: another account's than before is a new login.
   */
  private readLoginFile(account: Account<T>): void {
    if (!account.loginFile) return;
    const onDisk = loginFingerprint(account.loginFile) ?? null;
    if (onDisk !== account.onDisk) {
      const login = account.loginFileChanged?.();
      if (login !== undefined) {
        if (account.loginOf !== undefined && login !== account.loginOf) this.loginReplaced(account);
        account.loginOf = login;
      }
    }
    account.onDisk = onDisk;
    if (account.deathUnread && account.state.kind === 'login_dead') {
      account.state = { ...account.state, fingerprint: account.onDisk ?? undefined };
    }
    account.deathUnread = false;
  }

  /**
   * The login file holds another account's login now (`codex login` with another account over a
   * mounted file): what the pool knew is the previous login's. Its plan facts go, and a cooldown, a
   * pause of its organization or a rest on a spent plan ends (they were that account's); a dead
   * login heals by its own rule (`heal`). The new login's usage is read at once, and under `plan_only` its turns wait for that
   * read as the first turns after startup do, so a new login whose plan is spent too is still
   * refused before anything is sent. Without usage reads (ACCOUNT_USAGE_REFRESH_INTERVAL=0) nothing
   * could tell, so a rest on a spent plan and its facts stay until their reset: a refresh that
   * rotated the file's key must not open a spent login to paid turns. One line says it (the state
   * change included).
   */
  private loginReplaced(account: Account<T>): void {
    const from = account.state.kind;
    account.generation++;
    const unread = from === 'plan_spent' && this.readUsage === undefined;
    if (!unread) {
      account.plan = undefined;
      account.planUpdatedAt = undefined;
    }
    account.needsExtraUsageSince = undefined;
    if (from === 'cooling' || from === 'usage_paused' || (from === 'plan_spent' && !unread)) {
      account.state = { kind: 'ready' };
      this.publishState(account);
    }
    this.publishPlan(account);
    this.deps.logger.info(
      {
        event: 'account_login_changed',
        provider: this.family,
        account: account.alias,
        path: account.loginFile,
        from,
        state: account.state.kind,
      },
      'account_login_changed',
    );
    const read = this.readUsage?.(account.alias);
    if (read) this.firstUsageReadStarted(account.alias, read);
  }

  /**
   * Ends a cooldown, a pause or a rest whose time has come, and a login the upstream refused whose
   * file changed (as `sweep()` last read it); sets the plan's gauges again once what they show
   * changed by itself (`planChangesAt`).
   */
  private heal(account: Account<T>): void {
    const state = account.state;
    const until = restsUntil(state);
    const now = this.deps.clock.now();
    if (until !== undefined && now >= until) this.recover(account);
    else if (
      state.kind === 'login_dead' &&
      !state.check &&
      account.loginFile &&
      account.onDisk !== undefined &&
      !account.deathUnread &&
      (account.onDisk ?? undefined) !== state.fingerprint
    ) {
      this.recover(account);
    }
    // A window reset or a spent state ended since the gauges were set: they show it now, as the
    // JSON route does, not at the next report (which never comes while usage reads are off).
    if (account.planChangesAt !== undefined && now >= account.planChangesAt) this.publishPlan(account);
  }

  /**
   * A cooldown, a pause or a dead login is over: the login is ready, unless its plan is still spent
   * with paid usage behind it (a limit, a 429 or a dead login may have replaced the guard's rest, and
   * must not end it early): then it rests until the plan resets. With no reset known the guard's
   * own rest ended after the default cooldown, and the next answer tells again.
   */
  private recover(account: Account<T>): void {
    const until = this.paidRisk(account)?.resetsAt;
    this.transition(
      account,
      until === undefined ? { kind: 'ready' } : { kind: 'plan_spent', until, reason: 'plan_spent' },
    );
  }

  /**
   * No usable account: the organization's pause (`usage_paused`, the earliest end of the rests)
   * when every login that is not dead is paused; 429 with the earliest reset while any account is
   * cooling, paused or busy; when every ready login has spent its quota for `model`, 429 until the
   * earliest of those resets;
   * when the only logins left are resting on a spent plan, or (none cooling) hold `model` back
   * because its window is spent with paid usage behind it (`paidModelRest`), the paid-usage
   * refusal; else `auth` (chat 403).
   */
  private unavailable(model: string | undefined): GatewayError {
    const spent = this.accounts.flatMap((account) => (account.state.kind === 'plan_spent' ? [account.state] : []));
    const paused = this.accounts.flatMap((account) => (account.state.kind === 'usage_paused' ? [account.state] : []));
    const others = this.accounts.some(
      (account) =>
        account.state.kind === 'ready' || account.state.kind === 'cooling' || account.state.kind === 'usage_paused',
    );
    const secondsUntil = (epochMs: number) => Math.max(1, Math.ceil((epochMs - this.deps.clock.now()) / 1000));
    if (spent.length > 0 && !others) {
      const resetsAt = Math.min(...spent.map((state) => state.until));
      return new GatewayError('paid_usage_not_allowed', {
        provider: this.family,
        retryAfterSeconds: secondsUntil(resetsAt),
        resetsAt,
        detail: `${this.family} accounts all on a spent plan (ACCOUNT_PAID_USAGE=plan_only)`,
      });
    }
    // Every login that is not dead is paused by its organization: the pause's own error and fix.
    if (
      paused.length > 0 &&
      this.accounts.every((account) => ['usage_paused', 'login_dead'].includes(account.state.kind))
    ) {
      const until = Math.min(...paused.map((state) => state.until));
      return new GatewayError('usage_paused', {
        provider: this.family,
        retryAfterSeconds: secondsUntil(until),
        detail: `${this.family} accounts all paused by their organization`,
        fix: paused.find((state) => state.fix !== undefined)?.fix,
      });
    }
    // Every ready login's window for the model is spent with paid usage behind it, and none cools.
    const ready = this.accounts.filter((account) => account.state.kind === 'ready');
    const held = ready.flatMap((account) => this.paidModelRest(account, model) ?? []);
    if (
      model !== undefined &&
      held.length > 0 &&
      held.length === ready.length &&
      !this.accounts.some((account) => account.state.kind === 'cooling')
    )
      return paidModelRefusal(this.family, model, Math.min(...held), secondsUntil);
    const cooling = this.accounts.flatMap((account) => restsUntil(account.state) ?? []);
    // A family's only login is asked whatever its model rests (soleLogin): if it is held back, it is busy.
    const restedModel = this.accounts.length > 1 ? model : undefined;
    // Ready logins are either resting the model (until its reset) or at their in-flight cap (busy).
    const modelResets: number[] = [];
    let busy = false;
    for (const account of this.accounts) {
      if (account.state.kind !== 'ready') continue;
      const until = this.modelRestsUntil(account, restedModel);
      if (until === undefined) busy = true;
      else modelResets.push(until);
    }
    if (!busy && modelResets.length > 0) {
      const seconds = secondsUntil(Math.min(...modelResets, ...cooling));
      return new GatewayError('usage_limit', {
        retryAfterSeconds: seconds,
        publicMessage: `every ${this.family} login has reached its usage limit for ${model}; retry in ${formatWait(seconds)}, or choose another model from GET /v1/models`,
        detail: `${this.family} accounts all cooling or resting ${model}`,
      });
    }
    if (busy || cooling.length > 0) {
      const seconds = busy ? ALL_BUSY_RETRY_AFTER_SECONDS : secondsUntil(Math.min(...cooling));
      const cap = this.options.maxInFlight;
      // The busy ones are the ready ones: `usable` when others are out (cooling, dead) meanwhile.
      const logins =
        this.accounts.length === 1
          ? `the ${this.family} login is`
          : `every ${ready.length === this.accounts.length ? '' : 'usable '}${this.family} login is`;
      return new GatewayError('rate_limited', {
        retryAfterSeconds: seconds,
        publicMessage: !busy
          ? `every ${this.family} login has reached its usage limit${paused.length > 0 ? ' or is paused by its organization' : ''}; retry in ${formatWait(seconds)}`
          : cap > 0
            ? `${logins} at its in-flight cap (ACCOUNT_MAX_IN_FLIGHT=${cap}); retry in ${formatWait(seconds)}, or raise ACCOUNT_MAX_IN_FLIGHT or add a login`
            : `${logins} busy; retry in ${formatWait(seconds)}`,
        detail: busy ? `${this.family} accounts all at their in-flight cap` : `${this.family} accounts all cooling`,
      });
    }
    // Every login is dead. The fix their causes share (the offline check's, such as a login file
    // the gateway may not read, or a new login for a refused one), as the login report says it;
    // the table's message names the family's CLI and login command when that is the fix.
    const { fix, message } = noUsableLogin(
      this.family,
      this.accounts.map((account) => ({
        alias: account.alias,
        // A failed login file is refused as a refresh is: a new login (the check names its cause).
        check:
          account.state.kind === 'login_dead'
            ? (account.state.check ?? { state: refusalOf(account.state) ?? 'refresh_refused' })
            : undefined,
        loginCommand: account.loginCommand,
      })),
    );
    const own = fix !== loginFix(this.family, 'refresh_refused');
    return new GatewayError('auth', {
      provider: this.family,
      detail: `${this.family} accounts all logged out`,
      ...(own ? { publicMessage: message, fix } : {}),
    });
  }

  /** `untold`: the login's state is set without a line of its own (another line tells it). */
  private transition(account: Account<T>, next: AccountState, untold = false): void {
    const previous = account.state.kind;
    account.state = next;
    this.publishState(account);
    if (untold) return;
    const fields: Record<string, unknown> = {
      event: 'account_state',
      provider: this.family,
      account: account.alias,
      from: previous,
      state: next.kind,
    };
    if (next.kind === 'cooling') {
      fields.reason = next.reason;
      fields.until = new Date(next.until).toISOString();
    }
    if (next.kind === 'plan_spent') {
      fields.reason = next.reason;
      fields.until = new Date(next.until).toISOString();
    }
    if (next.kind === 'usage_paused') {
      fields.until = new Date(next.until).toISOString();
      fields.fix = next.fix;
    }
    // The offline check's finding and its fix; else who refused the login (the upstream's API, or
    // its token endpoint the refresh) as the login report names it, and the new login that fixes it.
    if (next.kind === 'login_dead' && next.check) {
      fields.reason = next.check.state;
      fields.fix = next.check.fix ?? loginFix(this.family, next.check.state, account.loginCommand);
    } else if (next.kind === 'login_dead') {
      const refusal = refusalOf(next);
      if (refusal) fields.reason = refusal;
      fields.fix = this.loginFixOf(account.alias);
    }
    if (next.kind === 'ready') this.deps.logger.info(fields, 'account_state');
    else this.deps.logger.warn(fields, 'account_state');
  }

  private publishState(account: Account<T>): void {
    const state = account.state;
    this.deps.metrics.accountState(this.family, account.alias, state.kind, restsUntil(state));
  }

  /**
   * The paid-usage guard (docs/accounts.md "What each login has left, and paid usage"). Under
   * `plan_only`, a login whose report says paid usage is in use, or whose plan is spent while paid
   * usage is available to draw, rests until the plan resets (`paidRisk`; the default cooldown when
   * no reset is known). Under `allow` the
   * facts are only shown, and each paid turn counted when its lease ends.
   */
  private guard(account: Account<T>): void {
    const risk = this.paidRisk(account);
    if (risk === undefined) return;
    const now = this.deps.clock.now();
    const until = risk.resetsAt ?? now + this.options.cooldownDefaultMs;
    if (until <= now) return;
    const state = account.state;
    // A dead login stays dead: its own fix comes first, `guardHolds` keeps the turns that may still
    // ask a dead login off it while its plan is spent, and `recover` rests it if it comes back.
    if (state.kind === 'login_dead') return;
    if ((restsUntil(state) ?? 0) >= until) return;
    this.transition(account, { kind: 'plan_spent', until, reason: risk.inUse ? 'paid_usage_in_use' : 'plan_spent' });
  }

  /**
   * Whether the plan the login last reported (`account.plan`, the latest report's facts) would
   * have a turn draw paid usage under `plan_only`: paid usage in use, or a spent plan with paid
   * usage available (without it the upstream refuses the turn itself, a usage limit that cools the
   * login as any limit does). `resetsAt`: the latest reset still ahead among the spent windows
   * and the one the upstream gave for the spent plan (`spentUntil`, also when the meter it named
   * is not a plan window), when known.
   */
  private paidRisk(account: Account<T>): { readonly inUse: boolean; readonly resetsAt?: number } | undefined {
    const plan = account.plan;
    if (this.paidUsage === 'allow' || plan === undefined) return undefined;
    const now = this.deps.clock.now();
    // The report as it stands now: its spent state and paid usage in use end at its `spentUntil`.
    const reading = planAt(plan, now);
    const spent = reading.planSpent;
    // Paid usage in use while only one model's window is spent is that model's (`paidModelRest`).
    const inUse =
      reading.paid?.inUse === true && (spent || !reading.windows.some((window) => isSpentModelWindow(window, now)));
    if (!inUse && !(spent && reading.paid?.available === true)) return undefined;
    const resets = reading.windows.flatMap((window) =>
      isSpentPlanWindow(window) && window.resetsAt !== undefined ? [window.resetsAt] : [],
    );
    if (plan.spentUntil !== undefined && plan.spentUntil > now) resets.push(plan.spentUntil);
    return { inUse, resetsAt: resets.length > 0 ? Math.max(...resets) : undefined };
  }

  /** One turn that drew paid usage on `account`, logged with the turn's `logger`. */
  private paidTurn(account: Account<T>, logger: EventLogger): void {
    this.deps.metrics.accountPaidTurn(this.family, account.alias);
    logger.info(
      {
        event: 'paid_usage_turn',
        provider: this.family,
        account: account.alias,
        paid_usage: account.plan?.paid?.kind,
        setting: this.paidUsage,
      },
      'paid_usage_turn',
    );
  }

  /** The gauges of the plan as it reads now; `heal` publishes them again when that reading changes. */
  private publishPlan(account: Account<T>): void {
    const view = this.viewOf(account);
    account.planChangesAt = view.changesAt;
    this.deps.metrics.accountPlan(this.family, account.alias, view);
  }

  /** What the JSON route and the gauges show: the latest report as it reads now (`planAt`). */
  private viewOf(account: Account<T>): LoginPlanView & { readonly changesAt?: number } {
    const plan = account.plan;
    const reading = planAt(plan, this.deps.clock.now());
    return {
      ...reading,
      state: account.state.kind,
      planType: plan?.planType,
      needsExtraUsageSince: account.needsExtraUsageSince,
      source: plan?.source,
      updatedAt: account.planUpdatedAt,
      restsUntil: restsUntil(account.state),
    };
  }
}

/** `earlier` with `later` put over it, window by window (by name). */
function mergedWindows(earlier: readonly PlanWindow[] | undefined, later: readonly PlanWindow[]): PlanWindow[] {
  const windows = new Map((earlier ?? []).map((window) => [window.name, window]));
  for (const window of later) windows.set(window.name, window);
  return [...windows.values()];
}

/** A window of one model used up (>= 100 %) whose reset is still ahead (or unknown). */
function isSpentModelWindow(window: PlanWindow, now: number): boolean {
  return (
    window.model !== undefined &&
    window.usedRatio !== undefined &&
    window.usedRatio >= 1 &&
    (window.resetsAt === undefined || window.resetsAt > now)
  );
}

/**
 * The paid-usage refusal of a turn on `model` whose window is spent on every login that could take
 * it, with paid usage behind it: the family's other models still serve, so the message says so.
 */
function paidModelRefusal(
  family: ProviderId,
  model: string,
  resetsAt: number,
  secondsUntil: (epochMs: number) => number,
): GatewayError {
  const seconds = secondsUntil(resetsAt);
  const { cli, paidUsage } = familyOf(family).fix;
  const paid = paidUsage ? paidUsage.name : 'paid usage';
  const page = paidUsage ? `, or manage paid usage at ${paidUsage.page}` : '';
  return new GatewayError('paid_usage_not_allowed', {
    provider: family,
    retryAfterSeconds: seconds,
    resetsAt,
    publicMessage: `${family}: the usage limit for ${model} of every ${cli} login that could take this turn is spent (resets ${new Date(resetsAt).toISOString()}) and the upstream would now bill ${paid}, which this gateway does not spend unless the operator sets ACCOUNT_PAID_USAGE=allow; retry in ${formatWait(seconds)}, choose another model from GET /v1/models${page}`,
    detail: `${family} accounts all resting ${model} on a spent window (ACCOUNT_PAID_USAGE=plan_only)`,
  });
}

/** One login's plan as the views show it: the latest report, the guard's state and the extra-usage flag. */
export interface LoginPlanView {
  readonly state: AccountStateKind;
  readonly windows: readonly PlanWindow[];
  readonly paid?: PlanReport['paid'];
  /**
   * The latest report said the plan is spent and the time it gave for that (`spentUntil`) is still
   * ahead, or a plan window is at 100 % until a reset still ahead (`planAt`).
   */
  readonly planSpent: boolean;
  readonly planType?: string;
  /** Since when (epoch ms) the upstream has asked for extra usage on this login's requests. */
  readonly needsExtraUsageSince?: number;
  readonly source?: PlanReport['source'];
  /** When the last report arrived (epoch ms). */
  readonly updatedAt?: number;
  /**
   * Until when the login takes no new turn (epoch ms): its cooldown, the guard's rest on a spent
   * plan (under plan_only), or the pause of its organization; what the cooling-until gauge holds.
   */
  readonly restsUntil?: number;
}

/** Why an account is cooling: the upstream's usage window is spent, or it answered 429. */
export type CooldownReason = 'usage_limit' | 'rate_limited';

/** Why the paid-usage guard rests a login: the upstream said paid usage is in use, or the plan is spent. */
export type PlanSpentReason = 'paid_usage_in_use' | 'plan_spent';

/**
 * The state of one login. `cooling`, `usage_paused` and `plan_spent` end by themselves at `until`;
 * `usage_paused` is the upstream pausing all usage of the login's organization (a spending cap of
 * the organization), not a limit of the login, with the fix its error named. `login_dead` ends
 * when the login file differs from `fingerprint` (the file as it was when the login failed), or
 * also, when the upstream's API refused it (`refusedBy: 'api'`; `token_endpoint` when its refresh
 * token was refused, none when its own file failed), when a later turn on it is answered; when the
 * login report's offline `check` found it not usable, only when a later check finds it usable.
 */
export type AccountState =
  | { readonly kind: 'ready' }
  | { readonly kind: 'cooling'; readonly until: number; readonly reason: CooldownReason }
  | { readonly kind: 'plan_spent'; readonly until: number; readonly reason: PlanSpentReason }
  | { readonly kind: 'usage_paused'; readonly until: number; readonly fix?: string }
  | {
      readonly kind: 'login_dead';
      readonly fingerprint: string | undefined;
      readonly check?: LoginCheck;
      readonly refusedBy?: 'api' | 'token_endpoint';
    };

export type AccountStateKind = AccountState['kind'];

export const ACCOUNT_STATE_KINDS: readonly AccountStateKind[] = [
  'ready',
  'cooling',
  'login_dead',
  'plan_spent',
  'usage_paused',
];

/**
 * Who refused a login dead by a request's or a refresh's failure, as the login report names it:
 * the upstream's API (`login_refused`) or its token endpoint the refresh token (`refresh_refused`);
 * undefined when its own file failed (the report's check tells the file's state).
 */
function refusalOf(
  state: Extract<AccountState, { kind: 'login_dead' }>,
): 'login_refused' | 'refresh_refused' | undefined {
  if (state.refusedBy === 'api') return 'login_refused';
  return state.refusedBy === 'token_endpoint' ? 'refresh_refused' : undefined;
}

/** Until when a state keeps the login from new turns (a cooldown, a pause, a rest); undefined for the others. */
function restsUntil(state: AccountState): number | undefined {
  return state.kind === 'cooling' || state.kind === 'plan_spent' || state.kind === 'usage_paused'
    ? state.until
    : undefined;
}

/** How an account was chosen for a turn (a metric label). */
export type SelectionKind = 'pinned' | 'new' | 'moved';

/** The clock every pool decision reads; tests inject a manual one. */
export interface AccountClock {
  now(): number;
}

/** A clock object of its own that reads the system clock (one per application, so a spec can move it). */
export function ownSystemClock(): AccountClock {
  return { now: () => Date.now() };
}
