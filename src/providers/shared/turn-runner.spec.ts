import { recordingAccountMetrics } from '../../../test/support/recorders';
import { AccountPool } from '../../accounts/account-pool';
import { AccountTurn } from '../../accounts/account-turn';
import type { ChatEvent } from '../../core/chat-event';
import { ClientDisconnectedError, GatewayError } from '../../core/gateway.error';
import type { CallContext } from './provider-adapter';
import type { RetryClock } from './retry-policy';
import type { AttemptInfo, CloseReason, FrameStep, TurnOptions, UpstreamAttempt, UpstreamFamily } from './turn-runner';
import { runTurn, transportFailure } from './turn-runner';

/**
 * The lifecycle every family runs on, proved once with a fake family whose frames are scripted:
 * `ok` accepts, `text` is output, `done` finishes, `fail:<code>` fails the attempt, `hang` never
 * answers. Each script is one attempt; `send` takes the next. A script starting with
 * `refuse:<code>` has `send` reject with that GatewayError, `refuse-raw:<code>` with a `Refusal`
 * the family's `classify` reads; the frame `throw:<code>` rejects the read with a `Refusal`, and
 * `exit:<code>` hands one to the runner as the step's `unclassified`.
 */
type Frame = string;

/** A failure as a fake upstream gives it: only the family's `classify` knows what it means. */
class Refusal extends Error {
  constructor(readonly code: string) {
    super(`refused: ${code}`);
  }
}

/** What the family's `classify` was given: the failure, the runner's time and the attempt's number. */
interface Classified {
  readonly failure: unknown;
  readonly atMs: number;
  readonly attempt: number;
}

interface FakeAttempt extends UpstreamAttempt<Frame> {
  readonly info: AttemptInfo<string>;
  closedWith?: CloseReason;
}

const failures: Record<string, () => GatewayError> = {
  upstream: () =>
    new GatewayError('upstream', {
      retryable: true,
      upstreamStatus: 502,
      upstream: { type: 'server_error', message: 'overloaded' },
    }),
  usage_limit: () => new GatewayError('usage_limit', { upstreamStatus: 429, retryAfterSeconds: 60 }),
  bad_request: () => new GatewayError('bad_request', { upstreamStatus: 400 }),
  // The upstream's API refused the login's token.
  auth: () => new GatewayError('auth', { upstreamStatus: 401 }),
  // A limit that resets in a minute: the hint is above the 30 s cap, so no retry, but the hint stays.
  rate_limited_long: () =>
    new GatewayError('rate_limited', { retryable: true, upstreamStatus: 429, retryAfterSeconds: 60 }),
};

/**
 * `again`: the frames' end asks for the turn again. `buffered`: frames other than `hang` and
 * `throw:` are already at hand, so the attempt's `poll` gives them without a wait.
 */
