import { recordingAccountMetrics } from '../../../test/support/recorders';
import { AccountPool } from '../../accounts/account-pool';
import type { ChatEvent } from '../../core/chat-event';
import type { PlanReport } from '../../core/plan-usage';
import { GatewayError } from '../../core/gateway.error';
import { runFamilyTurn } from './family-turn';
import type { FamilyTurnOptions } from './family-turn';
import type { CallContext } from './provider-adapter';
import type { FrameStep, UpstreamAttempt, UpstreamFamily } from './turn-runner';
import { transportFailure } from './turn-runner';

/**
 * A family whose one attempt answers `finish` (or fails before output, not retryable, when `refuse`
 * is set); its attempts' `close` returns `closing` when given (a child still being stopped).
 */
function oneFrameFamily(refuse?: GatewayError, closing?: () => Promise<void>) {
  const opened: string[] = [];
  const family: UpstreamFamily<string, string, UpstreamAttempt<string>, string> = {
    provider: 'provider_c',
    request: (attempt) => attempt.login,
    send: (login) => {
      opened.push(login);
      if (refuse) return Promise.reject(refuse);
      const frames = ['done'][Symbol.iterator]();
      return Promise.resolve({ frames: { next: () => Promise.resolve(frames.next()) }, close: () => closing?.() });
    },
    translate: (): FrameStep => ({ events: [{ type: 'finish', reason: 'stop' }], accepted: true, terminal: true }),
    end: (): FrameStep => ({ events: [], failure: new GatewayError('upstream', { detail: 'no frame' }) }),
    classify: (failure) => transportFailure('provider_c', failure),
  };
  return { family, opened };
}

function setup(aliases = ['only'], maxInFlight = 0) {
  const inFlight: number[] = [];
  const logger = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
  const pool = new AccountPool(
    'provider_c',
    aliases.map((alias) => ({ alias, handle: `login-${alias}` })),
    { maxInFlight, cooldownDefaultMs: 60_000, pinnedChatsMax: 10 },
    {
      clock: { now: () => Date.now() },
      logger,
      metrics: {
        accountRegistered: () => undefined,
        accountState: () => undefined,
        accountInFlight: (_family, _alias, count) => void inFlight.push(count),
        accountPinnedChats: () => undefined,
        accountSelected: () => undefined,
        accountCooldown: () => undefined,
        accountMovedAway: () => undefined,
        accountPlan: () => undefined,
        accountPaidTurn: () => undefined,
      },
    },
  );
  const context: CallContext = { signal: new AbortController().signal, requestId: 'req-1', logger };
  const options = (
    before?: FamilyTurnOptions<string>['before'],
    own: Partial<FamilyTurnOptions<string>> = {},
  ): FamilyTurnOptions<string> => ({
    pool,
    chat: 'chat-1',
    timeoutMs: 0,
    idleTimeoutMs: 0,
    context,
    before,
    ...own,
  });
  // The pool publishes 0 per login at registration; what follows is the turns' take and give back.
  return { pool, options, turnsInFlight: () => inFlight.slice(aliases.length) };
}

/** A turn's report of extra usage drawn on a spent plan that resets in an hour. */
const PAID_REPORT: PlanReport = {
  source: 'turn',
  windows: [{ name: 'five_hour', usedRatio: 1, resetsAt: Date.now() + 3_600_000 }],
  planSpent: true,
  paid: { kind: 'extra_usage', available: true, inUse: true },
};

