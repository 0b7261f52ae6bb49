import * as fs from 'node:fs';
import * as path from 'node:path';
import { accountState, advanceAccountClock, chatTurn, freezeAccountClock } from './support/accounts';
import { postChatBody } from './support/chat-sse';
import type { TestGateway } from './support/create-test-app';
import { eventually } from './support/poll';
import { startGateway } from './support/create-test-app';
import { useFakeProviderB } from './support/provider-b-harness';
import { RETRY_CLOCK, type RetryClock } from '../src/providers/shared/retry-policy';
import { errorFrame, errorInfo, helpLinks, retryInfo, textFrame, writeCredsFile } from './support/provider-b-fixtures';

type Json = Record<string, any>;

/** The three Gemini logins of every test, in the order PROVIDER_B_ACCOUNTS lists them. */
const ALIASES = ['work', 'home', 'spare'] as const;
type Alias = (typeof ALIASES)[number];

/** A usage limit of Code Assist: 429 RESOURCE_EXHAUSTED whose retry delay is beyond the retryable range. */
const quotaSpent = (seconds: number) => ({
  status: 429,
  body: errorFrame(429, 'RESOURCE_EXHAUSTED', 'quota', [retryInfo(`${seconds}s`)]),
});

describe('several provider_b logins (account pool, docs/accounts.md)', () => {
  let gateway: TestGateway | undefined;
  // Registered first so the gateway closes before the fake and the home go away.
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });
  const harness = useFakeProviderB({ homePrefix: 'pb-accounts-' });
  const loginDir = (alias: Alias) => path.join(harness.home(), alias);
  const writeLogin = (alias: Alias, options: Parameters<typeof writeCredsFile>[1] = {}) =>
    writeCredsFile(loginDir(alias), { accessToken: `access-${alias}`, refreshToken: `refresh-${alias}`, ...options });

  async function start(settings: Record<string, string> = {}): Promise<TestGateway> {
    for (const alias of ALIASES) if (!fs.existsSync(path.join(loginDir(alias), 'oauth_creds.json'))) writeLogin(alias);
    gateway = await startGateway({
      GATEWAY_PROVIDERS: 'provider_b',
      PROVIDER_B_URL: harness.fake().baseUrl,
      PROVIDER_B_TOKEN_URL: harness.fake().tokenUrl,
      PROVIDER_B_PROJECT: 'test-project',
      PROVIDER_B_ACCOUNTS: ALIASES.map((alias) => `${alias}=${path.join(loginDir(alias), 'oauth_creds.json')}`).join(
        ',',
      ),
      ...settings,
    });
    return gateway;
  }

  const post = (body: Json) => postChatBody(gateway!, body);
  const chat = (name: string, turns = 1): Json => chatTurn('gemini-2.5-pro', name, turns);
  /** The bearer of every generate call so far, in order. */
  const usedTokens = () =>
    harness
      .fake()
      .requests('generateContent')
      .map((request) => String(request.headers.authorization));
  const stateOf = (alias: Alias) => accountState(gateway!, 'provider_b', alias);
  /** One login's entry in GET /v1/accounts. */
  const accountEntry = async (alias: Alias): Promise<Json> => {
    const response = await fetch(`${gateway!.url}/v1/accounts`);
    const { data } = (await response.json()) as { data: Json[] };
    return data.find((entry) => entry.provider === 'provider_b' && entry.account === alias)!;
  };

  it('keeps the turns of one chat on one login and spreads new chats over the others', async () => {
    await start();
    for (let turn = 1; turn <= 3; turn++) expect((await post(chat('sticky', turn))).status).toBe(200);
    expect(new Set(usedTokens())).toEqual(new Set(['Bearer access-work']));
    for (const name of ['second', 'third']) expect((await post(chat(name))).status).toBe(200);
    expect(new Set(usedTokens().slice(3))).toEqual(new Set(['Bearer access-home', 'Bearer access-spare']));
  });

  it('sends the new login written over a login file from the next turn on, not the token it cached', async () => {
    await start();
    expect((await post(chat('sticky'))).status).toBe(200);
    expect(usedTokens()).toEqual(['Bearer access-work']);
    // `gemini` logged in with another account writes over work's file.
    writeLogin('work', { accessToken: 'access-other', refreshToken: 'refresh-other' });
    await eventually(async () => gateway!.logs.records('account_login_changed').length > 0);
    expect(gateway!.logs.records('account_login_changed')).toEqual([
      expect.objectContaining({ provider: 'provider_b', account: 'work', from: 'ready', state: 'ready' }),
    ]);
    expect((await post(chat('sticky', 2))).status).toBe(200);
    expect(usedTokens()).toEqual(['Bearer access-work', 'Bearer access-other']);
  });

  it("rests only the model on a login whose quota for it is spent: the turn moves, the login's other models still serve", async () => {
    await start();
    harness.fake().enqueue('generateContent', quotaSpent(600));
    const response = await post(chat('limited'));
    expect(response.status).toBe(200);
    expect(usedTokens()).toEqual(['Bearer access-work', 'Bearer access-home']);
    expect(await stateOf('work')).toBe('ready');
    const work = await accountEntry('work');
    expect(work.windows).toEqual([
      expect.objectContaining({ name: 'gemini-2.5-pro', model: 'gemini-2.5-pro', used_ratio: 1 }),
    ]);
    expect(Date.parse(work.windows[0].resets_at)).toBeGreaterThan(Date.now() + 590_000);
    expect(gateway!.logs.records('account_model_resting')[0]).toMatchObject({
      provider: 'provider_b',
      account: 'work',
      model: 'gemini-2.5-pro',
    });
    // New chats on that model go to the other logins; another model still reaches every login.
    for (const name of ['pro-1', 'pro-2']) expect((await post(chat(name))).status).toBe(200);
    expect(usedTokens().slice(2)).not.toContain('Bearer access-work');
    for (const name of ['flash-1', 'flash-2', 'flash-3'])
      expect((await post(chatTurn('gemini-2.5-flash', name, 1))).status).toBe(200);
    expect(new Set(usedTokens().slice(4))).toEqual(
      new Set(['Bearer access-work', 'Bearer access-home', 'Bearer access-spare']),
    );
    // The rest ends by itself at the reset: the login least recently chosen takes the model's next new chat.
    advanceAccountClock(gateway!, 601_000);
    expect((await post(chat('after-reset'))).status).toBe(200);
    expect(usedTokens().at(-1)).toBe('Bearer access-work');
  });

  describe('model ids the Gemini CLI counts as one quota bucket (gemini-3-flash, gemini-3.5-flash, gemini-3.8-flash)', () => {
    /** Two logins only: whatever the first cannot take goes to the second. */
    const twoLogins = (settings: Record<string, string> = {}) =>
      start({
        PROVIDER_B_ACCOUNTS: (['work', 'home'] as const)
          .map((alias) => `${alias}=${path.join(loginDir(alias), 'oauth_creds.json')}`)
          .join(','),
        ...settings,
      });
    /** The upstream model of every generate call so far, with the login that sent it. */
    const generateCalls = () =>
      harness
        .fake()
        .requests('generateContent')
        .map((request) => `${String(request.headers.authorization)} ${String(request.body.model)}`);

    it('sends no turn of another id of the bucket to a login whose quota read shows the bucket spent', async () => {
      const tomorrow = new Date(Date.now() + 20 * 3600_000).toISOString();
      const bucket = (modelId: string, remainingFraction: number) => ({
        modelId,
        tokenType: 'REQUESTS',
        remainingFraction,
        resetTime: tomorrow,
      });
      // Each login's own read: the gateway reads its logins at once, in no set order.
      harness.fake().enqueueFor('retrieveUserQuota', 'Bearer access-work', {
        body: { buckets: [bucket('gemini-2.5-pro', 0.5), bucket('gemini-3.8-flash', 0)] },
      });
      harness.fake().enqueueFor('retrieveUserQuota', 'Bearer access-home', {
        body: { buckets: [bucket('gemini-2.5-pro', 0.5), bucket('gemini-3.8-flash', 0.9)] },
      });
      await twoLogins({ ACCOUNT_USAGE_REFRESH_INTERVAL: '5m' });
      await eventually(async () => (await accountEntry('home')).source === 'usage_endpoint');
      expect((await accountEntry('work')).windows).toContainEqual(
        expect.objectContaining({ name: 'gemini-3.8-flash', model: 'gemini-3.8-flash', used_ratio: 1 }),
      );
      for (const [model, name] of [
        ['gemini-3.5-flash', 'base'],
        ['gemini-3-flash', 'legacy'],
      ])
        expect((await post(chatTurn(model, name))).status).toBe(200);
      expect(generateCalls()).toEqual(['Bearer access-home gemini-3-flash', 'Bearer access-home gemini-3-flash']);
      // Another bucket of the login still serves.
      expect((await post(chat('pro'))).status).toBe(200);
      expect(generateCalls().at(-1)).toBe('Bearer access-work gemini-2.5-pro');
    });

    it('sends no turn of another id of the bucket to a login after a quota error of one id', async () => {
      await twoLogins();
      harness.fake().enqueue('generateContent', quotaSpent(600));
      expect((await post(chatTurn('gemini-3.8-flash', 'latest'))).status).toBe(200);
      expect((await post(chatTurn('gemini-3.5-flash', 'base'))).status).toBe(200);
      expect(generateCalls()).toEqual([
        'Bearer access-work gemini-3.8-flash',
        'Bearer access-home gemini-3.8-flash',
        'Bearer access-home gemini-3-flash',
      ]);
      // The rest names the id the turn asked for; the login's view shows that id's window spent.
      expect(gateway!.logs.records('account_model_resting')).toEqual([
        expect.objectContaining({ account: 'work', model: 'gemini-3.8-flash' }),
      ]);
      expect(await stateOf('work')).toBe('ready');
    });
  });

  it('moves a turn to another login when Code Assist says the login has no such model (no preview access)', async () => {
    await start();
    const notFound = { status: 404, body: errorFrame(404, 'NOT_FOUND', 'Requested entity was not found.') };
    harness.fake().enqueue('generateContent', notFound);
    const response = await post(chat('preview'));
    expect(response.status).toBe(200);
    expect(usedTokens()).toEqual(['Bearer access-work', 'Bearer access-home']);
    // The chat's next turn stays on the login that served it.
    expect((await post(chat('preview', 2))).status).toBe(200);
    expect(usedTokens().at(-1)).toBe('Bearer access-home');
    expect(await stateOf('work')).toBe('ready');
  });

  it('answers 429 naming the model, with the earliest reset, when every login spent its quota for it', async () => {
    await start();
    harness.fake().enqueue('generateContent', quotaSpent(900), quotaSpent(300), quotaSpent(1200));
    expect((await post(chat('one'))).status).toBe(429);
    expect((await post(chat('two'))).status).toBe(429);
    const last = await post(chat('three'));
    expect(last.status).toBe(429);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(295);
    expect(Number(last.headers.get('retry-after'))).toBeLessThanOrEqual(300);
    expect(((await last.json()) as Json).error).toMatchObject({
      code: 'usage_limit_reached',
      message: expect.stringContaining('usage limit for gemini-2.5-pro; retry in 5 min, or choose another model'),
    });
    expect(usedTokens()).toHaveLength(3);
    expect((await post(chatTurn('gemini-2.5-flash', 'other-model', 1))).status).toBe(200);
    expect(usedTokens()).toHaveLength(4);
  });

  it('rests the model for ACCOUNT_COOLDOWN_DEFAULT when its quota error names no reset, and tells the client that wait', async () => {
    await start({ ACCOUNT_COOLDOWN_DEFAULT: '20m' });
    freezeAccountClock(gateway!);
    const noReset = {
      status: 429,
      body: errorFrame(429, 'RESOURCE_EXHAUSTED', 'quota', [errorInfo('QUOTA_EXHAUSTED')]),
    };
    harness.fake().enqueue('generateContent', noReset, noReset);
    const response = await post(chat('no-reset'));
    expect(response.status).toBe(429);
    expect(usedTokens()).toEqual(['Bearer access-work', 'Bearer access-home']);
    expect(response.headers.get('retry-after')).toBe('1200');
    expect(response.headers.get('x-should-retry')).toBe('false');
    expect(((await response.json()) as Json).error.message).toContain('retry in 20 min');
    // The model rests that long on both logins: 19 minutes on, the chat's next turn still leaves
    // home (where it moved) for spare.
    advanceAccountClock(gateway!, 19 * 60_000);
    expect((await post(chat('no-reset', 2))).status).toBe(200);
    expect(usedTokens().at(-1)).toBe('Bearer access-spare');
  });

  it('answers a model short of capacity for everyone with 503 after the retries, resting no login', async () => {
    await start();
    const busy = {
      status: 429,
      body: errorFrame(429, 'RESOURCE_EXHAUSTED', 'busy', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'MODEL_CAPACITY_EXHAUSTED' },
      ]),
    };
    harness.fake().enqueue('generateContent', busy, busy, busy);
    const response = await post(chat('busy'));
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('30');
    expect(((await response.json()) as Json).error).toMatchObject({
      type: 'upstream_error',
      code: 'model_at_capacity',
      message: expect.stringContaining('choose another model from GET /v1/models'),
    });
    expect(usedTokens()).toEqual(['Bearer access-work', 'Bearer access-work', 'Bearer access-work']);
    for (const alias of ALIASES) expect(await stateOf(alias)).toBe('ready');
    expect((await accountEntry('work')).windows).toEqual([]);
  });

  it('waits out a short "exhausted your capacity" 429 and retries it as the Gemini CLI does, resting no model', async () => {
    await start();
    // The waits of the turn's retries, recorded instead of slept.
    const slept: number[] = [];
    gateway!.app.get<RetryClock>(RETRY_CLOCK, { strict: false }).sleep = async (ms) => void slept.push(ms);
    harness.fake().enqueue('generateContent', {
      status: 429,
      body: errorFrame(
        429,
        'RESOURCE_EXHAUSTED',
        'You have exhausted your capacity on this model. Your quota will reset after 5s.',
        [errorInfo('QUOTA_EXHAUSTED'), retryInfo('5.1s')],
      ),
    });
    const response = await post(chat('capacity'));
    expect(response.status).toBe(200);
    // Retried in place after the upstream's delay, the model not rested on the login.
    expect(slept).toEqual([5100]);
    expect(usedTokens()).toEqual(['Bearer access-work', 'Bearer access-work']);
    expect((await accountEntry('work')).windows).toEqual([]);
    for (const alias of ALIASES) expect(await stateOf(alias)).toBe('ready');
    expect((await post(chat('capacity', 2))).status).toBe(200);
    expect(usedTokens().at(-1)).toBe('Bearer access-work');
  });

  it('says in the message of a moved 429 when to retry, as its Retry-After does', async () => {
    await start();
    // A rate limit with a 40 s retry delay: above the in-place retry cap, so the turn moves once and meets it again.
    const limited = { status: 429, body: errorFrame(429, 'RESOURCE_EXHAUSTED', 'quota', [retryInfo('40s')]) };
    harness.fake().enqueue('generateContent', limited, limited);
    const response = await post(chat('moved'));
    expect(response.status).toBe(429);
    expect(usedTokens()).toEqual(['Bearer access-work', 'Bearer access-home']);
    expect(response.headers.get('retry-after')).toBe('40');
    expect(((await response.json()) as Json).error).toEqual({
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      param: null,
      message: 'provider_b: the upstream is rate limiting this Gemini CLI login; retry in 40 s',
    });
  });

  it('takes a dead login out until its file is rewritten', async () => {
    writeLogin('work', { expiryDateMs: Date.now() - 60_000 });
    await start();
    harness.fake().enqueue('token', { status: 400, body: { error: 'invalid_grant' } });
    expect((await post(chat('dead'))).status).toBe(200);
    expect(usedTokens()).toEqual(['Bearer access-home']);
    expect(await stateOf('work')).toBe('login_dead');
    writeLogin('work');
    await eventually(async () => (await stateOf('work')) === 'ready');
  });

  it("brings a family's only login the API refused back at its next answered turn", async () => {
    await start({ PROVIDER_B_ACCOUNTS: `work=${path.join(loginDir('work'), 'oauth_creds.json')}` });
    // A 401, the forced refresh (granted), a 401 again: the API refused the login.
    const unauthorized = { status: 401, body: errorFrame(401, 'UNAUTHENTICATED') };
    harness.fake().enqueue('generateContent', unauthorized, unauthorized);
    expect((await post(chat('refused'))).status).toBe(403);
    expect(await stateOf('work')).toBe('login_dead');
    expect((await post(chat('answered'))).status).toBe(200);
    expect(await stateOf('work')).toBe('ready');
    expect(gateway!.logs.records('account_state').map(({ from, state, reason }) => ({ from, state, reason }))).toEqual([
      { from: 'ready', state: 'login_dead', reason: 'login_refused' },
      { from: 'login_dead', state: 'ready', reason: undefined },
    ]);
  });

  it("names the CLI's default login's one fix everywhere: `gemini`, on its refused refresh, its state change and the 403", async () => {
    // `gemini` alone writes ~/.gemini/oauth_creds.json: the login nothing configures.
    const home = harness.home();
    writeCredsFile(path.join(home, '.gemini'), {
      accessToken: 'access-default',
      refreshToken: 'refresh-default',
      expiryDateMs: Date.now() - 60_000,
    });
    gateway = await startGateway({
      HOME: home,
      GATEWAY_PROVIDERS: 'provider_b',
      PROVIDER_B_URL: harness.fake().baseUrl,
      PROVIDER_B_TOKEN_URL: harness.fake().tokenUrl,
      PROVIDER_B_PROJECT: 'test-project',
    });
    harness.fake().enqueue('token', { status: 400, body: { error: 'invalid_grant' } });
    const refused = await post(chat('default'));
    expect(refused.status).toBe(403);
    const fix = 'run `gemini` on the gateway\'s machine and choose "Login with Google"';
    expect(((await refused.json()) as Json).error.message).toContain(fix);
    const lines = [
      ...gateway.logs.records('provider_b_auth_refresh_failed'),
      ...gateway.logs.records('account_state').filter((line) => line.state === 'login_dead'),
    ];
    expect(lines.map((line) => [line.event, line.fix])).toEqual([
      ['provider_b_auth_refresh_failed', fix],
      ['account_state', fix],
    ]);
  });

  it('keeps a login whose token endpoint failed for a moment: the turn is retried, no login is taken out', async () => {
    writeLogin('work', { expiryDateMs: Date.now() - 60_000 });
    await start();
    harness.fake().enqueue('token', { status: 503, body: { error: 'backend_error' } });
    expect((await post(chat('blip'))).status).toBe(200);
    expect(usedTokens()).toEqual(['Bearer fake-access-1']);
    for (const alias of ALIASES) expect(await stateOf(alias)).toBe('ready');
    // Its later turns stay on it, on the refreshed token.
    expect((await post(chat('blip', 2))).status).toBe(200);
    expect(usedTokens()).toEqual(['Bearer fake-access-1', 'Bearer fake-access-1']);
    expect(harness.fake().requests('token')).toHaveLength(2);
  });

  it('leaves a login Google asks to validate usable: 403 upstream_project_required naming the fix, and its next turn reaches the upstream', async () => {
    await start({
      PROVIDER_B_ACCOUNTS: `work=${path.join(loginDir('work'), 'oauth_creds.json')},home=${path.join(loginDir('home'), 'oauth_creds.json')}`,
    });
    // Google's answer to an account it wants verified in a browser: the token itself is fine.
    const validationUrl =
      'https://accounts.google.com/signin/continue?sarp=1&scc=1&plt=AKgnsbsQ0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2yZ';
    harness.fake().enqueue('generateContent', {
      status: 403,
      body: errorFrame(403, 'PERMISSION_DENIED', 'Verify your account to continue.', [
        errorInfo('VALIDATION_REQUIRED'),
        helpLinks(validationUrl, 'https://support.google.com/accounts?p=al_alert'),
      ]),
    });
    const refused = await post(chat('validate'));
    expect(refused.status).toBe(403);
    const error = ((await refused.json()) as Json).error;
    expect(error).toMatchObject({ type: 'permission_error', code: 'upstream_project_required' });
    expect(error.message).toMatch(/^provider_b: Google asks this account to be validated: open the Gemini CLI/);
    expect(JSON.stringify(error)).not.toMatch(/Verify your account|accounts\.google/);
    // Not a login to renew, nor one to move away from: validating in a browser leaves the file as it is.
    expect(usedTokens()).toEqual(['Bearer access-work']);
    expect(await stateOf('work')).toBe('ready');
    expect(gateway!.logs.records('provider_b_login_refused')).toEqual([
      expect.objectContaining({
        reason: 'provider_b_validation_required',
        fix: expect.stringContaining('gemini'),
        link: 'https://accounts.google.com/signin/continue',
      }),
    ]);
    expect((await post(chat('validate', 2))).status).toBe(200);
    expect(usedTokens()).toEqual(['Bearer access-work', 'Bearer access-work']);
  });

  it('refreshes an idle login before its token expires', async () => {
    writeLogin('spare', { expiryDateMs: Date.now() + 120_000 });
    await start({ ACCOUNT_REFRESH_INTERVAL: '200ms' });
    const file = path.join(loginDir('spare'), 'oauth_creds.json');
    await eventually(() => JSON.parse(fs.readFileSync(file, 'utf8')).access_token !== 'access-spare');
    expect(
      harness
        .fake()
        .requests('token')
        .map((request) => request.body.refresh_token),
    ).toEqual(['refresh-spare']);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).refresh_token).toBe('refresh-spare');
    expect(usedTokens()).toEqual([]);
  });

  it('never moves a streamed turn once output has begun; the model still rests on that login for later turns', async () => {
    await start();
    harness.fake().enqueue('streamGenerateContent', {
      frames: [
        { json: textFrame('partial') },
        { json: errorFrame(429, 'RESOURCE_EXHAUSTED', 'quota', [retryInfo('600s')]) },
      ],
    });
    const response = await post({ ...chat('streamed'), stream: true });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('partial');
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(harness.fake().requests('streamGenerateContent')).toHaveLength(1);
    expect((await accountEntry('work')).windows).toEqual([expect.objectContaining({ used_ratio: 1 })]);
    expect((await post({ ...chat('streamed'), stream: true })).status).toBe(200);
    expect(harness.fake().requests('streamGenerateContent')[1].headers.authorization).not.toBe('Bearer access-work');
  });
});
