import { upstreamErrorCodes } from '../core/error-codes';
import { GatewayMetrics, type MetricInstruments, type MetricsScope } from './gateway-metrics';

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

  it("creates a registered login's paid-turn counter at 0, so an increase() over it reads 0 rather than no data", () => {
    const { instruments, calls } = recordingInstruments();
    const metrics = new GatewayMetrics(instruments, SCOPE);
    calls.clear();
    metrics.accountRegistered('provider_a', 'work');
    expect(calls.get('paidTurns.inc')).toEqual([[{ provider: 'provider_a', account: 'work' }, 0]]);
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
