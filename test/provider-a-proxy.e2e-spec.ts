import * as path from 'node:path';
import { closedLoopbackPort } from './support/closed-port';
import { ConnectProxy } from './support/connect-proxy';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { created, providerASettings, textDelta, textReply } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { postChatBody, readUntil } from './support/chat-sse';

type Json = Record<string, any>;

/**
 * HTTPS_PROXY / HTTP_PROXY / NO_PROXY for provider_a: the WebSocket, the SSE POST and the token
 * refresh all go through a recording CONNECT proxy (the fake listens on plain ws:// and http://,
 * so HTTP_PROXY is the variable that applies; HTTPS_PROXY is covered by the unit spec).
 */
describe('provider_a through an egress proxy', () => {
  let proxy: ConnectProxy;
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-proxy-', homeScope: 'test' });
  beforeAll(async () => {
    proxy = await ConnectProxy.start();
  });
  afterAll(() => proxy.close());
  beforeEach(() => proxy.reset());

  const fakePort = () => new URL(fake().httpUrl).port;
  const chat = (gw: TestGateway, body: Json = {}) =>
    postChatBody(gw, { model: 'gpt-6.1-sol', messages: [{ role: 'user', content: 'hi' }], ...body });
  /** A provider_a gateway on `transport` with the proxy settings given (a home per transport). */
  const startOver = async (transport: 'ws' | 'sse', proxySettings: Record<string, string>) =>
    (gateway = await startGateway({
      ...providerASettings(fake(), path.join(home(), transport), { transport }),
      GATEWAY_PROVIDERS: 'provider_a',
      ...proxySettings,
    }));

  it.each(['ws', 'sse'] as const)(
    'tunnels the %s transport through HTTP_PROXY (read in lower case too)',
    async (transport) => {
      const gw = await startOver(transport, { http_proxy: proxy.url });
      fake().enqueue(textReply('via proxy'));
      const response = await chat(gw);
      expect(response.status).toBe(200);
      expect(((await response.json()) as Json).choices[0].message.content).toBe('via proxy');
      expect(proxy.connections()).toEqual([
        { method: 'CONNECT', target: `127.0.0.1:${fakePort()}`, proxyAuthorization: undefined },
      ]);
    },
  );

  it.each(['ws', 'sse'] as const)(
    'reads the upstream answer headers through the proxy over %s: a 429 keeps its Retry-After',
    async (transport) => {
      const gw = await startOver(transport, { HTTP_PROXY: proxy.url });
      // Beyond the retry cap, so the hint goes to the client instead of being waited out.
      fake().enqueue({
        reject: { status: 429, headers: { 'retry-after': '60' }, body: { error: { code: 'rate_limit_exceeded' } } },
        frames: [],
      });
      const response = await chat(gw);
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('60');
      expect(proxy.connections()).toHaveLength(1);
    },
  );

  it.each(['ws', 'sse'] as const)(
    'closes the upstream connection through the proxy when the client leaves over %s',
    async (transport) => {
      const gw = await startOver(transport, { HTTP_PROXY: proxy.url });
      fake().enqueue({ frames: [created(), textDelta('first')], holdOpen: true });
      const client = new AbortController();
      const response = await postChatBody(
        gw,
        { model: 'gpt-6.1-sol', messages: [{ role: 'user', content: 'hi' }], stream: true },
        { signal: client.signal },
      );
      await readUntil(response.body!.getReader(), 'first');
      client.abort();
      const [recorded] = fake().requests();
      await recorded.closedByClient;
      expect(proxy.connections()).toHaveLength(1);
    },
  );

  it('sends the token refresh through the proxy as well', async () => {
    gateway = await startGateway({
      ...providerASettings(fake(), home(), { transport: 'sse', auth: { exp: Math.floor(Date.now() / 1000) - 60 } }),
      GATEWAY_PROVIDERS: 'provider_a',
      HTTP_PROXY: proxy.url,
    });
    fake().enqueue(textReply('refreshed'));
    expect((await chat(gateway)).status).toBe(200);
    expect(fake().tokenRequests()).toHaveLength(1);
    expect(proxy.connections().length).toBeGreaterThanOrEqual(1);
    expect(
      proxy.connections().every((entry) => entry.method === 'CONNECT' && entry.target === `127.0.0.1:${fakePort()}`),
    ).toBe(true);
  });

  it.each(['ws', 'sse'] as const)(
    'fails with 502 over %s when the proxy refuses: the traffic really depends on it',
    async (transport) => {
      const gw = await startOver(transport, { HTTP_PROXY: proxy.url });
      proxy.refuse();
      fake().enqueue(textReply('never'), textReply('never'), textReply('never'));
      const response = await chat(gw);
      expect(response.status).toBe(502);
      expect(fake().requests()).toHaveLength(0);
      expect(proxy.connections().length).toBeGreaterThanOrEqual(1);
    },
  );

  it.each(['ws', 'sse'] as const)('goes direct over %s for a host in NO_PROXY', async (transport) => {
    const gw = await startOver(transport, {
      HTTP_PROXY: proxy.url,
      HTTPS_PROXY: proxy.url,
      NO_PROXY: 'localhost,127.0.0.1',
    });
    fake().enqueue(textReply('direct'));
    expect((await chat(gw)).status).toBe(200);
    expect(proxy.connections()).toEqual([]);
  });

  /** The turn's failure line: the one line an operator reads for a 502. */
  const turnFailed = (gw: TestGateway) => {
    const lines = gw.logs.records('upstream_turn_failed');
    expect(lines).toHaveLength(1);
    return lines[0];
  };

  it.each(['ws', 'sse'] as const)(
    'names the errno, the host and the setting when PROVIDER_A_URL refuses over %s',
    async (transport) => {
      const port = await closedLoopbackPort();
      const url =
        transport === 'ws' ? `ws://127.0.0.1:${port}/backend-api/codex` : `http://127.0.0.1:${port}/backend-api/codex`;
      const gw = await startOver(transport, { PROVIDER_A_URL: url });
      expect((await chat(gw)).status).toBe(502);
      const line = turnFailed(gw);
      expect(line).toMatchObject({
        error_code: 'upstream',
        upstream_errno: 'ECONNREFUSED',
        upstream_host: `127.0.0.1:${port}`,
      });
      expect(line).not.toHaveProperty('proxy_host');
      expect(line.fix).toMatch(/PROVIDER_A_URL.*HTTPS_PROXY/);
      expect(JSON.stringify(line)).not.toContain('/backend-api');
    },
  );

  it.each(['ws', 'sse'] as const)(
    'names the proxy, never its credentials, when the proxy cannot be reached over %s',
    async (transport) => {
      const port = await closedLoopbackPort();
      const gw = await startOver(transport, { HTTP_PROXY: `http://someone:proxy-password@127.0.0.1:${port}` });
      expect((await chat(gw)).status).toBe(502);
      const line = turnFailed(gw);
      expect(line).toMatchObject({
        upstream_errno: 'ECONNREFUSED',
        upstream_host: `127.0.0.1:${fakePort()}`,
        proxy_host: `127.0.0.1:${port}`,
      });
      expect(line.fix).toMatch(/HTTPS_PROXY.*NO_PROXY/);
      expect(gw.logs.text).not.toContain('proxy-password');
      expect(gw.logs.text).not.toContain('someone');
    },
  );
});
