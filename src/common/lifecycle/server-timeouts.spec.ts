import * as http from 'node:http';
import { MAX_TIMER_MS } from '../async/timer-range';
import { applyServerTimeouts } from './server-timeouts';

describe('applyServerTimeouts', () => {
  it('sets the keep-alive, headers and request timeouts on the server', () => {
    const server = http.createServer();
    applyServerTimeouts(server, { keepAliveTimeoutMs: 65_000, headersTimeoutMs: 20_000, requestTimeoutMs: 600_000 });
    expect([server.keepAliveTimeout, server.headersTimeout, server.requestTimeout]).toEqual([65_000, 20_000, 600_000]);
  });

  it('makes a timeout longer than a timer holds never (0), as for every timer', () => {
    const server = http.createServer();
    const longestKeepAlive = MAX_TIMER_MS - server.keepAliveTimeoutBuffer;
    applyServerTimeouts(server, {
      keepAliveTimeoutMs: longestKeepAlive,
      headersTimeoutMs: MAX_TIMER_MS,
      requestTimeoutMs: MAX_TIMER_MS,
    });
    expect([server.keepAliveTimeout, server.headersTimeout, server.requestTimeout]).toEqual([
      longestKeepAlive,
      MAX_TIMER_MS,
      MAX_TIMER_MS,
    ]);
    applyServerTimeouts(server, {
      keepAliveTimeoutMs: longestKeepAlive + 1,
      headersTimeoutMs: MAX_TIMER_MS + 1,
      requestTimeoutMs: 720 * 3_600_000,
    });
    expect([server.keepAliveTimeout, server.headersTimeout, server.requestTimeout]).toEqual([0, 0, 0]);
  });

  it("keeps the keep-alive timeout on a Node without keepAliveTimeoutBuffer (before 24.6), reckoning Node's 1 s", () => {
    const server = http.createServer();
    Object.defineProperty(server, 'keepAliveTimeoutBuffer', { value: undefined });
    applyServerTimeouts(server, { keepAliveTimeoutMs: 65_000, headersTimeoutMs: 60_000, requestTimeoutMs: 300_000 });
    expect(server.keepAliveTimeout).toBe(65_000);
  });

  it('checks the open connections every tenth of the shorter timeout, within 100 ms and 30 s', () => {
    const interval = (headersTimeoutMs: number, requestTimeoutMs: number) => {
      const server = http.createServer();
      applyServerTimeouts(server, { keepAliveTimeoutMs: 5_000, headersTimeoutMs, requestTimeoutMs });
      return (server as typeof server & { connectionsCheckingInterval: number }).connectionsCheckingInterval;
    };
    expect(interval(60_000, 300_000)).toBe(6_000);
    expect(interval(20_000, 10_000)).toBe(1_000);
    expect(interval(500, 500)).toBe(100);
    expect(interval(0, 3_600_000)).toBe(30_000);
    expect(interval(0, 0)).toBe(30_000);
  });
});
