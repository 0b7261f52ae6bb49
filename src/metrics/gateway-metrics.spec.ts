import { upstreamErrorCodes } from '../core/error-codes';
import { LOGIN_STATES } from '../core/login-state';
import { GatewayMetrics, type MetricInstruments, type MetricsScope, modelLabel } from './gateway-metrics';
import type { IdempotencyResult, QueueResult, ValidationResult } from './metric-declarations';

/** provider_a alone, structured off: the smallest set of closed label sets. */
const SCOPE: MetricsScope = { enabledProviders: ['provider_a'], structured: { enabled: false } };

/** Every instrument a stub that records its calls. */
function recordingInstruments(): { instruments: MetricInstruments; calls: Map<string, unknown[][]> } {
  const calls = new Map<string, unknown[][]>();
  const instrument = (name: string) =>
    new Proxy(
      {},
      {
        get:
          (_target, method: string) =>
          (...args: unknown[]) =>
            calls.set(`${name}.${method}`, [...(calls.get(`${name}.${method}`) ?? []), args]),
      },
    );
  const instruments = new Proxy({}, { get: (_target, name: string) => instrument(name) }) as MetricInstruments;
  return { instruments, calls };
}

describe('GatewayMetrics queue labels', () => {
  it("keeps a family's id, a queue its family declares (provider_c's process slots) and structured", () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    for (const queue of ['provider_a', 'provider_c_processes', 'structured']) metrics.queueDepthChanged(queue, 1);
    expect(calls.get('queueDepth.set')).toEqual([
      [{ provider: 'provider_a' }, 1],
      [{ provider: 'provider_c_processes' }, 1],
      [{ provider: 'structured' }, 1],
    ]);
  });

  it('maps any other queue name to structured, so no caller value becomes a label value', () => {
    const { instruments, calls } = recordingInstruments();
    new GatewayMetrics(instruments, SCOPE).queueWaited('provider_a_processes', 'acquired', 0.5);
    expect(calls.get('queueWait.observe')).toEqual([[{ provider: 'structured', result: 'acquired' }, 0.5]]);
  });
});

describe('GatewayMetrics closed label values', () => {
  it('labels a provider that is no family none, and a result outside its set by its fallback', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.chatRequest({ provider: 'caller-said', model: 'other', status: 400, stream: false, durationSeconds: 0 });
    metrics.queueWaited('provider_a', 'caller-said' as QueueResult, 1);
    metrics.structuredValidated('caller-said' as ValidationResult);
    metrics.structuredIdempotencyResult('caller-said' as IdempotencyResult);
    expect(calls.get('requests.inc')).toEqual([[{ provider: 'none', model: 'other', status: '400' }]]);
    expect(calls.get('queueWait.observe')).toEqual([[{ provider: 'provider_a', result: 'canceled' }, 1]]);
    expect(calls.get('structuredValidation.inc')).toEqual([[{ result: 'unknown' }]]);
    expect(calls.get('structuredIdempotency.inc')).toEqual([[{ result: 'miss' }]]);
  });

  it('keeps an upstream window name that is a short identifier, and labels any other other', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    const window = (name: string) => ({ name, usedRatio: 0.5, windowSeconds: 18_000 });
    metrics.accountPlan('provider_a', 'team', {
      windows: [window('gemini-2.5-pro'), window('not a name {}'), window('x'.repeat(97))],
      planSpent: false,
    });
    expect(calls.get('accountQuotaUsed.set')!.map(([labels]) => (labels as { window: string }).window)).toEqual([
      'gemini-2.5-pro',
      'other',
      'other',
    ]);
  });

  it('labels a model by its catalog id, and other where there is none', () => {
    expect(modelLabel('gpt-5.4')).toBe('gpt-5.4');
    expect(modelLabel(null)).toBe('other');
    expect(modelLabel(undefined)).toBe('other');
  });
});

