import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { accountState, advanceAccountClock, chatTurn } from './support/accounts';
import { postChatBody } from './support/chat-sse';
import { closedLoopbackPort } from './support/closed-port';
import { ConnectProxy } from './support/connect-proxy';
import { eventually } from './support/poll';
import { metricValue } from './support/prometheus-text';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { formatWait } from '../src/core/error-codes';
import { API_ERRORS, FakeAnthropicApi, textReply } from './support/fake-anthropic-api';
import { realClaudeGatewaySettings } from './support/real-claude';

type Json = Record<string, any>;

/**
 * Several Claude Code logins (docs/accounts.md) with the REAL `claude` binary (2.1.332) against the
 * loopback fake of the Anthropic API. Two logins are token files (CLAUDE_CODE_OAUTH_TOKEN), one is
 * a config directory with its `.credentials.json` (CLAUDE_CONFIG_DIR); each carries a token
 * `fake-account-<alias>`, which is how the fake tells the accounts apart. The gateway's own
 * environment also holds a CLAUDE_CODE_OAUTH_TOKEN (realClaudeEnvironment): listed logins must
 * override it, or every request would arrive with the wrong token.
 */
const ALIASES = ['one', 'two', 'three'] as const;
type Alias = (typeof ALIASES)[number];

jest.setTimeout(60_000);

