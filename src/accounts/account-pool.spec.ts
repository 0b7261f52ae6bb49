import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GatewayError } from '../core/gateway.error';
import type { PlanReport } from '../core/plan-usage';
import { recordingAccountMetrics, recordingLogger } from '../../test/support/recorders';
import type { AccountPoolOptions } from './account-pool';
import { AccountPool, PIN_IDLE_TTL_MS } from './account-pool';
import { AccountTurn } from './account-turn';
import { startBackgroundRefresh } from './background-refresh';
import { LoginFileFailure } from './login-file-check';
import { failedGrantError } from './refresh-grant';
import { providerCQuotaBucket } from './provider-c/provider-c.quota-buckets';
import { planReportOf } from '../providers/provider-c/provider-c.plan';
import { planReportFromUsage } from '../providers/provider-c/provider-c.usage';

/** A clock the spec moves by hand. */
function manualClock(start = Date.UTC(2026, 10, 23, 12)) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** Runs `check` with a scratch directory for login files, removed afterwards whatever happens. */
function inScratchDir(check: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pool-login-'));
  try {
    check(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A pool of `a` and `b` whose `a` is read from a login file holding one account's login (the
 * pool tells whose by the file's content); `rewrite` writes another account's login over it and
 * lets the pool see it, as `codex login` with another account over a mounted file does.
 */
function withLoginFile(check: (made: ReturnType<typeof makePool>, rewrite: () => void) => void): void {
  inScratchDir((dir) => {
    const file = path.join(dir, 'auth.json');
    fs.writeFileSync(file, 'account-1');
    const made = makePool(['a', 'b'], {}, { a: file }, (content) => content.trim());
    made.pool.sweep();
    check(made, () => {
      fs.writeFileSync(file, 'account-2');
      made.pool.sweep();
    });
  });
}

const OPTIONS: AccountPoolOptions = { maxInFlight: 2, cooldownDefaultMs: 300_000, pinnedChatsMax: 100 };

/**
 * A pool of `aliases`, those in `loginFiles` with their file; `loginOf` is whose login a file's
 * content is, as a family says it (PoolAccountSpec.loginFileChanged): by default it cannot tell.
 */
function makePool(
  aliases = ['a', 'b', 'c'],
  options: Partial<AccountPoolOptions> = {},
  loginFiles: Record<string, string> = {},
  loginOf: (content: string) => string | undefined = () => undefined,
) {
  const clock = manualClock();
  const logger = recordingLogger();
  const recorded = recordingAccountMetrics();
  const loginIn = (file: string) => () => {
    try {
      return loginOf(fs.readFileSync(file, 'utf8'));
    } catch {
      return undefined;
    }
  };
  const pool = new AccountPool(
    'provider_a',
    aliases.map((alias) => {
      const loginFile = loginFiles[alias];
      return {
        alias,
        handle: `handle-${alias}`,
        loginFile,
        loginFileChanged: loginFile ? loginIn(loginFile) : undefined,
      };
    }),
    { ...OPTIONS, ...options },
    { clock, logger, metrics: recorded.metrics },
  );
  return { pool, clock, logger, ...recorded };
}

const usageLimit = (seconds?: number) => new GatewayError('usage_limit', { retryAfterSeconds: seconds });
/** A usage limit of the turn's model only (provider_b's per-model quota buckets). */
const modelLimit = (seconds: number) =>
  new GatewayError('usage_limit', { retryAfterSeconds: seconds, limitsModel: true });
const rateLimited = (seconds?: number) =>
  new GatewayError('rate_limited', { retryAfterSeconds: seconds, retryable: true });
/** The upstream's API refused the login's token in its answer to a turn. */
const apiRefusal = () => new GatewayError('auth', { upstreamStatus: 401 });
/** The token endpoint refused the login's refresh token (refresh-grant.ts). */
const refreshRefusal = () => failedGrantError('provider_a', { ok: false, status: 400, errorCode: 'invalid_grant' });
/** The login's own file failed the turn (missing, unreadable, expired without a refresh token). */
const fileFailure = () => new GatewayError('auth', { detail: 'provider_a login expired', loginFileCause: true });

describe(AccountPool.name, () => {
  it('keeps a chat on its account turn after turn', () => {
    const { pool } = makePool();
    const first = pool.acquire('chat-1');
    first.release();
    for (let turn = 0; turn < 5; turn++) {
      const lease = pool.acquire('chat-1');
      expect(lease.alias).toBe(first.alias);
      lease.release();
    }
  });

  it('spreads new chats over the accounts', () => {
    const { pool } = makePool();
    const aliases = ['chat-1', 'chat-2', 'chat-3'].map((chat) => {
      const lease = pool.acquire(chat);
      lease.release();
      return lease.alias;
    });
    expect(new Set(aliases)).toEqual(new Set(['a', 'b', 'c']));
  });

  it('sends a new chat to the account with the most quota left, and counts turns in flight', () => {
    const { pool, clock } = makePool();
    const later = clock.now() + 3_600_000;
    pool.reportPlan('a', { source: 'turn', windows: [{ name: 'primary', usedRatio: 0.9, resetsAt: later }] });
    pool.reportPlan('b', { source: 'turn', windows: [{ name: 'primary', usedRatio: 0.2, resetsAt: later }] });
    pool.reportPlan('c', {
      source: 'turn',
      windows: [
        { name: 'primary', usedRatio: 0.5, resetsAt: later },
        { name: 'secondary', usedRatio: 0.95, resetsAt: later },
      ],
    });
    const held = pool.acquire('chat-1');
    expect(held.alias).toBe('b');
    // b now carries one turn: 0.8 / 2 = 0.4 still beats a's 0.1, c's tightest window leaves 0.05.
    expect(pool.acquire('chat-2').alias).toBe('b');
  });

  it('ignores a quota window whose reset has passed', () => {
    const { pool, clock } = makePool(['a', 'b']);
    pool.reportPlan('a', {
      source: 'turn',
      windows: [{ name: 'primary', usedRatio: 1, resetsAt: clock.now() + 1000 }],
    });
    pool.reportPlan('b', {
      source: 'turn',
      windows: [{ name: 'primary', usedRatio: 0.5, resetsAt: clock.now() + 3_600_000 }],
    });
    clock.advance(2000);
    expect(pool.acquire('chat-1').alias).toBe('a');
  });

  it("overflows a turn whose chat's login is full to another login, and keeps the chat on its login", () => {
    const { pool, clock, last } = makePool(['a', 'b'], { maxInFlight: 2 });
    pool.acquire('chat-1').release();
    // b's window is nearly spent: new chats fill a.
    pool.reportPlan('b', {
      source: 'turn',
      windows: [{ name: 'primary', usedRatio: 0.9, resetsAt: clock.now() + 3_600_000 }],
    });
    const others = [pool.acquire('chat-2'), pool.acquire('chat-3')];
    expect(others.map((lease) => lease.alias)).toEqual(['a', 'a']);
    const overflow = pool.acquire('chat-1');
    expect(overflow.alias).toBe('b');
    expect(last('selected', 'b')).toEqual(['selected', 'provider_a', 'b', 'new']);
    expect(last('pinned', 'b')).toEqual(['pinned', 'provider_a', 'b', 0]);
    [overflow, ...others].forEach((lease) => lease.release());
    // The pin never moved: the chat's next turn is back where its prompt cache is.
    expect(pool.acquire('chat-1').alias).toBe('a');
  });

  it('moves the pin when the pinned login stops serving, or after a failure there', () => {
    const { pool } = makePool(['a', 'b', 'c']);
    pool.acquire('chat-1').release();
    pool.applyFailure('a', usageLimit(600));
    const moved = pool.acquire('chat-1');
    expect(moved.alias).not.toBe('a');
    moved.release();
    const next = pool.moveAfter(pool.acquire('chat-1'), usageLimit(600), 'chat-1');
    expect(next?.alias).not.toBe(moved.alias);
    next!.release();
    expect(pool.acquire('chat-1').alias).toBe(next!.alias);
  });

  it('runs at most maxInFlight turns of one chat at once across the logins, and counts a turn until it ends', () => {
    const { pool } = makePool(['a', 'b', 'c'], { maxInFlight: 2 });
    const held = [pool.acquire('chat-1'), pool.acquire('chat-1')];
    const error = thrown(() => pool.acquire('chat-1'));
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 1 });
    expect(error.publicMessage).toBe(
      'this chat already has 2 turns running on provider_a logins, as many as one login takes at once (ACCOUNT_MAX_IN_FLIGHT=2); retry in 1 s, once one of them has ended, or raise ACCOUNT_MAX_IN_FLIGHT',
    );
    // Other chats still get the slots left; one-off work has no chat to bound.
    expect(pool.acquire('chat-2').alias).not.toBe(held[0].alias);
    pool.acquire(undefined).release();
    held[0].release();
    held[0].release();
    const again = pool.acquire('chat-1');
    expect(thrown(() => pool.acquire('chat-1')).code).toBe('rate_limited');
    // A turn that moves after a failure gives its place back before it takes the next login.
    expect(pool.moveAfter(again, usageLimit(60), 'chat-1')).toBeDefined();
  });

  it('bounds no chat without a cap', () => {
    const { pool } = makePool(['a'], { maxInFlight: 0 });
    for (let turn = 0; turn < 20; turn++) expect(pool.acquire('chat-1').alias).toBe('a');
  });

  it('answers 429 naming the cap, its setting and the fix when every account is at its cap', () => {
    const { pool } = makePool(['a', 'b'], { maxInFlight: 1 });
    pool.acquire('chat-1');
    pool.acquire('chat-3');
    const error = thrown(() => pool.acquire('chat-2'));
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 1 });
    expect(error.publicMessage).toBe(
      'every provider_a login is at its in-flight cap (ACCOUNT_MAX_IN_FLIGHT=1); retry in 1 s, or raise ACCOUNT_MAX_IN_FLIGHT or add a login',
    );
    pool.applyFailure('a', usageLimit(600));
    expect(thrown(() => pool.acquire('chat-2')).publicMessage).toMatch(
      /^every usable provider_a login is at its in-flight cap \(ACCOUNT_MAX_IN_FLIGHT=1\)/,
    );
    const { pool: sole } = makePool(['only'], { maxInFlight: 1 });
    sole.acquire('chat-1');
    expect(thrown(() => sole.acquire('chat-2')).publicMessage).toMatch(
      /^the provider_a login is at its in-flight cap \(ACCOUNT_MAX_IN_FLIGHT=1\)/,
    );
  });

  it("gives a closing turn's chat bound back at once and its login slot at release; a turn refused only for that slot waits for it", async () => {
    const { pool, last } = makePool(['only'], { maxInFlight: 1 });
    const stopped = pool.acquire('chat-1');
    // Nothing is closing yet: the chat's own running turn is why it is refused, and waiting would not help.
    expect(thrown(() => pool.acquire('chat-1')).publicMessage).toMatch(/^this chat already has 1 turn running/);
    expect(pool.whenSlotFrees('chat-1')).toBeUndefined();
    stopped.closing();
    stopped.closing();
    // The chat is free; the login still holds the closing turn (its child is stopping).
    expect(thrown(() => pool.acquire('chat-1')).publicMessage).toMatch(/^the provider_a login is at its in-flight cap/);
    expect(last('inFlight', 'only')).toEqual(['inFlight', 'provider_a', 'only', 1]);
    const freed = pool.whenSlotFrees('chat-1');
    expect(freed).toBeDefined();
    // Another chat's turn may wait for the same slot: one promise, settled by the next release.
    expect(pool.whenSlotFrees('chat-2')).toBe(freed);
    let settled = false;
    void freed!.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    stopped.release();
    stopped.release();
    await freed;
    expect(last('inFlight', 'only')).toEqual(['inFlight', 'provider_a', 'only', 0]);
    const again = pool.acquire('chat-1');
    // A running turn, not a closing one, fills the login now: nothing to wait for.
    expect(pool.whenSlotFrees('chat-2')).toBeUndefined();
    again.release();
    // The chat's count went down once for the closed lease: two turns of it run at once under a cap of 2.
    const { pool: two } = makePool(['a', 'b'], { maxInFlight: 2 });
    const first = two.acquire('chat-1');
    first.closing();
    first.release();
    two.acquire('chat-1');
    two.acquire('chat-1');
    expect(thrown(() => two.acquire('chat-1')).publicMessage).toMatch(/^this chat already has 2 turns running/);
  });

  it('has a turn wait only for a closing turn on a login that would take it', () => {
    const { pool } = makePool(['a', 'b'], { maxInFlight: 1 });
    pool.acquire('chat-1').closing();
    pool.acquire('chat-2');
    // b runs a turn; a holds a closing one: the refused turn waits for a.
    expect(thrown(() => pool.acquire('chat-3')).code).toBe('rate_limited');
    expect(pool.whenSlotFrees('chat-3')).toBeDefined();
    // a cools meanwhile: its slot freeing would not let the turn run, so the refusal stands.
    pool.applyFailure('a', usageLimit(600));
    expect(pool.whenSlotFrees('chat-3')).toBeUndefined();
    // Without a cap nothing is ever refused for room.
    const { pool: uncapped } = makePool(['a'], { maxInFlight: 0 });
    uncapped.acquire('chat-1').closing();
    expect(uncapped.whenSlotFrees('chat-2')).toBeUndefined();
  });

  it('lets a family with one login ask the upstream even while that login is cooling or dead, as before pooling', () => {
    const { pool } = makePool(['only']);
    pool.applyFailure('only', usageLimit(600));
    pool.acquire('chat-1').release();
    expect(pool.stateOf('only').kind).toBe('cooling');
    expect(pool.unavailableError()).toBeUndefined();
    pool.applyFailure('only', new GatewayError('auth'));
    pool.acquire('chat-2').release();
    const turn = new AccountTurn(pool, 'chat-3');
    expect(turn.moveAfter(usageLimit(60))).toBe(false);
  });

  it('sets no cap with maxInFlight 0', () => {
    const { pool } = makePool(['a'], { maxInFlight: 0 });
    for (let i = 0; i < 50; i++) expect(pool.acquire(`chat-${i}`).alias).toBe('a');
  });

  it('cools an account until the reported reset, then makes it ready by itself', () => {
    const { pool, clock, logger, last } = makePool(['a', 'b']);
    expect(pool.applyFailure('a', usageLimit(120))).toBe(true);
    expect(pool.stateOf('a')).toEqual({ kind: 'cooling', until: clock.now() + 120_000, reason: 'usage_limit' });
    expect(last('cooldown', 'a')).toEqual(['cooldown', 'provider_a', 'a', 'usage_limit']);
    expect(last('state', 'a')).toEqual(['state', 'provider_a', 'a', 'cooling', clock.now() + 120_000]);
    for (let i = 0; i < 3; i++) {
      const lease = pool.acquire(`chat-${i}`);
      expect(lease.alias).toBe('b');
      lease.release();
    }
    clock.advance(119_999);
    expect(pool.stateOf('a').kind).toBe('cooling');
    clock.advance(1);
    pool.sweep();
    expect(pool.stateOf('a')).toEqual({ kind: 'ready' });
    expect(last('state', 'a')).toEqual(['state', 'provider_a', 'a', 'ready', undefined]);
    expect(logger.records.map((line) => [line.account, line.state])).toEqual([
      ['a', 'cooling'],
      ['a', 'ready'],
    ]);
  });

  it('uses the default cooldown when the upstream reported no reset, and never shortens a cooldown', () => {
    const { pool, clock } = makePool(['a', 'b']);
    pool.applyFailure('a', rateLimited());
    expect(pool.stateOf('a')).toMatchObject({
      kind: 'cooling',
      until: clock.now() + OPTIONS.cooldownDefaultMs,
      reason: 'rate_limited',
    });
    pool.applyFailure('a', usageLimit(10));
    expect(pool.stateOf('a')).toMatchObject({ until: clock.now() + OPTIONS.cooldownDefaultMs });
  });

  it('answers 429 with the earliest reset when every account is cooling', () => {
    const { pool } = makePool();
    pool.applyFailure('a', usageLimit(600));
    pool.applyFailure('b', usageLimit(90));
    pool.applyFailure('c', rateLimited(3600));
    const error = thrown(() => pool.acquire('chat-1'));
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 90 });
    expect(error.publicMessage).toContain('provider_a');
  });

  it('answers 403 upstream_login_required for the family (its message names the login command) when every login is dead', () => {
    const { pool } = makePool(['a', 'b']);
    pool.applyFailure('a', new GatewayError('auth'));
    pool.applyFailure('b', new GatewayError('auth'));
    const error = thrown(() => pool.acquire('chat-1'));
    expect(error.code).toBe('auth');
    expect(error.spec.status).toBe(403);
    expect(error.provider).toBe('provider_a');
  });

  it('rests a login whose usage credit is spent like one at its usage limit', () => {
    const { pool, clock } = makePool(['a', 'b']);
    expect(pool.applyFailure('a', new GatewayError('usage_credit_exhausted', { retryAfterSeconds: 120 }))).toBe(true);
    expect(pool.stateOf('a')).toEqual({ kind: 'cooling', until: clock.now() + 120_000, reason: 'usage_limit' });
  });

  describe("usage paused by the login's organization (usage_paused)", () => {
    const FIX = 'an admin raises the cap';
    const paused = (seconds?: number) => new GatewayError('usage_paused', { retryAfterSeconds: seconds, fix: FIX });

    it("rests the login as usage_paused for the error's Retry-After (the table's hour without one), its plan not spent; the line names until and the fix", () => {
      const { pool, clock, logger, last } = makePool(['a', 'b']);
      expect(pool.applyFailure('a', paused())).toBe(true);
      const until = clock.now() + 3_600_000;
      expect(pool.stateOf('a')).toEqual({ kind: 'usage_paused', until, fix: FIX });
      expect(last('state', 'a')).toEqual(['state', 'provider_a', 'a', 'usage_paused', until]);
      expect(logger.records.at(-1)).toMatchObject({
        event: 'account_state',
        account: 'a',
        from: 'ready',
        state: 'usage_paused',
        until: new Date(until).toISOString(),
        fix: FIX,
      });
      expect(pool.planView('a')).toMatchObject({ state: 'usage_paused', planSpent: false, restsUntil: until });
      expect(pool.acquire('chat-1').alias).toBe('b');
      clock.advance(3_600_000);
      pool.sweep();
      expect(pool.stateOf('a')).toEqual({ kind: 'ready' });
      expect(pool.planView('a').restsUntil).toBeUndefined();
    });

    it('is never shortened by a shorter limit or pause, and a longer cooldown stands', () => {
      const { pool, clock } = makePool(['a', 'b']);
      pool.applyFailure('a', paused(7200));
      pool.applyFailure('a', usageLimit(60));
      pool.applyFailure('a', paused(600));
      expect(pool.stateOf('a')).toMatchObject({ kind: 'usage_paused', until: clock.now() + 7_200_000 });
      pool.applyFailure('b', usageLimit(9000));
      pool.applyFailure('b', paused());
      expect(pool.stateOf('b')).toMatchObject({ kind: 'cooling', until: clock.now() + 9_000_000 });
    });

    it("still asks a family's only login while it is paused, as it asks one cooling", () => {
      const { pool } = makePool(['only']);
      pool.applyFailure('only', paused());
      expect(pool.unavailableError()).toBeUndefined();
      expect(pool.acquire('chat-1').alias).toBe('only');
    });

    it('answers usage_paused with the earliest end and the fix when every login that is not dead is paused; with another cooling, the 429 names both', () => {
      const { pool, clock } = makePool(['a', 'b', 'c']);
      pool.applyFailure('a', paused(3600));
      pool.applyFailure('b', paused(1800));
      pool.applyFailure('c', new GatewayError('auth'));
      const error = thrown(() => pool.acquire('chat-1'));
      expect(error).toMatchObject({ code: 'usage_paused', provider: 'provider_a', retryAfterSeconds: 1800, fix: FIX });
      clock.advance(1000);
      expect(thrown(() => pool.acquire('chat-1')).retryAfterSeconds).toBe(1799);
      const { pool: mix } = makePool(['a', 'b']);
      mix.applyFailure('a', paused(3600));
      mix.applyFailure('b', usageLimit(600));
      const mixed = thrown(() => mix.acquire('chat-2'));
      expect(mixed).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 600 });
      expect(mixed.publicMessage).toContain('has reached its usage limit or is paused by its organization');
    });
  });

  it('tells the login report what requests learned: a login its API or its token endpoint refused, an account the upstream does not serve (until the file changes)', () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'oauth_creds.json');
      fs.writeFileSync(file, '{}');
      const { pool } = makePool(['a', 'b', 'c'], {}, { b: file });
      pool.sweep();
      expect(pool.loginVerdict('a')).toBeUndefined();
      pool.applyFailure('a', apiRefusal());
      expect(pool.loginVerdict('a')).toBe('login_refused');
      pool.applyFailure('c', refreshRefusal());
      expect(pool.loginVerdict('c')).toBe('refresh_refused');
      expect(pool.applyFailure('b', new GatewayError('provider_account_unsupported'))).toBe(false);
      expect(pool.loginVerdict('b')).toBe('account_unsupported');
      expect(pool.stateOf('b').kind).toBe('ready');
      fs.writeFileSync(`${file}.tmp`, '{"access_token":"other account"}');
      fs.renameSync(`${file}.tmp`, file);
      pool.sweep();
      expect(pool.loginVerdict('b')).toBeUndefined();
    });
  });

  it('brings a dead login back once its file changes on disk, and not before', () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'auth.json');
      fs.writeFileSync(file, '{"tokens":{}}\n');
      const { pool, logger } = makePool(['a', 'b'], {}, { a: file });
      pool.sweep();
      pool.applyFailure('a', new GatewayError('auth'));
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('login_dead');
      expect(pool.acquire('chat-1').alias).toBe('b');
      // `codex login` writes a new file and renames it over the old one.
      fs.writeFileSync(`${file}.tmp`, '{"tokens":{"access_token":"new"}}\n');
      fs.renameSync(`${file}.tmp`, file);
      // A turn reads only memory: the change counts from the next sweep (every second in the app).
      expect(pool.acquire('chat-2').alias).toBe('b');
      pool.sweep();
      expect(pool.acquire('chat-3').alias).toBe('a');
      expect(logger.records.map((line) => line.state)).toEqual(['login_dead', 'ready']);
    });
  });

  describe("a login the upstream's API refused", () => {
    it("comes back at the next answered turn of a family's only login: one line, its gauge, and no verdict left", () => {
      const { pool, logger, last } = makePool(['only']);
      const refused = new AccountTurn(pool, 'chat-1');
      // Nowhere to move: the turn fails, the login is dead as the API said.
      expect(refused.moveAfter(apiRefusal())).toBe(false);
      refused.end();
      expect(pool.stateOf('only').kind).toBe('login_dead');
      expect(logger.records).toEqual([
        expect.objectContaining({
          event: 'account_state',
          from: 'ready',
          state: 'login_dead',
          reason: 'login_refused',
          fix: "run `codex login` on the gateway's machine",
        }),
      ]);
      expect(pool.loginVerdict('only')).toBe('login_refused');
      // A family's only login is still asked; its answer is what brings it back.
      const answered = new AccountTurn(pool, 'chat-1');
      expect(answered.alias).toBe('only');
      answered.succeeded();
      expect(pool.stateOf('only')).toEqual({ kind: 'ready' });
      expect(last('state', 'only')).toEqual(['state', 'provider_a', 'only', 'ready', undefined]);
      expect(pool.loginVerdict('only')).toBeUndefined();
      answered.succeeded();
      answered.end();
      expect(logger.records.slice(1)).toEqual([
        expect.objectContaining({ event: 'account_state', from: 'login_dead', state: 'ready' }),
      ]);
    });

    it('comes back when a turn that was running on it is answered after another turn was refused', () => {
      const { pool } = makePool(['a', 'b']);
      const running = new AccountTurn(pool, 'chat-1');
      const refused = new AccountTurn(pool, 'chat-1');
      expect([running.alias, refused.alias]).toEqual(['a', 'a']);
      expect(refused.moveAfter(apiRefusal())).toBe(true);
      expect(pool.stateOf('a').kind).toBe('login_dead');
      running.succeeded();
      expect(pool.stateOf('a').kind).toBe('ready');
    });

    it('never comes back on a turn of the login the file held before another one was written over it', () => {
      withLoginFile(({ pool }, rewrite) => {
        const old = new AccountTurn(pool, 'chat-1');
        rewrite();
        const fresh = new AccountTurn(pool, 'chat-1');
        expect(fresh.alias).toBe('a');
        expect(fresh.moveAfter(apiRefusal())).toBe(true);
        old.succeeded();
        expect(pool.stateOf('a').kind).toBe('login_dead');
      });
    });

    it.each([
      ['its refresh token was refused', refreshRefusal, 'refresh_refused'],
      // The file's own state is the login report's check to tell.
      ['its file failed', fileFailure, undefined],
    ] as const)(
      'stays dead when %s, whatever turns it still serves on the access token it had, until its file changes',
      (_cause, failure, refusal) => {
        inScratchDir((dir) => {
          const file = path.join(dir, 'auth.json');
          fs.writeFileSync(file, '{}');
          const { pool, logger } = makePool(['only'], {}, { only: file });
          pool.sweep();
          pool.applyFailure('only', failure());
          expect(logger.records.map(({ state, reason }) => ({ state, reason }))).toEqual([
            { state: 'login_dead', reason: refusal },
          ]);
          const served = new AccountTurn(pool, 'chat-1');
          served.succeeded();
          served.end();
          expect(pool.stateOf('only').kind).toBe('login_dead');
          expect(pool.loginVerdict('only')).toBe(refusal);
          // Refused by the API first, then its refresh token or its file failed too: a new login is the one way back.
          const { pool: both } = makePool(['only']);
          both.applyFailure('only', apiRefusal());
          both.applyFailure('only', failure());
          const turn = new AccountTurn(both, 'chat-1');
          turn.succeeded();
          expect(both.stateOf('only').kind).toBe('login_dead');
          expect(both.loginVerdict('only')).toBe(refusal);
          fs.writeFileSync(file, '{"tokens":{}}');
          pool.sweep();
          expect(pool.stateOf('only').kind).toBe('ready');
        });
      },
    );

    it('leaves a login the check ruled out to the check, whatever a turn on it says', () => {
      const { pool } = makePool(['only']);
      pool.loginChecked('only', { state: 'missing', reason: 'no login file' });
      const turn = new AccountTurn(pool, 'chat-1');
      turn.succeeded();
      expect(pool.stateOf('only').kind).toBe('login_dead');
      pool.loginChecked('only', { state: 'usable' });
      expect(pool.stateOf('only').kind).toBe('ready');
    });
  });

  it("rules a login out while the login report's check finds it not usable, and back in when a check finds it usable", () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'auth.json');
      const { pool, logger } = makePool(['a', 'b'], {}, { a: file });
      pool.sweep();
      pool.loginChecked('a', { state: 'missing', reason: 'no login file' });
      expect(pool.stateOf('a').kind).toBe('login_dead');
      expect(pool.acquire('chat-1').alias).toBe('b');
      // The check's own finding: not something requests learned (the report shows `missing`, not `refresh_refused`).
      expect(pool.loginVerdict('a')).toBeUndefined();
      // A file that appears is not yet a usable login: the check decides.
      fs.writeFileSync(file, '{}');
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('login_dead');
      pool.loginChecked('a', { state: 'expired_refreshable' });
      expect(pool.stateOf('a').kind).toBe('ready');
      // The check's first finding on a login no turn used is the report's to tell (login_state):
      // no line of the pool's own; coming back is a change, and its line.
      expect(logger.records).toEqual([expect.objectContaining({ from: 'login_dead', state: 'ready' })]);
      // A later finding is a change of a login that served: its line names the fix.
      pool.loginChecked('a', { state: 'missing', reason: 'no login file' });
      expect(logger.records.at(-1)).toMatchObject({
        state: 'login_dead',
        reason: 'missing',
        fix: expect.stringContaining('`codex login`'),
      });
    });
  });

  it("tells the check's first finding on a login a turn already used", () => {
    const { pool, logger } = makePool(['a', 'b']);
    pool.acquire('chat-1').release();
    pool.loginChecked('a', { state: 'missing', reason: 'no login file' });
    expect(logger.records).toEqual([
      expect.objectContaining({ from: 'ready', state: 'login_dead', reason: 'missing' }),
    ]);
  });

  it('keeps a refused login dead whatever the check finds until its file changes', () => {
    const { pool } = makePool(['a', 'b']);
    pool.applyFailure('a', new GatewayError('auth'));
    pool.loginChecked('a', { state: 'usable' });
    expect(pool.stateOf('a').kind).toBe('login_dead');
    expect(pool.loginVerdict('a')).toBe('login_refused');
  });

  it('still gives a new turn to a login only the check ruled out when no login is left, never a moved one', () => {
    const { pool } = makePool(['a', 'b']);
    pool.loginChecked('a', { state: 'cli_missing' });
    pool.loginChecked('b', { state: 'cli_missing' });
    // The family's own error (a missing CLI) then reaches the client, not the pool's "log in".
    const lease = pool.acquire('chat-1');
    expect(['a', 'b']).toContain(lease.alias);
    expect(pool.unavailableError()).toBeUndefined();
    expect(pool.moveAfter(lease, new GatewayError('auth'), 'chat-1')).toBeUndefined();
    lease.release();
    pool.loginChecked('a', { state: 'usable' });
    pool.applyFailure('a', new GatewayError('auth'));
    expect(pool.acquire('chat-2').alias).toBe('b');
    // Logins the upstream refused are not tried again this way.
    pool.loginChecked('b', { state: 'usable' });
    pool.applyFailure('b', new GatewayError('auth'));
    expect(() => pool.acquire('chat-3')).toThrow(expect.objectContaining({ code: 'auth' }));
  });

  it("never gives a turn to a login the check found billing an API key, not even a family's only one: the 403 names its fix", () => {
    const apiKey = {
      state: 'unusable',
      reason: 'claude auth status: api_key, not a Claude login',
      fix: 'log the CLI in with a Claude subscription instead',
      billsElsewhere: true,
    } as const;
    const { pool: sole } = makePool(['only'], { maxInFlight: 1 });
    const waiting = sole.acquire('chat');
    sole.loginChecked('only', apiKey);
    // A turn that took the login before the check said so does not start on it.
    expect(thrown(() => sole.retake(waiting, 'chat'))).toMatchObject({
      code: 'auth',
      fix: 'log the CLI in with a Claude subscription instead',
      publicMessage:
        'provider_a has no usable login, so its models answer errors; to fix: log the CLI in with a Claude subscription instead',
    });
    expect(sole.unavailableError()).toMatchObject({ code: 'auth', fix: apiKey.fix });
    // Among logins the check ruled out, the last ones left go to one that would not bill elsewhere.
    const { pool } = makePool(['a', 'b']);
    pool.loginChecked('a', apiKey);
    pool.loginChecked('b', { state: 'cli_missing' });
    for (const chat of ['c1', 'c2']) {
      const lease = pool.acquire(chat);
      expect(lease.alias).toBe('b');
      lease.release();
    }
    pool.loginChecked('b', apiKey);
    expect(thrown(() => pool.acquire('c3'))).toMatchObject({ code: 'auth', fix: apiKey.fix });
  });

  it('keeps a turn on the login the check ruled out that it was given while every login is dead: no walk through them', () => {
    const { pool } = makePool(['a', 'b']);
    pool.loginChecked('a', { state: 'cli_missing' });
    pool.loginChecked('b', { state: 'cli_missing' });
    const lease = pool.acquire('chat-1');
    // Taken again before a retry: the same login, not the other one the check ruled out.
    expect(pool.retake(lease, 'chat-1')).toBe(lease);
    lease.release();
  });

  /** What the login check says of logins on a mount the gateway's user may not read. */
  const UNREADABLE_MOUNT = {
    state: 'unusable',
    reason: 'login file unreadable: EACCES',
    fix: 'chmod the /logins mount',
  } as const;

  it("answers a turn refused on the last login the check left with the others' fix too, not only a new login", () => {
    const { pool } = makePool(['a', 'b', 'c']);
    // One mount the gateway's user may not read holds the other two logins: the check's fix is theirs.
    const check = UNREADABLE_MOUNT;
    pool.loginChecked('b', check);
    pool.loginChecked('c', check);
    const turn = new AccountTurn(pool, 'chat-1');
    expect(turn.alias).toBe('a');
    const refused = new GatewayError('auth', { detail: 'provider_a token refresh failed' });
    expect(turn.moveAfter(refused)).toBe(false);
    const final = turn.finalError(refused);
    expect(final).toMatchObject({ code: 'auth', provider: 'provider_a' });
    expect(final.publicMessage).toContain('the upstream refused login "a" (run `codex login`');
    expect(final.publicMessage).toContain('the login check ruled out every other one (chmod the /logins mount)');
    expect(final.fix).toContain('chmod the /logins mount');
    turn.end();
  });

  it('answers its own 403 with the fix every dead login shares, as the login report does, when it is not a new login', () => {
    const { pool } = makePool(['a', 'b'], { maxInFlight: 1 });
    const check = UNREADABLE_MOUNT;
    pool.loginChecked('a', check);
    pool.loginChecked('b', check);
    // Both are ruled out and each holds a turn at its cap: nothing is left for a new one.
    const leases = [pool.acquire('chat-1'), pool.acquire('chat-2')];
    const error = pool.unavailableError();
    expect(error).toMatchObject({ code: 'auth', provider: 'provider_a', fix: 'chmod the /logins mount' });
    expect(error?.publicMessage).toBe(
      'provider_a has no usable login, so its models answer errors; to fix: chmod the /logins mount',
    );
    leases.forEach((lease) => lease.release());
    // A refused login among them: the fixes differ, and each login is named with its own.
    pool.loginChecked('a', { state: 'usable' });
    pool.applyFailure('a', new GatewayError('auth'));
    const lease = pool.acquire('chat-3');
    expect(pool.unavailableError()).toMatchObject({
      code: 'auth',
      fix: 'fix one of them: login "a": run `codex login` on the gateway\'s machine; login "b": chmod the /logins mount',
    });
    lease.release();
  });

  it('treats a login file that appears as a change', () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'auth.json');
      const { pool } = makePool(['a'], {}, { a: file });
      pool.applyFailure('a', new GatewayError('auth'));
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('login_dead');
      fs.writeFileSync(file, '{}');
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('ready');
    });
  });

  it('keeps a login that died before its file was first read dead until that file changes', () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'auth.json');
      fs.writeFileSync(file, '{}');
      const { pool } = makePool(['a'], {}, { a: file });
      pool.applyFailure('a', new GatewayError('auth'));
      pool.sweep();
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('login_dead');
      fs.writeFileSync(file, '{"tokens":{}}');
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('ready');
    });
  });

  it('reads no file while serving a turn: what a turn sees of the login files is what sweep() last read', () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'auth.json');
      fs.writeFileSync(file, '{}');
      const { pool } = makePool(['a', 'b'], {}, { a: file, b: file });
      pool.sweep();
      pool.applyFailure('a', new GatewayError('auth'));
      pool.applyFailure('b', new GatewayError('provider_account_unsupported'));
      fs.rmSync(dir, { recursive: true, force: true });
      expect(pool.acquire('chat-1').alias).toBe('b');
      expect(pool.unavailableError()).toBeUndefined();
      expect(pool.loginVerdict('a')).toBe('login_refused');
      expect(pool.loginVerdict('b')).toBe('account_unsupported');
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('ready');
      expect(pool.loginVerdict('b')).toBeUndefined();
    });
  });

  it("has the family read a login file again at the sweep's first reading and at each change, not at every sweep", () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'token');
      fs.writeFileSync(file, 'one');
      const reads: string[] = [];
      const pool = new AccountPool(
        'provider_c',
        [
          {
            alias: 'a',
            handle: 'a',
            loginFile: file,
            loginFileChanged: () => {
              reads.push(fs.readFileSync(file, 'utf8'));
              return undefined;
            },
          },
        ],
        OPTIONS,
        { clock: manualClock(), logger: recordingLogger(), metrics: recordingAccountMetrics().metrics },
      );
      expect(reads).toEqual([]);
      pool.sweep();
      expect(reads).toEqual(['one']);
      pool.sweep();
      fs.writeFileSync(file, 'second');
      pool.acquire('chat-1').release();
      expect(reads).toEqual(['one']);
      pool.sweep();
      expect(reads).toEqual(['one', 'second']);
      pool.sweep();
      expect(reads).toEqual(['one', 'second']);
    });
  });

  it("drops what it knew of a login once its file holds another account's login, and reads the new one first", () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'auth.json');
      fs.writeFileSync(file, 'account-1');
      const { pool, clock, logger, last } = makePool(['a', 'b'], {}, { a: file }, (content) => content.trim());
      const settle: Array<() => void> = [];
      const reads: string[] = [];
      pool.readsUsageWith((alias, handle) => {
        reads.push(`${alias}:${handle}`);
        return new Promise<void>((resolve) => settle.push(resolve));
      });
      pool.sweep();
      const resetsAt = clock.now() + 3_600_000;
      pool.reportPlan('a', {
        source: 'turn',
        windows: [{ name: 'primary', usedRatio: 1, resetsAt }],
        planSpent: true,
        paid: { kind: 'credits', available: true, inUse: true },
      });
      expect(pool.stateOf('a').kind).toBe('plan_spent');
      // The same account's login again (a refresh): nothing changes.
      fs.writeFileSync(file, 'account-1 ');
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('plan_spent');
      expect(reads).toEqual([]);

      fs.writeFileSync(file, 'account-2');
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('ready');
      expect(pool.planOf('a')).toBeUndefined();
      expect(pool.planView('a')).toMatchObject({ state: 'ready', windows: [], planSpent: false });
      expect(pool.loginGeneration('a')).toBe(1);
      expect(last('state', 'a')).toEqual(['state', 'provider_a', 'a', 'ready', undefined]);
      expect(logger.records.filter((line) => line.account === 'a').map((line) => line.event)).toEqual([
        'account_state',
        'account_login_changed',
      ]);
      expect(logger.records.at(-1)).toMatchObject({ path: file, from: 'plan_spent', state: 'ready' });
      // Its turns wait for the new login's read, and new chats prefer a login already read.
      expect(reads).toEqual(['a:handle-a']);
      expect(pool.firstUsageRead('a')).toBeDefined();
      expect(pool.acquire('chat-1').alias).toBe('b');
      settle[0]();
    });
  });

  it('keeps a rest on a spent plan when a new login is written but no usage read could tell its plan', () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'auth.json');
      fs.writeFileSync(file, 'account-1');
      const { pool, clock, logger } = makePool(['a', 'b'], {}, { a: file }, (content) => content.trim());
      pool.sweep();
      pool.reportPlan('a', {
        source: 'turn',
        windows: [{ name: 'primary', usedRatio: 1, resetsAt: clock.now() + 3_600_000 }],
        planSpent: true,
        paid: { kind: 'credits', available: true, inUse: true },
      });
      // A refresh that rotated what the file is keyed by reads as another login.
      fs.writeFileSync(file, 'account-2');
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('plan_spent');
      expect(pool.planOf('a')?.planSpent).toBe(true);
      expect(logger.records.at(-1)).toMatchObject({
        event: 'account_login_changed',
        from: 'plan_spent',
        state: 'plan_spent',
      });
      expect(pool.acquire('chat-1').alias).toBe('b');
    });
  });

  it("keeps a new login's read waited for when the startup read of the previous one ends after it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pool-login-'));
    try {
      const file = path.join(dir, 'auth.json');
      fs.writeFileSync(file, 'account-1');
      const { pool } = makePool(['a', 'b'], {}, { a: file }, (content) => content.trim());
      pool.readsUsageWith(() => new Promise<void>(() => undefined));
      pool.sweep();
      let endStartupRead!: () => void;
      pool.firstUsageReadStarted('a', new Promise<void>((resolve) => (endStartupRead = resolve)));
      fs.writeFileSync(file, 'account-22');
      pool.sweep();
      const newLoginRead = pool.firstUsageRead('a');
      endStartupRead();
      await new Promise((resolve) => setImmediate(resolve));
      expect(pool.firstUsageRead('a')).toBe(newLoginRead);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes the login a file holds from the family, and keeps the state while it cannot tell', () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'auth.json');
      fs.writeFileSync(file, 'account-1');
      const { pool } = makePool(['a', 'b'], {}, { a: file }, (text) => (text === '' ? undefined : text));
      pool.sweep();
      pool.applyFailure('a', usageLimit(600));
      // An empty file says no login: the cooldown stays, and the next login is compared with the last one known.
      fs.writeFileSync(file, '');
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('cooling');
      fs.writeFileSync(file, 'account-1');
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('cooling');
      // (Each write changes the size: two in one clock tick could leave the same modification time.)
      fs.writeFileSync(file, 'account-22');
      pool.sweep();
      expect(pool.stateOf('a').kind).toBe('ready');
    });
  });

  it('holds a login dead for the file version its work used, not for one written while that work ran', () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'auth.json');
      fs.writeFileSync(file, '{"v":1}');
      const { pool } = makePool(['a', 'b'], {}, { a: file });
      pool.sweep();
      const lease = pool.acquire('chat-1');
      expect(lease.alias).toBe('a');
      // `codex login` while the turn's refresh is being refused; the sweep sees the new file first.
      fs.writeFileSync(file, '{"v":2,"fresh":true}');
      pool.sweep();
      expect(pool.moveAfter(lease, new GatewayError('auth'), 'chat-1')?.alias).toBe('b');
      expect(pool.stateOf('a').kind).toBe('ready');
    });
  });

  it('keeps what a turn on the login a file held before reports off the new login written over it, and logs it', () => {
    withLoginFile(({ pool, clock, logger }, rewrite) => {
      const old = new AccountTurn(pool, 'chat-1');
      expect(old.alias).toBe('a');
      pool.applyFailure('a', new GatewayError('extra_usage_required'));
      rewrite();
      expect(pool.loginGeneration('a')).toBe(1);

      // The old login's answers: a spent plan with credits in use, its success, then its limits.
      old.reportPlan({
        source: 'turn',
        windows: [{ name: 'primary', usedRatio: 1, resetsAt: clock.now() + 3_600_000 }],
        planSpent: true,
        paid: { kind: 'credits', available: true, inUse: true },
      });
      old.noteFailure(usageLimit(600));
      old.noteFailure(new GatewayError('usage_paused', { retryAfterSeconds: 3600 }));
      expect(old.moveAfter(new GatewayError('auth'))).toBe(true);
      expect(pool.stateOf('a').kind).toBe('ready');
      expect(pool.planOf('a')).toBeUndefined();
      expect(logger.records.filter((line) => line.event === 'account_report_stale')).toEqual([
        expect.objectContaining({ provider: 'provider_a', account: 'a', report: 'plan' }),
        expect.objectContaining({ provider: 'provider_a', account: 'a', report: 'usage_limit' }),
        expect.objectContaining({ provider: 'provider_a', account: 'a', report: 'usage_paused' }),
        expect.objectContaining({ provider: 'provider_a', account: 'a', report: 'auth' }),
      ]);
      old.end();

      // A turn of the new login reports for it.
      const fresh = new AccountTurn(pool, 'chat-2');
      expect(fresh.alias).toBe('a');
      fresh.noteFailure(usageLimit(600));
      expect(pool.stateOf('a').kind).toBe('cooling');
      fresh.end();
    });
  });

  it("lets no success of the previous login's turn clear what the new login was refused for", () => {
    withLoginFile(({ pool }, rewrite) => {
      const old = new AccountTurn(pool, 'chat-1');
      rewrite();
      pool.applyFailure('a', new GatewayError('extra_usage_required'), pool.loginFileSeen('a'));
      old.succeeded();
      expect(pool.planView('a').needsExtraUsageSince).toBeDefined();
      // The new login's own success clears it; no refusal of the old login's turn sets it again.
      const fresh = new AccountTurn(pool, 'chat-1');
      expect(fresh.alias).toBe('a');
      fresh.succeeded();
      expect(pool.planView('a').needsExtraUsageSince).toBeUndefined();
      old.noteFailure(new GatewayError('extra_usage_required'));
      expect(pool.planView('a').needsExtraUsageSince).toBeUndefined();
    });
  });

  it('gives a turn that takes its login again after a new login was written over the file that login: its reports land', () => {
    withLoginFile(({ pool }, rewrite) => {
      const turn = new AccountTurn(pool, 'chat-1');
      rewrite();
      // The attempt about to send reads the new login: the turn stays on `a`, now the new login's.
      expect(turn.retake()).toBe(false);
      expect(turn.alias).toBe('a');
      turn.noteFailure(usageLimit(600));
      expect(pool.stateOf('a').kind).toBe('cooling');
    });
  });

  it('ignores failures that say nothing about the account', () => {
    const { pool } = makePool(['a']);
    expect(pool.applyFailure('a', new GatewayError('upstream'))).toBe(false);
    expect(pool.applyFailure('a', new Error('boom'))).toBe(false);
    expect(pool.stateOf('a').kind).toBe('ready');
  });

  it('forgets a pin after a day of silence and bounds the number of pins', () => {
    const { pool, clock, last } = makePool(['a', 'b'], { pinnedChatsMax: 2 });
    const first = pool.acquire('chat-1');
    first.release();
    expect(last('pinned', first.alias)).toEqual(['pinned', 'provider_a', first.alias, 1]);
    clock.advance(PIN_IDLE_TTL_MS - 1000);
    pool.acquire('chat-1').release(); // a turn refreshes the pin
    clock.advance(PIN_IDLE_TTL_MS - 1000);
    pool.sweep();
    expect(last('pinned', first.alias)).toEqual(['pinned', 'provider_a', first.alias, 1]);
    clock.advance(2000);
    pool.sweep();
    expect(last('pinned', first.alias)).toEqual(['pinned', 'provider_a', first.alias, 0]);
    for (const chat of ['x', 'y', 'z']) pool.acquire(chat).release();
    const pinned = ['a', 'b'].map((alias) => last('pinned', alias)?.[3] as number);
    expect(pinned[0] + pinned[1]).toBe(2);
  });

  it('tracks turns in flight per account', () => {
    const { pool, last } = makePool(['a']);
    const one = pool.acquire('chat-1');
    const two = pool.acquire('chat-2');
    expect(last('inFlight', 'a')).toEqual(['inFlight', 'provider_a', 'a', 2]);
    one.release();
    one.release();
    expect(last('inFlight', 'a')).toEqual(['inFlight', 'provider_a', 'a', 1]);
    two.release();
    expect(last('inFlight', 'a')).toEqual(['inFlight', 'provider_a', 'a', 0]);
  });

  it('never puts an e-mail, account id or token in a log line or label: only family and alias', () => {
    const { pool, logger, calls } = makePool(['work', 'home']);
    pool.applyFailure('work', usageLimit(5));
    pool.applyFailure('home', new GatewayError('auth', { detail: 'token eyJhbGciOi' }));
    for (const line of logger.records)
      expect(Object.keys(line).sort()).toEqual(expect.arrayContaining(['account', 'event', 'provider', 'state']));
    expect(JSON.stringify(logger.records)).not.toContain('eyJ');
    for (const call of calls) expect(['work', 'home']).toContain(call[2]);
  });
});

