import * as path from 'node:path';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { runGateway } from './support/child-gateway';
import { providerBSettings } from './support/provider-b-fixtures';
import { useFakeProviderB } from './support/provider-b-harness';
import { quotaBody } from './support/fake-provider-b';
import { advanceAccountClock } from './support/accounts';
import { eventually } from './support/poll';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';

type Json = Record<string, any>;

const SECRET = 'plan-usage-b-secret';
const AUTH = { authorization: `Bearer ${SECRET}` };

/**
 * What each Gemini login has left (docs/accounts.md "What each login has left, and paid usage"):
 * the Code Assist fake answers `:retrieveUserQuota` as the Gemini CLI's `/stats` reads it; the
 * gateway reads it at startup (and every ACCOUNT_USAGE_REFRESH_INTERVAL) and in the setup check,
 * and shows one window per model bucket. A spent model bucket rests no login: Gemini draws no paid
 * usage for the gateway's requests.
 */
describe('provider_b plan usage (retrieveUserQuota)', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });
  const { fake, home } = useFakeProviderB({ homePrefix: 'pb-plan-' });

  it('reads the quota buckets at startup into GET /v1/accounts and /metrics', async () => {
    fake().enqueue('retrieveUserQuota', { body: quotaBody() });
    gateway = await startGateway({
      GATEWAY_PROVIDERS: 'provider_b',
      GATEWAY_BEARER_SECRET: SECRET,
      ACCOUNT_USAGE_REFRESH_INTERVAL: '5m',
      ...providerBSettings(fake(), home(), { project: 'plan-project' }),
    });
    const entry = async (): Promise<Json> => {
      const response = await fetch(`${gateway!.url}/v1/accounts`, { headers: AUTH });
      return ((await response.json()) as Json).data[0];
    };
    await eventually(async () => (await entry()).source === 'usage_endpoint');
    const [read] = fake().requests('retrieveUserQuota');
    expect(read.body).toEqual({ project: 'plan-project' });
    expect(read.headers.authorization).toMatch(/^Bearer /);

    const row = await entry();
    expect(row).toMatchObject({ provider: 'provider_b', account: 'default', state: 'ready', paid_usage: null });
    expect(row.windows).toEqual([
      expect.objectContaining({ name: 'gemini-2.5-pro', model: 'gemini-2.5-pro', used_ratio: 0.25 }),
      expect.objectContaining({ name: 'gemini-2.5-flash', model: 'gemini-2.5-flash', used_ratio: 1 }),
    ]);
    // One model's bucket at 0 is not the plan spent: the login keeps serving the other models.
    expect(row.plan_spent).toBe(false);
    expect((await fetch(`${gateway.url}/v1/accounts`)).status).toBe(401);

    const text = await scrapeMetrics(gateway, AUTH);
    const labels = { provider: 'provider_b', account: 'default' };
    expect(
      sampleValue(text, 'gateway_chat_api_account_quota_used_ratio', { ...labels, window: 'gemini-2.5-pro' }),
    ).toBeCloseTo(0.25);
    expect(sampleValue(text, 'gateway_chat_api_account_plan_spent', labels)).toBe(0);
    expect(sampleValue(text, 'gateway_chat_api_account_paid_usage_available', labels)).toBe(0);
    expect(gateway.logs.records('plan_usage')).toContainEqual(
      expect.objectContaining({ provider: 'provider_b', account: 'default', plan_spent: false }),
    );

    // Past the buckets' reset, before the next read: the spent flash bucket reads as reset.
    const flash = { ...labels, window: 'gemini-2.5-flash' };
    expect(sampleValue(text, 'gateway_chat_api_account_quota_used_ratio', flash)).toBe(1);
    advanceAccountClock(gateway, 21 * 3600_000);
    expect((await entry()).windows).toContainEqual(
      expect.objectContaining({ name: 'gemini-2.5-flash', used_ratio: 0 }),
    );
    expect(sampleValue(await scrapeMetrics(gateway, AUTH), 'gateway_chat_api_account_quota_used_ratio', flash)).toBe(0);
  });

  it('a quota read the upstream refuses logs plan_usage_read_failed with its status and the login fix, no plan', async () => {
    fake().enqueue('retrieveUserQuota', {
      status: 401,
      body: {
        error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' },
      },
    });
    gateway = await startGateway({
      GATEWAY_PROVIDERS: 'provider_b',
      GATEWAY_BEARER_SECRET: SECRET,
      ACCOUNT_USAGE_REFRESH_INTERVAL: '5m',
      ...providerBSettings(fake(), home(), { project: 'plan-project' }),
    });
    await eventually(async () => gateway!.logs.records('plan_usage_read_failed').length > 0);
    expect(gateway.logs.records('plan_usage_read_failed')).toEqual([
      expect.objectContaining({
        provider: 'provider_b',
        account: 'default',
        reason: 'status 401',
        fix: expect.stringContaining('Login with Google'),
      }),
    ]);
    const response = await fetch(`${gateway.url}/v1/accounts`, { headers: AUTH });
    expect(((await response.json()) as Json).data[0].source).toBeNull();
  });

  it('prints each bucket in the setup check', async () => {
    fake().enqueue('retrieveUserQuota', { body: quotaBody() });
    const run = await runGateway(
      { GATEWAY_PROVIDERS: 'provider_b', ...providerBSettings(fake(), path.join(home(), 'check'), { project: 'p' }) },
      ['--check'],
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {4}plan: gemini-2\.5-pro 25 % used \(resets [^)]+\); gemini-2\.5-flash 100 % used/m);
    expect(fake().requests('retrieveUserQuota')).toHaveLength(1);
  });
});
