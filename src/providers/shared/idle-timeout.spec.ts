import { GatewayError } from '../../core/gateway.error';
import { withinIdleTimeout } from './idle-timeout';

const never = (signal: AbortSignal) =>
  new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));

describe(withinIdleTimeout.name, () => {
  it('ends a wait that outlives the idle bound with a timeout GatewayError', async () => {
    const started = Date.now();
    const error = await withinIdleTimeout(50, new AbortController().signal, 'login token', never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("passes the caller's abort reason through unchanged", async () => {
    const caller = new AbortController();
    const reason = new Error('client left');
    const pending = withinIdleTimeout(10_000, caller.signal, 'login token', never);
    caller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('returns the value when it comes in time, and with 0 (off) never bounds the wait', async () => {
    await expect(withinIdleTimeout(1000, new AbortController().signal, 'login token', async () => 'token')).resolves.toBe('token');
    const seen: AbortSignal[] = [];
    const caller = new AbortController().signal;
    await withinIdleTimeout(0, caller, 'login token', async (signal) => void seen.push(signal));
    expect(seen).toEqual([caller]);
  });
});
