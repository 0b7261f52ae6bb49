import {
  exhaustedWindowResetSeconds,
  planReportOf,
  planReportOfUsageLimit,
  rateLimitsFromEvent,
  rateLimitsFromHeaders,
  rateLimitsFromUsage,
} from './provider-a.rate-limits';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { GatewayError } from '../../core/gateway.error';
import { codexClient } from './provider-a.client';
import { readProviderAUsage, whamUsageUrl } from './provider-a.usage';

const NOW = Date.UTC(2026, 10, 29, 3);
const NOW_S = NOW / 1000;

describe('the Codex plan meter (docs/upstream/provider-a.md §4.3)', () => {
  it('reads the window, credit and reached-type headers of an answer', () => {
    expect(
      rateLimitsFromHeaders({
        'x-codex-primary-used-percent': '100.0',
        'x-codex-primary-window-minutes': '300',
        'x-codex-primary-reset-at': String(NOW_S + 600),
        'x-codex-secondary-used-percent': '41.5',
        'x-codex-credits-has-credits': 'True',
        'x-codex-credits-unlimited': 'false',
        'x-codex-credits-balance': '12.50',
        'x-codex-rate-limit-reached-type': 'workspace_owner_credits_depleted',
      }),
    ).toEqual({
      primary: { usedPercent: 100, windowMinutes: 300, resetAt: NOW_S + 600 },
      secondary: { usedPercent: 41.5 },
      credits: { hasCredits: true, unlimited: false, balance: '12.50' },
      reachedType: 'workspace_owner_credits_depleted',
    });
    expect(rateLimitsFromHeaders({})).toBeUndefined();
    // A flag may also come as 1 or 0.
    expect(
      rateLimitsFromHeaders({ 'x-codex-credits-has-credits': '1', 'x-codex-credits-unlimited': '0' })?.credits,
    ).toEqual({ hasCredits: true, unlimited: false });
  });

  it('keeps no free text: a balance or type that is not a short token is dropped', () => {
    expect(
      rateLimitsFromHeaders({ 'x-codex-credits-balance': 'call me', 'x-codex-rate-limit-reached-type': 'a b' }),
    ).toBeUndefined();
  });

  it('reads the codex.rate_limits event, with credits and plan type', () => {
    expect(
      rateLimitsFromEvent({
        type: 'codex.rate_limits',
        plan_type: 'plus',
        rate_limits: { primary: { used_percent: 20, window_minutes: 300, resets_at: NOW_S + 60 } },
        credits: { has_credits: false, unlimited: false, balance: '0' },
      }),
    ).toEqual({
      primary: { usedPercent: 20, windowMinutes: 300, resetAt: NOW_S + 60 },
      credits: { hasCredits: false, unlimited: false, balance: '0' },
      planType: 'plus',
    });
    // Credits may also come inside rate_limits.
    expect(
      rateLimitsFromEvent({ rate_limits: { primary: { used_percent: 10 }, credits: { has_credits: true } } })?.credits,
    ).toEqual({ hasCredits: true });
  });

  it('reads wham/usage: windows in seconds, a reset after N seconds, limit_reached and credits', () => {
    const limits = rateLimitsFromUsage(
      {
        plan_type: 'pro',
        rate_limit: {
          limit_reached: true,
          primary_window: { used_percent: 100, limit_window_seconds: 18_000, reset_after_seconds: 900 },
          secondary_window: { used_percent: 10, limit_window_seconds: 604_800, reset_at: NOW_S + 86_400 },
        },
        credits: { has_credits: true, unlimited: false, balance: 3.5 },
      },
      NOW,
    );
    expect(limits).toEqual({
      primary: { usedPercent: 100, windowMinutes: 300, resetAt: NOW_S + 900 },
      secondary: { usedPercent: 10, windowMinutes: 10_080, resetAt: NOW_S + 86_400 },
      credits: { hasCredits: true, unlimited: false, balance: '3.5' },
      limitReached: true,
      planType: 'pro',
    });
    expect(planReportOf(limits!, 'usage_endpoint', false, NOW)).toEqual({
      source: 'usage_endpoint',
      planType: 'pro',
      planSpent: true,
      // Spent until the spent window resets.
      spentUntil: NOW + 900_000,
      windows: [
        { name: 'primary', usedRatio: 1, windowSeconds: 18_000, resetsAt: NOW + 900_000 },
        { name: 'secondary', usedRatio: 0.1, windowSeconds: 604_800, resetsAt: NOW + 86_400_000 },
      ],
      paid: { kind: 'credits', available: true, inUse: false, balance: '3.5', disabledReason: undefined },
    });
  });

  it('an answer served on a spent window is a paid turn (credits in use); a refusal is not', () => {
    const limits = { primary: { usedPercent: 100, resetAt: NOW_S + 600 }, credits: { hasCredits: true } };
    expect(planReportOf(limits, 'turn', true, NOW).paid).toMatchObject({
      kind: 'credits',
      inUse: true,
      available: true,
    });
    expect(planReportOf(limits, 'turn', false, NOW).paid).toMatchObject({ inUse: false });
    // No credits, or credits spent: nothing can pay, the upstream refuses the turn.
    for (const credits of [{ hasCredits: false }, undefined])
      expect(
        planReportOf(
          {
            primary: { usedPercent: 100, resetAt: NOW_S + 600 },
            credits,
            reachedType: credits ? undefined : 'workspace_member_credits_depleted',
          },
          'turn',
          true,
          NOW,
        ).paid,
      ).toMatchObject({ inUse: false, available: false });
    // Below 100 % nothing is paid, whatever the credits.
    const fresh = planReportOf({ primary: { usedPercent: 99.9 }, credits: { hasCredits: true } }, 'turn', true, NOW);
    expect(fresh).toMatchObject({ planSpent: false, paid: { inUse: false } });
    // A window whose reset passed is no longer spent.
    expect(planReportOf({ primary: { usedPercent: 100, resetAt: NOW_S - 1 } }, 'turn', true, NOW).planSpent).toBe(
      false,
    );
  });

  it('names why credits are unavailable: none left, or the workspace ran out', () => {
    expect(planReportOf({ credits: { hasCredits: false, unlimited: false } }, 'turn', true, NOW).paid).toMatchObject({
      available: false,
      disabledReason: 'no_credits',
    });
    expect(planReportOf({ reachedType: 'workspace_member_credits_depleted' }, 'turn', false, NOW).paid).toMatchObject({
      available: false,
      disabledReason: 'workspace_member_credits_depleted',
    });
  });

  it('reads a usage-limit refusal as a plan spent until its reset, with no credits available, and its plan type', () => {
    const body = { error: { type: 'usage_limit_reached', plan_type: 'plus', resets_at: NOW_S + 60 } };
    expect(planReportOfUsageLimit(body, undefined, NOW + 60_000)).toEqual({
      windows: [],
      planSpent: true,
      spentUntil: NOW + 60_000,
      planType: 'plus',
      paid: { kind: 'credits', available: false, inUse: false, disabledReason: 'no_credits' },
      source: 'turn',
    });
    expect(planReportOfUsageLimit(body, 'workspace_owner_credits_depleted').paid?.disabledReason).toBe(
      'workspace_owner_credits_depleted',
    );
  });

  it('gives the earliest reset of a spent window as a usage limit fallback', () => {
    const windows = [
      { name: 'primary', usedRatio: 1, resetsAt: NOW + 900_000 },
      { name: 'secondary', usedRatio: 1.2, resetsAt: NOW + 60_000 },
      { name: 'other', usedRatio: 0.5, resetsAt: NOW + 1000 },
    ];
    expect(exhaustedWindowResetSeconds(windows, NOW)).toBe(60);
    expect(exhaustedWindowResetSeconds(undefined, NOW)).toBeUndefined();
  });

  it('finds the usage endpoint next to the responses URL, as the CLI does', () => {
    expect(whamUsageUrl('wss://chatgpt.com/backend-api/codex/responses')).toBe(
      'https://chatgpt.com/backend-api/wham/usage',
    );
    expect(whamUsageUrl('http://127.0.0.1:9/backend-api/codex/responses')).toBe(
      'http://127.0.0.1:9/backend-api/wham/usage',
    );
    expect(whamUsageUrl('https://proxy.example/v1/responses')).toBe('https://proxy.example/api/codex/usage');
  });

  it("leaves the responses URL's query string and fragment off the usage endpoint", () => {
    expect(whamUsageUrl('https://chatgpt.com/backend-api/codex/responses?client=x#frag')).toBe(
      'https://chatgpt.com/backend-api/wham/usage',
    );
  });

  describe('reading wham/usage', () => {
    const USAGE_URL = 'https://chatgpt.com/backend-api/wham/usage';
    /** An egress that answers every GET with `status` and `body`, and records what it was asked. */
    const answering = (status: number, body: unknown) => {
      const asked: string[] = [];
      const proxy = {
        fetch: async (url: string) => {
          asked.push(url);
          return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
        },
      } as unknown as UpstreamProxy;
      return { asked, proxy };
    };
    const read = (proxy: UpstreamProxy) =>
      readProviderAUsage({
        url: USAGE_URL,
        credentials: { accessToken: 'at', accountId: 'acct' },
        client: codexClient(),
        proxy,
        signal: new AbortController().signal,
        now: NOW,
      });

    it.each([
      [401, 'auth'],
      [403, 'auth'],
      [503, 'upstream'],
    ])('fails a %i answer as %s with its status, whatever its body says', async (status, code) => {
      // A body shaped like a usage answer: only the status may decide.
      const { proxy } = answering(status, { plan_type: 'plus', rate_limit: { primary_window: { used_percent: 5 } } });
      const error = await read(proxy).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ code, upstreamStatus: status });
    });

    it('reads a spent window as the plan spent, with credits available but not in use: a read serves no turn', async () => {
      const { asked, proxy } = answering(200, {
        plan_type: 'plus',
        rate_limit: {
          limit_reached: true,
          primary_window: { used_percent: 100, limit_window_seconds: 18_000, reset_after_seconds: 900 },
        },
        credits: { has_credits: true, unlimited: false, balance: '3.00' },
      });
      const report = await read(proxy);
      expect(asked).toEqual([USAGE_URL]);
      expect(report).toMatchObject({
        source: 'usage_endpoint',
        planSpent: true,
        paid: { kind: 'credits', available: true, inUse: false },
      });
    });
  });
});