describe('GatewayMetrics series at zero from boot', () => {
  it("creates each enabled family's upstream error codes at 0, never canceled or a disabled family's", () => {
    const { instruments, calls } = recordingInstruments();
    new GatewayMetrics(instruments, { enabledProviders: ['provider_a', 'provider_b'], structured: { enabled: false } });
    const created = calls.get('upstreamErrors.inc')!;
    expect(created.every(([, value]) => value === 0)).toBe(true);
    const labels = created.map(([label]) => label);
    expect(labels).toEqual([
      ...upstreamErrorCodes('provider_a').map((code) => ({ provider: 'provider_a', code, route: 'chat' })),
      ...upstreamErrorCodes('provider_b').map((code) => ({ provider: 'provider_b', code, route: 'chat' })),
    ]);
    expect(labels).toContainEqual({ provider: 'provider_a', code: 'auth', route: 'chat' });
    expect(labels).toContainEqual({ provider: 'provider_b', code: 'provider_account_unsupported', route: 'chat' });
    expect(labels).toContainEqual({ provider: 'provider_b', code: 'provider_project_required', route: 'chat' });
    expect(labels.filter((label) => (label as { code: string }).code === 'canceled')).toEqual([]);
    expect(labels.filter((label) => (label as { provider: string }).provider === 'provider_c')).toEqual([]);
  });

  it('shows no structured request in flight and no upstream session kept from boot', () => {
    const { instruments, calls } = recordingInstruments();
    new GatewayMetrics(instruments, SCOPE);
    expect(calls.get('structuredInflight.set')).toEqual([[0]]);
    expect(calls.get('upstreamSessionsKept.set')).toEqual([[0]]);
  });

  it('creates every upstream session turn result at 0', () => {
    const { instruments, calls } = recordingInstruments();
    new GatewayMetrics(instruments, SCOPE);
    expect(calls.get('upstreamSessionTurns.inc')).toEqual([
      [{ result: 'reused' }, 0],
      [{ result: 'incremental' }, 0],
      [{ result: 'fallback' }, 0],
    ]);
  });

  it("creates the structured route's upstream error codes at 0 for the families structured inference calls, and no other", () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.structuredProviders(['provider_a', 'not_a_family']);
    expect(calls.get('upstreamErrors.inc')).toEqual(
      upstreamErrorCodes('provider_a').map((code) => [{ provider: 'provider_a', code, route: 'structured' }, 0]),
    );
  });

  it('counts an upstream failure under the route that met it, never a client cancel', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.upstreamError('provider_a', 'upstream', 'structured');
    metrics.upstreamError('provider_a', 'timeout', 'chat');
    metrics.upstreamError('provider_a', 'canceled', 'chat');
    expect(calls.get('upstreamErrors.inc')).toEqual([
      [{ provider: 'provider_a', code: 'upstream', route: 'structured' }],
      [{ provider: 'provider_a', code: 'timeout', route: 'chat' }],
    ]);
  });

  it('creates the refusing queue results (full, timeout) of every enabled queue: families, their own queues, structured when on', () => {
    const { instruments, calls } = recordingInstruments();
    new GatewayMetrics(instruments, { enabledProviders: ['provider_a', 'provider_c'], structured: { enabled: true } });
    expect(calls.get('queueWait.zero')).toEqual(
      ['provider_a', 'provider_c', 'provider_c_processes', 'structured'].flatMap((provider) => [
        [{ provider, result: 'full' }],
        [{ provider, result: 'timeout' }],
      ]),
    );
    const { instruments: without, calls: none } = recordingInstruments();
    new GatewayMetrics(without, SCOPE);
    expect(none.get('queueWait.zero')).toEqual([
      [{ provider: 'provider_a', result: 'full' }],
      [{ provider: 'provider_a', result: 'timeout' }],
    ]);
  });
});