function fakeFamily(scripts: Frame[][], options: { again?: boolean; buffered?: boolean } = {}) {
  const opened: FakeAttempt[] = [];
  const classified: Classified[] = [];
  /** Every frame translated, in order. */
  const translated: Frame[] = [];
  /** The time each frame was translated at, as the runner gave it. */
  const family: UpstreamFamily<string, Frame, FakeAttempt, AttemptInfo<string>> = {
    provider: 'provider_a',
    request: (info) => info,
    send: async (info, _attempt, signal) => {
      const script = scripts[opened.length] ?? [];
      let index = 0;
      let stop: (() => void) | undefined;
      const attempt: FakeAttempt = {
        info,
        frames: {
          next: () => {
            const frame = script[index++];
            if (frame === undefined) return Promise.resolve({ done: true, value: undefined });
            if (frame.startsWith('throw:')) return Promise.reject(new Refusal(frame.slice('throw:'.length)));
            if (frame !== 'hang') return Promise.resolve({ done: false, value: frame });
            return new Promise((_resolve, reject) => {
              stop = () => reject(signal.reason);
              signal.addEventListener('abort', stop, { once: true });
            });
          },
        },
        close: (reason) => {
          attempt.closedWith ??= reason;
          stop?.();
        },
        ...(options.buffered
          ? {
              poll: () => {
                const frame = script[index];
                if (frame === undefined || frame === 'hang' || frame.startsWith('throw:')) return undefined;
                index++;
                return frame;
              },
            }
          : {}),
      };
      opened.push(attempt);
      if (script[0]?.startsWith('refuse:')) throw failures[script[0].slice('refuse:'.length)]();
      if (script[0]?.startsWith('refuse-raw:')) throw new Refusal(script[0].slice('refuse-raw:'.length));
      return attempt;
    },
    classify: (failure, { atMs, attempt }) => {
      classified.push({ failure, atMs, attempt: attempt.number });
      return failure instanceof Refusal ? failures[failure.code]() : transportFailure('provider_a', failure);
    },
    translate: (frame): FrameStep => {
      translated.push(frame);
      if (frame === 'ok') return { events: [], accepted: true };
      if (frame === 'text') return { events: [{ type: 'text-delta', text: 't' }], accepted: true };
      if (frame === 'done') return { events: [{ type: 'finish', reason: 'stop' }], accepted: true, terminal: true };
      if (frame.startsWith('fail:')) return { events: [], failure: failures[frame.slice('fail:'.length)]() };
      if (frame.startsWith('exit:')) return { events: [], unclassified: new Refusal(frame.slice('exit:'.length)) };
      return { events: [] };
    },
    end: () =>
      options.again
        ? { events: [{ type: 'finish', reason: 'stop' }], again: 'EMPTY' }
        : { events: [], failure: new GatewayError('upstream', { retryable: true, detail: 'closed early' }) },
    ...(options.again ? { emptyTurnRetry: { maxRetries: 2, delayMs: () => 1 } } : {}),
  };
  return { family, opened, classified, translated };
}

function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const push = (fields: Record<string, unknown>) => void lines.push(fields);
  return { lines, info: push, warn: push, debug: push, error: push };
}

function setup(aliases = ['first']) {
  const logger = recordingLogger();
  const pool = new AccountPool(
    'provider_a',
    aliases.map((alias) => ({ alias, handle: `login-${alias}` })),
    { maxInFlight: 0, cooldownDefaultMs: 60_000, pinnedChatsMax: 10 },
    { clock: { now: () => Date.now() }, logger, metrics: recordingAccountMetrics().metrics },
  );
  const client = new AbortController();
  const context: CallContext = { signal: client.signal, requestId: 'req-1', logger };
  const closed = jest.fn();
  // Retries wait on this clock: no real sleep, and the jitter's midpoint, so delays are exact.
  const slept: number[] = [];
  const clock: RetryClock = {
    now: () => Date.now(),
    random: () => 0.5,
    sleep: async (ms, signal) => {
      slept.push(ms);
      if (signal.aborted) throw signal.reason;
    },
  };
  const options = (overrides: Partial<TurnOptions<string>> = {}): TurnOptions<string> => ({
    account: new AccountTurn(pool, 'chat'),
    timeoutMs: 0,
    idleTimeoutMs: 0,
    context,
    onClosed: closed,
    clock,
    ...overrides,
  });
  return {
    pool,
    logger,
    slept,
    client,
    options,
    closed,
    events: (name: string) => logger.lines.filter((line) => line.event === name),
  };
}

