import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { defaultUsageBody } from './support/fake-provider-a';
import {
  completed,
  created,
  failed,
  planHeaders,
  rateLimitsEvent,
  textDelta,
  textReply,
  usageLimitEvent,
  writeAuthFile,
} from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { advanceAccountClock, chatTurn } from './support/accounts';
import { postChatBody } from './support/chat-sse';
import { eventually } from './support/poll';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';

type Json = Record<string, any>;

const nowSeconds = () => Math.floor(Date.now() / 1000);
const isoOfSeconds = (seconds: number) => new Date(seconds * 1000).toISOString();
const SECRET = 'plan-usage-secret';
const AUTH = { authorization: `Bearer ${SECRET}` };

/**
 * What each Codex login has left, and no paid usage without consent (docs/accounts.md "What each
 * login has left, and paid usage"): the fake backend sends the plan's windows and credits on every
 * answer and serves `wham/usage`; the gateway shows them in `/metrics` and `GET /v1/accounts`, and
 * under ACCOUNT_PAID_USAGE=plan_only refuses the next turn of a login whose plan is spent — before
 * any upstream request — or moves it to another login.
 */
describe('provider_a plan usage and the paid-usage guard', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-plan-', homeScope: 'test' });

  const loginFile = (alias: string) => path.join(home(), alias, 'auth.json');
  async function start(aliases: readonly string[], settings: Record<string, string> = {}): Promise<TestGateway> {
    for (const alias of aliases)
      if (!fs.existsSync(loginFile(alias)))
        writeAuthFile(path.join(home(), alias), { accountId: `acct-${alias}`, refreshToken: `rt-${alias}` });
    gateway = await startGateway({
      GATEWAY_PROVIDERS: 'provider_a',
      GATEWAY_BEARER_SECRET: SECRET,
      PROVIDER_A_URL: fake().wsUrl,
      PROVIDER_A_TOKEN_URL: fake().tokenUrl,
      CODEX_HOME: path.join(home(), 'codex-home'),
      PROVIDER_A_ACCOUNTS: aliases.map((alias) => `${alias}=${loginFile(alias)}`).join(','),
      PROVIDER_A_MODELS_REFRESH: '0',
      ...settings,
    });
    return gateway;
  }

  const post = (name: string) => postChatBody(gateway!, chatTurn('gpt-5.6-sol', name), { headers: AUTH });
  const accounts = async (): Promise<Json> => {
    const response = await fetch(`${gateway!.url}/v1/accounts`, { headers: AUTH });
    expect(response.status).toBe(200);
    return (await response.json()) as Json;
  };
  const entry = async (alias: string): Promise<Json> =>
    (await accounts()).data.find((row: Json) => row.provider === 'provider_a' && row.account === alias);
  const metrics = () => scrapeMetrics(gateway!, AUTH);
  /** The logins the fake saw requests from, in order. */
  const accountsAsked = () =>
    fake()
      .requests()
      .map((request) => request.headers['chatgpt-account-id']);
  /** What wham/usage says of a plan whose 5-hour window is spent until `resetAt`, credits behind it. */
  const spentPlanUsage = (resetAt: number) => ({
    ...defaultUsageBody(),
    rate_limit: {
      allowed: false,
      limit_reached: true,
      primary_window: { used_percent: 100, limit_window_seconds: 18_000, reset_after_seconds: 2400, reset_at: resetAt },
    },
    credits: { has_credits: true, unlimited: false, balance: '3.00' },
  });
  /** The answer that spends the plan: the 5-hour window at 100 % and credits paying for it. */
  const spentAnswer = (resetAt: number) => ({
    ...textReply('paid by credits'),
    headers: planHeaders({
      primaryUsedPercent: 100,
      primaryResetAt: resetAt,
      secondaryUsedPercent: 40,
      secondaryResetAt: resetAt + 86_400,
      credits: { hasCredits: true, balance: '12.50' },
    }),
  });

  it('shows the windows and credits of every answer in /metrics and GET /v1/accounts (bearer required)', async () => {
    await start(['work']);
    const resetAt = nowSeconds() + 3600;
    fake().sendMeter(
      planHeaders({
        primaryUsedPercent: 42,
        primaryResetAt: resetAt,
        secondaryUsedPercent: 7,
        credits: { hasCredits: true, balance: '5.39' },
      }),
    );
    fake().enqueue(textReply('hello'));
    expect((await post('meter')).status).toBe(200);

    expect((await fetch(`${gateway!.url}/v1/accounts`)).status).toBe(401);
    const body = await accounts();
    expect(body.paid_usage_setting).toBe('plan_only');
    const row = body.data[0];
    expect(row).toMatchObject({
      provider: 'provider_a',
      account: 'work',
      state: 'ready',
      plan_spent: false,
      needs_extra_usage: false,
      paid_usage: { kind: 'credits', available: true, in_use: false, balance: '5.39' },
      source: 'turn',
    });
    expect(row.windows).toEqual([
      {
        name: 'primary',
        model: null,
        used_ratio: 0.42,
        window_seconds: 18_000,
        resets_at: new Date(resetAt * 1000).toISOString(),
      },
      { name: 'secondary', model: null, used_ratio: 0.07, window_seconds: 604_800, resets_at: null },
    ]);
    // Aliases only: no account id, token or e-mail anywhere in the answer.
    expect(JSON.stringify(body)).not.toMatch(/acct-|eyJ|@/);

    const text = await metrics();
    const labels = { provider: 'provider_a', account: 'work' };
    expect(
      sampleValue(text, 'gateway_chat_api_account_quota_used_ratio', { ...labels, window: 'primary' }),
    ).toBeCloseTo(0.42);
    expect(sampleValue(text, 'gateway_chat_api_account_quota_window_seconds', { ...labels, window: 'primary' })).toBe(
      18_000,
    );
    expect(sampleValue(text, 'gateway_chat_api_account_quota_reset_seconds', { ...labels, window: 'primary' })).toBe(
      resetAt,
    );
    expect(sampleValue(text, 'gateway_chat_api_account_paid_usage_available', labels)).toBe(1);
    expect(sampleValue(text, 'gateway_chat_api_account_paid_usage_in_use', labels)).toBe(0);
    expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', labels)).toBe(0);
    expect(sampleValue(text, 'gateway_chat_api_account_needs_extra_usage', labels)).toBe(0);
  });

  it("keeps a turn's codex.rate_limits figures when the next turn reuses the WebSocket: the upgrade's are older", async () => {
    await start(['work']);
    fake().keepConnectionsOpen();
    const resetAt = nowSeconds() + 3600;
    // The upgrade answer says 50 %; the first turn's own event then says 97 %.
    fake().sendMeter(planHeaders({ primaryUsedPercent: 50, primaryResetAt: resetAt }));
    fake().enqueue(
      { frames: [created('resp_1'), rateLimitsEvent(97, resetAt), textDelta('one'), completed(undefined, 'resp_1')] },
      { frames: [created('resp_2'), textDelta('two'), completed(undefined, 'resp_2')] },
    );
    const turn = (turns: number) =>
      postChatBody(gateway!, chatTurn('gpt-5.6-sol', 'meter', turns), {
        headers: { ...AUTH, 'x-conversation-id': 'meter-chat' },
      });
    const primaryRatio = async () =>
      (await entry('work')).windows.find((row: Json) => row.name === 'primary').used_ratio;

    expect((await turn(1)).status).toBe(200);
    expect(await primaryRatio()).toBe(0.97);
    expect((await turn(2)).status).toBe(200);
    // The second turn ran on the first one's connection, which has no new upgrade to read.
    const [first, second] = fake().requests();
    expect(second.connection).toBe(first.connection);
    expect(await primaryRatio()).toBe(0.97);
    expect(
      sampleValue(await metrics(), 'gateway_chat_api_account_quota_used_ratio', {
        provider: 'provider_a',
        account: 'work',
        window: 'primary',
      }),
    ).toBeCloseTo(0.97);
    fake().dropConnections();
  });

  it('applies the codex.rate_limits events a reused turn gets before its answer, in the order they came', async () => {
    await start(['work']);
    fake().keepConnectionsOpen();
    const resetAt = nowSeconds() + 3600;
    // On a reused connection the gateway reads these ahead to trust the chain, then hands them on:
    // the later snapshot (80 %) is the plan now.
    fake().enqueue(
      { frames: [created('resp_1'), rateLimitsEvent(40, resetAt), textDelta('one'), completed(undefined, 'resp_1')] },
      {
        frames: [
          rateLimitsEvent(60, resetAt),
          rateLimitsEvent(80, resetAt),
          created('resp_2'),
          textDelta('two'),
          completed(undefined, 'resp_2'),
        ],
      },
    );
    const turn = (turns: number) =>
      postChatBody(gateway!, chatTurn('gpt-5.6-sol', 'meter-ahead', turns), {
        headers: { ...AUTH, 'x-conversation-id': 'meter-ahead-chat' },
      });
    const primaryRatio = async () =>
      (await entry('work')).windows.find((row: Json) => row.name === 'primary').used_ratio;

    expect((await turn(1)).status).toBe(200);
    expect(await primaryRatio()).toBe(0.4);
    expect((await turn(2)).status).toBe(200);
    const [first, second] = fake().requests();
    expect(second.connection).toBe(first.connection);
    expect(await primaryRatio()).toBe(0.8);
    fake().dropConnections();
  });

  it('delivers the answer that drew credits, then refuses the next turn with no upstream request', async () => {
    await start(['work']);
    const resetAt = nowSeconds() + 1800;
    fake().enqueue(spentAnswer(resetAt));
    const paid = await post('paid');
    expect(paid.status).toBe(200);
    expect(((await paid.json()) as Json).choices[0].message.content).toBe('paid by credits');
    expect(fake().requests()).toHaveLength(1);

    const refused = await post('next');
    expect(refused.status).toBe(429);
    const error = ((await refused.json()) as Json).error;
    expect(error.code).toBe('paid_usage_not_allowed');
    expect(error.message).toContain('Codex credits');
    expect(error.message).toContain('ACCOUNT_PAID_USAGE');
    expect(error.message).toContain('chatgpt.com/codex/settings/usage');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(1790);
    expect(retryAfter).toBeLessThanOrEqual(1800);
    // Refused before any run: the fake saw the first turn only.
    expect(fake().requests()).toHaveLength(1);

    expect(
      sampleValue(await metrics(), 'gateway_chat_api_account_state', {
        provider: 'provider_a',
        account: 'work',
        state: 'plan_spent',
      }),
    ).toBe(1);
    expect(await entry('work')).toMatchObject({
      state: 'plan_spent',
      plan_spent: true,
      rests_until: new Date(resetAt * 1000).toISOString(),
      paid_usage: { kind: 'credits', in_use: true, available: true },
    });
    const labels = { provider: 'provider_a', account: 'work' };
    const text = await metrics();
    expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', labels)).toBe(1);
    expect(sampleValue(text, 'gateway_chat_api_account_paid_usage_in_use', labels)).toBe(1);
    expect(gateway!.logs.records('account_state')).toContainEqual(
      expect.objectContaining({ account: 'work', state: 'plan_spent', reason: 'paid_usage_in_use' }),
    );
  });

  it('keeps a plan refused with usage_limit_reached spent until the reset the upstream named (seconds, not milliseconds)', async () => {
    await start(['work']);
    const resetsIn = 3 * 86_400;
    fake().enqueue({ frames: [usageLimitEvent(resetsIn)] });
    expect((await post('limited')).status).toBe(429);
    expect(await entry('work')).toMatchObject({ plan_spent: true });
    // An hour on, the reset is still days ahead: the plan is still spent.
    advanceAccountClock(gateway!, 3_600_000);
    expect(await entry('work')).toMatchObject({ plan_spent: true, state: 'cooling' });
  });

  it('moves the next turn to another usable login', async () => {
    await start(['work', 'spare']);
    fake().enqueue(spentAnswer(nowSeconds() + 1800), textReply('on the plan'));
    expect((await post('first')).status).toBe(200);
    const moved = await post('second');
    expect(moved.status).toBe(200);
    expect(((await moved.json()) as Json).choices[0].message.content).toBe('on the plan');
    expect(accountsAsked()).toEqual(['acct-work', 'acct-spare']);
  });

  // The first attempt's headers show the plan spent with credits behind it, then it fails before
  // any output: sending the turn again on that login would be a paid request.
  const spentThenFailed = (resetAt: number, failure: 'disconnect' | 'server_error') => ({
    headers: spentAnswer(resetAt).headers,
    frames: [created('resp_1'), failure === 'disconnect' ? { disconnect: true as const } : failed()],
  });

  it.each(['disconnect', 'server_error'] as const)(
    'never retries a turn on the login the guard rested during its failed attempt (%s): the pool answers',
    async (failure) => {
      await start(['work']);
      const resetAt = nowSeconds() + 1800;
      fake().enqueue(spentThenFailed(resetAt, failure), spentAnswer(resetAt));
      const refused = await post(`retry-${failure}`);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as Json).error.code).toBe('paid_usage_not_allowed');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(1790);
      expect(retryAfter).toBeLessThanOrEqual(1800);
      expect(fake().requests()).toHaveLength(1);
      expect(await entry('work')).toMatchObject({ state: 'plan_spent' });
    },
  );

  it('moves the retry of a failed attempt to another login when the guard rested the first one', async () => {
    await start(['work', 'spare']);
    fake().enqueue(spentThenFailed(nowSeconds() + 1800, 'server_error'), textReply('on the plan'));
    const moved = await post('retry-moves');
    expect(moved.status).toBe(200);
    expect(((await moved.json()) as Json).choices[0].message.content).toBe('on the plan');
    expect(accountsAsked()).toEqual(['acct-work', 'acct-spare']);
    expect(gateway!.logs.records('upstream_account_moved')).toContainEqual(
      expect.objectContaining({ from_account: 'work', to_account: 'spare' }),
    );
  });

  it('with ACCOUNT_PAID_USAGE=allow, serves the turn and logs and counts each paid one', async () => {
    await start(['work'], { ACCOUNT_PAID_USAGE: 'allow' });
    const labels = { provider: 'provider_a', account: 'work' };
    // The registry is process-wide: earlier gateways of this file left their counts in it.
    const before = sampleValue(await metrics(), 'gateway_chat_api_paid_turns_total', labels) ?? 0;
    const resetAt = nowSeconds() + 1800;
    fake().enqueue(spentAnswer(resetAt), spentAnswer(resetAt));
    expect((await post('one')).status).toBe(200);
    expect((await post('two')).status).toBe(200);
    expect(fake().requests()).toHaveLength(2);
    await eventually(
      async () => sampleValue(await metrics(), 'gateway_chat_api_paid_turns_total', labels) === before + 2,
    );
    const lines = gateway!.logs.records('paid_usage_turn');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      provider: 'provider_a',
      account: 'work',
      paid_usage: 'credits',
      setting: 'allow',
    });
    expect(await entry('work')).toMatchObject({ state: 'ready', plan_spent: true });
    expect((await accounts()).paid_usage_setting).toBe('allow');
  });

  describe('with ACCOUNT_PAID_USAGE=allow, counts each turn that drew credits once, and no other', () => {
    const labels = { provider: 'provider_a', account: 'work' };
    const paidTurns = async () => sampleValue(await metrics(), 'gateway_chat_api_paid_turns_total', labels) ?? 0;
    /** Every turn has given its login back: what it counts is counted. */
    const settled = () =>
      eventually(async () => sampleValue(await metrics(), 'gateway_chat_api_account_in_flight', labels) === 0);
    const requestIds = (event: string) => gateway!.logs.records(event).map((line) => line.reqId);

    it('a turn on its plan running while another turn of the login draws credits is not counted', async () => {
      await start(['work'], { ACCOUNT_PAID_USAGE: 'allow' });
      const before = await paidTurns();
      const resetAt = nowSeconds() + 1800;
      let finishFree!: () => void;
      const freeMayFinish = new Promise<void>((resolve) => (finishFree = resolve));
      fake().enqueue(
        {
          headers: planHeaders({ primaryUsedPercent: 50, primaryResetAt: resetAt }),
          frames: [created(), textDelta('on the plan'), { ...completed(), after: freeMayFinish }],
        },
        spentAnswer(resetAt),
      );
      const free = post('free');
      await fake().waitForRequests(1);
      const paid = await post('paid');
      expect(paid.status).toBe(200);
      finishFree();
      expect((await free).status).toBe(200);
      await settled();
      expect(await paidTurns()).toBe(before + 1);
      expect(requestIds('paid_usage_turn')).toEqual([paid.headers.get('x-request-id')]);
    });

    it("a turn whose answer headers were within the plan and whose stream's codex.rate_limits says it is spent is counted", async () => {
      await start(['work'], { ACCOUNT_PAID_USAGE: 'allow' });
      const before = await paidTurns();
      const resetAt = nowSeconds() + 1800;
      fake().enqueue({
        headers: planHeaders({ primaryUsedPercent: 99, primaryResetAt: resetAt }),
        frames: [created(), rateLimitsEvent(100, resetAt), textDelta('paid'), completed()],
      });
      const paid = await post('paid');
      expect(paid.status).toBe(200);
      await settled();
      expect(await paidTurns()).toBe(before + 1);
      expect(requestIds('paid_usage_turn')).toEqual([paid.headers.get('x-request-id')]);
    });

    it('a turn the upstream refused after a handshake that promised credits is not counted: nothing was drawn', async () => {
      await start(['work'], { ACCOUNT_PAID_USAGE: 'allow' });
      const before = await paidTurns();
      fake().enqueue({ headers: spentAnswer(nowSeconds() + 1800).headers, frames: [usageLimitEvent(600)] });
      const refused = await post('refused');
      expect(refused.status).toBe(429);
      await settled();
      expect(await paidTurns()).toBe(before);
      expect(requestIds('paid_usage_turn')).toEqual([]);
    });

    it('a turn that drew credits and broke after output is counted: the credits were spent', async () => {
      await start(['work'], { ACCOUNT_PAID_USAGE: 'allow' });
      const before = await paidTurns();
      fake().enqueue({
        headers: spentAnswer(nowSeconds() + 1800).headers,
        frames: [created(), textDelta('partial'), { disconnect: true }],
      });
      const broken = await post('broken');
      expect(broken.status).toBe(502);
      await settled();
      expect(await paidTurns()).toBe(before + 1);
      expect(requestIds('paid_usage_turn')).toEqual([broken.headers.get('x-request-id')]);
      expect(gateway!.logs.records('paid_usage_turn')[0]).toMatchObject({ account: 'work', paid_usage: 'credits' });
    });
  });

  it("refuses before any turn when wham/usage says the plan's limit is reached", async () => {
    fake().serveUsage(spentPlanUsage(nowSeconds() + 2400));
    await start(['work'], { ACCOUNT_USAGE_REFRESH_INTERVAL: '5m' });
    await eventually(async () => (await entry('work')).state === 'plan_spent');
    const [read] = fake().usageRequests();
    expect(read.headers.authorization).toMatch(/^Bearer /);
    expect(read.headers['chatgpt-account-id']).toBe('acct-work');
    expect(gateway!.logs.records('plan_usage')).toContainEqual(
      expect.objectContaining({ provider: 'provider_a', account: 'work', plan_spent: true, paid_available: true }),
    );

    const refused = await post('blocked');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as Json).error.code).toBe('paid_usage_not_allowed');
    expect(fake().requests()).toEqual([]);
    expect(await entry('work')).toMatchObject({ source: 'usage_endpoint', plan_type: 'plus' });
  });

  it("waits for a login's first wham/usage read: a chat right after startup is refused on a spent plan, unsent", async () => {
    fake().serveUsage(spentPlanUsage(nowSeconds() + 2400));
    const release = fake().holdUsage();
    fake().enqueue(spentAnswer(nowSeconds() + 2400));
    await start(['work'], { ACCOUNT_USAGE_REFRESH_INTERVAL: '5m' });
    const answer = post('right-after-boot');
    // The turn is at the gateway, waiting for the read, before the endpoint answers.
    await eventually(async () => gateway!.logs.records('account_usage_wait').length === 1);
    expect(gateway!.logs.records('account_usage_wait')[0]).toMatchObject({ provider: 'provider_a', account: 'work' });
    release();
    const refused = await answer;
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as Json).error.code).toBe('paid_usage_not_allowed');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(2300);
    expect(fake().requests()).toEqual([]);
  });

  it('gives a chat right after startup to a login already read rather than wait for one still being read', async () => {
    const release = fake().holdUsage('acct-work');
    await start(['work', 'spare'], { ACCOUNT_USAGE_REFRESH_INTERVAL: '5m' });
    await eventually(async () => (await entry('spare')).source === 'usage_endpoint');
    fake().enqueue(textReply('from the login already read'));
    const served = await post('prefers-read');
    expect(served.status).toBe(200);
    expect(accountsAsked()).toEqual(['acct-spare']);
    expect(gateway!.logs.records('account_usage_wait')).toEqual([]);
    release();
  });

  it('reads a new login written over a spent one afresh: its first turn waits for its usage read, and a spent plan is still refused', async () => {
    const resetAt = nowSeconds() + 2400;
    // Each login's own plan: the logins written later over work's file have spent plans or not.
    fake().serveUsage((accountId) => (accountId === 'acct-spent-too' ? spentPlanUsage(resetAt) : defaultUsageBody()));
    await start(['work', 'spare'], { ACCOUNT_USAGE_REFRESH_INTERVAL: '5m' });
    await eventually(async () => (await accounts()).data.every((row: Json) => row.source === 'usage_endpoint'));
    fake().enqueue(spentAnswer(resetAt));
    expect((await post('pinned')).status).toBe(200);
    expect(await entry('work')).toMatchObject({ state: 'plan_spent', plan_spent: true });

    // Another account's login, whose plan is spent too, is written over work's file.
    const release = fake().holdUsage('acct-spent-too');
    writeAuthFile(path.join(home(), 'work'), { accountId: 'acct-spent-too', refreshToken: 'rt-spent-too' });
    await eventually(async () => gateway!.logs.records('account_login_changed').length === 1);
    expect(gateway!.logs.records('account_login_changed')[0]).toMatchObject({
      provider: 'provider_a',
      account: 'work',
      from: 'plan_spent',
      state: 'ready',
    });
    // Nothing of the old login's plan is left: its rest, windows and credits are gone.
    expect(await entry('work')).toMatchObject({ state: 'ready', plan_spent: false, windows: [], rests_until: null });
    const work = { provider: 'provider_a', account: 'work' };
    const text = await metrics();
    expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', work)).toBe(0);
    expect(
      sampleValue(text, 'gateway_chat_api_account_quota_used_ratio', { ...work, window: 'primary' }),
    ).toBeUndefined();

    // The chat pinned to work waits for the new login's usage read, which rests it: the turn goes
    // to spare, and nothing is ever sent on the new login's spent plan.
    fake().enqueue(textReply('on the plan'));
    const answer = post('pinned');
    await eventually(async () => gateway!.logs.records('account_usage_wait').length === 1);
    expect(gateway!.logs.records('account_usage_wait')[0]).toMatchObject({ provider: 'provider_a', account: 'work' });
    release();
    const moved = await answer;
    expect(moved.status).toBe(200);
    expect(((await moved.json()) as Json).choices[0].message.content).toBe('on the plan');
    expect(accountsAsked()).toEqual(['acct-work', 'acct-spare']);
    expect(await entry('work')).toMatchObject({ state: 'plan_spent', source: 'usage_endpoint' });

    // A third login, this one on its plan, serves at once after its read.
    writeAuthFile(path.join(home(), 'work'), { accountId: 'acct-fresh', refreshToken: 'rt-fresh' });
    await eventually(async () => (await entry('work')).state === 'ready');
    await eventually(async () => (await entry('work')).source === 'usage_endpoint');
    fake().enqueue(textReply('from the fresh login'));
    expect((await post('new-chat')).status).toBe(200);
    expect(accountsAsked()).toEqual(['acct-work', 'acct-spare', 'acct-fresh']);
  });

  it.each(['plan_only', 'allow'] as const)(
    'once the spent window has reset, shows the login neither spent nor drawing credits in GET /v1/accounts and /metrics, with no new report (%s)',
    async (setting) => {
      // No usage reads: nothing but the clock tells that the window reset.
      await start(['work'], { ACCOUNT_USAGE_REFRESH_INTERVAL: '0', ACCOUNT_PAID_USAGE: setting });
      const resetAt = nowSeconds() + 1800;
      fake().enqueue(spentAnswer(resetAt));
      expect((await post('paid')).status).toBe(200);
      const labels = { provider: 'provider_a', account: 'work' };
      expect(await entry('work')).toMatchObject({ plan_spent: true, paid_usage: { in_use: true } });
      expect(sampleValue(await metrics(), 'gateway_chat_api_account_paid_usage_in_use', labels)).toBe(1);

      advanceAccountClock(gateway!, 1_900_000);
      const row = await entry('work');
      expect(row).toMatchObject({
        state: 'ready',
        rests_until: null,
        plan_spent: false,
        paid_usage: { kind: 'credits', available: true, in_use: false, balance: '12.50' },
      });
      // The spent window reads as reset (used 0 since the time it reset); the weekly one as reported.
      expect(row.windows).toEqual([
        { name: 'primary', model: null, used_ratio: 0, window_seconds: 18_000, resets_at: isoOfSeconds(resetAt) },
        {
          name: 'secondary',
          model: null,
          used_ratio: 0.4,
          window_seconds: 604_800,
          resets_at: isoOfSeconds(resetAt + 86_400),
        },
      ]);
      const text = await metrics();
      expect(sampleValue(text, 'gateway_chat_api_account_state', { ...labels, state: 'ready' })).toBe(1);
      expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', labels)).toBe(0);
      expect(sampleValue(text, 'gateway_chat_api_account_paid_usage_in_use', labels)).toBe(0);
      expect(sampleValue(text, 'gateway_chat_api_account_paid_usage_available', labels)).toBe(1);
      const window = (name: string) => ({ ...labels, window: name });
      expect(sampleValue(text, 'gateway_chat_api_account_quota_used_ratio', window('primary'))).toBe(0);
      expect(sampleValue(text, 'gateway_chat_api_account_quota_reset_seconds', window('primary'))).toBe(resetAt);
      expect(sampleValue(text, 'gateway_chat_api_account_quota_used_ratio', window('secondary'))).toBeCloseTo(0.4);
    },
  );

  it('after a usage limit that came as a WebSocket event, shows the login cooling until its reset as /metrics does, and its plan spent until then', async () => {
    const resetAt = nowSeconds() + 3600;
    // The upgrade's headers say the 5-hour window is at 40 %; the stream then refuses on the usage
    // limit, an event with no headers of its own, resetting in 10 minutes.
    fake().enqueue({
      headers: planHeaders({ primaryUsedPercent: 40, primaryResetAt: resetAt }),
      frames: [usageLimitEvent(600)],
    });
    await start(['work']);
    const before = Date.now();
    const refused = await post('limit-event');
    expect(refused.status).toBe(429);
    const labels = { provider: 'provider_a', account: 'work' };
    const row = await entry('work');
    expect(row).toMatchObject({ state: 'cooling', plan_spent: true });
    // The refusal names no window: the 5-hour one stays as the headers gave it.
    expect(row.windows).toEqual([
      { name: 'primary', model: null, used_ratio: 0.4, window_seconds: 18_000, resets_at: isoOfSeconds(resetAt) },
    ]);
    const restsUntil = Date.parse(row.rests_until);
    expect(restsUntil).toBeGreaterThanOrEqual(before + 600_000);
    expect(restsUntil).toBeLessThanOrEqual(Date.now() + 600_000);
    let text = await metrics();
    expect(sampleValue(text, 'gateway_chat_api_account_cooling_until_seconds', labels)).toBe(
      Math.ceil(restsUntil / 1000),
    );
    expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', labels)).toBe(1);

    // Well past the refusal's reset, and before the window's: the login is back and its plan not spent.
    advanceAccountClock(gateway!, 1_200_000);
    expect(await entry('work')).toMatchObject({
      state: 'ready',
      rests_until: null,
      plan_spent: false,
      windows: [expect.objectContaining({ name: 'primary', used_ratio: 0.4 })],
    });
    text = await metrics();
    expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', labels)).toBe(0);
    expect(sampleValue(text, 'gateway_chat_api_account_cooling_until_seconds', labels)).toBe(0);
  });

  it("never sends a turn on the family's only login while its plan is spent, even once a refused refresh marked it dead", async () => {
    const now = nowSeconds();
    writeAuthFile(path.join(home(), 'work'), { accountId: 'acct-work', refreshToken: 'rt-work', exp: now + 180 });
    fake().serveUsage(spentPlanUsage(now + 2400));
    // The background refresh of the soon-expiring token is refused for good: the login dies.
    fake().enqueueToken({ status: 400, body: { error: { code: 'refresh_token_reused' } } });
    fake().enqueue(textReply('served on a spent plan'));
    await start(['work'], {
      ACCOUNT_USAGE_REFRESH_INTERVAL: '5m',
      ACCOUNT_REFRESH_INTERVAL: '1s',
      ACCOUNT_REFRESH_AHEAD: '5m',
    });
    await eventually(async () => (await entry('work')).state === 'login_dead');
    const refused = await post('after-death');
    expect(refused.status).not.toBe(200);
    expect(fake().requests()).toEqual([]);
  });
});
