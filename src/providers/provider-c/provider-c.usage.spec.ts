import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../../core/gateway.error';
import { planReportFromUsage, providerCUsageUrl, readProviderCUsage } from './provider-c.usage';

/** An answer in the shape Claude Code 2.1.332 parses (its usage schema), with invented values. */
const ANSWER = {
  five_hour: { utilization: 100, resets_at: '2026-11-29T05:00:00.000000+00:00' },
  seven_day: { utilization: 37.5, resets_at: '2026-12-03T12:00:00+00:00' },
  seven_day_oauth_apps: null,
  seven_day_opus: { utilization: null, resets_at: null },
  seven_day_sonnet: { utilization: 4, resets_at: null },
  extra_usage: { is_enabled: true, monthly_limit: 5000, used_credits: 1234, utilization: 24.68, currency: 'USD' },
  limits: [],
};

describe('planReportFromUsage', () => {
  it('turns percentages into ratios, ISO resets into epoch ms, and enabled extra usage into available paid usage with what is left of its monthly limit', () => {
    expect(planReportFromUsage(ANSWER)).toEqual({
      windows: [
        { name: 'five_hour', usedRatio: 1, windowSeconds: 18_000, resetsAt: Date.parse('2026-11-29T05:00:00Z') },
        { name: 'seven_day', usedRatio: 0.375, windowSeconds: 604_800, resetsAt: Date.parse('2026-12-03T12:00:00Z') },
        { name: 'seven_day_sonnet', usedRatio: 0.04, windowSeconds: 604_800, model: 'sonnet' },
      ],
      paid: { kind: 'extra_usage', available: true, balance: '37.66 USD' },
      planSpent: true,
      spentUntil: Date.parse('2026-11-29T05:00:00Z'),
      source: 'usage_endpoint',
    });
  });

  it('scopes the Opus and Sonnet weekly windows to their model family: spending one does not spend the plan', () => {
    const resets_at = '2026-12-03T12:00:00+00:00';
    expect(
      planReportFromUsage({
        five_hour: { utilization: 10, resets_at },
        seven_day: { utilization: 40, resets_at },
        seven_day_opus: { utilization: 100, resets_at },
        seven_day_sonnet: { utilization: 100, resets_at },
        extra_usage: { is_enabled: true },
      }),
    ).toMatchObject({
      windows: [
        { name: 'five_hour', usedRatio: 0.1 },
        { name: 'seven_day', usedRatio: 0.4 },
        { name: 'seven_day_opus', usedRatio: 1, model: 'opus' },
        { name: 'seven_day_sonnet', usedRatio: 1, model: 'sonnet' },
      ],
      planSpent: false,
    });
  });

  it('reads the weekly OAuth-apps window as a window of the whole plan: spent, it spends the plan until its reset', () => {
    const resets_at = '2026-12-03T12:00:00+00:00';
    expect(
      planReportFromUsage({
        five_hour: { utilization: 20, resets_at: '2026-11-29T05:00:00+00:00' },
        seven_day: { utilization: 60, resets_at },
        seven_day_oauth_apps: { utilization: 100, resets_at },
      }),
    ).toEqual({
      windows: [
        { name: 'five_hour', usedRatio: 0.2, windowSeconds: 18_000, resetsAt: Date.parse('2026-11-29T05:00:00Z') },
        { name: 'seven_day', usedRatio: 0.6, windowSeconds: 604_800, resetsAt: Date.parse(resets_at) },
        { name: 'seven_day_oauth_apps', usedRatio: 1, windowSeconds: 604_800, resetsAt: Date.parse(resets_at) },
      ],
      planSpent: true,
      spentUntil: Date.parse(resets_at),
      source: 'usage_endpoint',
    });
  });

  it('reads a negative utilization as nothing used, never a negative share', () => {
    expect(planReportFromUsage({ five_hour: { utilization: -3, resets_at: null } })?.windows).toEqual([
      { name: 'five_hour', usedRatio: 0, windowSeconds: 18_000 },
    ]);
  });

  it('says why extra usage is off, and a plan below 100 % is not spent', () => {
    const report = planReportFromUsage({
      five_hour: { utilization: 12, resets_at: null },
      extra_usage: {
        is_enabled: false,
        monthly_limit: null,
        used_credits: null,
        utilization: null,
        disabled_reason: 'org_level_disabled',
      },
    });
    expect(report).toMatchObject({
      windows: [{ name: 'five_hour', usedRatio: 0.12 }],
      paid: { kind: 'extra_usage', available: false, disabledReason: 'org_level_disabled' },
      planSpent: false,
    });
  });

  it.each([
    ['at 100 % of its monthly limit', { monthly_limit: 5000, used_credits: 5000, utilization: 100, currency: 'USD' }],
    [
      'with its credits at the limit and no utilization',
      { monthly_limit: 5000, used_credits: 5200, utilization: null },
    ],
    ['at 100 % with the amounts null', { monthly_limit: null, used_credits: null, utilization: 100 }],
  ])('enabled extra usage %s is not available: out_of_credits, nothing left', (_, spent) => {
    const paid = planReportFromUsage({ extra_usage: { is_enabled: true, ...spent } })?.paid;
    expect(paid).toMatchObject({ kind: 'extra_usage', available: false, disabledReason: 'out_of_credits' });
    expect(paid?.balance).toBe(spent.monthly_limit === null ? undefined : '0.00 USD');
  });

  it("keeps the vendor's reason for spent extra usage when it gives one", () => {
    const extra = { is_enabled: true, monthly_limit: 100, used_credits: 100, disabled_reason: 'member_level_disabled' };
    expect(planReportFromUsage({ extra_usage: extra })?.paid).toMatchObject({
      available: false,
      disabledReason: 'member_level_disabled',
    });
  });

  it.each([
    ['without a monthly limit', { monthly_limit: null, used_credits: 900, utilization: null }, undefined],
    [
      'with a monthly limit of 0 (no limit or nothing left: not read as spent)',
      { monthly_limit: 0, used_credits: 0, utilization: null },
      undefined,
    ],
    [
      'in a currency without minor digits',
      { monthly_limit: 3000, used_credits: 500, utilization: 16.7, currency: 'jpy' },
      '2500 JPY',
    ],
    [
      'in a currency that is no code',
      { monthly_limit: 3000, used_credits: 500, utilization: 16.7, currency: 'US dollars' },
      undefined,
    ],
  ])('enabled extra usage %s is available; its balance is what is left, when known', (_, extra, balance) => {
    const paid = planReportFromUsage({ extra_usage: { is_enabled: true, ...extra } })?.paid;
    expect(paid).toEqual({ kind: 'extra_usage', available: true, ...(balance !== undefined ? { balance } : {}) });
  });

  it('is undefined when the answer carries neither a window nor extra usage', () => {
    expect(planReportFromUsage({ five_hour: null, extra_usage: null })).toBeUndefined();
    expect(planReportFromUsage('not json')).toBeUndefined();
    expect(planReportFromUsage([])).toBeUndefined();
  });
});