describe('several provider_c logins (account pool, docs/accounts.md)', () => {
  let api: FakeAnthropicApi;
  let home: string;
  let gateway: TestGateway | undefined;

  beforeAll(async () => {
    api = await FakeAnthropicApi.start();
  });
  afterAll(async () => {
    await api.close();
  });
  beforeEach(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-accounts-'));
    for (const alias of ALIASES) writeLogin(alias);
    api.script([]);
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    fs.rmSync(home, { recursive: true, force: true });
  });

  /** `three` is a config directory; the others are token files. */
  const loginPath = (alias: Alias) => path.join(home, alias === 'three' ? 'three-config' : `${alias}.token`);
  function writeLogin(alias: Alias, token = `fake-account-${alias}`, expiresAt = Date.now() + 24 * 3600_000): void {
    if (alias !== 'three') {
      fs.writeFileSync(loginPath(alias), `${token}\n`, { mode: 0o600 });
      return;
    }
    fs.mkdirSync(loginPath(alias), { recursive: true });
    const credentials = {
      claudeAiOauth: {
        accessToken: token,
        refreshToken: 'fake-account-three-refresh',
        expiresAt,
        scopes: ['user:inference'],
      },
    };
    fs.writeFileSync(path.join(loginPath(alias), '.credentials.json'), JSON.stringify(credentials), { mode: 0o600 });
  }

  async function start(settings: Record<string, string> = {}): Promise<TestGateway> {
    gateway = await startGateway({
      ...realClaudeGatewaySettings(api.baseUrl, home),
      PROVIDER_C_ACCOUNTS: ALIASES.map((alias) => `${alias}=${loginPath(alias)}`).join(','),
      PROVIDER_C_TOKEN_URL: `${api.baseUrl}/v1/oauth/token`,
      ...settings,
    });
    return gateway;
  }

  const post = (body: Json) => postChatBody(gateway!, body);
  const chat = (name: string, turns = 1): Json => chatTurn('claude-fable-5', name, turns);
  /** The account of every Messages API call so far, in order. */
  const usedAccounts = () =>
    api.messages().map((request) => request.account ?? `other:${String(request.hadCredential)}`);
  const stateOf = (alias: Alias) => accountState(gateway!, 'provider_c', alias);
  const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

  it("keeps a chat's turns on one login, spreads new chats, and gives each child its own login", async () => {
    await start();
    for (let turn = 1; turn <= 2; turn++) expect((await post(chat('sticky', turn))).status).toBe(200);
    expect(usedAccounts()).toEqual(['one', 'one']);
    for (const name of ['second', 'third']) expect((await post(chat(name))).status).toBe(200);
    // The config directory (`three`) is used through CLAUDE_CONFIG_DIR as a token file is through CLAUDE_CODE_OAUTH_TOKEN.
    expect(new Set(usedAccounts().slice(2))).toEqual(new Set(['two', 'three']));
  });

  it('docs/upstream/provider-c.md §11.6 gives each child its login even when the gateway environment holds other Claude credentials', async () => {
    await start({
      ANTHROPIC_AUTH_TOKEN: 'fake-account-api-token',
      CLAUDE_CODE_USE_BEDROCK: '1',
      AWS_BEARER_TOKEN_BEDROCK: 'fake-account-bedrock',
      ANTHROPIC_BEDROCK_BASE_URL: api.baseUrl,
    });
    for (const name of ['first', 'second', 'third']) expect((await post(chat(name))).status).toBe(200);
    expect(new Set(usedAccounts())).toEqual(new Set(ALIASES));
  });

  it('cools a login on a usage limit, answers from another, and the cooldown ends by itself', async () => {
    await start();
    api.script([API_ERRORS.limit(inSeconds(600)), textReply('from another login')]);
    const response = await post(chat('limited'));
    expect(response.status).toBe(200);
    expect(((await response.json()) as Json).choices[0].message.content).toBe('from another login');
    expect(usedAccounts()).toEqual(['one', 'two']);
    expect(await stateOf('one')).toBe('cooling');
    advanceAccountClock(gateway!, 601_000);
    await eventually(async () => (await stateOf('one')) === 'ready');
  });

  it("answers 429 with the earliest reset when every login is cooling, naming the last login's reset and cause, then without starting a child", async () => {
    await start();
    const lastReset = inSeconds(1200);
    const earliestReset = inSeconds(300);
    api.script([API_ERRORS.limit(inSeconds(900)), API_ERRORS.limit(earliestReset), API_ERRORS.limit(lastReset)]);
    // Retry-After counts down to the earliest reset from the moment of the answer, however long the turns took.
    const expectRetryAfterToEarliestReset = (answer: Response) => {
      const retryAfter = Number(answer.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(earliestReset - Math.ceil(Date.now() / 1000));
      expect(retryAfter).toBeLessThanOrEqual(300);
    };
    expect((await post(chat('first'))).status).toBe(429);
    // The last login cools on this turn: the pool's Retry-After, the CLI's own reset and its cause stay.
    const second = await post(chat('second'));
    expect(second.status).toBe(429);
    expectRetryAfterToEarliestReset(second);
    expect(((await second.json()) as Json).error).toEqual({
      type: 'rate_limit_error',
      code: 'usage_limit_reached',
      param: null,
      message: `provider_c: this Claude Code CLI login reached its usage limit (resets ${new Date(lastReset * 1000).toISOString()}); retry in ${formatWait(Number(second.headers.get('retry-after')))}, or add another login`,
    });
    const requestId = second.headers.get('x-request-id');
    expect(gateway!.logs.records('upstream_turn_failed').filter((line) => line.reqId === requestId)).toEqual([
      expect.objectContaining({
        account: 'three',
        error_code: 'usage_limit',
        upstream_status: 429,
        upstream_type: 'rate_limit_error',
        upstream_code: 'usage_limit_reached',
      }),
    ]);
    const last = await post(chat('third'));
    expect(last.status).toBe(429);
    expect(((await last.json()) as Json).error).toEqual({
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      param: null,
      message: `every provider_c login has reached its usage limit; retry in ${formatWait(Number(last.headers.get('retry-after')))}`,
    });
    expectRetryAfterToEarliestReset(last);
    expect(usedAccounts()).toEqual(['one', 'two', 'three']);
  });

  it('takes a login whose token is refused out until its file is rewritten, then starts its children with the new token', async () => {
    await start();
    // The CLI itself asks once more after a 401 (it may have refreshed its token meanwhile).
    api.script([API_ERRORS.unauthorized(), API_ERRORS.unauthorized(), textReply('ok')]);
    expect((await post(chat('dead'))).status).toBe(200);
    expect(usedAccounts()).toEqual(['one', 'one', 'two']);
    expect(await stateOf('one')).toBe('login_dead');
    writeLogin('one', 'fake-account-one-renewed');
    await eventually(async () => (await stateOf('one')) === 'ready');
    // New chats go to the least recently chosen login: `three` (never chosen), then `one`.
    for (const name of ['after-three', 'after-one']) expect((await post(chat(name))).status).toBe(200);
    expect(usedAccounts().slice(3)).toEqual(['three', 'one-renewed']);
  });

  it("brings the CLI's own login back at its next answered turn after one 401; the login report says the API refused it, not a refresh", async () => {
    // The CLI's own login (PROVIDER_C_ACCOUNTS unset): its token is CLAUDE_CODE_OAUTH_TOKEN, no login file.
    gateway = await startGateway({
      ...realClaudeGatewaySettings(api.baseUrl, home),
      ACCOUNT_USAGE_REFRESH_INTERVAL: '0',
    });
    const loginLines = () => gateway!.logs.records('login_state').filter((line) => line.account === 'default');
    await eventually(() => loginLines().length > 0, 30_000, 'the startup login report');
    // The CLI itself asks once more after a 401 before it gives up.
    api.script([API_ERRORS.unauthorized(), API_ERRORS.unauthorized(), textReply('back')]);
    const refused = await post(chat('refused'));
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as Json).error.code).toBe('upstream_login_required');
    expect(await accountState(gateway, 'provider_c', 'default')).toBe('login_dead');
    // The report's next check tells it as the API's refusal of a login the gateway never refreshes.
    await eventually(() => loginLines().length > 1, 30_000, 'the login report of the refused login');
    expect(loginLines()[1]).toMatchObject({
      level: 40,
      provider: 'provider_c',
      state: 'login_refused',
      fix: expect.stringContaining('`/login`'),
    });
    expect(loginLines()[1].msg).toContain('login refused');
    // The CLI's version its check found still goes with the line the refusal changed.
    expect(loginLines()[0].cli_version).toEqual(expect.any(String));
    expect(loginLines()[1].cli_version).toBe(loginLines()[0].cli_version);
    expect(JSON.stringify(gateway.logs.records())).not.toContain('refresh_refused');

    // The family's only login is still asked, and its answer brings it back: once, as the pool's line says.
    const answered = await post(chat('answered'));
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as Json).choices[0].message.content).toBe('back');
    expect(await accountState(gateway, 'provider_c', 'default')).toBe('ready');
    expect(
      gateway.logs.records('account_state').map(({ level, from, state, reason }) => ({ level, from, state, reason })),
    ).toEqual([
      { level: 40, from: 'ready', state: 'login_dead', reason: 'login_refused' },
      { level: 30, from: 'login_dead', state: 'ready', reason: undefined },
    ]);
    // The report's next check agrees: usable again, in its line and its gauge.
    await eventually(() => loginLines().length > 2, 30_000, 'the login report of the login back');
    expect(loginLines()[2]).toMatchObject({ level: 30, state: 'usable' });
    expect(
      await metricValue(gateway, 'gateway_chat_api_login_state', {
        provider: 'provider_c',
        account: 'default',
        state: 'usable',
      }),
    ).toBe(1);
    expect((await post(chat('later'))).status).toBe(200);
    expect(gateway.logs.records('account_state')).toHaveLength(2);
  });

  it("refreshes an idle config directory's login before it expires, and its next child uses the new token", async () => {
    writeLogin('three', 'fake-account-three', Date.now() + 120_000);
    await start({ ACCOUNT_REFRESH_INTERVAL: '200ms' });
    const file = path.join(loginPath('three'), '.credentials.json');
    await eventually(
      () => JSON.parse(fs.readFileSync(file, 'utf8')).claudeAiOauth.accessToken !== 'fake-account-three',
    );
    expect(api.tokenGrants()).toEqual([
      {
        grant_type: 'refresh_token',
        refresh_token: 'fake-account-three-refresh',
        client_id: '9d1c250a-e61b-44d9-88ed-5944d1962f5e',
        scope: 'user:inference',
      },
    ]);
    const renewed = JSON.parse(fs.readFileSync(file, 'utf8')).claudeAiOauth;
    expect(renewed).toMatchObject({
      accessToken: 'fake-account-three-refresh-renewed',
      refreshToken: 'fake-account-three-refresh-next',
      scopes: ['user:inference', 'user:profile'],
    });
    expect(renewed.expiresAt).toBeGreaterThan(Date.now() + 7 * 3600_000);
    expect(usedAccounts()).toEqual([]);
    // Three chats spread over the three logins; the config directory's child reads the renewed file.
    for (const name of ['a', 'b', 'c']) expect((await post(chat(name))).status).toBe(200);
    expect(usedAccounts()).toEqual(['one', 'two', 'three-refresh-renewed']);
  });

  it("refreshes an idle config directory's login through the gateway's egress proxy (HTTP_PROXY), like its other upstream calls", async () => {
    const proxy = await ConnectProxy.start();
    try {
      writeLogin('three', 'fake-account-three', Date.now() + 120_000);
      // No usage reads: the refresh is the only call the gateway itself makes here.
      await start({
        ACCOUNT_REFRESH_INTERVAL: '200ms',
        ACCOUNT_USAGE_REFRESH_INTERVAL: '0',
        HTTP_PROXY: proxy.url,
        NO_PROXY: '',
      });
      await eventually(() => api.tokenGrants().length === 1);
      expect(proxy.connections()).toEqual([
        expect.objectContaining({ method: 'CONNECT', target: `127.0.0.1:${new URL(api.baseUrl).port}` }),
      ]);
    } finally {
      await gateway?.close();
      gateway = undefined;
      await proxy.close();
    }
  });

  describe("an idle config directory's refresh that fails: one warn line, naming the fix", () => {
    /** The first `event` line of the failed check, and every line of that login at warn or above up to it. */
    async function failedCheck(
      event = 'account_refresh_failed',
    ): Promise<{ line: Record<string, unknown>; warnings: Record<string, unknown>[] }> {
      await eventually(() => gateway!.logs.records(event).length > 0);
      const records = gateway!.logs.records();
      const upTo = records.findIndex((record) => record.event === event);
      const warnings = records
        .slice(0, upTo + 1)
        .filter((record) => record.account === 'three' && Number(record.level) >= 40);
      return { line: records[upTo], warnings };
    }

    afterEach(() => api.tokenFailure(undefined));

    it('an unreachable token endpoint: the line names PROVIDER_C_TOKEN_URL, the network and the proxy, not a new login', async () => {
      writeLogin('three', 'fake-account-three', Date.now() + 120_000);
      await start({
        ACCOUNT_REFRESH_INTERVAL: '200ms',
        ACCOUNT_USAGE_REFRESH_INTERVAL: '0',
        PROVIDER_C_TOKEN_URL: `http://127.0.0.1:${await closedLoopbackPort()}/v1/oauth/token`,
      });
      const { line, warnings } = await failedCheck();
      expect(line).toMatchObject({ level: 40, provider: 'provider_c', account: 'three', reason: 'upstream' });
      expect(line.fix).toBe(
        'the token endpoint (PROVIDER_C_TOKEN_URL) did not answer: check the network and HTTPS_PROXY / NO_PROXY; not a login problem: its children use the current token until it expires',
      );
      expect(warnings).toEqual([line]);
      expect(await stateOf('three')).toBe('ready');
    });

    it('a token endpoint answering 503: the line names PROVIDER_C_TOKEN_URL and its status; the family line is info', async () => {
      writeLogin('three', 'fake-account-three', Date.now() + 120_000);
      api.tokenFailure(503);
      await start({ ACCOUNT_REFRESH_INTERVAL: '200ms', ACCOUNT_USAGE_REFRESH_INTERVAL: '0' });
      const { line, warnings } = await failedCheck();
      const fix =
        'the token endpoint (PROVIDER_C_TOKEN_URL) answered HTTP 503 without a token, not a refusal of the login: nothing to do if it passes, else check the endpoint, the network and HTTPS_PROXY / NO_PROXY; the refresh is tried again at the next check (ACCOUNT_REFRESH_INTERVAL)';
      expect(line).toMatchObject({ level: 40, provider: 'provider_c', account: 'three', reason: 'upstream', fix });
      expect(gateway!.logs.records('provider_c_refresh_failed')[0]).toMatchObject({ level: 30, status: 503, fix });
      expect(warnings).toEqual([line]);
      expect(await stateOf('three')).toBe('ready');
    });

    it("a refused refresh token: the login's state line is the warning, naming its own login command", async () => {
      writeLogin('three', 'fake-account-three', Date.now() + 120_000);
      api.tokenFailure(400);
      await start({ ACCOUNT_REFRESH_INTERVAL: '200ms', ACCOUNT_USAGE_REFRESH_INTERVAL: '0' });
      const { line, warnings } = await failedCheck('account_state');
      expect(line).toMatchObject({ level: 40, provider: 'provider_c', account: 'three', state: 'login_dead' });
      expect(line.fix).toContain(`CLAUDE_CONFIG_DIR=${loginPath('three')} claude`);
      expect(gateway!.logs.records('provider_c_refresh_failed')[0]).toMatchObject({
        level: 30,
        status: 400,
        fix: line.fix,
      });
      expect(warnings).toEqual([line]);
    });
  });

  it('never moves a streamed turn once output has begun', async () => {
    await start();
    api.script([
      {
        type: 'stream',
        blocks: [{ kind: 'text', deltas: ['partial'] }],
        failMidway: { errorType: 'rate_limit_error', message: 'limit' },
      },
    ]);
    const response = await post({ ...chat('streamed'), stream: true });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('partial');
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    // The CLI may repeat its own request; the gateway never moved the turn to another login.
    expect(new Set(usedAccounts())).toEqual(new Set(['one']));
  });
});