describe(AccountTurn.name, () => {
  it('moves once to another account on a usage limit before output, and pins the chat there', () => {
    const { pool, last } = makePool(['a', 'b', 'c']);
    pool.acquire('chat-1').release();
    const turn = new AccountTurn(pool, 'chat-1');
    const first = turn.alias;
    expect(turn.moveAfter(usageLimit(60))).toBe(true);
    expect(turn.alias).not.toBe(first);
    expect(pool.stateOf(first).kind).toBe('cooling');
    expect(last('moved', first)).toEqual(['moved', 'provider_a', first]);
    expect(last('selected', turn.alias)).toEqual(['selected', 'provider_a', turn.alias, 'moved']);
    // Only one move per turn: the second account's failure cools it but the turn stays.
    const second = turn.alias;
    expect(turn.moveAfter(usageLimit(60))).toBe(false);
    expect(pool.stateOf(second).kind).toBe('cooling');
    turn.end();
    expect(pool.acquire('chat-1').alias).not.toBe(first);
  });

  it('does not move on a failure that is not about the account', () => {
    const { pool } = makePool(['a', 'b']);
    const turn = new AccountTurn(pool, 'chat-1');
    expect(turn.moveAfter(new GatewayError('bad_request'))).toBe(false);
    expect(pool.stateOf(turn.alias).kind).toBe('ready');
  });

  it('moves a turn whose login died to a live one, and its state line names the new login it needs', () => {
    const { pool, logger } = makePool(['a', 'b']);
    const turn = new AccountTurn(pool, 'chat-1');
    const first = turn.alias;
    expect(turn.moveAfter(new GatewayError('auth'))).toBe(true);
    expect(pool.stateOf(first).kind).toBe('login_dead');
    expect(logger.records.find((record) => record.event === 'account_state')).toMatchObject({
      account: first,
      state: 'login_dead',
      fix: "run `codex login` on the gateway's machine",
    });
  });

  it('reports the earliest reset when the only other account is cooling too', () => {
    const { pool } = makePool(['a', 'b']);
    pool.applyFailure('b', usageLimit(30));
    const turn = new AccountTurn(pool, 'chat-1');
    expect(turn.alias).toBe('a');
    const failure = usageLimit(900);
    expect(turn.moveAfter(failure)).toBe(false);
    expect(turn.finalError(failure)).toMatchObject({ code: 'usage_limit', retryAfterSeconds: 30 });
  });

  it("tells a usage limit with no reset known the pool's own rest (ACCOUNT_COOLDOWN_DEFAULT), not the table's wait", () => {
    const { pool } = makePool(['only'], { cooldownDefaultMs: 1_800_000 });
    const turn = new AccountTurn(pool, 'chat-1');
    const failure = usageLimit();
    expect(turn.moveAfter(failure)).toBe(false);
    const final = turn.finalError(failure);
    expect(final).toMatchObject({ code: 'usage_limit', retryAfterSeconds: 1800 });
    expect(final.retryAfterHeader).toBe(1800);
    const credit = new GatewayError('usage_credit_exhausted');
    expect(turn.finalError(credit).retryAfterSeconds).toBe(1800);
    // A known reset stays the client's wait, and a short rate limit keeps the table's few seconds.
    expect(turn.finalError(usageLimit(40)).retryAfterSeconds).toBe(40);
    expect(turn.finalError(rateLimited()).retryAfterHeader).toBe(5);
  });

  it('tells a usage limit with no reset known when the first resting login is back, while another login still serves', () => {
    const { pool, clock } = makePool(['a', 'b', 'c'], { cooldownDefaultMs: 45_000 });
    pool.applyFailure('b', usageLimit(20));
    clock.advance(5000);
    const turn = new AccountTurn(pool, 'chat-1');
    expect(turn.alias).toBe('a');
    expect(turn.moveAfter(usageLimit())).toBe(true);
    // a rests 45 s, b 15 s more, c still serves: b is back first.
    expect(turn.finalError(usageLimit())).toMatchObject({ code: 'usage_limit', retryAfterSeconds: 15 });
    // Once b is back, a (rested at 5 s for 45 s) is the first of those still resting.
    clock.advance(15_000);
    expect(turn.finalError(usageLimit()).retryAfterSeconds).toBe(30);
  });

  it("counts a login its organization paused among the resting ones: when it is back first, that is the client's wait", () => {
    const { pool, clock } = makePool(['a', 'b', 'c'], { cooldownDefaultMs: 7_200_000 });
    pool.applyFailure('b', new GatewayError('usage_paused', { retryAfterSeconds: 3600 }));
    clock.advance(600_000);
    const turn = new AccountTurn(pool, 'chat-1');
    expect(turn.alias).toBe('a');
    expect(turn.moveAfter(usageLimit())).toBe(true);
    // a rests two hours, b's pause ends in 50 min, c still serves: b is back first.
    expect(pool.restWaitSeconds()).toBe(3000);
    expect(turn.finalError(usageLimit())).toMatchObject({ code: 'usage_limit', retryAfterSeconds: 3000 });
    // Once b is back, a is the first of those still resting.
    clock.advance(3_000_000);
    expect(turn.finalError(usageLimit()).retryAfterSeconds).toBe(4200);
  });

  it('after output only changes the account state', () => {
    const { pool } = makePool(['a', 'b']);
    const turn = new AccountTurn(pool, 'chat-1');
    const alias = turn.alias;
    turn.noteFailure(usageLimit(60));
    expect(turn.alias).toBe(alias);
    expect(pool.stateOf(alias).kind).toBe('cooling');
  });

  it("rests one model on a login after that model's quota error, not the login: the model moves, the others stay", () => {
    const { pool, clock, logger } = makePool(['a', 'b']);
    pool.acquire('chat-1', 'pro').release();
    const turn = new AccountTurn(pool, 'chat-1', 'pro');
    const first = turn.alias;
    const other = first === 'a' ? 'b' : 'a';
    expect(turn.moveAfter(modelLimit(3600))).toBe(true);
    expect(turn.alias).toBe(other);
    turn.end();
    expect(pool.stateOf(first).kind).toBe('ready');
    expect(pool.planView(first).windows).toEqual([
      { name: 'pro', model: 'pro', usedRatio: 1, resetsAt: clock.now() + 3_600_000 },
    ]);
    expect(logger.records.find((record) => record.event === 'account_model_resting')).toMatchObject({
      provider: 'provider_a',
      account: first,
      model: 'pro',
    });
    // The pinned chat stays off the spent model's login; a chat on another model may use it.
    for (let turnNumber = 0; turnNumber < 3; turnNumber++) {
      const lease = pool.acquire('chat-1', 'pro');
      expect(lease.alias).toBe(other);
      lease.release();
    }
    pool.acquire('chat-2', 'flash').release();
    const flash = pool.acquire('chat-3', 'flash');
    expect(flash.alias).toBe(first);
    flash.release();
    clock.advance(3_600_000);
    const afterReset = [pool.acquire('chat-4', 'pro'), pool.acquire('chat-5', 'pro')];
    expect(new Set(afterReset.map((lease) => lease.alias))).toEqual(new Set(['a', 'b']));
  });

  it("answers usage_limit naming the model, with the earliest reset, when every login spent that model's quota", () => {
    const { pool } = makePool(['a', 'b']);
    pool.applyFailure('a', modelLimit(600), undefined, 'pro');
    pool.applyFailure('b', modelLimit(60), undefined, 'pro');
    expect(() => pool.acquire('chat-1', 'pro')).toThrow(
      expect.objectContaining({ code: 'usage_limit', retryAfterSeconds: 60 }) as Error,
    );
    const turn = new AccountTurn(pool, 'chat-1', 'flash');
    turn.end();
    const error = pool.unavailableError('pro');
    expect(error?.publicMessage).toContain('usage limit for pro');
    expect(error?.publicMessage).toContain('choose another model');
  });

  it("gives the turn's final error the pool's words and earliest reset when no login has the model left", () => {
    const { pool } = makePool(['a', 'b']);
    pool.applyFailure('b', modelLimit(30), undefined, 'pro');
    const turn = new AccountTurn(pool, 'chat-1', 'pro');
    expect(turn.alias).toBe('a');
    const failure = modelLimit(900);
    expect(turn.moveAfter(failure)).toBe(false);
    const final = turn.finalError(failure);
    expect(final).toMatchObject({ code: 'usage_limit', retryAfterSeconds: 30 });
    expect(final.publicMessage).toContain('for pro');
  });

  it("steers a model off a login whose usage-endpoint bucket for it is at 0, and keeps a family's only login", () => {
    const { pool, clock } = makePool(['a', 'b']);
    pool.reportPlan('a', {
      source: 'usage_endpoint',
      windows: [{ name: 'pro', model: 'pro', usedRatio: 1, resetsAt: clock.now() + 3_600_000 }],
    });
    for (const chat of ['chat-1', 'chat-2', 'chat-3']) {
      const lease = pool.acquire(chat, 'pro');
      expect(lease.alias).toBe('b');
      lease.release();
    }
    const sole = makePool(['a']);
    sole.pool.applyFailure('a', modelLimit(600), undefined, 'pro');
    expect(sole.pool.acquire('chat-1', 'pro').alias).toBe('a');
  });

  it('rests every model id of a quota bucket the family names (quotaBucketOf), from a turn or a usage read', () => {
    const quotaBucketOf = (model: string) => (model === 'flash-new' ? 'flash' : model);
    const { pool, clock } = makePool(['a', 'b'], { quotaBucketOf });
    pool.applyFailure('a', modelLimit(600), undefined, 'flash-new');
    for (const model of ['flash', 'flash-new']) {
      const lease = pool.acquire(undefined, model);
      expect(lease.alias).toBe('b');
      lease.release();
    }
    pool.reportPlan('b', {
      source: 'usage_endpoint',
      windows: [{ name: 'flash', model: 'flash', usedRatio: 1, resetsAt: clock.now() + 900_000 }],
    });
    expect(pool.unavailableError('flash-new')?.publicMessage).toContain('usage limit for flash-new');
    expect(pool.acquire(undefined, 'pro').alias).toBe('a');
  });

  it("answers a family's only login at its in-flight cap as busy, whatever its model rests", () => {
    const { pool } = makePool(['only'], { maxInFlight: 1 });
    pool.applyFailure('only', modelLimit(72_000), undefined, 'pro');
    const held = pool.acquire('chat-1', 'pro');
    expect(() => pool.acquire('chat-2', 'pro')).toThrow(
      expect.objectContaining({ code: 'rate_limited', retryAfterSeconds: 1 }) as Error,
    );
    held.release();
    expect(pool.acquire('chat-2', 'pro').alias).toBe('only');
  });

  it('cools the whole login for a usage limit that does not name the model as its scope', () => {
    const { pool } = makePool(['a', 'b']);
    pool.applyFailure('a', usageLimit(600), undefined, 'pro');
    expect(pool.stateOf('a').kind).toBe('cooling');
  });

  it('gives the account back at the end', () => {
    const { pool, last } = makePool(['a']);
    const turn = new AccountTurn(pool, undefined);
    expect(last('inFlight', 'a')?.[3]).toBe(1);
    turn.end();
    turn.end();
    expect(last('inFlight', 'a')?.[3]).toBe(0);
  });
});