describe('GatewayMetrics account plan', () => {
  it("takes a login's window gauges away once its plan no longer has the window (a new login over its file)", () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    const window = { name: 'primary', usedRatio: 0.5, resetsAt: 1_800_000_000_000, windowSeconds: 18_000 };
    metrics.accountPlan('provider_a', 'team', { windows: [window], planSpent: false });
    metrics.accountPlan('provider_a', 'team', { windows: [window], planSpent: false });
    expect(calls.get('accountQuotaUsed.remove')).toBeUndefined();
    metrics.accountPlan('provider_a', 'team', { windows: [], planSpent: false });
    const labels = { provider: 'provider_a', account: 'team', window: 'primary' };
    for (const gauge of ['accountQuotaUsed', 'accountQuotaReset', 'accountQuotaWindow'])
      expect(calls.get(`${gauge}.remove`)).toEqual([[labels]]);
  });

  it("keeps each login's windows apart: a second login of the family reporting none leaves the first's", () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    const window = { name: 'primary', usedRatio: 0.5, resetsAt: 1_800_000_000_000, windowSeconds: 18_000 };
    metrics.accountPlan('provider_a', 'work', { windows: [window], planSpent: false });
    metrics.accountPlan('provider_a', 'home', { windows: [], planSpent: false });
    expect(calls.get('accountQuotaUsed.remove')).toBeUndefined();
  });

  it('shows when a window resets in whole seconds, rounded up', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    metrics.accountPlan('provider_a', 'work', {
      windows: [{ name: 'primary', usedRatio: 0.5, resetsAt: 1_800_000_000_200, windowSeconds: 18_000 }],
      planSpent: false,
    });
    expect(calls.get('accountQuotaReset.set')).toEqual([
      [{ provider: 'provider_a', account: 'work', window: 'primary' }, 1_800_000_001],
    ]);
  });

  it('takes a figure away once the latest report of its window lacks it, as /v1/accounts shows null', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    const labels = { provider: 'provider_a', account: 'team', window: 'primary' };
    metrics.accountPlan('provider_a', 'team', {
      windows: [{ name: 'primary', usedRatio: 0.5, resetsAt: 1_800_000_000_000, windowSeconds: 18_000 }],
      planSpent: false,
    });
    metrics.accountPlan('provider_a', 'team', {
      windows: [{ name: 'primary', usedRatio: 0.6, windowSeconds: 18_000 }],
      planSpent: false,
    });
    expect(calls.get('accountQuotaReset.remove')).toEqual([[labels]]);
    expect(calls.get('accountQuotaUsed.set')?.at(-1)).toEqual([labels, 0.6]);
    expect(calls.get('accountQuotaUsed.remove')).toBeUndefined();
  });
});