async function drain(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const seen: ChatEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe('runTurn', () => {
  it('resolves on acceptance, yields the events and closes the attempt and the login at the end', async () => {
    const { family, opened } = fakeFamily([['ok', 'text', 'done']]);
    const { options, closed } = setup();
    const turn = await runTurn(family, options());
    expect(await drain(turn.events)).toEqual([
      { type: 'text-delta', text: 't' },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(opened.map((attempt) => attempt.closedWith)).toEqual(['done']);
    expect(closed).toHaveBeenCalledTimes(1);
  });

  it('retries a retryable failure before output (even after acceptance), invisibly, and logs the cause', async () => {
    const { family, opened } = fakeFamily([['refuse:upstream'], ['ok', 'fail:upstream'], ['ok', 'text', 'done']]);
    const { options, events, slept } = setup();
    const turn = await runTurn(family, options());
    expect(await drain(turn.events)).toEqual([
      { type: 'text-delta', text: 't' },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(opened.map((attempt) => attempt.info.number)).toEqual([1, 2, 3]);
    expect(events('upstream_retry').map((line) => [line.attempt, line.delay_ms])).toEqual([
      [1, 250],
      [2, 1000],
    ]);
    expect(slept).toEqual([250, 1000]);
    expect(events('upstream_attempt_failed')[0]).toMatchObject({
      provider: 'provider_a',
      account: 'first',
      attempt: 1,
      error_code: 'upstream',
      upstream_status: 502,
      upstream_type: 'server_error',
      upstream_message: 'overloaded',
    });
  });

  describe('classifies through the family, at the time of its own clock', () => {
    /** Far from the system's time: a classification read against any other clock would show. */
    const AT = 1_234_567_890_123;

    it('hands a refusal of send, a failed read and a step left unclassified to classify, with the attempt', async () => {
      const { family, classified } = fakeFamily([
        ['refuse-raw:upstream'],
        ['ok', 'throw:upstream'],
        ['ok', 'exit:bad_request'],
      ]);
      const { options, events } = setup();
      const clock: RetryClock = { now: () => AT, random: () => 0.5, sleep: async () => undefined };
      const turn = await runTurn(family, options({ clock }));
      expect(await drain(turn.events)).toEqual([
        { type: 'error', error: expect.objectContaining({ code: 'bad_request' }) },
      ]);
      expect(classified.map(({ failure, atMs, attempt }) => [(failure as Refusal).code, atMs, attempt])).toEqual([
        ['upstream', AT, 1],
        ['upstream', AT, 2],
        ['bad_request', AT, 3],
      ]);
      // What the family made of each failure is what the runner acted on and logged.
      expect(
        events('upstream_attempt_failed').map((line) => [line.attempt, line.error_code, line.upstream_status]),
      ).toEqual([
        [1, 'upstream', 502],
        [2, 'upstream', 502],
        [3, 'bad_request', 400],
      ]);
    });

    it('reads the time when the failure is met, not when the turn began', async () => {
      let now = AT;
      const clock: RetryClock = {
        now: () => now,
        random: () => 0.5,
        sleep: async (ms) => {
          now += ms;
        },
      };
      const { family, classified } = fakeFamily([
        ['refuse-raw:upstream'],
        ['refuse-raw:upstream'],
        ['refuse-raw:bad_request'],
      ]);
      const { options } = setup();
      await expect(runTurn(family, options({ clock }))).rejects.toMatchObject({ code: 'bad_request' });
      expect(classified.map(({ attempt, atMs }) => [attempt, atMs])).toEqual([
        [1, AT],
        [2, AT + 250],
        [3, AT + 1250],
      ]);
    });

    it('never hands it a GatewayError: a failure the family already classified is used as it is', async () => {
      const { family, classified } = fakeFamily([['refuse:upstream'], ['ok', 'fail:upstream'], ['ok', 'done']]);
      const { options } = setup();
      const turn = await runTurn(family, options());
      expect((await drain(turn.events)).map((event) => event.type)).toEqual(['finish']);
      expect(classified).toEqual([]);
    });
  });

  it('gives up after 2 retries and rejects with the failure when nothing was accepted', async () => {
    const { family, opened } = fakeFamily([
      ['refuse:upstream'],
      ['refuse:upstream'],
      ['refuse:upstream'],
      ['ok', 'done'],
    ]);
    const { options, events, closed, slept } = setup();
    await expect(runTurn(family, options())).rejects.toMatchObject({ code: 'upstream' });
    expect(opened).toHaveLength(3);
    expect(slept).toEqual([250, 1000]);
    expect(events('upstream_turn_failed')).toHaveLength(1);
    expect(closed).toHaveBeenCalledTimes(1);
  });

  it('never retries once output began: the failure is one terminal error event', async () => {
    const { family, opened } = fakeFamily([
      ['ok', 'text', 'fail:upstream'],
      ['ok', 'done'],
    ]);
    const { options } = setup();
    const turn = await runTurn(family, options());
    const seen = await drain(turn.events);
    expect(seen.map((event) => event.type)).toEqual(['text-delta', 'error']);
    expect(opened).toHaveLength(1);
  });

  it('does not retry a non-retryable failure', async () => {
    const { family, opened } = fakeFamily([['refuse:bad_request'], ['ok', 'done']]);
    const { options } = setup();
    await expect(runTurn(family, options())).rejects.toMatchObject({ code: 'bad_request' });
    expect(opened).toHaveLength(1);
  });

  it('opens again at once, outside the retry budget, when the family recovers from a failure itself', async () => {
    const { family, opened } = fakeFamily([['refuse:bad_request'], ['ok', 'text', 'done']]);
    let recovered = 0;
    family.reopenAfter = (failure) => failure.code === 'bad_request' && recovered++ === 0;
    const { options, events } = setup();
    const turn = await runTurn(family, options());
    expect((await drain(turn.events)).map((event) => event.type)).toEqual(['text-delta', 'finish']);
    expect(opened).toHaveLength(2);
    expect(events('upstream_retry')).toHaveLength(0);
    expect(events('upstream_attempt_failed')).toEqual([
      expect.objectContaining({ attempt: 1, error_code: 'bad_request' }),
    ]);
  });

  it('tells the family once the turn is over, after its last attempt, however it ended', async () => {
    /** The attempts opened by each time the family was told. */
    const toldAfter = (family: UpstreamFamily<string, Frame, FakeAttempt, AttemptInfo<string>>, opened: unknown[]) => {
      const told: number[] = [];
      family.closed = () => void told.push(opened.length);
      return told;
    };
    const { options } = setup();
    // Read to the end after a retry and a reopen.
    const done = fakeFamily([['refuse:upstream'], ['refuse:bad_request'], ['ok', 'text', 'done']]);
    done.family.reopenAfter = (failure) => failure.code === 'bad_request';
    const doneTold = toldAfter(done.family, done.opened);
    await drain((await runTurn(done.family, options())).events);
    expect(doneTold).toEqual([3]);
    // Refused before acceptance.
    const refused = fakeFamily([['refuse:bad_request']]);
    const refusedTold = toldAfter(refused.family, refused.opened);
    await expect(runTurn(refused.family, options())).rejects.toMatchObject({ code: 'bad_request' });
    expect(refusedTold).toEqual([1]);
    // Its consumer stopped reading at the first event.
    const left = fakeFamily([['ok', 'text', 'hang']]);
    const leftTold = toldAfter(left.family, left.opened);
    const turn = await runTurn(left.family, options());
    await turn.events.next();
    expect(leftTold).toEqual([]);
    await turn.events.return?.();
    expect(leftTold).toEqual([1]);
  });

  it('draws each delay from the random source within ±20 %, and retries no later than the deadline allows', async () => {
    const { family, opened } = fakeFamily([['refuse:upstream'], ['refuse:upstream'], ['ok', 'done']]);
    const { options, slept } = setup();
    const low: RetryClock = { now: () => Date.now(), random: () => 0, sleep: async (ms) => void slept.push(ms) };
    await runTurn(family, options({ clock: low }));
    expect(slept).toEqual([200, 800]);
    expect(opened).toHaveLength(3);
    // A deadline 500 ms away by the turn's clock leaves room for the first delay only.
    const { family: late, opened: lateOpened } = fakeFamily([['refuse:upstream'], ['refuse:upstream'], ['ok', 'done']]);
    const frozen = Date.now();
    const fixed: RetryClock = { now: () => frozen, random: () => 0.5, sleep: async () => undefined };
    await expect(
      runTurn(late, options({ clock: fixed, context: { ...options().context, deadlineAt: frozen + 500 } })),
    ).rejects.toMatchObject({ code: 'upstream' });
    expect(lateOpened).toHaveLength(2);
  });

  it('does not retry a retryable failure whose hint is above the cap, and keeps the hint for the client', async () => {
    const { family, opened } = fakeFamily([['refuse:rate_limited_long'], ['ok', 'done']]);
    const { options } = setup();
    await expect(runTurn(family, options())).rejects.toMatchObject({ code: 'rate_limited', retryAfterSeconds: 60 });
    expect(opened).toHaveLength(1);
  });

  it('moves once to another login on a failure about the login, then no more', async () => {
    const { family, opened } = fakeFamily([['refuse:usage_limit'], ['refuse:usage_limit'], ['ok', 'done']]);
    const { options, events } = setup(['first', 'second', 'third']);
    await expect(runTurn(family, options())).rejects.toMatchObject({ code: 'usage_limit' });
    expect(opened.map((attempt) => attempt.info.alias)).toEqual(['first', 'second']);
    expect(events('upstream_account_moved')).toEqual([
      expect.objectContaining({ from_account: 'first', to_account: 'second', error_code: 'usage_limit' }),
    ]);
  });

  it('starts the retry budget again on the login a failure moved the turn to', async () => {
    const { family, opened } = fakeFamily([
      ['refuse:upstream'],
      ['refuse:upstream'],
      // The first login's retries are spent; its limit moves the turn.
      ['refuse:usage_limit'],
      ['refuse:upstream'],
      ['refuse:upstream'],
      ['ok', 'text', 'done'],
    ]);
    const { options, events, slept } = setup(['first', 'second']);
    const turn = await runTurn(family, options());
    expect((await drain(turn.events)).map((event) => event.type)).toEqual(['text-delta', 'finish']);
    expect(opened.map((attempt) => attempt.info.alias)).toEqual([
      'first',
      'first',
      'first',
      'second',
      'second',
      'second',
    ]);
    expect(events('upstream_account_moved')).toEqual([
      expect.objectContaining({ from_account: 'first', to_account: 'second', error_code: 'usage_limit', attempt: 3 }),
    ]);
    expect(events('upstream_retry').map((line) => [line.account, line.attempt])).toEqual([
      ['first', 1],
      ['first', 2],
      ['second', 4],
      ['second', 5],
    ]);
    expect(slept).toEqual([250, 1000, 250, 1000]);
  });

  it("brings back a login the upstream's API refused once a turn on it is answered, and only then", async () => {
    const { family } = fakeFamily([
      ['refuse:auth'],
      ['ok', 'text', 'fail:upstream'],
      ['refuse:bad_request'],
      ['ok', 'text', 'done'],
    ]);
    const { options, pool } = setup(['only']);
    await expect(runTurn(family, options())).rejects.toMatchObject({ code: 'auth' });
    expect(pool.stateOf('only')).toMatchObject({ kind: 'login_dead', refusedBy: 'api' });
    expect(pool.loginVerdict('only')).toBe('login_refused');
    // A family's only login is still asked; turns that fail, before output or after it, prove nothing.
    expect((await drain((await runTurn(family, options())).events)).at(-1)).toMatchObject({ type: 'error' });
    await expect(runTurn(family, options())).rejects.toMatchObject({ code: 'bad_request' });
    expect(pool.stateOf('only').kind).toBe('login_dead');
    // An answered turn does: the login is back, and the login report names no refusal.
    expect((await drain((await runTurn(family, options())).events)).at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(pool.stateOf('only')).toEqual({ kind: 'ready' });
    expect(pool.loginVerdict('only')).toBeUndefined();
  });

  describe('sends nothing on a login the paid-usage guard rested before an open after the first', () => {
    /** The report of a turn that drew credits: the guard rests the login until the window resets. */
    const paidTurn = {
      source: 'turn',
      windows: [{ name: 'primary', usedRatio: 1, resetsAt: Date.now() + 60_000 }],
      paid: { kind: 'credits', available: true, inUse: true },
    } as const;

    it('a retry: the pool answers for a family with one login, and no second attempt is sent', async () => {
      const { family, opened } = fakeFamily([['refuse:upstream'], ['ok', 'done']]);
      const { options, pool } = setup();
      const send = family.send;
      family.send = (request, info, signal) => {
        // The failed attempt's own answer said the plan is spent with credits behind it.
        pool.reportPlan('first', paidTurn);
        return send(request, info, signal);
      };
      await expect(runTurn(family, options())).rejects.toMatchObject({
        code: 'paid_usage_not_allowed',
        retryAfterSeconds: expect.any(Number),
      });
      expect(opened).toHaveLength(1);
    });

    it('a retry: moves to another login, logged as a move, and starts its budget again there', async () => {
      const { family, opened } = fakeFamily([
        ['refuse:upstream'],
        ['refuse:upstream'],
        ['refuse:upstream'],
        ['ok', 'done'],
      ]);
      const { options, pool, events } = setup(['first', 'second']);
      const send = family.send;
      family.send = (request, info, signal) => {
        if (info.alias === 'first') pool.reportPlan('first', paidTurn);
        return send(request, info, signal);
      };
      const turn = await runTurn(family, options());
      await drain(turn.events);
      expect(opened.map((attempt) => attempt.info.alias)).toEqual(['first', 'second', 'second', 'second']);
      expect(events('upstream_account_moved')).toEqual([
        expect.objectContaining({ from_account: 'first', to_account: 'second', reason: 'login_withdrawn', attempt: 1 }),
      ]);
    });

    it('a request that waited (a token refresh) while the guard fired: the pool answers, or the turn moves', async () => {
      for (const aliases of [['first'], ['first', 'second']]) {
        const { family, opened } = fakeFamily([['ok', 'done']]);
        const { options, pool } = setup(aliases);
        family.request = (info) => {
          if (info.alias !== 'first') return info;
          // Another turn's paid answer reported itself while this one waited for its token.
          return Promise.resolve().then(() => {
            pool.reportPlan('first', paidTurn);
            return info;
          });
        };
        const turn = runTurn(family, options());
        if (aliases.length === 1) {
          await expect(turn).rejects.toMatchObject({ code: 'paid_usage_not_allowed' });
          expect(opened).toEqual([]);
        } else {
          await drain((await turn).events);
          expect(opened.map((attempt) => [attempt.info.alias, attempt.info.number])).toEqual([['second', 1]]);
        }
      }
    });
  });

  it('counts a turn whose attempt reported paid usage once, when it gives its login back, even when it failed after output', async () => {
    const { family, opened } = fakeFamily([
      ['text', 'fail:upstream'],
      ['ok', 'done'],
    ]);
    const { options, events } = setup();
    const send = family.send;
    family.send = (request, info, signal) => {
      if (opened.length === 0) {
        // The answer's headers and then its stream both say paid usage is in use: one paid turn.
        info.paidReported();
        info.paidReported();
      }
      return send(request, info, signal);
    };
    const paid = await runTurn(family, options());
    expect((await drain(paid.events)).at(-1)).toMatchObject({ type: 'error' });
    expect(events('paid_usage_turn')).toEqual([expect.objectContaining({ provider: 'provider_a', account: 'first' })]);
    // The next turn on the login reported nothing: it is not counted.
    await drain((await runTurn(family, options())).events);
    expect(events('paid_usage_turn')).toHaveLength(1);
  });

  it('sends an empty accepted turn again when the family asks, and ends with its tail when the budget is spent', async () => {
    const { family, opened } = fakeFamily([['ok'], ['ok'], ['ok']], { again: true });
    const { options, events } = setup();
    const turn = await runTurn(family, options());
    expect(await drain(turn.events)).toEqual([{ type: 'finish', reason: 'stop' }]);
    expect(opened).toHaveLength(3);
    expect(events('upstream_retry').map((line) => line.reason)).toEqual(['EMPTY', 'EMPTY']);
  });

  it('bounds the turn by its deadline: a timeout rejection, the attempt closed as timed out', async () => {
    const { family, opened } = fakeFamily([['hang']]);
    const { options } = setup();
    await expect(runTurn(family, options({ timeoutMs: 20 }))).rejects.toMatchObject({ code: 'timeout' });
    expect(opened[0].closedWith).toBe('timeout');
  });

  it('bounds each wait by the idle timer; after acceptance that is a terminal timeout event', async () => {
    const { family, opened } = fakeFamily([['ok', 'text', 'hang']]);
    const { options } = setup();
    const turn = await runTurn(family, options({ idleTimeoutMs: 20 }));
    const seen = await drain(turn.events);
    expect(seen.map((event) => event.type)).toEqual(['text-delta', 'error']);
    expect(seen[1]).toMatchObject({ error: { code: 'timeout' } });
    expect(opened[0].closedWith).toBe('idle');
  });

  it('bounds the turn by a deadline nearer than the idle bound', async () => {
    const { family, opened } = fakeFamily([['hang']]);
    const { options } = setup();
    // An idle bound of an hour: only the deadline can end this wait before the spec times out.
    await expect(runTurn(family, options({ timeoutMs: 20, idleTimeoutMs: 3_600_000 }))).rejects.toMatchObject({
      code: 'timeout',
    });
    expect(opened[0].closedWith).toBe('timeout');
  });

  it('keeps the deadline after the idle bound passed while the consumer held an event', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    try {
      const { family, opened } = fakeFamily([['ok', 'text', 'text', 'hang']]);
      const { options } = setup();
      const turn = await runTurn(family, options({ idleTimeoutMs: 20, timeoutMs: 100 }));
      const iterator = turn.events[Symbol.asyncIterator]();
      expect(await iterator.next()).toMatchObject({ value: { type: 'text-delta' } });
      // The consumer holds the event: the idle bound passes without effect, then the deadline.
      jest.advanceTimersByTime(50);
      expect(opened[0].closedWith).toBeUndefined();
      jest.advanceTimersByTime(60);
      const next = await iterator.next();
      expect(next.value).toMatchObject({ type: 'error', error: { code: 'timeout' } });
      expect(opened[0].closedWith).toBe('timeout');
    } finally {
      jest.useRealTimers();
    }
  });

  it('frees the attempt, the login and the slot at the deadline while the consumer holds an event and reads no more', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    try {
      const { family, opened } = fakeFamily([['ok', 'text', 'text', 'hang']]);
      const { options, closed } = setup();
      const turn = await runTurn(family, options({ timeoutMs: 100 }));
      const iterator = turn.events[Symbol.asyncIterator]();
      expect(await iterator.next()).toMatchObject({ value: { type: 'text-delta' } });
      // A client that stopped reading: nothing calls next() again.
      jest.advanceTimersByTime(110);
      expect(opened[0].closedWith).toBe('timeout');
      expect(closed).toHaveBeenCalledTimes(1);
      // Should it read on after all, it gets the turn's end.
      const next = await iterator.next();
      expect(next.value).toMatchObject({ type: 'error', error: { code: 'timeout' } });
      expect(closed).toHaveBeenCalledTimes(1);
    } finally {
      jest.useRealTimers();
    }
  });

  describe("with the request's own controller (the chat route's)", () => {
    const shared = (setupOf: ReturnType<typeof setup>) => ({
      ...setupOf.options().context,
      controller: setupOf.client,
    });

    it('ends it at the deadline with its timeout: the turn signal is the request signal, and no cancel is logged', async () => {
      const { family, opened } = fakeFamily([['ok', 'text', 'hang']]);
      const setupOf = setup();
      const turn = await runTurn(family, setupOf.options({ timeoutMs: 20, context: shared(setupOf) }));
      const seen = await drain(turn.events);
      expect(seen[1]).toMatchObject({ type: 'error', error: { code: 'timeout' } });
      expect(setupOf.client.signal.reason).toBe((seen[1] as { error: unknown }).error);
      expect(opened[0].closedWith).toBe('timeout');
      expect(setupOf.events('upstream_canceled')).toEqual([]);
      expect(setupOf.closed).toHaveBeenCalledTimes(1);
    });

    it('rejects with the timeout, not a cancel, when the deadline passes before acceptance', async () => {
      const { family, opened } = fakeFamily([['hang']]);
      const setupOf = setup();
      await expect(runTurn(family, setupOf.options({ timeoutMs: 20, context: shared(setupOf) }))).rejects.toMatchObject(
        { code: 'timeout' },
      );
      expect(opened[0].closedWith).toBe('timeout');
      expect(setupOf.events('upstream_canceled')).toEqual([]);
    });

    it("passes the client's abort through as is and logs upstream_canceled", async () => {
      const { family, opened } = fakeFamily([['ok', 'text', 'hang']]);
      const setupOf = setup();
      const turn = await runTurn(family, setupOf.options({ context: shared(setupOf) }));
      const iterator = turn.events[Symbol.asyncIterator]();
      await iterator.next();
      const pending = iterator.next();
      const reason = new ClientDisconnectedError();
      setupOf.client.abort(reason);
      await expect(pending).rejects.toBe(reason);
      expect(opened[0].closedWith).toBe('canceled');
      expect(setupOf.events('upstream_canceled')).toHaveLength(1);
      expect(setupOf.closed).toHaveBeenCalledTimes(1);
    });
  });

  it('passes the client abort through as is, closes the attempt as canceled and logs upstream_canceled', async () => {
    const { family, opened } = fakeFamily([['ok', 'text', 'hang']]);
    const { options, client, events, closed } = setup();
    const turn = await runTurn(family, options());
    const iterator = turn.events[Symbol.asyncIterator]();
    await iterator.next();
    const pending = iterator.next();
    const reason = new ClientDisconnectedError();
    client.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(opened[0].closedWith).toBe('canceled');
    expect(events('upstream_canceled')).toHaveLength(1);
    expect(closed).toHaveBeenCalledTimes(1);
  });

  it('hands over frames the attempt already holds through poll, without a promise, and leaves the last step to the run', async () => {
    const { family, opened, translated } = fakeFamily([['ok', 'text', 'text', 'text', 'done']], { buffered: true });
    const { options, closed } = setup();
    const turn = await runTurn(family, options());
    const events = turn.events;
    expect(await events.next()).toEqual({ done: false, value: { type: 'text-delta', text: 't' } });
    expect(events.poll!()).toEqual({ type: 'text-delta', text: 't' });
    expect(events.poll!()).toEqual({ type: 'text-delta', text: 't' });
    // The finishing frame is the run's to take: translated once, kept, and handed over by next().
    expect(events.poll!()).toBeUndefined();
    expect(translated).toEqual(['ok', 'text', 'text', 'text', 'done']);
    expect(closed).not.toHaveBeenCalled();
    expect(await events.next()).toEqual({ done: false, value: { type: 'finish', reason: 'stop' } });
    expect(await events.next()).toEqual({ done: true, value: undefined });
    expect(translated).toEqual(['ok', 'text', 'text', 'text', 'done']);
    expect(opened[0].closedWith).toBe('done');
    expect(closed).toHaveBeenCalledTimes(1);
  });

  it('ends a polled turn whose next frame fails after output with one error event, not a retry', async () => {
    const { family, opened } = fakeFamily(
      [
        ['ok', 'text', 'text', 'fail:upstream'],
        ['ok', 'done'],
      ],
      {
        buffered: true,
      },
    );
    const { options } = setup();
    const turn = await runTurn(family, options());
    expect((await turn.events.next()).value).toEqual({ type: 'text-delta', text: 't' });
    expect(turn.events.poll!()).toEqual({ type: 'text-delta', text: 't' });
    expect(turn.events.poll!()).toBeUndefined();
    expect((await drain(turn.events)).map((event) => event.type)).toEqual(['error']);
    expect(opened).toHaveLength(1);
    expect(opened[0].closedWith).toBe('failed');
  });

  it('polls nothing once the client left: the run closes the turn as canceled', async () => {
    const { family, opened, translated } = fakeFamily([['ok', 'text', 'text', 'text', 'done']], { buffered: true });
    const { options, client, events } = setup();
    const turn = await runTurn(family, options());
    expect((await turn.events.next()).value).toEqual({ type: 'text-delta', text: 't' });
    client.abort(new ClientDisconnectedError());
    expect(turn.events.poll!()).toBeUndefined();
    expect(translated).toEqual(['ok', 'text']);
    expect(opened[0].closedWith).toBe('canceled');
    expect(events('upstream_canceled')).toHaveLength(1);
  });

  it('closes an accepted turn whose consumer returns without reading', async () => {
    const { family, opened } = fakeFamily([['ok', 'text', 'done']]);
    const { options, closed } = setup();
    const turn = await runTurn(family, options());
    await turn.events[Symbol.asyncIterator]().return?.(undefined);
    expect(opened[0].closedWith).toBe('done');
    expect(closed).toHaveBeenCalledTimes(1);
  });
});