describe(startBackgroundRefresh.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('refreshes every live account each jittered interval, one refresh per account at a time', async () => {
    const { pool, logger } = makePool(['a', 'b', 'c']);
    pool.applyFailure('c', new GatewayError('auth'));
    const started: string[] = [];
    const finish: Array<() => void> = [];
    const refresh = jest.fn((handle: string) => {
      started.push(handle);
      return new Promise<undefined>((resolve) => finish.push(() => resolve(undefined)));
    });
    const stop = startBackgroundRefresh(
      pool,
      refresh,
      { intervalMs: 1000, aheadMs: 300_000, random: () => 0.5 },
      logger,
    );
    await jest.advanceTimersByTimeAsync(999);
    expect(started).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(started).toEqual(['handle-a', 'handle-b']);
    expect(refresh).toHaveBeenCalledWith('handle-a', 300_000, logger);
    // Still running: the next tick starts no second refresh of the same account.
    await jest.advanceTimersByTimeAsync(1000);
    expect(started).toHaveLength(2);
    finish.forEach((done) => done());
    await jest.advanceTimersByTimeAsync(1000);
    expect(started).toHaveLength(4);
    stop();
    finish.forEach((done) => done());
    await jest.advanceTimersByTimeAsync(5000);
    expect(started).toHaveLength(4);
  });

  it('marks a login dead when its refresh fails for good, and keeps going after other failures', async () => {
    const { pool, logger } = makePool(['a', 'b']);
    const refresh = jest.fn(async (handle: string) => {
      if (handle === 'handle-a') throw new GatewayError('auth');
      throw Object.assign(new Error("EROFS: read-only file system, open '/secret/path'"), { code: 'EROFS' });
    });
    const stop = startBackgroundRefresh(pool, refresh, { intervalMs: 1000, aheadMs: 1, random: () => 0.5 }, logger);
    await jest.advanceTimersByTimeAsync(1000);
    expect(pool.stateOf('a').kind).toBe('login_dead');
    expect(pool.stateOf('b').kind).toBe('ready');
    // The line says what failed and what to do, by code: the message (a path, an answer) stays out.
    expect(logger.records.filter((line) => line.event === 'account_refresh_failed')).toEqual([
      expect.objectContaining({
        account: 'b',
        reason: 'EROFS',
        fix: expect.stringContaining('a read-only mount cannot take the renewed token'),
      }),
    ]);
    expect(JSON.stringify(logger.records)).not.toContain('/secret/path');
    await jest.advanceTimersByTimeAsync(1000);
    expect(refresh.mock.calls.map(([handle]) => handle)).toEqual(['handle-a', 'handle-b', 'handle-b']);
    stop();
  });

  it("names the family's fix when its token endpoint failure carries one, else what to check", async () => {
    const { pool, logger } = makePool(['a', 'b']);
    const refresh = jest.fn(async (handle: string) => {
      throw new GatewayError('upstream', {
        retryable: true,
        fix: handle === 'handle-a' ? 'check PROVIDER_A_TOKEN_URL' : undefined,
      });
    });
    const stop = startBackgroundRefresh(pool, refresh, { intervalMs: 1000, aheadMs: 1, random: () => 0.5 }, logger);
    await jest.advanceTimersByTimeAsync(1000);
    stop();
    expect(logger.records.filter((line) => line.event === 'account_refresh_failed')).toEqual([
      expect.objectContaining({ account: 'a', reason: 'upstream', fix: 'check PROVIDER_A_TOKEN_URL' }),
      expect.objectContaining({
        account: 'b',
        reason: 'upstream',
        fix: expect.stringContaining('check the network and HTTPS_PROXY'),
      }),
    ]);
    expect(pool.stateOf('a').kind).toBe('ready');
  });

  it('drops a refresh failure of the login a file held before another was written over it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pool-login-'));
    try {
      const file = path.join(dir, 'auth.json');
      fs.writeFileSync(file, 'account-1');
      const { pool, logger } = makePool(['a', 'b'], {}, { a: file }, (content) => content.trim());
      pool.sweep();
      let refuse!: () => void;
      const refresh = (handle: string) =>
        handle === 'handle-a'
          ? new Promise<undefined>((_resolve, reject) => (refuse = () => reject(new GatewayError('auth'))))
          : Promise.resolve(undefined);
      const stop = startBackgroundRefresh(pool, refresh, { intervalMs: 1000, aheadMs: 1, random: () => 0.5 }, logger);
      await jest.advanceTimersByTimeAsync(1000);
      stop();
      // Another account's login is written while the old one's refresh is being refused.
      fs.writeFileSync(file, 'account-2');
      pool.sweep();
      refuse();
      await jest.advanceTimersByTimeAsync(0);
      expect(pool.stateOf('a').kind).toBe('ready');
      expect(logger.records.filter((line) => line.event === 'account_state')).toEqual([]);
      expect(logger.records.filter((line) => line.event === 'account_report_stale')).toEqual([
        expect.objectContaining({ account: 'a', report: 'auth' }),
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names the login's file, its errno and the family's fix for it when the family says what the file failed on", async () => {
    const { pool, logger } = makePool(['a'], {}, { a: '/logins/claude-team/.credentials.json' });
    const refresh = jest.fn(async () => {
      throw new LoginFileFailure('EROFS', 'mount the file read-write', { cause: new Error('EROFS: secret words') });
    });
    const stop = startBackgroundRefresh(pool, refresh, { intervalMs: 1000, aheadMs: 1, random: () => 0.5 }, logger);
    await jest.advanceTimersByTimeAsync(1000);
    stop();
    expect(pool.stateOf('a').kind).toBe('ready');
    expect(logger.records.filter((line) => line.event === 'account_refresh_failed')).toEqual([
      expect.objectContaining({
        provider: 'provider_a',
        account: 'a',
        path: '/logins/claude-team/.credentials.json',
        reason: 'EROFS',
        fix: 'mount the file read-write',
      }),
    ]);
    expect(logger.text()).not.toContain('secret words');
  });

  it('renews a login whose new token already falls inside ACCOUNT_REFRESH_AHEAD once per half its life, with one warning', async () => {
    const HOUR = 3_600_000;
    const { pool, logger } = makePool(['a', 'b']);
    // The family's rule (LoginTokenCache.refreshAhead): renew when the token expires within `aheadMs`;
    // every token lives an hour, as Gemini's do. b's token is renewed on its own schedule.
    const expiry: Record<string, number> = { 'handle-a': Date.now() + 10_000, 'handle-b': Date.now() + 30 * HOUR };
    const renewed: string[] = [];
    const refresh = jest.fn(async (handle: string, aheadMs: number) => {
      if (expiry[handle] - Date.now() > aheadMs) return undefined;
      renewed.push(handle);
      expiry[handle] = Date.now() + HOUR;
      return expiry[handle];
    });
    const stop = startBackgroundRefresh(
      pool,
      refresh,
      { intervalMs: 60_000, aheadMs: HOUR, random: () => 0.5 },
      logger,
    );
    await jest.advanceTimersByTimeAsync(60_000);
    expect(renewed).toEqual(['handle-a']);
    const warnings = () => logger.records.filter((line) => line.event === 'account_refresh_ahead_over_lifetime');
    expect(warnings()).toEqual([
      expect.objectContaining({
        provider: 'provider_a',
        account: 'a',
        setting: 'ACCOUNT_REFRESH_AHEAD',
        refresh_ahead_ms: HOUR,
        token_lifetime_ms: HOUR,
        renews_at_ms: HOUR / 2,
        fix: expect.stringContaining('set ACCOUNT_REFRESH_AHEAD below 3600000 ms'),
      }),
    ]);
    // Not renewed at every check: the next renewal comes when half the token's life is left.
    await jest.advanceTimersByTimeAsync(29 * 60_000);
    expect(renewed).toEqual(['handle-a']);
    const windowsOf = (handle: string) =>
      refresh.mock.calls.filter(([called]) => called === handle).map(([, aheadMs]) => aheadMs);
    expect(windowsOf('handle-a').at(-1)).toBe(HOUR / 2);
    await jest.advanceTimersByTimeAsync(2 * 60_000);
    expect(renewed).toEqual(['handle-a', 'handle-a']);
    await jest.advanceTimersByTimeAsync(HOUR);
    expect(renewed).toEqual(['handle-a', 'handle-a', 'handle-a', 'handle-a']);
    // One warning for the login, however often it is renewed; the other login keeps the setting.
    expect(warnings()).toHaveLength(1);
    expect(new Set(windowsOf('handle-b'))).toEqual(new Set([HOUR]));
    stop();
  });

  it('arms no timer and refreshes nothing when the interval is 0 (off)', async () => {
    const { pool, logger } = makePool(['a']);
    const refresh = jest.fn(async () => undefined);
    const stop = startBackgroundRefresh(pool, refresh, { intervalMs: 0, aheadMs: 1 }, logger);
    // A 0 ms timer would check every login on every turn of the event loop.
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(refresh).not.toHaveBeenCalled();
    stop();
  });

  it('does nothing when the interval is longer than a timer holds (Node would tick every 1 ms)', async () => {
    const { pool, logger } = makePool(['a']);
    const refresh = jest.fn(async () => undefined);
    const stop = startBackgroundRefresh(pool, refresh, { intervalMs: 720 * 3_600_000, aheadMs: 1 }, logger);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(refresh).not.toHaveBeenCalled();
    stop();
  });

  it('keeps an interval a timer holds within that range when the jitter would take it beyond', async () => {
    const { pool, logger } = makePool(['a']);
    const refresh = jest.fn(async () => undefined);
    const days22 = 22 * 24 * 3_600_000;
    const stop = startBackgroundRefresh(pool, refresh, { intervalMs: days22, aheadMs: 1, random: () => 1 }, logger);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(refresh).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(2 ** 31 - 1 - 60_000);
    expect(refresh).toHaveBeenCalledTimes(1);
    stop();
  });
});

