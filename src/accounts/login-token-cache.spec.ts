import type { LoginToken } from './login-token-cache';
import { LoginTokenCache } from './login-token-cache';

const never = new AbortController().signal;

/** A load whose calls are counted and which settles when the test says so. */
function controlledLoad() {
  const calls: Array<string | undefined> = [];
  const pending: Array<(token: LoginToken) => void> = [];
  const load = (rejected: string | undefined) => {
    calls.push(rejected);
    return new Promise<LoginToken>((resolve) => pending.push(resolve));
  };
  return { load, calls, settle: (index: number, token: LoginToken) => pending[index](token) };
}

describe(LoginTokenCache.name, () => {
  it('runs one load for concurrent callers and serves the cached token afterwards', async () => {
    const cache = new LoginTokenCache<LoginToken>(() => 0);
    const { load, calls, settle } = controlledLoad();
    const waiting = Promise.all([cache.current(load, never), cache.current(load, never), cache.current(load, never)]);
    settle(0, { accessToken: 'a1', expiresAt: 3_600_000 });
    expect((await waiting).map((token) => token.accessToken)).toEqual(['a1', 'a1', 'a1']);
    expect((await cache.current(load, never)).accessToken).toBe('a1');
    expect(calls).toStrictEqual([undefined]);
  });

  it('refreshes ahead only a token that expires within the window, excluding it, and joins a request meanwhile', async () => {
    const cache = new LoginTokenCache<LoginToken>(() => 0);
    const { load, calls, settle } = controlledLoad();
    const first = cache.refreshAhead(300_000, load);
    settle(0, { accessToken: 'a1', expiresAt: 600_000 });
    // Not within the window: nothing renewed, so no new token's expiry to report.
    expect(await first).toBeUndefined();
    expect(calls).toStrictEqual([undefined]);
    const second = cache.refreshAhead(900_000, load);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toStrictEqual([undefined, 'a1']);
    const request = cache.afterRejection('a1', load, never);
    settle(1, { accessToken: 'a2', expiresAt: 3_600_000 });
    // The new token's expiry, which the background refresh holds against the window.
    expect(await second).toBe(3_600_000);
    expect((await request).accessToken).toBe('a2');
    expect(calls).toStrictEqual([undefined, 'a1']);
  });

  it('loads again once the cached token is within 60 s of its expiry', async () => {
    let now = 0;
    const cache = new LoginTokenCache<LoginToken>(() => now);
    const { load, calls, settle } = controlledLoad();
    const first = cache.current(load, never);
    settle(0, { accessToken: 'a1', expiresAt: 100_000 });
    await first;
    now = 40_000;
    const second = cache.current(load, never);
    settle(1, { accessToken: 'a2', expiresAt: 3_700_000 });
    expect((await second).accessToken).toBe('a2');
    expect(calls).toStrictEqual([undefined, undefined]);
  });

  it('after a rejection takes an in-flight load that brings another token, without loading again', async () => {
    const cache = new LoginTokenCache<LoginToken>(() => 0);
    const { load, calls, settle } = controlledLoad();
    const inFlight = cache.current(load, never);
    const recovered = cache.afterRejection('old', load, never);
    settle(0, { accessToken: 'new' });
    await inFlight;
    expect((await recovered).accessToken).toBe('new');
    expect(calls).toStrictEqual([undefined]);
  });

  it('after a rejection never hands back the rejected token: it loads with it excluded', async () => {
    const cache = new LoginTokenCache<LoginToken>(() => 0);
    const { load, calls, settle } = controlledLoad();
    const first = cache.current(load, never);
    settle(0, { accessToken: 'old' });
    await first;
    const recovered = cache.afterRejection('old', load, never);
    // While the refresh runs, no other caller is handed the rejected token: they join the refresh.
    expect(cache.usable()).toBeUndefined();
    const meanwhile = cache.current(load, never);
    await Promise.resolve();
    settle(1, { accessToken: 'refreshed' });
    expect((await recovered).accessToken).toBe('refreshed');
    expect((await meanwhile).accessToken).toBe('refreshed');
    expect(calls).toStrictEqual([undefined, 'old']);
    expect((await cache.current(load, never)).accessToken).toBe('refreshed');
  });

  it('reads the file again once told it changed, and never caches what a load started before brought', async () => {
    const cache = new LoginTokenCache<LoginToken>(() => 0);
    const { load, calls, settle } = controlledLoad();
    const first = cache.current(load, never);
    settle(0, { accessToken: 'old-login' });
    await first;
    // A load of the old file is still running when the sweep says the file changed.
    const stale = cache.afterRejection('old-login', load, never);
    cache.forget();
    const next = cache.current(load, never);
    // The file is read again only once that load is over: both could spend one refresh token.
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toStrictEqual([undefined, 'old-login']);
    settle(1, { accessToken: 'old-login-refreshed' });
    expect((await stale).accessToken).toBe('old-login-refreshed');
    // The old login's token is not cached: a caller now waits for the new file's.
    expect(cache.usable()).toBeUndefined();
    const meanwhile = cache.current(load, never);
    await new Promise((resolve) => setImmediate(resolve));
    settle(2, { accessToken: 'new-login' });
    expect((await next).accessToken).toBe('new-login');
    expect((await meanwhile).accessToken).toBe('new-login');
    expect((await cache.current(load, never)).accessToken).toBe('new-login');
    expect(calls).toStrictEqual([undefined, 'old-login', undefined]);
  });

  it('stops waiting when the caller aborts while the shared load carries on', async () => {
    const cache = new LoginTokenCache<LoginToken>(() => 0);
    const { load, settle } = controlledLoad();
    const controller = new AbortController();
    const leaving = cache.current(load, controller.signal);
    const staying = cache.current(load, never);
    controller.abort(new Error('client left'));
    await expect(leaving).rejects.toThrow('client left');
    settle(0, { accessToken: 'a1' });
    expect((await staying).accessToken).toBe('a1');
  });
});
