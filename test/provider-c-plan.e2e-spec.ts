import * as fs from 'node:fs';
import * as path from 'node:path';
import { advanceAccountClock, chatTurn } from './support/accounts';
import { contents, postChat, postChatBody, streamChat } from './support/chat-sse';
import { eventually } from './support/poll';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { AccountPools } from '../src/accounts/account-pools';
import { formatWait } from '../src/core/error-codes';
import type {
  FakeStreamReply,
  FakeUnifiedMeters,
  LONG_CONTEXT_MESSAGES,
  THIRD_PARTY_MESSAGES,
} from './support/fake-anthropic-api';
import { API_ERRORS, useFakeAnthropicApi } from './support/fake-anthropic-api';
import { realClaudeGatewaySettings } from './support/real-claude';

/**
 * What Anthropic meters and refuses on a Claude subscription, end to end with the REAL Claude
 * Code binary (2.1.332) against the loopback fake of the Anthropic API: the third-party refusal
 * (docs/troubleshooting.md "extra_usage_required"), the long-context refusal (docs/troubleshooting.md
 * "context_length_exceeded"), usage paused by the organization's daily cap
 * (docs/upstream/provider-c.md §12.6) and an answer paid from extra usage, which the
 * CLI reports in its `rate_limit_event` and provider_c hands to the login's account pool. Each test
 * has its own gateway: what one login's plan says must not leak into another test's turns.
 */

jest.setTimeout(60_000);

const { api, home } = useFakeAnthropicApi('provider-c-plan-');
let gateway: TestGateway | undefined;

/** A gateway on the real claude; `logins` are token-file logins (`fake-account-<alias>`), else the CLI's own. */
async function start(settings: Record<string, string> = {}, logins: readonly string[] = []): Promise<TestGateway> {
  for (const alias of logins) fs.writeFileSync(path.join(home(), `${alias}.token`), `fake-account-${alias}\n`);
  gateway = await startGateway({
    ...realClaudeGatewaySettings(api().baseUrl, home()),
    ...(logins.length > 0
      ? { PROVIDER_C_ACCOUNTS: logins.map((alias) => `${alias}=${path.join(home(), `${alias}.token`)}`).join(',') }
      : {}),
    ...settings,
  });
  return gateway;
}
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

const PAID_TURNS = 'gateway_chat_api_paid_turns_total';
const DEFAULT_LOGIN = { provider: 'provider_c', account: 'default' };
/** Paid turns counted so far (the registry is the test process's, so tests compare counts). */
const paidTurns = async (): Promise<number> =>
  sampleValue(await scrapeMetrics(gateway!), PAID_TURNS, DEFAULT_LOGIN) ?? 0;

/** What the answer says, beside what it must name: Anthropic's extra usage, where to add it, that no retry helps. */
function expectRefusal(status: number, body: any): void {
  expect(status).toBe(403);
  expect(body.error).toMatchObject({ type: 'permission_error', code: 'extra_usage_required', param: null });
  expect(body.error.message).toContain('third-party app');
  expect(body.error.message).toContain("Claude's extra usage");
  expect(body.error.message).toContain('claude.ai/settings/usage');
  expect(body.error.message).toContain('another model family');
  // Our words only: the API's sentence is for the log.
  expect(JSON.stringify(body)).not.toMatch(/Third-party apps now|keep going|API Error/);
}

