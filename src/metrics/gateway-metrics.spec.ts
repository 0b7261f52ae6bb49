import { GatewayMetrics, type MetricInstruments } from './gateway-metrics';

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
    const metrics = new GatewayMetrics(instruments);
    for (const queue of ['provider_a', 'provider_c_processes', 'structured']) metrics.queueDepthChanged(queue, 1);
    expect(calls.get('queueDepth.set')).toEqual([
      [{ provider: 'provider_a' }, 1],
      [{ provider: 'provider_c_processes' }, 1],
      [{ provider: 'structured' }, 1],
    ]);
  });

  it('maps any other queue name to structured, so no caller value becomes a label value', () => {
    const { instruments, calls } = recordingInstruments();
    new GatewayMetrics(instruments).queueWaited('provider_a_processes', 'acquired', 0.5);
    expect(calls.get('queueWait.observe')).toEqual([[{ provider: 'structured', result: 'acquired' }, 0.5]]);
  });
});
