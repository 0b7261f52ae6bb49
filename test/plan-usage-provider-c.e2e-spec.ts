import { advanceAccountClock } from './support/accounts';
import { postChat } from './support/chat-sse';
import { runGateway } from './support/child-gateway';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { API_ERRORS, usageAnswer, useFakeAnthropicApi } from './support/fake-anthropic-api';
import { eventually } from './support/poll';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';
import { FAKE_OAUTH_TOKEN, realClaudeGatewaySettings } from './support/real-claude';

type Json = Record<string, any>;

/**
 * What each Claude Code login has left (docs/accounts.md "What each login has left, and paid
 * usage"): the loopback fake of the Anthropic API answers `GET /api/oauth/usage` as the one the
 * CLI's `/usage` reads; the gateway reads it with the login's own OAuth token at startup (and every
 * ACCOUNT_USAGE_REFRESH_INTERVAL) and in the setup check, never per request. The children are the
 * REAL Claude Code 2.1.332, so a turn the gateway lets through really runs.
 */

jest.setTimeout(60_000);

const SECRET = 'plan-usage-c-secret';
const AUTH = { authorization: `Bearer ${SECRET}` };
const LOGIN = { provider: 'provider_c', account: 'default' };

const { api, home } = useFakeAnthropicApi('pc-plan-usage-');
let gateway: TestGateway | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

/** A gateway on the real claude reading the usage endpoint at startup (every 5 min after). */
async function start(settings: Record<string, string> = {}): Promise<TestGateway> {
  gateway = await startGateway({
    ...realClaudeGatewaySettings(api().baseUrl, home()),
    GATEWAY_BEARER_SECRET: SECRET,
    ACCOUNT_USAGE_REFRESH_INTERVAL: '5m',
    ...settings,
  });
  await eventually(
    () => gateway!.logs.records('plan_usage').length + gateway!.logs.records('plan_usage_read_failed').length > 0,
  );
  return gateway;
}

async function accountRow(): Promise<Json> {
  const response = await fetch(`${gateway!.url}/v1/accounts`, { headers: AUTH });
  return ((await response.json()) as Json).data.find((row: Json) => row.provider === 'provider_c');
}

/** `answer` with `extra_usage.disabled_reason` set, as the endpoint gives it when extra usage is off. */
function withDisabledReason(answer: { body: unknown }, reason: string): { body: unknown } {
  const body = answer.body as Json;
  return { body: { ...body, extra_usage: { ...body.extra_usage, disabled_reason: reason } } };
}