describe("provider_c: Anthropic's third-party refusal with the real claude", () => {
  it.each<[keyof typeof THIRD_PARTY_MESSAGES, string]>([
    ['plain', 'Third-party apps now draw from your extra usage'],
    ['outOfExtraUsage', "You're out of extra usage"],
  ])(
    'docs/upstream/provider-c.md §11.31 %s wording, streamed: 403 extra_usage_required before any SSE byte, one claude run (its own three calls), the words on the log line',
    async (wording, words) => {
      await start();
      api().script([API_ERRORS.thirdParty(wording)]);
      const result = await streamChat(gateway!, {});
      expect(result.headers.get('content-type')).toContain('application/json');
      expectRefusal(result.status, result.body);
      expect(result.headers.get('retry-after')).toBeNull();
      // One child: the CLI asked three times on its own, the gateway never again.
      expect(gateway!.logs.recordsOf(result.headers, 'provider_c_process_start')).toHaveLength(1);
      expect(api().messages()).toHaveLength(3);
      expect(gateway!.logs.recordsOf(result.headers, 'upstream_retry')).toEqual([]);
      expect(gateway!.logs.recordsOf(result.headers, 'upstream_turn_failed')).toEqual([
        expect.objectContaining({
          provider: 'provider_c',
          account: 'default',
          error_code: 'extra_usage_required',
          upstream_status: 400,
          upstream_message: expect.stringContaining(words),
        }),
      ]);
      expect(gateway!.logs.recordsOf(result.headers, 'chat_completion')).toEqual([
        expect.objectContaining({ status: 403, error_code: 'extra_usage_required' }),
      ]);
    },
  );

  it('docs/upstream/provider-c.md §11.31 the organisation wording, not streamed: the same 403 after one run; the login is not taken out', async () => {
    // The CLI's own three calls are refused; what follows is answered.
    await start();
    const refusal = API_ERRORS.thirdParty('organization');
    api().script([refusal, refusal, refusal, { type: 'stream', blocks: [{ kind: 'text', deltas: ['ok'] }] }]);
    const response = await postChat(gateway!, {});
    expectRefusal(response.status, await response.json());
    expect(gateway!.logs.recordsOf(response.headers, 'provider_c_process_start')).toHaveLength(1);
    expect(api().messages()).toHaveLength(3);
    // Not a dead login: the next request (the fake now answers) runs on it.
    const next = await streamChat(gateway!, {});
    expect(next.status).toBe(200);
    expect(contents(next)).toEqual(['ok']);
  });
});

describe("provider_c: Anthropic's long-context refusal with the real claude", () => {
  /** The 400 an agent compacts on, in the gateway's words: the 200,000-token rule of the login and every way out. */
  function expectLongContext(status: number, headers: Headers, body: any): void {
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      param: null,
    });
    expect(body.error.message).toContain(
      "exceeds the context window this Claude Code CLI login may use without Claude's extra usage, 200,000 tokens",
    );
    expect(body.error.message).toContain('shorten or compact the conversation');
    expect(body.error.message).toContain("turn on Claude's extra usage at claude.ai/settings/usage");
    expect(body.error.message).toContain('choose another model');
    // Nothing says to wait: no wait helps.
    expect(headers.get('retry-after')).toBeNull();
    // Our words only: the API's and the CLI's sentences are for the log.
    expect(JSON.stringify(body)).not.toMatch(/Extra usage is required|Usage credits|API Error|--model/);
  }

  it.each<[keyof typeof LONG_CONTEXT_MESSAGES, string]>([
    ['extraUsage', 'claude-opus-4-8'],
    ['usageCredits', 'claude-fable-5'],
  ])(
    'the %s wording on %s, streamed: 400 context_length_exceeded before any SSE byte, one claude run and one API call, the fix on the log line',
    async (wording, model) => {
      await start();
      api().script([API_ERRORS.longContext(wording), { type: 'stream', blocks: [{ kind: 'text', deltas: ['no'] }] }]);
      const result = await streamChat(gateway!, { model });
      expect(result.headers.get('content-type')).toContain('application/json');
      expectLongContext(result.status, result.headers, result.body);
      // The CLI asks once and the gateway never again: the answer scripted next was never asked for.
      expect(gateway!.logs.recordsOf(result.headers, 'provider_c_process_start')).toHaveLength(1);
      expect(api().messages()).toHaveLength(1);
      expect(gateway!.logs.recordsOf(result.headers, 'upstream_retry')).toEqual([]);
      expect(gateway!.logs.recordsOf(result.headers, 'upstream_account_moved')).toEqual([]);
      expect(gateway!.logs.recordsOf(result.headers, 'upstream_turn_failed')).toEqual([
        expect.objectContaining({
          provider: 'provider_c',
          account: 'default',
          error_code: 'context_window',
          retryable: false,
          upstream_status: 429,
          upstream_type: 'rate_limit_error',
          upstream_code: 'long_context_credits_required',
          upstream_message: expect.stringContaining('Usage credits required for 1M context'),
          fix: expect.stringContaining("turns on Claude's extra usage for this login at claude.ai/settings/usage"),
        }),
      ]);
      expect(gateway!.logs.recordsOf(result.headers, 'chat_completion')).toEqual([
        expect.objectContaining({ status: 400, error_code: 'context_window' }),
      ]);
    },
  );

  it('not streamed: the same 400; the login is neither cooling nor spent, and the next (shorter) chat runs on it', async () => {
    await start();
    const cooldowns = async (): Promise<number> =>
      sampleValue(await scrapeMetrics(gateway!), 'gateway_chat_api_account_cooldowns_total', {
        ...DEFAULT_LOGIN,
        reason: 'rate_limited',
      }) ?? 0;
    const cooled = await cooldowns();
    api().script([
      API_ERRORS.longContext('extraUsage'),
      { type: 'stream', blocks: [{ kind: 'text', deltas: ['ok'] }] },
    ]);
    const response = await postChat(gateway!, {});
    expectLongContext(response.status, response.headers, await response.json());
    expect(api().messages()).toHaveLength(1);
    const accounts = (await (await fetch(`${gateway!.url}/v1/accounts`)).json()) as {
      data: Record<string, unknown>[];
    };
    expect(accounts.data.find((row) => row.provider === 'provider_c')).toMatchObject({
      account: 'default',
      state: 'ready',
      plan_spent: false,
    });
    expect(sampleValue(await scrapeMetrics(gateway!), 'gateway_chat_api_account_plan_spent', DEFAULT_LOGIN)).toBe(0);
    expect(await cooldowns()).toBe(cooled);
    const next = await streamChat(gateway!, {});
    expect(next.status).toBe(200);
    expect(contents(next)).toEqual(['ok']);
  });
});

