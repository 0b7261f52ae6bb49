import { MAX_HINT_MS, RETRY_DELAYS_MS, retryDelayMs } from './retry-policy';

const middle = () => 0.5;

describe(retryDelayMs.name, () => {
  it('waits 250 ms then 1000 ms (the jitter centred), or a larger hint', () => {
    expect(retryDelayMs(0, undefined, middle)).toBe(RETRY_DELAYS_MS[0]);
    expect(retryDelayMs(1, undefined, middle)).toBe(RETRY_DELAYS_MS[1]);
    expect(retryDelayMs(0, 0.1, middle)).toBe(RETRY_DELAYS_MS[0]);
    expect(retryDelayMs(0, 20, middle)).toBe(20_000);
    expect(retryDelayMs(0, MAX_HINT_MS / 1000, middle)).toBe(MAX_HINT_MS);
  });

  it('says "do not retry" for a hint above the cap, not "retry in 250 ms"', () => {
    expect(retryDelayMs(0, 31, middle)).toBeUndefined();
    expect(retryDelayMs(1, 3600, middle)).toBeUndefined();
  });
});