describe('providerCUsageUrl', () => {
  it("is the CLI's own host, or ANTHROPIC_BASE_URL when the children are pointed elsewhere", () => {
    expect(providerCUsageUrl({})).toBe('https://api.anthropic.com/api/oauth/usage');
    expect(providerCUsageUrl({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:4000/' })).toBe(
      'http://127.0.0.1:4000/api/oauth/usage',
    );
    expect(providerCUsageUrl({ ANTHROPIC_BASE_URL: 'https://relay.example/anthropic' })).toBe(
      'https://relay.example/anthropic/api/oauth/usage',
    );
    expect(providerCUsageUrl({ ANTHROPIC_BASE_URL: 'not a url' })).toBe('https://api.anthropic.com/api/oauth/usage');
  });

  it("leaves the base URL's query and fragment off the usage URL", () => {
    expect(providerCUsageUrl({ ANTHROPIC_BASE_URL: 'https://relay.example/anthropic?route=eu#top' })).toBe(
      'https://relay.example/anthropic/api/oauth/usage',
    );
  });
});

describe('readProviderCUsage', () => {
  let server: http.Server;
  let url: string;
  let seen: http.IncomingHttpHeaders[];
  let paths: string[];
  let status: number;
  let redirectTo: string | undefined;
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      seen.push(request.headers);
      paths.push(request.url ?? '');
      if (redirectTo !== undefined && request.url !== redirectTo) {
        response.writeHead(307, { location: redirectTo }).end();
        return;
      }
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(ANSWER));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/oauth/usage`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    seen = [];
    paths = [];
    status = 200;
    redirectTo = undefined;
  });

  it('sends what the CLI sends and reads the answer', async () => {
    const report = await readProviderCUsage({
      url,
      token: 'tok-1',
      cliVersion: '2.1.332',
      signal: AbortSignal.timeout(5000),
    });
    expect(report?.planSpent).toBe(true);
    expect(seen[0]).toMatchObject({
      authorization: 'Bearer tok-1',
      'anthropic-beta': 'oauth-2025-04-20',
      'user-agent': 'claude-cli/2.1.332 (external, sdk-cli)',
    });
  });

  it('is auth on 401 and upstream on 500, keeping only the status', async () => {
    status = 401;
    const refused = readProviderCUsage({ url, token: 't', signal: AbortSignal.timeout(5000) });
    await expect(refused).rejects.toBeInstanceOf(GatewayError);
    await expect(refused).rejects.toMatchObject({ code: 'auth', upstreamStatus: 401 });
    status = 500;
    await expect(readProviderCUsage({ url, token: 't', signal: AbortSignal.timeout(5000) })).rejects.toMatchObject({
      code: 'upstream',
      upstreamStatus: 500,
    });
  });

  it('refuses a redirect: the bearer token is not sent on to where the redirect points', async () => {
    redirectTo = '/elsewhere';
    await expect(readProviderCUsage({ url, token: 'tok-1', signal: AbortSignal.timeout(5000) })).rejects.toThrow();
    expect(paths).toEqual(['/api/oauth/usage']);
  });
});
