import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectProxy } from '../../../test/support/connect-proxy';
import { providerFetch, UpstreamProxy } from './upstream-proxy';

/**
 * A loopback upstream that holds its answer: the headers when `head()` is called, the body's last
 * bytes at `end()`. `received` settles once the request has arrived.
 */
async function heldUpstream() {
  let answer!: http.ServerResponse;
  let arrived!: () => void;
  const received = new Promise<void>((resolve) => (arrived = resolve));
  const server = http.createServer((_request, response) => {
    answer = response;
    arrived();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/stream`,
    received,
    head: () => {
      answer.writeHead(200, { 'content-type': 'text/event-stream' });
      answer.write('first ');
    },
    end: () => answer.end('last'),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe(UpstreamProxy.name, () => {
  const proxies = { httpsProxy: 'http://secure-proxy:3128', httpProxy: 'http://plain-proxy:3128' };

  it('uses HTTPS_PROXY for https:// and wss://, HTTP_PROXY for http:// and ws://', () => {
    const proxy = new UpstreamProxy(proxies);
    expect(proxy.proxyFor('wss://chatgpt.com/backend-api/codex/responses')).toBe(proxies.httpsProxy);
    expect(proxy.proxyFor('https://auth.openai.com/oauth/token')).toBe(proxies.httpsProxy);
    expect(proxy.proxyFor('ws://127.0.0.1:9/x')).toBe(proxies.httpProxy);
    expect(proxy.proxyFor('http://127.0.0.1:9/x')).toBe(proxies.httpProxy);
    expect(new UpstreamProxy({ httpProxy: proxies.httpProxy }).proxyFor('wss://chatgpt.com/')).toBe(proxies.httpProxy);
    expect(new UpstreamProxy({ httpsProxy: proxies.httpsProxy }).proxyFor('http://example.test/')).toBeUndefined();
  });

  it.each([
    ['chatgpt.com', 'wss://chatgpt.com/a', undefined],
    ['.openai.com', 'https://auth.openai.com/a', undefined],
    ['openai.com', 'https://auth.openai.com/a', undefined],
    ['*.openai.com', 'https://auth.openai.com/a', undefined],
    ['openai.com', 'https://notopenai.com/a', 'http://secure-proxy:3128'],
    ['chatgpt.com:8443', 'wss://chatgpt.com/a', 'http://secure-proxy:3128'],
    ['chatgpt.com:443', 'wss://chatgpt.com/a', undefined],
    ['*', 'wss://chatgpt.com/a', undefined],
    [' * ', 'wss://chatgpt.com/a', undefined],
    ['', 'wss://chatgpt.com/a', 'http://secure-proxy:3128'],
  ])('NO_PROXY %j for %s → %s', (noProxy, target, expected) => {
    expect(new UpstreamProxy({ ...proxies, noProxy }).proxyFor(target)).toBe(expected);
  });

  it('goes direct without any proxy setting and reuses one tunnel agent per proxy', async () => {
    const none = new UpstreamProxy({});
    expect(none.enabled).toBe(false);
    expect(none.websocketAgent('wss://chatgpt.com/')).toBeUndefined();
    const proxy = new UpstreamProxy(proxies);
    expect(proxy.websocketAgent('wss://a.test/')).toBe(proxy.websocketAgent('wss://b.test/'));
    await Promise.all([none.close(), proxy.close()]);
  });

  // undici's own defaults end a response whose headers, or next body bytes, take over 300 s.
  // undici counts that time with timer ticks of its own, which the fake clock drives: one clock for
  // every case, as undici keeps its tick timer from one request to the next.
  describe('providerFetch', () => {
    beforeAll(() =>
      jest.useFakeTimers({
        doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate', 'Date', 'performance', 'hrtime'],
      }),
    );
    afterAll(() => jest.useRealTimers());

    it.each([
      ['direct', async () => ({ proxy: undefined, close: async () => undefined })],
      [
        'through the proxy',
        async () => {
          const tunnel = await ConnectProxy.start();
          const proxy = new UpstreamProxy({ httpProxy: tunnel.url });
          return { proxy, tunnel, close: async () => Promise.all([proxy.close(), tunnel.close()]) };
        },
      ],
    ] as const)(
      'waits past 300 s for the headers and between body bytes (%s): the gateway bounds a silent turn itself',
      async (_route, setUp) => {
        const upstream = await heldUpstream();
        const route = await setUp();
        try {
          const answer = providerFetch(upstream.url, { method: 'POST', body: '{}' }, route.proxy);
          await upstream.received;
          await jest.advanceTimersByTimeAsync(301_000);
          upstream.head();
          const response = await answer;
          const reader = response.body!.getReader();
          expect(Buffer.from((await reader.read()).value).toString()).toBe('first ');
          await jest.advanceTimersByTimeAsync(301_000);
          upstream.end();
          let rest = '';
          for (let next = await reader.read(); !next.done; next = await reader.read())
            rest += Buffer.from(next.value).toString();
          expect(rest).toBe('last');
          if ('tunnel' in route) expect(route.tunnel.connections()).toHaveLength(1);
        } finally {
          upstream.close();
          await route.close();
        }
      },
    );
  });
});
