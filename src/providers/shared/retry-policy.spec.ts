import { MAX_HINT_MS, RETRY_DELAYS_MS, retryAfterHeaderSeconds, retryDelayMs } from './retry-policy';

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

describe(retryAfterHeaderSeconds.name, () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);

  it('reads delta seconds or an HTTP date, in seconds from now', () => {
    expect(retryAfterHeaderSeconds('30', now)).toBe(30);
    expect(retryAfterHeaderSeconds(new Date(now + 90_000).toUTCString(), now)).toBe(90);
  });

  it('is never negative: an HTTP date already past, or negative seconds, is 0', () => {
    expect(retryAfterHeaderSeconds(new Date(now - 5000).toUTCString(), now)).toBe(0);
    expect(retryAfterHeaderSeconds('-5', now)).toBe(0);
  });

  it.each([undefined, '', '  ', 'soon'])('is undefined for %j', (value) => {
    expect(retryAfterHeaderSeconds(value, now)).toBeUndefined();
  });
});
