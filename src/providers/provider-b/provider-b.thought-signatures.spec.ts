import { ThoughtSignatureStore } from './provider-b.thought-signatures';

describe(ThoughtSignatureStore.name, () => {
  it('returns a remembered signature until its TTL passes', () => {
    let now = 1_000;
    const store = new ThoughtSignatureStore(30 * 60_000, 10, () => now);
    store.remember('call_1', 'sig-1');
    now += 30 * 60_000 - 1;
    expect(store.lookup('call_1')).toBe('sig-1');
    now += 1;
    expect(store.lookup('call_1')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('keeps a signature for 30 minutes by default', () => {
    let now = 1_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      const store = new ThoughtSignatureStore();
      store.remember('call_1', 'sig-1');
      now += 30 * 60_000 - 1;
      expect(store.lookup('call_1')).toBe('sig-1');
      now += 1;
      expect(store.lookup('call_1')).toBeUndefined();
    } finally {
      clock.mockRestore();
    }
  });

  it('evicts the oldest entry beyond the capacity', () => {
    const store = new ThoughtSignatureStore(60_000, 2);
    store.remember('a', '1');
    store.remember('b', '2');
    store.remember('a', '1b');
    store.remember('c', '3');
    expect(store.lookup('b')).toBeUndefined();
    expect(store.lookup('a')).toBe('1b');
    expect(store.lookup('c')).toBe('3');
  });
});
