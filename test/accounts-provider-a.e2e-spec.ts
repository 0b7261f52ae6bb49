import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import type { FakeScript } from './support/fake-provider-a';
import {
  completed,
  created,
  errorEvent,
  planHeaders,
  rateLimitsEvent,
  textDelta,
  textReply,
  usageLimitEvent,
  writeAuthFile,
} from './support/provider-a-fixtures';
import { extractionReply, STRUCTURED_PATH, structuredBody } from './support/structured-client';
import { useFakeProviderA } from './support/provider-a-harness';
import { accountState, advanceAccountClock, chatTurn, freezeAccountClock } from './support/accounts';
import { postChatBody } from './support/chat-sse';
import { eventually } from './support/poll';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';

type Json = Record<string, any>;

/** The three Codex logins of every test, in the order PROVIDER_A_ACCOUNTS lists them. */
const ALIASES = ['personal', 'team', 'spare'] as const;
type Alias = (typeof ALIASES)[number];
const accountIdOf = (alias: Alias) => `acct-${alias}`;

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('several provider_a logins (account pool, docs/accounts.md)', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-accounts-', homeScope: 'test' });

  const loginFile = (alias: Alias) => path.join(home(), alias, 'auth.json');
  const writeLogin = (alias: Alias, options: Parameters<typeof writeAuthFile>[1] = {}) =>
    writeAuthFile(path.join(home(), alias), { accountId: accountIdOf(alias), refreshToken: `rt-${alias}`, ...options });

  /** A gateway with the three logins (each written unless the test wrote it already, or left `missing`). */
  async function start(settings: Record<string, string> = {}, missing: readonly Alias[] = []): Promise<TestGateway> {
    for (const alias of ALIASES) if (!fs.existsSync(loginFile(alias)) && !missing.includes(alias)) writeLogin(alias);
    gateway = await startGateway({
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_URL: fake().wsUrl,
      PROVIDER_A_TOKEN_URL: fake().tokenUrl,
      CODEX_HOME: path.join(home(), 'codex-home'),
      PROVIDER_A_ACCOUNTS: ALIASES.map((alias) => `${alias}=${loginFile(alias)}`).join(','),
      GATEWAY_STREAM_IDLE_TIMEOUT: '2s',
      // No background model-list fetch: it would refresh an expired login before a test scripts the token endpoint.
      PROVIDER_A_MODELS_REFRESH: '0',
      ...settings,
    });
    startMetrics = await metrics();
    return gateway;
  }

  /**
   * How much a counter grew since the gateway started: the metrics registry is process-wide, so
   * earlier gateways of this suite left their counts in it.
   */
  async function counterDelta(name: string, labels: Record<string, string>): Promise<number> {
    return (sampleValue(await metrics(), name, labels) ?? 0) - (sampleValue(startMetrics, name, labels) ?? 0);
  }
  let startMetrics = '';

  const post = (body: Json, headers: Record<string, string> = {}) => postChatBody(gateway!, body, { headers });
  const chat = (name: string, turns = 1): Json => chatTurn('gpt-5.6-sol', name, turns);
  /** The account every upstream request of this test used, in order (by its chatgpt-account-id). */
  const usedAccounts = () =>
    fake()
      .requests()
      .map((request) => request.headers['chatgpt-account-id']);

  /** What logs one of these logins in again: `codex login` in the login's own Codex home. */
  const ownCommand = (alias: Alias) =>
    `run \`CODEX_HOME=${path.dirname(loginFile(alias))} codex login\` on the gateway's machine (it rewrites ${loginFile(alias)})`;

  it("names each login's own command in the login report when no login is in the CLI's default home", async () => {
    writeLogin('spare', { exp: nowSeconds() - 60, refreshToken: null });
    await start({}, ['personal']);
    const lines = gateway!.logs.records('login_state');
    expect(lines.find((line) => line.account === 'personal')).toMatchObject({
      state: 'missing',
      fix: ownCommand('personal'),
      msg: expect.stringContaining(`to fix: ${ownCommand('personal')}`),
    });
    expect(lines.find((line) => line.account === 'spare')).toMatchObject({
      state: 'unusable',
      fix: ownCommand('spare'),
    });
    expect(gateway!.logs.records('login_none_usable')).toEqual([]);
  });

  it('names every login with its own command when a family has no usable login', async () => {
    for (const alias of ['team', 'spare'] as const) writeLogin(alias, { exp: nowSeconds() - 60, refreshToken: null });
    await start({}, ['personal']);
    const [none] = gateway!.logs.records('login_none_usable');
    expect(none.fix).toBe(
      `fix one of them: ${ALIASES.map((alias) => `login "${alias}": ${ownCommand(alias)}`).join('; ')}`,
    );
    expect(none.msg).toContain(none.fix as string);
  });

  const metrics = () => scrapeMetrics(gateway!);
  const stateOf = (alias: Alias) => accountState(gateway!, 'provider_a', alias);
  const stateLines = () => gateway!.logs.records('account_state');

  it('keeps the turns of one chat on one login', async () => {
    await start();
    for (let turn = 1; turn <= 4; turn++) {
      fake().enqueue(textReply(`turn ${turn}`));
      expect((await post(chat('sticky', turn))).status).toBe(200);
    }
    expect(new Set(usedAccounts())).toEqual(new Set([accountIdOf('personal')]));
    expect(
      await counterDelta('gateway_chat_api_account_selections_total', {
        provider: 'provider_a',
        account: 'personal',
        kind: 'pinned',
      }),
    ).toBe(3);
    expect(
      sampleValue(await metrics(), 'gateway_chat_api_account_pinned_chats', {
        provider: 'provider_a',
        account: 'personal',
      }),
    ).toBe(1);
  });

  it('spreads new chats over the logins, preferring the one with the most quota left', async () => {
    await start();
    // The first chat reports that personal's 5-hour window is 90 % used.
    fake().enqueue({ frames: [created(), rateLimitsEvent(90, nowSeconds() + 3600), textDelta('one'), completed()] });
    expect((await post(chat('first'))).status).toBe(200);
    for (const name of ['second', 'third', 'fourth']) {
      fake().enqueue(textReply(name));
      expect((await post(chat(name))).status).toBe(200);
    }
    const [first, ...later] = usedAccounts();
    expect(first).toBe(accountIdOf('personal'));
    expect(new Set(later)).toEqual(new Set([accountIdOf('team'), accountIdOf('spare')]));
    expect(later).not.toContain(accountIdOf('personal'));
    const text = await metrics();
    expect(
      sampleValue(text, 'gateway_chat_api_account_quota_used_ratio', {
        provider: 'provider_a',
        account: 'personal',
        window: 'primary',
      }),
    ).toBeCloseTo(0.9);
    expect(
      sampleValue(text, 'gateway_chat_api_account_quota_reset_seconds', {
        provider: 'provider_a',
        account: 'personal',
        window: 'primary',
      }),
    ).toBeGreaterThan(nowSeconds());
  });

  it('cools a login on a usage limit, retries the turn on another, and the cooldown ends by itself', async () => {
    await start();
    fake().enqueue({ frames: [usageLimitEvent(600)] }, textReply('served by another login'));
    const response = await post(chat('limited'));
    expect(response.status).toBe(200);
    expect(((await response.json()) as Json).choices[0].message.content).toBe('served by another login');
    const [first, second] = usedAccounts();
    expect(first).toBe(accountIdOf('personal'));
    expect(second).not.toBe(first);
    expect(await stateOf('personal')).toBe('cooling');
    expect(
      await counterDelta('gateway_chat_api_account_cooldowns_total', {
        provider: 'provider_a',
        account: 'personal',
        reason: 'usage_limit',
      }),
    ).toBe(1);
    expect(
      await counterDelta('gateway_chat_api_account_turns_moved_away_total', {
        provider: 'provider_a',
        account: 'personal',
      }),
    ).toBe(1);
    let text = await metrics();
    expect(
      sampleValue(text, 'gateway_chat_api_account_cooling_until_seconds', {
        provider: 'provider_a',
        account: 'personal',
      }),
    ).toBeGreaterThanOrEqual(nowSeconds() + 590);

    // The chat moved for good: its next turn stays on the login that answered.
    fake().enqueue(textReply('again'));
    expect((await post(chat('limited', 2))).status).toBe(200);
    expect(usedAccounts()[2]).toBe(second);

    // Ten minutes later (by the pools' clock) personal is ready again without any request.
    advanceAccountClock(gateway!, 601_000);
    await eventually(async () => (await stateOf('personal')) === 'ready');
    expect(
      stateLines()
        .filter((line) => line.account === 'personal')
        .map((line) => line.state),
    ).toEqual(['cooling', 'ready']);
    text = await metrics();
    expect(
      sampleValue(text, 'gateway_chat_api_account_cooling_until_seconds', {
        provider: 'provider_a',
        account: 'personal',
      }),
    ).toBe(0);
  });

  it('answers 429 with the earliest reset when every login is cooling, without calling the upstream', async () => {
    await start();
    fake().enqueue({ frames: [usageLimitEvent(600)] }, { frames: [usageLimitEvent(300)] });
    const first = await post(chat('one'));
    expect(first.status).toBe(429);
    fake().enqueue({ frames: [usageLimitEvent(900)] });
    const second = await post(chat('two'));
    expect(second.status).toBe(429);
    expect(usedAccounts()).toEqual([accountIdOf('personal'), accountIdOf('team'), accountIdOf('spare')]);
    for (const response of [second, await post(chat('three'))]) {
      expect(response.status).toBe(429);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(295);
      expect(Number(response.headers.get('retry-after'))).toBeLessThanOrEqual(300);
      expect(((await response.json()) as Json).error).toMatchObject({ type: 'rate_limit_error' });
    }
    expect(fake().requests()).toHaveLength(3);
  });

  describe('a usage limit whose reset the upstream does not tell', () => {
    /** The plan's limit with no reset: no `resets_in_seconds`, no rate-limit headers. */
    const limitWithoutReset = () => ({
      frames: [errorEvent({ status: 429, type: 'usage_limit_reached', message: 'limit' })],
    });

    it.each([
      ['30m', 1800, 'false', 'retry in 30 min'],
      ['45s', 45, 'true', 'retry in 45 s'],
    ])(
      "tells a family's only login's client to come back when ACCOUNT_COOLDOWN_DEFAULT=%s rests the login",
      async (cooldown, seconds, shouldRetry, retryIn) => {
        await start({ ACCOUNT_COOLDOWN_DEFAULT: cooldown, PROVIDER_A_ACCOUNTS: `personal=${loginFile('personal')}` });
        const now = freezeAccountClock(gateway!);
        fake().enqueue(limitWithoutReset());
        const response = await post(chat('no-reset'));
        expect(response.status).toBe(429);
        expect(response.headers.get('retry-after')).toBe(String(seconds));
        expect(response.headers.get('x-should-retry')).toBe(shouldRetry);
        expect(((await response.json()) as Json).error).toMatchObject({
          code: 'usage_limit_reached',
          message: expect.stringContaining(`usage limit; ${retryIn}, or add another login`),
        });
        // The wait is the login's own rest.
        expect(await stateOf('personal')).toBe('cooling');
        const coolingUntil = sampleValue(await metrics(), 'gateway_chat_api_account_cooling_until_seconds', {
          provider: 'provider_a',
          account: 'personal',
        });
        expect(coolingUntil).toBe(Math.ceil(now / 1000 + seconds));
      },
    );

    it('says the same wait when the limit ends a turn the upstream took, its answer begun or not (a non-streamed chat answers 429)', async () => {
      await start({ ACCOUNT_COOLDOWN_DEFAULT: '10m', PROVIDER_A_ACCOUNTS: `personal=${loginFile('personal')}` });
      freezeAccountClock(gateway!);
      fake().enqueue({ frames: [created(), textDelta('partial'), ...limitWithoutReset().frames] });
      const response = await post(chat('begun-no-reset'));
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('600');
      expect(response.headers.get('x-should-retry')).toBe('false');
      // And when the upstream had taken the turn but nothing was shown yet.
      fake().enqueue({ frames: [created(), ...limitWithoutReset().frames] });
      const accepted = await post(chat('accepted-no-reset'));
      expect(accepted.status).toBe(429);
      expect(accepted.headers.get('retry-after')).toBe('600');
    });

    it('tells the client when the first resting login is back after the turn moved and failed again', async () => {
      await start({ ACCOUNT_COOLDOWN_DEFAULT: '20m' });
      freezeAccountClock(gateway!);
      fake().enqueue(limitWithoutReset(), limitWithoutReset());
      const response = await post(chat('moved-no-reset'));
      expect(response.status).toBe(429);
      expect(usedAccounts()).toHaveLength(2);
      expect(response.headers.get('retry-after')).toBe('1200');
      expect(response.headers.get('x-should-retry')).toBe('false');
    });
  });

  it('takes a dead login out until its file is rewritten, then uses it again', async () => {
    // personal's token has expired and its refresh token is refused for good.
    writeLogin('personal', { exp: nowSeconds() - 60 });
    await start();
    fake().enqueueToken({ status: 401, body: { error: 'refresh_token_reused' } });
    fake().enqueue(textReply('from another login'));
    expect((await post(chat('dead'))).status).toBe(200);
    expect(usedAccounts()).toEqual([accountIdOf('team')]);
    expect(await stateOf('personal')).toBe('login_dead');

    // New chats avoid the dead login.
    fake().enqueue(textReply('a'), textReply('b'));
    await post(chat('avoid-1'));
    await post(chat('avoid-2'));
    expect(usedAccounts().slice(1)).not.toContain(accountIdOf('personal'));

    // `codex login` writes a fresh file: the login comes back by itself.
    writeLogin('personal');
    await eventually(async () => (await stateOf('personal')) === 'ready');
    fake().enqueue(textReply('x'), textReply('y'), textReply('z'));
    for (const name of ['back-1', 'back-2', 'back-3']) expect((await post(chat(name))).status).toBe(200);
    expect(usedAccounts().slice(3)).toContain(accountIdOf('personal'));
    expect(
      stateLines()
        .filter((line) => line.account === 'personal')
        .map((line) => line.state),
    ).toEqual(['login_dead', 'ready']);
  });

  describe("a family's only login", () => {
    const onlyPersonal = (settings: Record<string, string> = {}) =>
      start({ PROVIDER_A_ACCOUNTS: `personal=${loginFile('personal')}`, ...settings });

    it('comes back at its next answered turn after the API refused its token twice', async () => {
      await onlyPersonal();
      // A 401, the forced refresh (granted), a 401 again: the API refused the login.
      fake().enqueue({ reject: { status: 401 }, frames: [] }, { reject: { status: 401 }, frames: [] });
      expect((await post(chat('refused'))).status).toBe(403);
      expect(await stateOf('personal')).toBe('login_dead');
      // Still asked, as the family's only login: its answer brings it back.
      fake().enqueue(textReply('back'));
      const answered = await post(chat('answered'));
      expect(answered.status).toBe(200);
      expect(((await answered.json()) as Json).choices[0].message.content).toBe('back');
      expect(await stateOf('personal')).toBe('ready');
      expect(stateLines().map(({ from, state, reason }) => ({ from, state, reason }))).toEqual([
        { from: 'ready', state: 'login_dead', reason: 'login_refused' },
        { from: 'login_dead', state: 'ready', reason: undefined },
      ]);
    });

    it('stays dead once its refresh token was refused, though it still serves on the access token it had', async () => {
      writeLogin('personal', { exp: nowSeconds() + 120 });
      fake().enqueueToken({ status: 400, body: { error: 'refresh_token_reused' } });
      await onlyPersonal({ ACCOUNT_REFRESH_INTERVAL: '200ms', ACCOUNT_REFRESH_AHEAD: '5m' });
      await eventually(async () => (await stateOf('personal')) === 'login_dead');
      fake().enqueue(textReply('on the old token'));
      expect((await post(chat('served'))).status).toBe(200);
      expect(usedAccounts()).toEqual([accountIdOf('personal')]);
      // Its next refresh would be refused again: a new login is the way back, not this answer.
      expect(await stateOf('personal')).toBe('login_dead');
      expect(stateLines().map(({ state, reason }) => ({ state, reason }))).toEqual([
        { state: 'login_dead', reason: 'refresh_refused' },
      ]);
      expect(fake().tokenRequests()).toHaveLength(1);
    });
  });

  it('keeps a login whose token endpoint failed for a moment: the turn is retried on it, no login is taken out', async () => {
    writeLogin('personal', { exp: nowSeconds() - 60 });
    await start();
    fake().enqueueToken({ status: 503, body: { error: 'temporarily_unavailable' } });
    fake().enqueue(textReply('after the blip'));
    expect((await post(chat('blip'))).status).toBe(200);
    // Answered on the same login, on the token its second refresh got: no other login was needed.
    expect(usedAccounts()).toEqual([accountIdOf('personal')]);
    expect(
      fake()
        .tokenRequests()
        .map((form) => form.refresh_token),
    ).toEqual(['rt-personal', 'rt-personal']);
    for (const alias of ALIASES) expect(await stateOf(alias)).toBe('ready');
    expect(stateLines()).toEqual([]);
  });

  it("keeps an idle login whose background refresh the token endpoint failed: one warn line naming the endpoint's fix", async () => {
    writeLogin('spare', { exp: nowSeconds() + 120 });
    fake().enqueueToken({ status: 503, body: { error: 'temporarily_unavailable' } });
    await start({ ACCOUNT_REFRESH_INTERVAL: '200ms', ACCOUNT_REFRESH_AHEAD: '5m' });
    // The check's one warning: account_refresh_failed, or account_state had it taken the login out.
    const warned = (record: Record<string, unknown>) =>
      record.event === 'account_refresh_failed' || record.event === 'account_state';
    await eventually(() => gateway!.logs.records().some(warned));
    const records = gateway!.logs.records();
    const upTo = records.findIndex(warned);
    const line = records[upTo];
    expect(line).toMatchObject({
      level: 40,
      provider: 'provider_a',
      account: 'spare',
      path: loginFile('spare'),
      reason: 'upstream',
      fix: 'the token endpoint (PROVIDER_A_TOKEN_URL) answered HTTP 503 without a token, not a refusal of the login: nothing to do if it passes, else check the endpoint, the network and HTTPS_PROXY / NO_PROXY; the next request refreshes again',
    });
    // The family's own line is the detail, at info; the login is no login problem and stays in.
    expect(gateway!.logs.records('provider_a_token_refresh_failed')[0]).toMatchObject({
      level: 30,
      upstream_status: 503,
      fix: line.fix,
    });
    expect(records.slice(0, upTo + 1).filter((record) => Number(record.level) >= 40)).toEqual([line]);
    expect(await stateOf('spare')).toBe('ready');
    // The next check refreshes it.
    await eventually(() => JSON.parse(fs.readFileSync(loginFile('spare'), 'utf8')).tokens.refresh_token === 'rt-1');
    expect(stateLines()).toEqual([]);
  });

  it('uses a new login written over a login file at once: its account and token, and none of the old rest', async () => {
    await start();
    for (const name of ['on-personal', 'on-team', 'on-spare']) {
      fake().enqueue(textReply(name));
      expect((await post(chat(name))).status).toBe(200);
    }
    expect(usedAccounts()).toEqual(ALIASES.map(accountIdOf));
    // spare hits its usage limit once output has begun: it cools, and its chat stays pinned to it.
    fake().enqueue({ frames: [created(), textDelta('partial'), usageLimitEvent(600)] });
    expect((await post({ ...chat('on-spare', 2), stream: true })).status).toBe(200);
    expect(await stateOf('spare')).toBe('cooling');

    // Another account's login is written over spare's file (`codex login` with another account).
    const fresh = writeAuthFile(path.join(home(), 'spare'), { accountId: 'acct-other', refreshToken: 'rt-other' });
    await eventually(async () => gateway!.logs.records('account_login_changed').length > 0);
    expect(gateway!.logs.records('account_login_changed')).toEqual([
      expect.objectContaining({
        provider: 'provider_a',
        account: 'spare',
        path: loginFile('spare'),
        from: 'cooling',
        state: 'ready',
      }),
    ]);
    // Its one line says it: no account_state line for the rest it ended.
    expect(stateLines().filter((line) => line.account === 'spare')).toEqual([
      expect.objectContaining({ from: 'ready', state: 'cooling' }),
    ]);
    expect(await stateOf('spare')).toBe('ready');

    // The chat's next turn stays on spare and sends the new login, not the old token.
    fake().enqueue(textReply('from the new login'));
    expect((await post(chat('on-spare', 3))).status).toBe(200);
    const last = fake().requests().at(-1)!;
    expect(last.headers['chatgpt-account-id']).toBe('acct-other');
    expect(last.headers.authorization).toBe(`Bearer ${fresh.accessToken}`);
    // Nothing of either login reaches a log line.
    expect(JSON.stringify(gateway!.logs.records())).not.toMatch(/acct-other|rt-other/);
  });

  it('keeps what a turn still running on the previous login reports off the new login written over its file', async () => {
    await start();
    for (const name of ['on-personal', 'on-team', 'on-spare']) {
      fake().enqueue(textReply(name));
      expect((await post(chat(name))).status).toBe(200);
    }
    // spare's next turn streams on its login; the rest of its answer waits for the test.
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    fake().enqueue({
      frames: [
        created(),
        textDelta('partial'),
        // The old login's plan is spent (credits would pay), then its usage limit after output.
        { ...rateLimitsEvent(100, nowSeconds() + 3600), after: held },
        usageLimitEvent(600),
      ],
    });
    const response = await post({ ...chat('on-spare', 2), stream: true });
    expect(response.status).toBe(200);

    // Another account's login is written over spare's file while that turn runs.
    writeAuthFile(path.join(home(), 'spare'), { accountId: 'acct-other', refreshToken: 'rt-other' });
    await eventually(async () => gateway!.logs.records('account_login_changed').length > 0);
    answer();
    const text = await response.text();
    expect(text).toContain('partial');
    expect(text).toContain('usage limit reached');

    // What the old login's answer said is not the new login's: spare stays ready, with no plan.
    expect(await stateOf('spare')).toBe('ready');
    expect(stateLines().filter((line) => line.account === 'spare')).toEqual([]);
    expect(
      sampleValue(await metrics(), 'gateway_chat_api_account_quota_used_ratio', {
        provider: 'provider_a',
        account: 'spare',
        window: 'primary',
      }),
    ).toBeUndefined();
    // The log still says what the old login's turn reported (its rate limits, then its usage
    // limit: the plan that limit spends, and the failure), naming the alias only.
    expect(gateway!.logs.records('account_report_stale').map((line) => [line.account, line.report])).toEqual([
      ['spare', 'plan'],
      ['spare', 'plan'],
      ['spare', 'usage_limit'],
    ]);

    // The chat's next turn runs on the new login.
    fake().enqueue(textReply('from the new login'));
    expect((await post(chat('on-spare', 3))).status).toBe(200);
    expect(fake().requests().at(-1)!.headers['chatgpt-account-id']).toBe('acct-other');
  });

  it('keeps the state of a login whose file was rewritten with the same login (a refresh)', async () => {
    await start();
    fake().enqueue({ frames: [usageLimitEvent(600)] }, textReply('moved'));
    expect((await post(chat('cooled'))).status).toBe(200);
    expect(await stateOf('personal')).toBe('cooling');
    // The same account's login with new tokens: its cooldown is the account's, and stays. team's
    // file gets another account's login after it, so its line says the sweep read both.
    writeLogin('personal', { refreshToken: 'rt-personal-rotated' });
    writeAuthFile(path.join(home(), 'team'), { accountId: 'acct-other', refreshToken: 'rt-other' });
    await eventually(async () => gateway!.logs.records('account_login_changed').length > 0);
    expect(gateway!.logs.records('account_login_changed')).toEqual([
      expect.objectContaining({ account: 'team', from: 'ready', state: 'ready' }),
    ]);
    expect(await stateOf('personal')).toBe('cooling');
  });

  it('bounds one chat to one login’s cap across the family, keeps its pin, and still serves other chats', async () => {
    await start({ ACCOUNT_MAX_IN_FLIGHT: '2', GATEWAY_STREAM_IDLE_TIMEOUT: '0' });
    const resetAt = nowSeconds() + 3600;
    // team's and spare's answers say their 5-hour window is 90 % used: new chats prefer personal.
    let gate: Promise<void> | undefined;
    fake().answerBy((headers): FakeScript => {
      const account = headers['chatgpt-account-id'];
      const frames = [created(), textDelta(`from ${account}`), { ...completed(), after: gate }];
      return account === accountIdOf('personal')
        ? { frames }
        : { frames, headers: planHeaders({ primaryUsedPercent: 90, primaryResetAt: resetAt }) };
    });
    for (const name of ['warm-1', 'warm-2', 'warm-3', 'hog']) expect((await post(chat(name))).status).toBe(200);
    expect(usedAccounts()).toEqual([...ALIASES.map(accountIdOf), accountIdOf('personal')]);

    // From here every answer waits for `release`: two other chats fill personal, the hog's login.
    let release!: () => void;
    gate = new Promise<void>((resolve) => (release = resolve));
    const held = [post(chat('other-1')), post(chat('other-2'))];
    /** The logins of the requests the fake saw from the `from`-th on, once it saw `count`, in any order. */
    const loginsOf = async (from: number, count: number) =>
      (await fake().waitForRequests(count))
        .slice(from)
        .map((request) => request.headers['chatgpt-account-id'])
        .sort();
    expect(await loginsOf(4, 6)).toEqual([accountIdOf('personal'), accountIdOf('personal')]);
    // The hog sends three turns at once: two overflow to the other logins, the third is over its bound.
    const hog = [1, 2, 3].map(() => post(chat('hog', 2)));
    expect(await loginsOf(6, 8)).toEqual([accountIdOf('spare'), accountIdOf('team')]);
    // Other chats still get the slots left; once every login is full, the pool says why.
    const others = [post(chat('other-3')), post(chat('other-4'))];
    expect(await loginsOf(8, 10)).toEqual([accountIdOf('spare'), accountIdOf('team')]);
    const full = await post(chat('other-5'));
    release();
    const hogAnswers = await Promise.all(hog);
    expect(hogAnswers.map((answer) => answer.status).sort()).toEqual([200, 200, 429]);
    for (const answer of [...held, ...others]) expect((await answer).status).toBe(200);
    const over = hogAnswers.find((answer) => answer.status === 429)!;
    expect(over.headers.get('retry-after')).toBe('1');
    expect(((await over.json()) as Json).error).toMatchObject({
      type: 'rate_limit_error',
      message:
        'this chat already has 2 turns running on provider_a logins, as many as one login takes at once (ACCOUNT_MAX_IN_FLIGHT=2); retry in 1 s, once one of them has ended, or raise ACCOUNT_MAX_IN_FLIGHT',
    });

    expect(full.status).toBe(429);
    expect(full.headers.get('retry-after')).toBe('1');
    expect(((await full.json()) as Json).error).toMatchObject({
      type: 'rate_limit_error',
      message:
        'every provider_a login is at its in-flight cap (ACCOUNT_MAX_IN_FLIGHT=2); retry in 1 s, or raise ACCOUNT_MAX_IN_FLIGHT or add a login',
    });

    // The hog's turns that overflowed did not move its pin: its next turn is back on personal.
    gate = undefined;
    expect((await post(chat('hog', 3))).status).toBe(200);
    expect(usedAccounts().at(-1)).toBe(accountIdOf('personal'));
  });

  it('answers 403 naming the family when every login is dead', async () => {
    for (const alias of ALIASES) writeLogin(alias, { exp: nowSeconds() - 60, refreshToken: null });
    await start();
    const response = await post(chat('nobody'));
    expect(response.status).toBe(403);
    // The turn tried one login and moved once; the third request finds all of them out.
    expect(fake().requests()).toHaveLength(0);
    await post(chat('nobody-2'));
    const last = await post(chat('nobody-3'));
    expect(last.status).toBe(403);
    // No login is in the Codex CLI's default home: the message names each one's own command.
    const message = ((await last.json()) as Json).error.message as string;
    for (const alias of ALIASES) expect(message).toContain(ownCommand(alias));
    expect(message).not.toContain('`codex login`');
    // Each login's own line names it, its file and the login command for its own Codex home.
    const expired = gateway!.logs.records('provider_a_login_expired');
    expect(new Set(expired.map((line) => line.account))).toEqual(new Set(ALIASES));
    for (const line of expired)
      expect(line).toMatchObject({
        provider: 'provider_a',
        path: loginFile(line.account as Alias),
        fix: `run \`CODEX_HOME=${path.dirname(loginFile(line.account as Alias))} codex login\` on the gateway's machine (it rewrites ${loginFile(line.account as Alias)})`,
      });
  });

  it('says which login the token endpoint refused, its file and its own login command, never a token', async () => {
    for (const alias of ALIASES) writeLogin(alias, { exp: nowSeconds() - 60 });
    await start();
    for (let refusal = 0; refusal < 3; refusal++)
      fake().enqueueToken({ status: 400, body: { error: 'invalid_grant', error_description: 'secret words' } });
    expect((await post(chat('refused'), { 'x-request-id': 'refused-1' })).status).toBe(403);
    // Two logins refused and the turn moved once: its lines about each login are at info, its one
    // warning names the login it ended on and that login's own command.
    await gateway!.logs.failureLine('refused-1', 40, {
      status: 403,
      error_code: 'auth',
      fix: expect.stringMatching(/^run `CODEX_HOME=\S+ codex login` on the gateway's machine/),
    });
    const second = await post(chat('refused-2'), { 'x-request-id': 'refused-2' });
    expect(second.status).toBe(403);
    // Every login is dead, none in the Codex CLI's default home: the client's message, the request's
    // line and each login's own state line name the login's own command, never the plain `codex login`.
    const message = ((await second.json()) as Json).error.message as string;
    for (const alias of ALIASES) expect(message).toContain(`login "${alias}": ${ownCommand(alias)}`);
    // One line at warn for the failed request, naming every login's own command whole.
    const summary = await gateway!.logs.failureLine('refused-2', 40, {
      status: 403,
      error_code: 'auth',
      fix: `fix one of them: ${ALIASES.map((alias) => `login "${alias}": ${ownCommand(alias)}`).join('; ')}`,
    });
    expect(message.startsWith(summary.error_message as string)).toBe(true);
    for (const alias of ALIASES)
      expect(stateLines().filter((line) => line.account === alias)).toEqual([
        expect.objectContaining({ state: 'login_dead', fix: ownCommand(alias) }),
      ]);
    expect(JSON.stringify(gateway!.logs.records())).not.toContain('run `codex login`');
    const refused = gateway!.logs.records('provider_a_token_refresh_failed');
    expect(refused).toHaveLength(3);
    expect(new Set(refused.map((line) => line.account))).toEqual(new Set(ALIASES));
    for (const line of refused)
      expect(line).toMatchObject({
        provider: 'provider_a',
        path: loginFile(line.account as Alias),
        error_code: 'invalid_grant',
        upstream_status: 400,
        fix: expect.stringContaining(`CODEX_HOME=${path.dirname(loginFile(line.account as Alias))} codex login`),
      });
    expect(JSON.stringify(refused)).not.toMatch(/rt-personal|rt-team|rt-spare|secret words/);
  });

  it('refreshes an idle login before its token expires, and writes it back', async () => {
    const idle = writeLogin('spare', { exp: nowSeconds() + 120 });
    await start({ ACCOUNT_REFRESH_INTERVAL: '200ms', ACCOUNT_REFRESH_AHEAD: '5m' });
    await eventually(
      async () =>
        fake().tokenRequests().length > 0 &&
        JSON.parse(fs.readFileSync(loginFile('spare'), 'utf8')).tokens.access_token !== idle.accessToken,
    );
    expect(
      fake()
        .tokenRequests()
        .map((form) => form.refresh_token),
    ).toEqual(['rt-spare']);
    const written = JSON.parse(fs.readFileSync(loginFile('spare'), 'utf8'));
    expect(written.tokens.refresh_token).toBe('rt-1');
    expect(written.tokens.account_id).toBe(accountIdOf('spare'));
    expect(fs.statSync(loginFile('spare')).mode & 0o777).toBe(0o600);
    // No chat request was made at all.
    expect(fake().requests()).toHaveLength(0);
    // The other two logins are far from expiry and were left alone.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(fake().tokenRequests()).toHaveLength(1);
  });

  it('never moves a turn once output has begun; the login still cools for later turns', async () => {
    await start();
    fake().enqueue({ frames: [created(), textDelta('partial answer'), usageLimitEvent(600)] });
    const response = await post({ ...chat('streamed'), stream: true });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('partial answer');
    expect(text).toContain('usage limit reached');
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(usedAccounts()).toEqual([accountIdOf('personal')]);
    expect(await stateOf('personal')).toBe('cooling');
    expect(
      await counterDelta('gateway_chat_api_account_turns_moved_away_total', {
        provider: 'provider_a',
        account: 'personal',
      }),
    ).toBe(0);
    expect(
      await counterDelta('gateway_chat_api_account_cooldowns_total', {
        provider: 'provider_a',
        account: 'personal',
        reason: 'usage_limit',
      }),
    ).toBe(1);
  });

  it('uses the pool for structured inference too', async () => {
    await start({ STRUCTURED_INFERENCE_ENABLED: 'true' });
    fake().enqueue({ frames: [usageLimitEvent(600)] }, extractionReply());
    const response = await fetch(`${gateway!.url}${STRUCTURED_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(structuredBody({ idempotency_key: 'k-accounts-1' })),
    });
    expect(response.status).toBe(200);
    expect(usedAccounts()).toEqual([accountIdOf('personal'), expect.stringMatching(/^acct-(team|spare)$/)]);
    expect(await stateOf('personal')).toBe('cooling');
  });

  it('logs and labels logins only by alias', async () => {
    const secrets = ALIASES.map((alias) => writeLogin(alias)).flatMap((file) => [file.accessToken, file.refreshToken!]);
    await start();
    fake().enqueue({ frames: [usageLimitEvent(60)] }, textReply('ok'));
    expect((await post(chat('labels'))).status).toBe(200);
    const everything = JSON.stringify(gateway!.logs.records()) + (await metrics());
    for (const alias of ALIASES) expect(everything).not.toContain(accountIdOf(alias));
    for (const secret of secrets) expect(everything).not.toContain(secret);
    expect(everything).toContain('account="personal"');
  });
});
