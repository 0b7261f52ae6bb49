import * as fs from 'node:fs';
import * as path from 'node:path';
import { accountState, advanceAccountClock, chatTurn } from './support/accounts';
import { postChatBody } from './support/chat-sse';
import type { TestGateway } from './support/create-test-app';
import { eventually } from './support/poll';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';
import { startGateway } from './support/create-test-app';
import { useFakeProviderB } from './support/provider-b-harness';
import { errorFrame, retryInfo, textFrame, writeCredsFile } from './support/provider-b-fixtures';

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

  it('keeps the turns of one chat on one login and spreads new chats over the others', async () => {
    await start();
    for (let turn = 1; turn <= 3; turn++) expect((await post(chat('sticky', turn))).status).toBe(200);
    expect(new Set(usedTokens())).toEqual(new Set(['Bearer access-work']));
    for (const name of ['second', 'third']) expect((await post(chat(name))).status).toBe(200);
    expect(new Set(usedTokens().slice(3))).toEqual(new Set(['Bearer access-home', 'Bearer access-spare']));
  });

  it('cools a login on a spent quota, retries the turn on another, and the cooldown ends by itself', async () => {
    await start();
    harness.fake().enqueue('generateContent', quotaSpent(600));
    const response = await post(chat('limited'));
    expect(response.status).toBe(200);
    expect(usedTokens()).toEqual(['Bearer access-work', 'Bearer access-home']);
    expect(await stateOf('work')).toBe('cooling');
    const text = await scrapeMetrics(gateway!);
    expect(
      sampleValue(text, 'gateway_chat_api_account_cooling_until_seconds', { provider: 'provider_b', account: 'work' }),
    ).toBeGreaterThan(Date.now() / 1000 + 590);
    advanceAccountClock(gateway!, 601_000);
    await eventually(async () => (await stateOf('work')) === 'ready');
  });

  it('answers 429 with the earliest reset when every login is cooling', async () => {
    await start();
    harness.fake().enqueue('generateContent', quotaSpent(900), quotaSpent(300), quotaSpent(1200));
    expect((await post(chat('one'))).status).toBe(429);
    expect((await post(chat('two'))).status).toBe(429);
    const last = await post(chat('three'));
    expect(last.status).toBe(429);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(295);
    expect(Number(last.headers.get('retry-after'))).toBeLessThanOrEqual(300);
    expect(usedTokens()).toHaveLength(3);
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

  it('never moves a streamed turn once output has begun; the login still cools for later turns', async () => {
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
    expect(await stateOf('work')).toBe('cooling');
  });
});