describe('provider_c plan usage (GET /api/oauth/usage)', () => {
  it('reads a spent five-hour window with extra usage enabled at startup into GET /v1/accounts and /metrics; under plan_only the first turn is refused with no claude run', async () => {
    const resetsAt = Date.now() + 3_600_000;
    api().usage(usageAnswer(100, resetsAt, true));
    await start();

    const [read] = api().usageReads();
    expect(read).toMatchObject({ method: 'GET', hadCredential: true, beta: 'oauth-2025-04-20' });
    expect(read.userAgent).toMatch(/^claude-cli\/\d+\.\d+\.\d+ \(external, sdk-cli\)$/);
    const row = await accountRow();
    expect(row).toMatchObject({
      account: 'default',
      source: 'usage_endpoint',
      plan_spent: true,
      paid_usage: { kind: 'extra_usage', available: true, balance: '48.80 USD' },
    });
    expect(row.windows).toContainEqual(expect.objectContaining({ name: 'five_hour', used_ratio: 1 }));
    expect(row.windows).toContainEqual(expect.objectContaining({ name: 'seven_day', used_ratio: 0.2 }));

    const text = await scrapeMetrics(gateway!, AUTH);
    expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', LOGIN)).toBe(1);
    expect(sampleValue(text, 'gateway_chat_api_account_paid_usage_available', LOGIN)).toBe(1);
    expect(sampleValue(text, 'gateway_chat_api_account_quota_used_ratio', { ...LOGIN, window: 'five_hour' })).toBe(1);
    const logged = gateway!.logs.records('plan_usage');
    expect(logged).toContainEqual(expect.objectContaining({ ...LOGIN, plan_spent: true, paid_available: true }));
    expect(JSON.stringify(logged)).not.toContain(FAKE_OAUTH_TOKEN);

    const refused = await postChat(gateway!, {}, undefined, AUTH);
    expect(refused.status).toBe(429);
    const error = ((await refused.json()) as { error: Record<string, string> }).error;
    expect(error).toMatchObject({ type: 'insufficient_quota', code: 'paid_usage_not_allowed' });
    expect(gateway!.logs.records('provider_c_process_start')).toEqual([]);
    expect(api().messages()).toEqual([]);
    // Read at startup only: the turn asked nothing of the usage endpoint.
    expect(api().usageReads()).toHaveLength(1);

    // Past the five-hour window's reset, before any new read: the window reads as reset and the
    // plan as not spent, in the JSON and the gauges alike.
    advanceAccountClock(gateway!, 3_700_000);
    const after = await accountRow();
    expect(after).toMatchObject({ state: 'ready', rests_until: null, plan_spent: false });
    expect(after.windows).toContainEqual(
      expect.objectContaining({ name: 'five_hour', used_ratio: 0, resets_at: new Date(resetsAt).toISOString() }),
    );
    const later = await scrapeMetrics(gateway!, AUTH);
    expect(sampleValue(later, 'gateway_chat_api_account_plan_spent', LOGIN)).toBe(0);
    expect(sampleValue(later, 'gateway_chat_api_account_quota_used_ratio', { ...LOGIN, window: 'five_hour' })).toBe(0);
    expect(api().usageReads()).toHaveLength(1);
  });

  it('with extra usage disabled and the plan spent, the gateway refuses nothing: the turn runs and the upstream answers', async () => {
    api().usage(withDisabledReason(usageAnswer(100, Date.now() + 3_600_000, false), 'org_level_disabled'));
    await start();
    expect(await accountRow()).toMatchObject({
      plan_spent: true,
      paid_usage: { kind: 'extra_usage', available: false, disabled_reason: 'org_level_disabled' },
    });

    const served = await postChat(gateway!, {}, undefined, AUTH);
    expect(served.status).toBe(200);
    expect(gateway!.logs.records('provider_c_process_start')).toHaveLength(1);
    expect(api().messages()).toHaveLength(1);
  });

  it.each(['plan_only', 'allow'])(
    "extra usage enabled with its monthly limit used up is none to draw (ACCOUNT_PAID_USAGE=%s): GET /v1/accounts says what is left, the turn gets the upstream's usage limit (wait for the reset or add a login), and the login rests until the reset",
    async (setting) => {
      const resetsAt = Date.now() + 3_600_000;
      const base = usageAnswer(100, resetsAt, true).body as Json;
      api().usage({
        body: {
          ...base,
          extra_usage: { is_enabled: true, monthly_limit: 5000, used_credits: 5000, utilization: 100, currency: 'USD' },
        },
      });
      // What the API answers such a login: the plan rejected, and its extra usage with it.
      api().meter({ overage: { status: 'rejected', disabledReason: 'out_of_credits' } });
      api().script([API_ERRORS.limit(Math.floor(resetsAt / 1000))]);
      await start({ ACCOUNT_PAID_USAGE: setting });
      expect(await accountRow()).toMatchObject({
        state: 'ready',
        plan_spent: true,
        rests_until: null,
        paid_usage: { kind: 'extra_usage', available: false, balance: '0.00 USD', disabled_reason: 'out_of_credits' },
      });
      const text = await scrapeMetrics(gateway!, AUTH);
      expect(sampleValue(text, 'gateway_chat_api_account_paid_usage_available', LOGIN)).toBe(0);
      expect(gateway!.logs.records('plan_usage')).toContainEqual(
        expect.objectContaining({ ...LOGIN, plan_spent: true, paid_available: false }),
      );

      // Nothing can be billed, so the turn runs and the API refuses it on the spent plan.
      const refused = await postChat(gateway!, {}, undefined, AUTH);
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(3000);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      const { error } = (await refused.json()) as { error: Record<string, string> };
      expect(error).toMatchObject({ type: 'rate_limit_error', code: 'usage_limit_reached' });
      expect(error.message).toMatch(/reached its usage limit .*; retry in .*, or add another login$/);
      expect(error.message).not.toContain('ACCOUNT_PAID_USAGE');
      expect(gateway!.logs.records('provider_c_process_start')).toHaveLength(1);
      expect(api().messages()).toHaveLength(1);
      // The login rests until the reset, as on any spent plan with nothing behind it.
      expect((await accountRow()).state).toBe('cooling');
      const [cooled] = gateway!.logs.records('account_state');
      expect(cooled).toMatchObject({ ...LOGIN, state: 'cooling', reason: 'usage_limit' });
      expect(Date.parse(cooled.until as string)).toBeGreaterThan(Date.now() + 3_000_000);
      expect(Date.parse(cooled.until as string)).toBeLessThanOrEqual(resetsAt + 1000);
      expect(gateway!.logs.records('paid_usage_turn')).toEqual([]);
      await gateway!.close();
      gateway = undefined;

      const run = await runGateway(
        { ...realClaudeGatewaySettings(api().baseUrl, home()), ACCOUNT_PAID_USAGE: setting },
        ['--check'],
      );
      expect(run.stdout).toMatch(
        /^ {4}plan: five_hour 100 % used .*; plan spent; extra usage: not available, not in use, balance 0\.00 USD, out_of_credits -> the upstream refuses its turns until [^ ]+: the plan is spent and no paid usage is left to draw$/m,
      );
    },
  );

  it('a spent weekly Opus window with extra usage enabled holds only Opus: a Sonnet turn runs, an Opus turn is refused with no claude run; the setup check says so', async () => {
    const now = Date.now();
    const opusReset = now + 5 * 86_400_000;
    const window = (utilization: number, resetsAt: number) => ({
      utilization,
      resets_at: new Date(resetsAt).toISOString(),
    });
    api().usage({
      body: {
        five_hour: window(10, now + 3_600_000),
        seven_day: window(40, opusReset),
        seven_day_opus: window(100, opusReset),
        seven_day_sonnet: window(5, opusReset),
        extra_usage: { is_enabled: true, monthly_limit: 5000, used_credits: 0, utilization: 0, currency: 'USD' },
      },
    });
    await start();
    const row = await accountRow();
    expect(row).toMatchObject({ state: 'ready', plan_spent: false, rests_until: null });
    expect(row.windows).toContainEqual(
      expect.objectContaining({ name: 'seven_day_opus', used_ratio: 1, model: 'opus' }),
    );
    expect(row.windows).toContainEqual(expect.objectContaining({ name: 'seven_day_sonnet', model: 'sonnet' }));

    const sonnet = await postChat(gateway!, { model: 'claude-sonnet-5' }, undefined, AUTH);
    expect(sonnet.status).toBe(200);
    expect(api().messages()).toHaveLength(1);

    for (const model of ['claude-opus-4-8', 'opus']) {
      const opus = await postChat(gateway!, { model }, undefined, AUTH);
      expect(opus.status).toBe(429);
      const retryAfter = Number(opus.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(4 * 86_400);
      expect(retryAfter).toBeLessThanOrEqual(5 * 86_400);
      const { error } = (await opus.json()) as { error: Record<string, string> };
      expect(error).toMatchObject({ type: 'insufficient_quota', code: 'paid_usage_not_allowed' });
      expect(error.message).toContain(`the usage limit for ${model}`);
      expect(error.message).toContain('choose another model');
    }
    expect(gateway!.logs.records('provider_c_process_start')).toHaveLength(1);
    expect(api().messages()).toHaveLength(1);
    await gateway!.close();
    gateway = undefined;

    const run = await runGateway(realClaudeGatewaySettings(api().baseUrl, home()), ['--check']);
    expect(run.stdout).toMatch(
      /^ {4}plan: five_hour 10 % used .*seven_day_opus 100 % used \(7d, resets [^)]+\); seven_day_sonnet 5 % used .*extra usage: available, not in use, balance 50\.00 USD -> no new opus turn on this login until [^ ]+ \(ACCOUNT_PAID_USAGE=plan_only\)$/m,
    );
  });

  it('a spent weekly OAuth-apps window spends the whole plan: GET /v1/accounts and /metrics show it, and under plan_only a turn is refused until its reset with no claude run', async () => {
    const now = Date.now();
    const appsReset = now + 3 * 86_400_000;
    api().usage({
      body: {
        five_hour: { utilization: 10, resets_at: new Date(now + 3_600_000).toISOString() },
        seven_day: { utilization: 40, resets_at: new Date(appsReset).toISOString() },
        seven_day_oauth_apps: { utilization: 100, resets_at: new Date(appsReset).toISOString() },
        extra_usage: { is_enabled: true, monthly_limit: 5000, used_credits: 0, utilization: 0, currency: 'USD' },
      },
    });
    await start();
    const row = await accountRow();
    expect(row).toMatchObject({ source: 'usage_endpoint', plan_spent: true });
    expect(row.windows).toContainEqual(
      expect.objectContaining({ name: 'seven_day_oauth_apps', used_ratio: 1, model: null }),
    );
    const text = await scrapeMetrics(gateway!, AUTH);
    expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', LOGIN)).toBe(1);
    expect(
      sampleValue(text, 'gateway_chat_api_account_quota_used_ratio', { ...LOGIN, window: 'seven_day_oauth_apps' }),
    ).toBe(1);

    const refused = await postChat(gateway!, {}, undefined, AUTH);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(2 * 86_400);
    expect(retryAfter).toBeLessThanOrEqual(3 * 86_400);
    expect(((await refused.json()) as { error: Record<string, string> }).error).toMatchObject({
      type: 'insufficient_quota',
      code: 'paid_usage_not_allowed',
    });
    expect(gateway!.logs.records('provider_c_process_start')).toEqual([]);
    expect(api().messages()).toEqual([]);
  });

  it('passes on the reason extra usage is off only as one closed word: free text, an e-mail or a line break is left out of GET /v1/accounts and the log', async () => {
    const reason = 'disabled by admin victim.mark@example.org\n{"level":60,"event":"forged"}';
    api().usage(withDisabledReason(usageAnswer(100, Date.now() + 3_600_000, false), reason));
    await start();
    const response = await fetch(`${gateway!.url}/v1/accounts`, { headers: AUTH });
    const text = await response.text();
    const row = (JSON.parse(text) as Json).data.find((entry: Json) => entry.provider === 'provider_c');
    // Positive control: the read reached the row; only the reason is left out.
    expect(row).toMatchObject({
      source: 'usage_endpoint',
      paid_usage: { kind: 'extra_usage', available: false, disabled_reason: null },
    });
    expect(text).not.toContain('victim');
    expect(gateway!.logs.records('plan_usage')).toHaveLength(1);
    expect(gateway!.logs.text).not.toContain('victim');
  });

  it('a refused read logs plan_usage_read_failed once, with the status and no token', async () => {
    api().usage({ status: 403 });
    await start();
    const failed = gateway!.logs.records('plan_usage_read_failed');
    expect(failed).toEqual([expect.objectContaining({ ...LOGIN, reason: 'status 403' })]);
    expect(JSON.stringify(failed)).not.toContain(FAKE_OAUTH_TOKEN);
    expect((await accountRow()).source).toBeNull();
  });

  it('prints the plan and what the guard would do in the setup check', async () => {
    const resetsAt = Date.now() + 3_600_000;
    api().usage(usageAnswer(100, resetsAt, true));
    const run = await runGateway(realClaudeGatewaySettings(api().baseUrl, home()), ['--check']);
    expect(run.stdout).toMatch(
      /^ {4}plan: five_hour 100 % used \(5h, resets [^)]+\); seven_day 20 % used \(7d, resets [^)]+\); seven_day_sonnet 3 % used \(7d\); plan spent; extra usage: available, not in use, balance 48\.80 USD -> no new turn on this login until [^ ]+ \(ACCOUNT_PAID_USAGE=plan_only\)$/m,
    );
    expect(api().usageReads()).toHaveLength(1);
  });
});