describe("provider_c: a limit refused without a meter's window or reset, with the real claude", () => {
  /** The login's row in GET /v1/accounts and the plan-spent gauge. */
  async function planOfDefault(): Promise<{ row: Record<string, unknown> | undefined; spentGauge?: number }> {
    const accounts = (await (await fetch(`${gateway!.url}/v1/accounts`)).json()) as {
      data: Record<string, unknown>[];
    };
    return {
      row: accounts.data.find((row) => row.provider === 'provider_c'),
      spentGauge: sampleValue(await scrapeMetrics(gateway!), 'gateway_chat_api_account_plan_spent', DEFAULT_LOGIN),
    };
  }

  it('a short-term rate limit ("not your usage limit") is 429 rate_limit_exceeded, and the CLI\'s bare `rejected` does not mark the login\'s plan spent', async () => {
    await start();
    api().script([API_ERRORS.temporaryLimit()]);
    const result = await streamChat(gateway!, {});
    expect(result.status).toBe(429);
    expect(result.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(result.headers.get('retry-after')).toBe('60');
    expect(api().messages()).toHaveLength(1);
    expect(gateway!.logs.recordsOf(result.headers, 'upstream_turn_failed')).toEqual([
      expect.objectContaining({
        error_code: 'rate_limited',
        upstream_status: 429,
        upstream_message: expect.stringContaining('not your usage limit'),
      }),
    ]);
    const { row, spentGauge } = await planOfDefault();
    expect(row).toMatchObject({ account: 'default', plan_spent: false });
    expect(row?.state).not.toBe('plan_spent');
    expect(spentGauge).toBe(0);
  });
});

describe("provider_c: usage paused by the organization's daily cap (docs/upstream/provider-c.md §11.33, §12.6), with the real claude", () => {
  const HOUR_MS = 3_600_000;
  const ADMIN_PAGE = 'claude.ai/admin-settings/usage';

  /** The 429 a client gets, in the gateway's words: what paused usage, that the plan is not spent, who lifts it. */
  function expectPaused(status: number, headers: Headers, body: any): void {
    expect(status).toBe(429);
    expect(body.error).toMatchObject({ type: 'insufficient_quota', code: 'usage_paused', param: null });
    const message: string = body.error.message;
    expect(message).toContain('paused usage for the organization');
    expect(message).toContain('daily spending cap');
    expect(message).toContain('not spent');
    expect(message).toContain(`an admin of that organization can raise or lift the cap at ${ADMIN_PAGE}`);
    expect(message).toContain('when the daily cap resets');
    // No client retries by itself: the pause lasts until an admin acts or the day's cap resets.
    expect(headers.get('x-should-retry')).toBe('false');
    // Our words only: the CLI's sentence is for the log.
    expect(JSON.stringify(body)).not.toMatch(/Usage is paused|contact support|API Error/);
  }

  /** The rows of GET /v1/accounts by alias. */
  async function accountRows(): Promise<Record<string, Record<string, unknown>>> {
    const accounts = (await (await fetch(`${gateway!.url}/v1/accounts`)).json()) as {
      data: Record<string, unknown>[];
    };
    return Object.fromEntries(accounts.data.map((row) => [row.account as string, row]));
  }

  const accountsAsked = (marker?: string) =>
    api()
      .messages(marker)
      .map((request) => request.account);

  it("streamed, on a family's only login: 429 usage_paused before any SSE byte; the login rests an hour as usage_paused with its plan not spent; the log lines name the pause and its fix", async () => {
    await start();
    api().script([API_ERRORS.dailyCapPaused()]);
    const before = Date.now();
    const result = await streamChat(gateway!, {});
    const after = Date.now();
    expect(result.headers.get('content-type')).toContain('application/json');
    expectPaused(result.status, result.headers, result.body);
    expect(result.headers.get('retry-after')).toBe('3600');
    // The CLI asks once, the gateway never again.
    expect(api().messages()).toHaveLength(1);
    expect(gateway!.logs.recordsOf(result.headers, 'upstream_retry')).toEqual([]);
    expect(gateway!.logs.recordsOf(result.headers, 'upstream_turn_failed')).toEqual([
      expect.objectContaining({
        provider: 'provider_c',
        account: 'default',
        error_code: 'usage_paused',
        retryable: false,
        upstream_status: 429,
        upstream_type: 'rate_limit_error',
        upstream_code: 'usage_limit_reached',
        upstream_message: expect.stringContaining('Usage is paused for your organization'),
        fix: expect.stringContaining(`raises or lifts its daily spending cap at ${ADMIN_PAGE}`),
      }),
    ]);
    expect(gateway!.logs.recordsOf(result.headers, 'chat_completion')).toEqual([
      expect.objectContaining({ status: 429, error_code: 'usage_paused' }),
    ]);
    // The pool's line: the state, until when, and the same fix.
    const paused = gateway!.logs.records('account_state').filter((line) => line.state === 'usage_paused');
    expect(paused).toEqual([
      expect.objectContaining({
        provider: 'provider_c',
        account: 'default',
        from: 'ready',
        fix: expect.stringContaining(ADMIN_PAGE),
      }),
    ]);
    const until = Date.parse(paused[0].until as string);
    expect(until).toBeGreaterThanOrEqual(before + HOUR_MS - 1000);
    expect(until).toBeLessThanOrEqual(after + HOUR_MS);
    expect((await accountRows()).default).toMatchObject({
      state: 'usage_paused',
      rests_until: paused[0].until,
      plan_spent: false,
    });
    const text = await scrapeMetrics(gateway!);
    expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', DEFAULT_LOGIN)).toBe(0);
    expect(sampleValue(text, 'gateway_chat_api_account_state', { ...DEFAULT_LOGIN, state: 'usage_paused' })).toBe(1);
  });

  it('with another login: the turn moves there and is served; new chats skip the paused login for an hour, then it serves again', async () => {
    await start({}, ['one', 'two']);
    // The first request is refused; every one after it is answered.
    api().script([API_ERRORS.dailyCapPaused(), { type: 'stream', blocks: [{ kind: 'text', deltas: ['ok'] }] }]);
    const first = await postChatBody(gateway!, chatTurn('claude-fable-5', 'first'));
    expect(first.status).toBe(200);
    expect(accountsAsked()).toEqual(['one', 'two']);
    expect(gateway!.logs.recordsOf(first.headers, 'upstream_account_moved')).toEqual([
      expect.objectContaining({ from_account: 'one', to_account: 'two', error_code: 'usage_paused' }),
    ]);
    const rows = await accountRows();
    expect(rows.one).toMatchObject({ state: 'usage_paused', plan_spent: false });
    expect(rows.two).toMatchObject({ state: 'ready', rests_until: null });
    // A new chat goes to the other login without asking the paused one.
    expect((await postChatBody(gateway!, chatTurn('claude-fable-5', 'second'))).status).toBe(200);
    expect(accountsAsked('second')).toEqual(['two']);
    // An hour on, the rest is over: the paused login takes new chats again.
    advanceAccountClock(gateway!, HOUR_MS + 1000);
    expect((await postChatBody(gateway!, chatTurn('claude-fable-5', 'third'))).status).toBe(200);
    expect(accountsAsked('third')).toEqual(['one']);
    expect((await accountRows()).one).toMatchObject({ state: 'ready' });
  });

  it("a limit with no reset known on the login the turn moved to: Retry-After is the paused login's end when it is back first, not ACCOUNT_COOLDOWN_DEFAULT", async () => {
    await start({ ACCOUNT_COOLDOWN_DEFAULT: '2h' }, ['one', 'two', 'three']);
    // The first login is paused for an hour; the one the turn moves to has spent its credit, no reset told.
    api().script([API_ERRORS.dailyCapPaused(), API_ERRORS.creditTooLow()]);
    const refused = await postChatBody(gateway!, chatTurn('claude-fable-5', 'first'));
    expect(refused.status).toBe(429);
    expect(accountsAsked()).toEqual(['one', 'two']);
    const body = (await refused.json()) as any;
    expect(body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    // "one" is back within the hour, "two" only after two: the wait is the pause's end, and the message says it.
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(body.error.message).toContain(`retry in ${formatWait(retryAfter)}`);
    const rows = await accountRows();
    expect(rows.one).toMatchObject({ state: 'usage_paused' });
    expect(rows.two).toMatchObject({ state: 'cooling' });
    expect(rows.three).toMatchObject({ state: 'ready' });
  });

  it("when every login is paused: the pool answers the next turn at once with usage_paused, no claude run, Retry-After the rest's end", async () => {
    await start({}, ['one', 'two']);
    api().script([API_ERRORS.dailyCapPaused(), API_ERRORS.dailyCapPaused()]);
    const refused = await postChatBody(gateway!, chatTurn('claude-fable-5', 'first'));
    expectPaused(refused.status, refused.headers, await refused.json());
    expect(accountsAsked()).toEqual(['one', 'two']);
    const again = await postChatBody(gateway!, chatTurn('claude-fable-5', 'second'));
    expectPaused(again.status, again.headers, await again.json());
    const retryAfter = Number(again.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(gateway!.logs.recordsOf(again.headers, 'provider_c_process_start')).toEqual([]);
    expect(accountsAsked()).toHaveLength(2);
    expect(gateway!.logs.recordsOf(again.headers, 'chat_completion')).toEqual([
      expect.objectContaining({ status: 429, error_code: 'usage_paused' }),
    ]);
  });
});

describe('provider_c: an answer paid from extra usage, with the real claude', () => {
  /** The meters of an answer served past the plan: the five-hour window spent, extra usage paying. */
  const paidMeters = (reset: number): FakeUnifiedMeters => ({
    status: 'rejected',
    reset,
    representativeClaim: 'five_hour',
    windows: { '5h': { status: 'rejected', reset, utilization: 1.01 } },
    overage: { status: 'allowed', reset: reset + 86_400, inUse: true },
  });
  /** Every answer from now on is paid. */
  const meterPaid = (reset: number) => api().meter(paidMeters(reset));
  /** A paid answer that takes over a second: other turns arrive while its child holds its process slot. */
  const slowPaidAnswer = (reset: number): FakeStreamReply => ({
    type: 'stream',
    blocks: [{ kind: 'text', deltas: ['slow ', 'paid ', 'answer'] }],
    deltaDelayMs: 400,
    meters: paidMeters(reset),
  });
  const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

  it("docs/upstream/provider-c.md §11.32 is delivered (200, exit 0), and the login's plan shows the five-hour window spent and extra usage in use", async () => {
    await start();
    const reset = Math.floor(Date.now() / 1000) + 3600;
    meterPaid(reset);
    api().script([{ type: 'stream', blocks: [{ kind: 'text', deltas: ['Paid ', 'answer'] }] }]);
    const result = await streamChat(gateway!, {});
    expect(result.status).toBe(200);
    expect(contents(result)).toEqual(['Paid ', 'answer']);
    expect(result.done).toBe(true);
    expect(gateway!.logs.recordsOf(result.headers, 'upstream_turn_failed')).toEqual([]);
    const pool = gateway!.app.get(AccountPools, { strict: false }).poolOf('provider_c')!;
    expect(pool.planOf('default')).toEqual({
      windows: [{ name: 'five_hour', windowSeconds: 18_000, usedRatio: 1, resetsAt: reset * 1000 }],
      paid: { kind: 'extra_usage', available: true, inUse: true },
      planSpent: true,
      spentUntil: reset * 1000,
      source: 'turn',
    });
  });

  it('by default (plan_only) the next turn on that login is refused at once, with no claude run: 429 naming extra usage, its page and the setting, Retry-After the reset; every view shows it', async () => {
    await start();
    const counted = await paidTurns();
    const reset = Math.floor(Date.now() / 1000) + 3600;
    meterPaid(reset);
    const paid = await postChat(gateway!, {});
    expect(paid.status).toBe(200);
    await eventually(() => gateway!.logs.records('paid_usage_turn').length === 1);
    const calls = api().messages().length;

    const refused = await postChat(gateway!, {});
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    const error = ((await refused.json()) as { error: Record<string, string> }).error;
    expect(error).toMatchObject({ type: 'insufficient_quota', code: 'paid_usage_not_allowed' });
    expect(error.message).toContain("Claude's extra usage");
    expect(error.message).toContain('claude.ai/settings/usage');
    expect(error.message).toContain('ACCOUNT_PAID_USAGE=allow');
    expect(error.message).toContain(new Date(reset * 1000).toISOString());
    expect(gateway!.logs.recordsOf(refused.headers, 'provider_c_process_start')).toEqual([]);
    expect(api().messages()).toHaveLength(calls);

    const accounts = (await (await fetch(`${gateway!.url}/v1/accounts`)).json()) as {
      data: Record<string, unknown>[];
    };
    expect(accounts.data.find((row) => row.provider === 'provider_c')).toMatchObject({
      account: 'default',
      state: 'plan_spent',
      plan_spent: true,
      paid_usage: { kind: 'extra_usage', available: true, in_use: true },
    });
    const text = await scrapeMetrics(gateway!);
    const labels = { provider: 'provider_c', account: 'default' };
    expect(sampleValue(text, 'gateway_chat_api_account_paid_usage_in_use', labels)).toBe(1);
    expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', labels)).toBe(1);
    expect(sampleValue(text, PAID_TURNS, labels)).toBe(counted + 1);
  });

  it('a turn that waited for a process slot while the paid answer ran is refused after the wait, with no claude run', async () => {
    await start({ PROVIDER_C_MAX_PROCESSES: '1' });
    const counted = await paidTurns();
    api().script([slowPaidAnswer(inAnHour())]);
    const first = postChatBody(gateway!, chatTurn('claude-fable-5', 'first'));
    // The first child holds the only slot: the second chat takes its login, then waits for the slot.
    await eventually(() => gateway!.logs.records('provider_c_process_start').length === 1);
    const second = await postChatBody(gateway!, chatTurn('claude-fable-5', 'second'));
    expect((await first).status).toBe(200);
    expect(second.status).toBe(429);
    const error = ((await second.json()) as { error: Record<string, string> }).error;
    expect(error).toMatchObject({ type: 'insufficient_quota', code: 'paid_usage_not_allowed' });
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(3500);
    expect(gateway!.logs.recordsOf(second.headers, 'provider_c_process_start')).toEqual([]);
    expect(api().messages('second')).toEqual([]);
    await eventually(() => gateway!.logs.records('paid_usage_turn').length === 1);
    expect(await paidTurns()).toBe(counted + 1);
  });

  it('a turn that waited for a process slot on a login the guard rested meanwhile runs on another usable login', async () => {
    await start({ PROVIDER_C_MAX_PROCESSES: '1' }, ['one', 'two']);
    // New chats go to the login chosen least recently: `paying` and `waiting` share `one`.
    for (const name of ['paying', 'other', 'waiting'])
      expect((await postChatBody(gateway!, chatTurn('claude-fable-5', name))).status).toBe(200);
    const accountsOf = (marker?: string) =>
      api()
        .messages(marker)
        .map((request) => request.account);
    expect(accountsOf()).toEqual(['one', 'two', 'one']);
    api().scriptFor('paying: turn 1', [slowPaidAnswer(inAnHour())]);
    const paying = postChatBody(gateway!, chatTurn('claude-fable-5', 'paying', 2));
    await eventually(() => gateway!.logs.records('provider_c_process_start').length === 4);
    const waiting = await postChatBody(gateway!, chatTurn('claude-fable-5', 'waiting', 2));
    expect((await paying).status).toBe(200);
    expect(waiting.status).toBe(200);
    expect(accountsOf('paying: turn 1')).toEqual(['one']);
    expect(accountsOf('waiting: turn 1')).toEqual(['two']);
  });

  it('extra usage named as the limit itself (claim `overage`) rests the login until the later reset the API gave, not for the default cooldown', async () => {
    await start({ ACCOUNT_COOLDOWN_DEFAULT: '3s' });
    const reset = inAnHour();
    const overageReset = reset + 1800;
    api().meter({
      status: 'rejected',
      reset,
      representativeClaim: 'overage',
      overage: { status: 'allowed', reset: overageReset, inUse: true },
    });
    expect((await postChatBody(gateway!, chatTurn('claude-fable-5', 'paid'))).status).toBe(200);
    await eventually(() => gateway!.logs.records('paid_usage_turn').length === 1);
    const calls = api().messages().length;
    // Past the default cooldown: the login still rests, until the reset.
    advanceAccountClock(gateway!, 4_000);
    const refused = await postChatBody(gateway!, chatTurn('claude-fable-5', 'paid', 2));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: Record<string, string> }).error.code).toBe('paid_usage_not_allowed');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(5300);
    expect(retryAfter).toBeLessThanOrEqual(5400);
    expect(api().messages()).toHaveLength(calls);
    expect(gateway!.logs.records('paid_usage_turn')).toHaveLength(1);
    const accounts = (await (await fetch(`${gateway!.url}/v1/accounts`)).json()) as {
      data: Record<string, unknown>[];
    };
    expect(accounts.data.find((row) => row.provider === 'provider_c')).toMatchObject({
      account: 'default',
      state: 'plan_spent',
      rests_until: new Date(overageReset * 1000).toISOString(),
    });
  });

  it('with another usable login, the next chat moves there instead of spending extra usage', async () => {
    await start({}, ['one', 'two']);
    meterPaid(Math.floor(Date.now() / 1000) + 3600);
    expect((await postChatBody(gateway!, chatTurn('claude-fable-5', 'paid'))).status).toBe(200);
    api().meter(undefined);
    const next = await postChatBody(gateway!, chatTurn('claude-fable-5', 'paid', 2));
    expect(next.status).toBe(200);
    expect(
      api()
        .messages()
        .map((request) => request.account),
    ).toEqual(['one', 'two']);
  });

  it('with ACCOUNT_PAID_USAGE=allow every paid turn is served, logged and counted', async () => {
    await start({ ACCOUNT_PAID_USAGE: 'allow' });
    const counted = await paidTurns();
    meterPaid(Math.floor(Date.now() / 1000) + 3600);
    for (let turn = 0; turn < 2; turn++) expect((await postChat(gateway!, {})).status).toBe(200);
    // A turn is counted when its login is given back, which for provider_c is when its child has exited.
    await eventually(() => gateway!.logs.records('paid_usage_turn').length === 2);
    expect(gateway!.logs.records('paid_usage_turn')).toEqual([
      expect.objectContaining({ provider: 'provider_c', account: 'default', paid_usage: 'extra_usage' }),
      expect.objectContaining({ provider: 'provider_c', account: 'default', paid_usage: 'extra_usage' }),
    ]);
    expect(await paidTurns()).toBe(counted + 2);
  });

  describe('with ACCOUNT_PAID_USAGE=allow, a turn is counted once when it drew extra usage, and only then', () => {
    /** Every turn has given its login back (its child exited): what it counts is counted. */
    const settled = () =>
      eventually(
        async () =>
          sampleValue(await scrapeMetrics(gateway!), 'gateway_chat_api_account_in_flight', DEFAULT_LOGIN) === 0,
      );
    const paidRequests = () => gateway!.logs.records('paid_usage_turn').map((line) => line.reqId);

    it('a turn on the plan running while another turn of the login draws extra usage is not counted', async () => {
      await start({ ACCOUNT_PAID_USAGE: 'allow' });
      const counted = await paidTurns();
      let finishFree!: () => void;
      const freeMayFinish = new Promise<void>((resolve) => (finishFree = resolve));
      api().scriptFor('free', [
        { type: 'stream', blocks: [{ kind: 'text', deltas: ['on the plan'] }], holdUntil: freeMayFinish },
      ]);
      api().scriptFor('paid', [
        { type: 'stream', blocks: [{ kind: 'text', deltas: ['paid'] }], meters: paidMeters(inAnHour()) },
      ]);
      const free = postChatBody(gateway!, chatTurn('claude-fable-5', 'free'));
      await eventually(() => api().messages('free').length === 1);
      const paid = await postChatBody(gateway!, chatTurn('claude-fable-5', 'paid'));
      expect(paid.status).toBe(200);
      finishFree();
      expect((await free).status).toBe(200);
      await settled();
      expect(await paidTurns()).toBe(counted + 1);
      expect(paidRequests()).toEqual([paid.headers.get('x-request-id')]);
    });

    it('a turn that drew extra usage and failed after output is counted: the extra usage was spent', async () => {
      await start({ ACCOUNT_PAID_USAGE: 'allow' });
      const counted = await paidTurns();
      const meters = paidMeters(inAnHour());
      // The stream breaks mid-answer; the CLI asks again and gets another answer: the turn fails.
      api().scriptFor('broken', [
        {
          type: 'stream',
          blocks: [{ kind: 'text', deltas: ['Half an ', 'answer'] }],
          failMidway: { errorType: 'overloaded_error', message: 'Overloaded' },
          meters,
        },
        { type: 'stream', blocks: [{ kind: 'text', deltas: ['Another answer'] }], meters },
      ]);
      const result = await streamChat(gateway!, { messages: chatTurn('claude-fable-5', 'broken').messages });
      expect(result.status).toBe(200);
      expect(contents(result)).toEqual(['Half an ', 'answer', '[error: upstream error]']);
      await settled();
      expect(await paidTurns()).toBe(counted + 1);
      expect(paidRequests()).toEqual([result.headers.get('x-request-id')]);
    });
  });

  it('within the plan, with extra usage spent: the plan report says so, nothing is paid', async () => {
    await start();
    const reset = Math.floor(Date.now() / 1000) + 3600;
    api().meter({
      status: 'allowed',
      reset,
      representativeClaim: 'five_hour',
      windows: { '5h': { status: 'allowed', reset, utilization: 0.2 } },
      overage: { status: 'rejected', disabledReason: 'out_of_credits' },
    });
    const result = await streamChat(gateway!, {});
    expect(result.status).toBe(200);
    const pool = gateway!.app.get(AccountPools, { strict: false }).poolOf('provider_c')!;
    expect(pool.planOf('default')).toMatchObject({
      paid: { kind: 'extra_usage', available: false, inUse: false, disabledReason: 'out_of_credits' },
      planSpent: false,
    });
  });

  it('a reason for extra usage being off that is not one closed word is not passed on: GET /v1/accounts shows null, no log line carries it', async () => {
    await start();
    api().meter({
      status: 'allowed',
      windows: { '5h': { status: 'allowed', utilization: 0.2 } },
      overage: { status: 'rejected', disabledReason: 'disabled by admin victim.mark@example.org' },
    });
    expect((await streamChat(gateway!, {})).status).toBe(200);
    const response = await fetch(`${gateway!.url}/v1/accounts`);
    const text = await response.text();
    const row = (JSON.parse(text) as { data: Record<string, unknown>[] }).data.find(
      (entry) => entry.provider === 'provider_c',
    );
    // Positive control: the turn's report reached the row; only the reason is left out.
    expect(row).toMatchObject({
      paid_usage: { kind: 'extra_usage', available: false, in_use: false, disabled_reason: null },
    });
    expect(text).not.toContain('victim');
    expect(gateway!.logs.text).not.toContain('victim');
  });
});
