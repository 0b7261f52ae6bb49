import { MAX_TIMER_MS } from '../../common/async/timer-range';
import { SessionPool } from './provider-a.session-pool';
import type { WsSession } from './provider-a.ws-session';

type Kept = Parameters<SessionPool['keep']>[0];

/** A kept connection that is idle and open until closed. */
function keptSession(chat: string): { entry: Kept; close: jest.Mock } {
  const close = jest.fn();
  const session = { idle: true, onClose: () => () => undefined, close } as unknown as WsSession;
  return { entry: { chat, session, handshake: 'h' }, close };
}

describe(SessionPool.name, () => {
  afterEach(() => jest.restoreAllMocks());

  it('closes a kept connection left unused for PROVIDER_A_SESSION_IDLE_TIMEOUT', async () => {
    const pool = new SessionPool({ maxKept: 2, idleTimeoutMs: 10 });
    const { entry, close } = keptSession('chat-1');
    pool.keep(entry);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(close).toHaveBeenCalled();
    expect(pool.size).toBe(0);
  });

  it('keeps a connection without an idle timer when the timeout is longer than a timer holds', async () => {
    const delays: number[] = [];
    const real = globalThis.setTimeout;
    jest.spyOn(globalThis, 'setTimeout').mockImplementation((callback: () => void, ms?: number) => {
      delays.push(ms ?? 0);
      return real(callback, ms);
    });
    const pool = new SessionPool({ maxKept: 2, idleTimeoutMs: 720 * 3_600_000 });
    const { entry, close } = keptSession('chat-1');
    pool.keep(entry);
    // Node would run an overlong purge timer after 1 ms and the cache re-arm it at once, forever.
    expect(delays.filter((ms) => ms > MAX_TIMER_MS)).toEqual([]);
    await new Promise((resolve) => real(resolve, 20));
    expect(close).not.toHaveBeenCalled();
    expect(pool.size).toBe(1);
    pool.closeAll();
    expect(close).toHaveBeenCalled();
  });
});
