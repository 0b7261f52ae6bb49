import { UpstreamProxy } from './upstream-proxy';

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
});
