import { GatewayError } from '../../core/gateway.error';
import { MAX_HINT_MS, RETRY_DELAYS_MS, retryDelayMs, runWithRetries } from './retry-policy';

const middle = () => 0.5;

describe(retryDelayMs.name, () => {
  it('waits 250 ms then 1000 ms (the jitter centred), or a larger hint', () => {
    expect(retryDelayMs(0, undefined, middle)).toBe(RETRY_DELAYS_MS[0]);
    expect(retryDelayMs(1, undefined, middle)).toBe(RETRY_DELAYS_MS[1]);
    expect(retryDelayMs(0, 0.1, middle)).toBe(RETRY_DELAYS_MS[0]);
    expect(retryDelayMs(0, 20, middle)).toBe(20_000);
    expect(retryDelayMs(0, MAX_HINT_MS / 1000, middle)).toBe(MAX_HINT_MS);
  });

  it('says "do not retry" for a hint above the cap (it used to mean "retry in 250 ms")', () => {
    expect(retryDelayMs(0, 31, middle)).toBeUndefined();
    expect(retryDelayMs(1, 3600, middle)).toBeUndefined();
  });
});

describe(runWithRetries.name, () => {
  const options = () => ({ signal: new AbortController().signal, deadlineAt: Date.now() + 60_000 });

  it('gives up at once on a retryable failure whose hint is above the cap, keeping the hint for the client', async () => {
    const failure = new GatewayError('rate_limited', { retryable: true, retryAfterSeconds: 60 });
    const attempt = jest.fn(async () => {
      throw failure;
    });
    await expect(runWithRetries(attempt, options())).rejects.toBe(failure);
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('retries a retryable failure with a short hint, then succeeds', async () => {
    let calls = 0;
    const result = await runWithRetries(async () => {
      if (calls++ === 0) throw new GatewayError('upstream', { retryable: true, retryAfterSeconds: 0 });
      return 'ok';
    }, options());
    expect(result).toBe('ok');
    expect(calls).toBe(2);
  });
});