describe('GatewayMetrics account and request values', () => {
  it('sets exactly one account state to 1, the cooling end in whole seconds, and paid in-use apart from available', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.accountState('provider_a', 'work', 'cooling', 1_700_000_000_500);
    expect(calls.get('accountState.set')!.filter(([, value]) => value === 1)).toEqual([
      [{ provider: 'provider_a', account: 'work', state: 'cooling' }, 1],
    ]);
    expect(calls.get('accountCoolingUntil.set')).toEqual([
      [{ provider: 'provider_a', account: 'work' }, 1_700_000_001],
    ]);
    metrics.accountPlan('provider_a', 'work', {
      windows: [],
      paid: { kind: 'credits', available: true, inUse: false },
      planSpent: false,
    });
    expect(calls.get('accountPaidInUse.set')).toEqual([[{ provider: 'provider_a', account: 'work' }, 0]]);
    expect(calls.get('accountPaidAvailable.set')).toEqual([[{ provider: 'provider_a', account: 'work' }, 1]]);
  });

  it("sets exactly the login report's state of a login to 1 and every other state to 0", () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.loginState('provider_a', 'work', 'missing');
    const set = calls.get('loginState.set')!;
    expect(set.filter(([, value]) => value === 1)).toEqual([
      [{ provider: 'provider_a', account: 'work', state: 'missing' }, 1],
    ]);
    expect(set).toContainEqual([{ provider: 'provider_a', account: 'work', state: 'usable' }, 0]);
    expect(set).toHaveLength(LOGIN_STATES.length);
  });

  it('shows paid usage as available only when the upstream says so, not because it reported on paid usage at all', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    metrics.accountPlan('provider_a', 'work', {
      windows: [],
      paid: { kind: 'credits', available: false, inUse: false },
      planSpent: true,
    });
    const login = { provider: 'provider_a', account: 'work' };
    expect(calls.get('accountPaidAvailable.set')).toEqual([[login, 0]]);
    expect(calls.get('accountPlanSpent.set')).toEqual([[login, 1]]);
    expect(calls.get('accountNeedsExtraUsage.set')).toEqual([[login, 0]]);
  });

  it("creates a registered login's counters at 0, so an increase() over them reads 0 rather than no data", () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.accountRegistered('provider_a', 'work');
    const login = { provider: 'provider_a', account: 'work' };
    expect(calls.get('paidTurns.inc')).toEqual([[login, 0]]);
    expect(calls.get('accountMovedAway.inc')).toEqual([[login, 0]]);
    expect(calls.get('accountSelections.inc')).toEqual(
      ['pinned', 'new', 'moved'].map((kind) => [{ ...login, kind }, 0]),
    );
    expect(calls.get('accountCooldowns.inc')).toEqual(
      ['usage_limit', 'rate_limited'].map((reason) => [{ ...login, reason }, 0]),
    );
  });

  it("counts a login's cooldowns by their reason and shows its turns in flight", () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.accountCooldown('provider_a', 'work', 'rate_limited');
    metrics.accountInFlight('provider_a', 'work', 3);
    expect(calls.get('accountCooldowns.inc')).toEqual([
      [{ provider: 'provider_a', account: 'work', reason: 'rate_limited' }],
    ]);
    expect(calls.get('accountInFlight.set')).toEqual([[{ provider: 'provider_a', account: 'work' }, 3]]);
  });

  it('counts every token kind the upstream reports, reasoning included, and no kind outside the set', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    for (const kind of ['prompt', 'completion', 'cached', 'reasoning', 'caller-said'])
      metrics.tokensUsed('provider_a', kind, 7);
    metrics.tokensUsed('provider_a', 'prompt', 0);
    expect(calls.get('tokens.inc')).toEqual(
      ['prompt', 'completion', 'cached', 'reasoning'].map((kind) => [{ provider: 'provider_a', kind }, 7]),
    );
  });

  it('counts retries by the code retried, fast-tier requests by model, and structured latency and tokens by result and kind', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.upstreamRetry('provider_a', 'rate_limited');
    metrics.fastTierRequest('gpt-5.4-fast');
    metrics.structuredCompleted('gpt-5.4', 'timeout', 2);
    metrics.structuredTokensUsed('gpt-5.4', 'completion', 9);
    expect(calls.get('upstreamRetries.inc')).toEqual([[{ provider: 'provider_a', code: 'rate_limited' }]]);
    expect(calls.get('fastTierRequests.inc')).toEqual([[{ model: 'gpt-5.4-fast' }]]);
    expect(calls.get('structuredLatency.observe')).toEqual([[{ model: 'gpt-5.4', result: 'timeout' }, 2]]);
    expect(calls.get('structuredTokens.inc')).toEqual([[{ model: 'gpt-5.4', kind: 'completion' }, 9]]);
  });

  it('records the time to first token, structured failures by code, structured requests in flight and upstream session turns by result', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.firstToken('provider_a', 1.5);
    metrics.structuredFailure('rate_limited');
    metrics.structuredInflightChanged(1);
    metrics.structuredInflightChanged(-1);
    metrics.upstreamSessionTurn('fallback');
    expect(calls.get('timeToFirstToken.observe')).toEqual([[{ provider: 'provider_a' }, 1.5]]);
    expect(calls.get('structuredFailures.inc')).toEqual([[{ code: 'rate_limited' }]]);
    expect(calls.get('structuredInflight.inc')).toEqual([[1], [-1]]);
    expect(calls.get('upstreamSessionTurns.inc')).toEqual([[{ result: 'fallback' }]]);
  });

  it('labels request durations by whether the request streamed (the dashboard filters stream="true")', () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.chatRequest({ provider: 'provider_a', model: 'm', status: 200, stream: true, durationSeconds: 1 });
    metrics.chatRequest({ provider: 'provider_a', model: 'm', status: 200, stream: false, durationSeconds: 2 });
    expect(calls.get('requestDuration.observe')).toEqual([
      [{ provider: 'provider_a', stream: 'true' }, 1],
      [{ provider: 'provider_a', stream: 'false' }, 2],
    ]);
  });
});