describe('the paid-usage guard (ACCOUNT_PAID_USAGE)', () => {
  const HOUR = 3_600_000;
  const paidTurn = (resetsAt: number): PlanReport => ({
    source: 'turn',
    windows: [{ name: 'primary', usedRatio: 1, resetsAt }],
    planSpent: true,
    paid: { kind: 'credits', available: true, inUse: true },
  });

  it('rests a login reported drawing paid usage until the spent window resets, and moves new turns away', () => {
    const { pool, clock, logger, last } = makePool(['a', 'b']);
    const resetsAt = clock.now() + HOUR;
    pool.reportPlan('a', paidTurn(resetsAt));
    expect(pool.stateOf('a')).toEqual({ kind: 'plan_spent', until: resetsAt, reason: 'paid_usage_in_use' });
    expect(last('state', 'a')).toEqual(['state', 'provider_a', 'a', 'plan_spent', resetsAt]);
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        event: 'account_state',
        account: 'a',
        state: 'plan_spent',
        reason: 'paid_usage_in_use',
      }),
    );
    for (const chat of ['c1', 'c2', 'c3']) {
      const lease = pool.acquire(chat);
      expect(lease.alias).toBe('b');
      lease.release();
    }
    clock.advance(HOUR);
    expect(pool.stateOf('a').kind).toBe('ready');
  });

  it("refuses a family's only login with paid_usage_not_allowed, Retry-After the reset (never bypassed)", () => {
    const { pool, clock } = makePool(['only']);
    const resetsAt = clock.now() + 30 * 60_000;
    pool.reportPlan('only', paidTurn(resetsAt));
    const error = thrown(() => pool.acquire('chat'));
    expect(error).toMatchObject({
      code: 'paid_usage_not_allowed',
      provider: 'provider_a',
      retryAfterSeconds: 1800,
      resetsAt,
    });
    expect(pool.unavailableError()?.code).toBe('paid_usage_not_allowed');
    clock.advance(30 * 60_000);
    expect(pool.acquire('chat').alias).toBe('only');
  });

  it("retakes a waiting turn's login: kept at its in-flight cap, left for the best other once the guard rests it", () => {
    const { pool, clock } = makePool(['a', 'b'], { maxInFlight: 1 });
    const waiting = pool.acquire('chat');
    expect(waiting.alias).toBe('a');
    // The turn holds its own place under the cap: it keeps its login.
    expect(pool.retake(waiting, 'chat')).toBe(waiting);
    pool.reportPlan('a', paidTurn(clock.now() + HOUR));
    const moved = pool.retake(waiting, 'chat');
    expect(moved.alias).toBe('b');
    // The old lease was given back, and the chat now sticks to its new login.
    moved.release();
    expect(pool.acquire('chat').alias).toBe('b');
  });

  it("retakes a family's only login unless the guard rests it: then the paid-usage refusal", () => {
    const { pool, clock, last } = makePool(['only'], { maxInFlight: 1 });
    const waiting = pool.acquire('chat');
    pool.applyFailure('only', usageLimit(60));
    // A cooling only login is asked anyway, as when the turn took it.
    expect(pool.retake(waiting, 'chat')).toBe(waiting);
    pool.reportPlan('only', paidTurn(clock.now() + HOUR));
    expect(thrown(() => pool.retake(waiting, 'chat')).code).toBe('paid_usage_not_allowed');
    // The login the turn held is given back.
    expect(last('inFlight', 'only')).toEqual(['inFlight', 'provider_a', 'only', 0]);
  });

  it('lets no shorter 429 or usage limit end the rest early: the login rests until its plan resets', () => {
    const { pool, clock } = makePool(['a', 'b']);
    const resetsAt = clock.now() + 2 * HOUR;
    pool.reportPlan('a', paidTurn(resetsAt));
    // A turn still in flight on the login comes back with a short 429.
    expect(pool.applyFailure('a', rateLimited(5))).toBe(true);
    expect(pool.stateOf('a')).toEqual({ kind: 'plan_spent', until: resetsAt, reason: 'paid_usage_in_use' });
    clock.advance(6_000);
    expect(pool.acquire('chat').alias).toBe('b');
    expect(pool.stateOf('a').kind).toBe('plan_spent');
  });

  it("never bypasses a family's only login on a spent plan, even once a failed refresh marked it dead", () => {
    const { pool, clock } = makePool(['only'], {}, { only: '/nonexistent/auth.json' });
    const resetsAt = clock.now() + HOUR;
    pool.reportPlan('only', paidTurn(resetsAt));
    pool.applyFailure('only', new GatewayError('auth'));
    expect(pool.stateOf('only').kind).toBe('login_dead');
    expect(() => pool.acquire('chat')).toThrow(GatewayError);
  });

  it('gives no login the check ruled out a turn while its plan is spent, whatever its reset', () => {
    const { pool, clock } = makePool(['a', 'b']);
    pool.loginChecked('a', { state: 'cli_missing' });
    pool.loginChecked('b', { state: 'cli_missing' });
    pool.reportPlan('a', paidTurn(clock.now() + HOUR));
    for (const chat of ['c1', 'c2']) {
      const lease = pool.acquire(chat);
      expect(lease.alias).toBe('b');
      lease.release();
    }
    // Paid usage in use with no reset known: still held while the login is dead.
    pool.reportPlan('b', { source: 'turn', windows: [], paid: { kind: 'extra_usage', available: true, inUse: true } });
    expect(pool.stateOf('b').kind).toBe('login_dead');
    expect(thrown(() => pool.acquire('c3')).code).toBe('auth');
    const { pool: sole } = makePool(['only']);
    sole.loginChecked('only', { state: 'missing' });
    sole.reportPlan('only', {
      source: 'turn',
      windows: [],
      paid: { kind: 'extra_usage', available: true, inUse: true },
    });
    expect(thrown(() => sole.acquire('chat')).code).toBe('auth');
  });

  it('sends a login that comes back from the dead while its plan is still spent to rest, not to work', () => {
    inScratchDir((dir) => {
      const file = path.join(dir, 'auth.json');
      fs.writeFileSync(file, '{"v":1}');
      const { pool, clock } = makePool(['a', 'b'], {}, { a: file });
      pool.sweep();
      const resetsAt = clock.now() + HOUR;
      pool.reportPlan('a', paidTurn(resetsAt));
      pool.applyFailure('a', new GatewayError('auth'));
      expect(pool.stateOf('a').kind).toBe('login_dead');
      // `codex login` again: the login is back, its plan is not.
      fs.writeFileSync(file, '{"v":2,"renewed":true}');
      pool.sweep();
      expect(pool.stateOf('a')).toEqual({ kind: 'plan_spent', until: resetsAt, reason: 'plan_spent' });
      clock.advance(HOUR);
      expect(pool.stateOf('a').kind).toBe('ready');
    });
  });

  it('rests a login whose plan is spent (a window at 100 % ahead of its reset) while paid usage is available to draw', () => {
    const { pool, clock } = makePool(['a', 'b']);
    pool.reportPlan('a', {
      source: 'usage_endpoint',
      windows: [
        { name: 'primary', usedRatio: 1, resetsAt: clock.now() + HOUR },
        { name: 'secondary', usedRatio: 1, resetsAt: clock.now() + 2 * HOUR },
      ],
      paid: { kind: 'credits', available: true, inUse: false },
    });
    // The latest spent window's reset: the plan serves again only once both are past.
    expect(pool.stateOf('a')).toMatchObject({
      kind: 'plan_spent',
      until: clock.now() + 2 * HOUR,
      reason: 'plan_spent',
    });
  });

  it('leaves a spent plan with no paid usage behind it to the upstream: its own limit answer cools the login', () => {
    const { pool, clock } = makePool(['a', 'b']);
    pool.reportPlan('a', {
      source: 'turn',
      windows: [{ name: 'five_hour', usedRatio: 1, resetsAt: clock.now() + HOUR }],
      planSpent: true,
    });
    expect(pool.stateOf('a').kind).toBe('ready');
    pool.reportPlan('b', {
      source: 'turn',
      windows: [],
      planSpent: true,
      paid: { kind: 'extra_usage', available: false, disabledReason: 'out_of_credits' },
    });
    expect(pool.stateOf('b').kind).toBe('ready');
  });

  it('uses the default cooldown when the spent plan names no reset, and ignores a window whose reset passed', () => {
    const { pool, clock } = makePool(['a', 'b']);
    const credits = { kind: 'credits', available: true } as const;
    pool.reportPlan('b', {
      source: 'turn',
      windows: [{ name: 'primary', usedRatio: 1, resetsAt: clock.now() - 1 }],
      paid: credits,
    });
    expect(pool.stateOf('b').kind).toBe('ready');
    pool.reportPlan('a', { source: 'turn', windows: [], planSpent: true, paid: credits });
    expect(pool.stateOf('a')).toMatchObject({ kind: 'plan_spent', until: clock.now() + OPTIONS.cooldownDefaultMs });
  });

  it('rests until the reset the upstream gave for the spent plan when no plan window carries it, and comes back then', () => {
    const { pool, clock } = makePool(['a', 'b']);
    const spentUntil = clock.now() + HOUR;
    // Claude names its extra usage itself as the limit: no plan window, the plan's reset only.
    pool.reportPlan('a', {
      source: 'turn',
      windows: [],
      planSpent: true,
      spentUntil,
      paid: { kind: 'extra_usage', available: true, inUse: true },
    });
    expect(pool.stateOf('a')).toEqual({ kind: 'plan_spent', until: spentUntil, reason: 'paid_usage_in_use' });
    expect(pool.planView('a').restsUntil).toBe(spentUntil);
    clock.advance(OPTIONS.cooldownDefaultMs);
    expect(pool.stateOf('a').kind).toBe('plan_spent');
    // A later spent window wins; a reset already past counts for nothing.
    pool.reportPlan('b', {
      source: 'turn',
      windows: [{ name: 'seven_day', usedRatio: 1, resetsAt: clock.now() + 2 * HOUR }],
      planSpent: true,
      spentUntil: clock.now() - 1,
      paid: { kind: 'extra_usage', available: true, inUse: true },
    });
    expect(pool.stateOf('b')).toMatchObject({ kind: 'plan_spent', until: clock.now() + 2 * HOUR });
    clock.advance(HOUR);
    expect(pool.stateOf('a').kind).toBe('ready');
  });

  it("does not rest a login for one model's spent quota bucket", () => {
    const { pool, clock } = makePool(['a']);
    pool.reportPlan('a', {
      source: 'usage_endpoint',
      windows: [{ name: 'gemini-2.5-flash', model: 'gemini-2.5-flash', usedRatio: 1, resetsAt: clock.now() + HOUR }],
    });
    expect(pool.stateOf('a').kind).toBe('ready');
    expect(pool.planView('a').planSpent).toBe(false);
  });

  describe("a spent window of one model family (provider_c's seven_day_opus, seven_day_sonnet)", () => {
    /** A provider_c pool of `aliases` that reads each login's usage as `usage` says. */
    function claudePool(aliases: string[], paidUsage: 'plan_only' | 'allow' = 'plan_only') {
      const clock = manualClock();
      const pool = new AccountPool(
        'provider_c',
        aliases.map((alias) => ({ alias, handle: alias })),
        { ...OPTIONS, maxInFlight: 0, paidUsage, quotaBucketOf: providerCQuotaBucket },
        { clock, logger: recordingLogger(), metrics: recordingAccountMetrics().metrics },
      );
      const opusSpentUntil = clock.now() + 5 * 24 * HOUR;
      const report = planReportFromUsage({
        five_hour: { utilization: 10, resets_at: new Date(clock.now() + HOUR).toISOString() },
        seven_day: { utilization: 40, resets_at: new Date(opusSpentUntil).toISOString() },
        seven_day_opus: { utilization: 100, resets_at: new Date(opusSpentUntil).toISOString() },
        extra_usage: { is_enabled: true },
      })!;
      aliases.forEach((alias) => pool.reportPlan(alias, report));
      return { pool, clock, opusSpentUntil };
    }

    it('rests only Opus ids: a Sonnet turn is served, an Opus one refused with paid_usage_not_allowed naming it', () => {
      const { pool, opusSpentUntil } = claudePool(['a', 'b']);
      for (const alias of ['a', 'b']) {
        expect(pool.stateOf(alias).kind).toBe('ready');
        expect(pool.planView(alias)).toMatchObject({ planSpent: false, restsUntil: undefined });
      }
      for (const model of ['claude-sonnet-5', 'sonnet', 'haiku']) pool.acquire(undefined, model).release();
      for (const model of ['claude-opus-4-8', 'opus']) {
        const error = thrown(() => pool.acquire(undefined, model));
        expect(error).toMatchObject({
          code: 'paid_usage_not_allowed',
          provider: 'provider_c',
          retryAfterSeconds: 5 * 24 * 3600,
          resetsAt: opusSpentUntil,
        });
        expect(error.publicMessage).toContain(`the usage limit for ${model} of every Claude Code CLI login`);
        expect(error.publicMessage).toContain("Claude's extra usage");
        expect(error.publicMessage).toContain('choose another model');
      }
    });

    it("holds a family's only login for Opus too (never bypassed), and serves it the other models", () => {
      const { pool, clock } = claudePool(['only']);
      const lease = pool.acquire('chat', 'claude-sonnet-5');
      // A turn waiting for its slot on Opus is not started on it either.
      expect(thrown(() => pool.retake(lease, 'chat', 'claude-opus-4-8')).code).toBe('paid_usage_not_allowed');
      expect(thrown(() => pool.acquire('chat', 'opus')).code).toBe('paid_usage_not_allowed');
      // A turn that drew extra usage on Opus (its event names the Opus window) rests Opus, not the login.
      pool.reportPlan(
        'only',
        planReportOf({
          status: 'rejected',
          rateLimitType: 'seven_day_opus',
          resetsAt: Math.floor((clock.now() + 24 * HOUR) / 1000),
          overageStatus: 'allowed',
          isUsingOverage: true,
        })!,
      );
      expect(pool.stateOf('only').kind).toBe('ready');
      pool.acquire('chat', 'claude-sonnet-5').release();
      expect(thrown(() => pool.acquire('chat', 'opus')).code).toBe('paid_usage_not_allowed');
    });

    it("holds Opus on a family's only login when the turn says extra usage is in use without saying it is available", () => {
      const { pool, clock } = claudePool(['only']);
      // The CLI's event may carry isUsingOverage (or the API's overage-in-use) without an overageStatus:
      // the report's paid usage is in use, its availability unknown, and it replaces the endpoint's.
      const report = planReportOf({
        status: 'rejected',
        rateLimitType: 'seven_day_opus',
        resetsAt: Math.floor((clock.now() + 24 * HOUR) / 1000),
        isUsingOverage: true,
      })!;
      expect(report.paid).toEqual({ kind: 'extra_usage', inUse: true });
      pool.reportPlan('only', report);
      expect(pool.stateOf('only').kind).toBe('ready');
      pool.acquire('chat', 'claude-sonnet-5').release();
      expect(thrown(() => pool.acquire('chat', 'opus')).code).toBe('paid_usage_not_allowed');
    });

    it("with allow, steers Opus to a login with Opus left, and a family's only login serves it", () => {
      const { pool: sole } = claudePool(['only'], 'allow');
      expect(sole.acquire(undefined, 'claude-opus-4-8').alias).toBe('only');
      const { pool } = claudePool(['a', 'b'], 'allow');
      pool.reportPlan('b', planReportFromUsage({ seven_day_opus: { utilization: 50, resets_at: null } })!);
      expect(pool.acquire(undefined, 'claude-opus-4-8').alias).toBe('b');
    });
  });

  it('with allow, serves the login and counts and logs each turn that reported paid usage once, delivered or not', () => {
    const { pool, clock, logger, calls } = makePool(['a'], { paidUsage: 'allow' });
    const turnLogger = recordingLogger();
    const paid = pool.acquire('chat');
    // Another turn on the same login meanwhile, on its plan: the paid report is not its own.
    const free = pool.acquire('free');
    // Two reports within one turn (the answer's headers, then the stream's event): one paid turn.
    pool.reportPlan('a', paidTurn(clock.now() + HOUR));
    paid.paidReported(turnLogger);
    pool.reportPlan('a', paidTurn(clock.now() + HOUR));
    paid.paidReported(turnLogger);
    paid.release();
    paid.release();
    free.release();
    expect(calls.filter((call) => call[0] === 'paidTurn')).toEqual([['paidTurn', 'provider_a', 'a']]);
    // A turn that failed after its paid report (the stream broke after output) drew paid usage too.
    const failed = pool.acquire('other');
    pool.reportPlan('a', paidTurn(clock.now() + HOUR));
    failed.paidReported(turnLogger);
    failed.release();
    expect(pool.stateOf('a').kind).toBe('ready');
    expect(calls.filter((call) => call[0] === 'paidTurn')).toHaveLength(2);
    // The line is the turn's (it names the request), not the pool's.
    expect(logger.records.filter((line) => line.event === 'paid_usage_turn')).toEqual([]);
    expect(turnLogger.records.filter((line) => line.event === 'paid_usage_turn')).toEqual([
      expect.objectContaining({ provider: 'provider_a', account: 'a', paid_usage: 'credits', setting: 'allow' }),
      expect.objectContaining({ provider: 'provider_a', account: 'a', paid_usage: 'credits', setting: 'allow' }),
    ]);
    expect(pool.acquire('chat').alias).toBe('a');
  });

  it('shows the plan, the paid usage and the rest in the view, and publishes it', () => {
    const { pool, clock, last } = makePool(['a', 'b']);
    const resetsAt = clock.now() + HOUR;
    pool.reportPlan('a', { ...paidTurn(resetsAt), planType: 'plus' });
    const view = pool.planView('a');
    expect(view).toMatchObject({
      state: 'plan_spent',
      planSpent: true,
      planType: 'plus',
      restsUntil: resetsAt,
      source: 'turn',
      updatedAt: clock.now(),
      paid: { kind: 'credits', inUse: true },
    });
    expect(last('plan', 'a')?.[3]).toMatchObject({ planSpent: true });
    // A later report without paid facts keeps them, but no longer in use.
    pool.reportPlan('a', { source: 'turn', windows: [{ name: 'secondary', usedRatio: 0.2 }] });
    expect(pool.planView('a').paid).toEqual({ kind: 'credits', available: true, inUse: false });
    expect(pool.planView('a').windows.map((window) => window.name)).toEqual(['primary', 'secondary']);
  });

  it('flags a login refused for extra usage without cooling or moving it, until its next successful turn', () => {
    const { pool, clock, last } = makePool(['a', 'b']);
    const refusal = new GatewayError('extra_usage_required', { provider: 'provider_c' });
    const lease = pool.acquire('chat');
    expect(lease.alias).toBe('a');
    expect(pool.moveAfter(lease, refusal, 'chat')).toBeUndefined();
    expect(pool.stateOf('a').kind).toBe('ready');
    expect(pool.planView('a').needsExtraUsageSince).toBe(clock.now());
    expect(last('plan', 'a')?.[3]).toMatchObject({ needsExtraUsageSince: clock.now() });
    lease.release();
    // The same chat stays on its login; its next success clears the flag.
    const turn = new AccountTurn(pool, 'chat');
    expect(turn.alias).toBe('a');
    turn.succeeded();
    turn.end();
    expect(pool.planView('a').needsExtraUsageSince).toBeUndefined();
  });
});

function thrown(action: () => unknown): GatewayError {
  try {
    action();
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a throw');
}