async function drain(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const seen: ChatEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe(runFamilyTurn.name, () => {
  it("runs the family's attempts on the chat's login and gives the login back at the end", async () => {
    const { family, opened } = oneFrameFamily();
    const { options, turnsInFlight } = setup();
    const turn = await runFamilyTurn(family, options());
    expect(await drain(turn.events)).toEqual([{ type: 'finish', reason: 'stop' }]);
    expect(opened).toEqual(['login-only']);
    expect(turnsInFlight()).toEqual([1, 0]);
  });

  it('takes the login before the wait: a pool that cannot take the turn rejects at once and nothing waits', async () => {
    const { family, opened } = oneFrameFamily();
    const { pool, options } = setup(['one', 'two']);
    for (const alias of pool.aliases)
      pool.applyFailure(alias, new GatewayError('usage_limit', { upstreamStatus: 429, retryAfterSeconds: 600 }));
    const before = jest.fn(() => Promise.resolve(() => undefined));
    await expect(runFamilyTurn(family, options(before))).rejects.toMatchObject({ code: 'rate_limited' });
    expect(before).not.toHaveBeenCalled();
    expect(opened).toEqual([]);
  });

  it('takes the login again after the wait: one the paid-usage guard rested meanwhile is passed for another', async () => {
    const { family, opened } = oneFrameFamily();
    const { pool, options } = setup(['one', 'two']);
    // Another turn on the login reports extra usage drawn while this one waits for its slot.
    const before = () => {
      pool.reportPlan('one', PAID_REPORT);
      return Promise.resolve(() => undefined);
    };
    const turn = await runFamilyTurn(family, options(before));
    await drain(turn.events);
    expect(opened).toEqual(['login-two']);
    expect(pool.stateOf('one').kind).toBe('plan_spent');
  });

  it("refuses with the pool's paid-usage answer when no login is left after the wait: nothing opens, slot and login given back", async () => {
    const { family, opened } = oneFrameFamily();
    const { pool, options, turnsInFlight } = setup();
    const onClosed = jest.fn();
    const before = () => {
      pool.reportPlan('only', PAID_REPORT);
      return Promise.resolve(onClosed);
    };
    await expect(runFamilyTurn(family, options(before))).rejects.toMatchObject({ code: 'paid_usage_not_allowed' });
    expect(opened).toEqual([]);
    expect(onClosed).toHaveBeenCalledTimes(1);
    expect(turnsInFlight()).toEqual([1, 0]);
  });

  describe('a login full only with a turn over for its client whose attempt is still closing (ACCOUNT_MAX_IN_FLIGHT)', () => {
    /** One login, cap 1; the first turn of chat-1 answered, its attempt's close held until `stopped()`. */
    async function closingTurn() {
      let stopped!: () => void;
      const held = new Promise<void>((resolve) => (stopped = resolve));
      const { family, opened } = oneFrameFamily(undefined, () => held);
      const made = setup(['only'], 1);
      const first = await runFamilyTurn(family, made.options());
      await drain(first.events);
      return { ...made, family, opened, stopped };
    }

    it('the same chat sent again waits for the login, then runs on it', async () => {
      const { family, opened, options, stopped, turnsInFlight } = await closingTurn();
      let started = false;
      const again = runFamilyTurn(family, options()).then((turn) => {
        started = true;
        return turn;
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(started).toBe(false);
      expect(turnsInFlight()).toEqual([1]);
      stopped();
      expect(await drain((await again).events)).toEqual([{ type: 'finish', reason: 'stop' }]);
      expect(opened).toEqual(['login-only', 'login-only']);
      expect(turnsInFlight()).toEqual([1, 0, 1, 0]);
    });

    it("rejects with the client's reason when it leaves during the wait; nothing opens", async () => {
      const { family, opened, options, turnsInFlight } = await closingTurn();
      const client = new AbortController();
      const logger = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
      const waiting = runFamilyTurn(
        family,
        options(undefined, { context: { signal: client.signal, requestId: 'req-2', logger } }),
      );
      const gone = new Error('client left');
      client.abort(gone);
      await expect(waiting).rejects.toBe(gone);
      expect(opened).toEqual(['login-only']);
      expect(turnsInFlight()).toEqual([1]);
    });

    it('a turn still running (not closing) is refused at once, as before', async () => {
      const { family } = oneFrameFamily(undefined, () => new Promise<void>(() => undefined));
      const { pool, options } = setup(['only'], 1);
      // Holds the login without closing: a turn whose answer is still being read.
      pool.acquire('chat-2');
      await expect(runFamilyTurn(family, options())).rejects.toMatchObject({ code: 'rate_limited' });
    });
  });

  describe("the login's first usage read, while it runs (ACCOUNT_PAID_USAGE=plan_only)", () => {
    it('is waited for, then the login is taken again: a spent plan it reports refuses the turn unsent', async () => {
      const { family, opened } = oneFrameFamily();
      const { pool, options, turnsInFlight } = setup();
      let answer!: () => void;
      pool.firstUsageReadStarted(
        'only',
        new Promise<void>((resolve) => (answer = resolve)).then(() => pool.reportPlan('only', PAID_REPORT)),
      );
      const turn = runFamilyTurn(family, options());
      await Promise.resolve();
      expect(opened).toEqual([]);
      answer();
      await expect(turn).rejects.toMatchObject({ code: 'paid_usage_not_allowed' });
      expect(opened).toEqual([]);
      expect(turnsInFlight()).toEqual([1, 0]);
    });

    it('lets the turn through on its login when the read failed (it reported nothing)', async () => {
      const { family, opened } = oneFrameFamily();
      const { pool, options } = setup();
      pool.firstUsageReadStarted('only', Promise.resolve());
      await drain((await runFamilyTurn(family, options())).events);
      expect(opened).toEqual(['login-only']);
    });

    it("gives the login back and rejects with the client's reason when it leaves during the wait", async () => {
      const { family, opened } = oneFrameFamily();
      const { pool, options, turnsInFlight } = setup();
      pool.firstUsageReadStarted('only', new Promise<void>(() => undefined));
      const client = new AbortController();
      const turn = runFamilyTurn(family, { ...options(), context: { ...options().context, signal: client.signal } });
      client.abort(new Error('client left'));
      await expect(turn).rejects.toThrow('client left');
      expect(opened).toEqual([]);
      expect(turnsInFlight()).toEqual([1, 0]);
    });

    it('is not waited for under ACCOUNT_PAID_USAGE=allow', async () => {
      const { family, opened } = oneFrameFamily();
      const pool = new AccountPool(
        'provider_c',
        [{ alias: 'only', handle: 'login-only' }],
        { maxInFlight: 0, cooldownDefaultMs: 60_000, pinnedChatsMax: 10, paidUsage: 'allow' },
        {
          clock: { now: () => Date.now() },
          logger: setup().options().context.logger,
          metrics: recordingAccountMetrics().metrics,
        },
      );
      pool.firstUsageReadStarted('only', new Promise<void>(() => undefined));
      await drain((await runFamilyTurn(family, { ...setup().options(), pool })).events);
      expect(opened).toEqual(['login-only']);
    });
  });

  it('a failed wait gives the login back and rejects with its error; no attempt opens', async () => {
    const { family, opened } = oneFrameFamily();
    const { options, turnsInFlight } = setup();
    const full = new GatewayError('queue_full', { retryAfterSeconds: 5 });
    await expect(
      runFamilyTurn(
        family,
        options(() => Promise.reject(full)),
      ),
    ).rejects.toBe(full);
    expect(opened).toEqual([]);
    expect(turnsInFlight()).toEqual([1, 0]);
  });

  it('runs what the wait returned once the turn is closed, after the login is given back, and once only', async () => {
    const { family } = oneFrameFamily();
    const { options, turnsInFlight } = setup();
    const closed: number[][] = [];
    const turn = await runFamilyTurn(
      family,
      options(() => Promise.resolve(() => void closed.push(turnsInFlight()))),
    );
    expect(closed).toEqual([]);
    await drain(turn.events);
    // Reading on past the end, or leaving, closes nothing twice.
    await turn.events[Symbol.asyncIterator]().return?.(undefined);
    expect(closed).toEqual([[1, 0]]);
  });

  it('runs it once too when no attempt was accepted and the turn rejects', async () => {
    const refused = new GatewayError('bad_request', { upstreamStatus: 400 });
    const { family, opened } = oneFrameFamily(refused);
    const { options, turnsInFlight } = setup();
    const onClosed = jest.fn();
    await expect(
      runFamilyTurn(
        family,
        options(() => Promise.resolve(onClosed)),
      ),
    ).rejects.toBe(refused);
    expect(opened).toEqual(['login-only']);
    expect(onClosed).toHaveBeenCalledTimes(1);
    expect(turnsInFlight()).toEqual([1, 0]);
  });
});
