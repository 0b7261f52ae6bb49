import { closedLoopbackPort } from './support/closed-port';
import { ConnectProxy } from './support/connect-proxy';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import type { FakeCodeAssist } from './support/fake-provider-b';
import { useFakeProviderB } from './support/provider-b-harness';
import { providerBSettings } from './support/provider-b-fixtures';
import { postChatBody } from './support/chat-sse';

/**
 * HTTPS_PROXY / HTTP_PROXY / NO_PROXY for provider_b (docs/configuration.md): setup, generate calls and the
 * token refresh go through a recording CONNECT proxy. The fake listens on plain http://, so
 * HTTP_PROXY is the variable that applies (HTTPS_PROXY is covered by the shared unit spec).
 */
describe('provider_b through an egress proxy', () => {
  let proxy: ConnectProxy;
  let fake: FakeCodeAssist;
  let home: string;
  let gateway: TestGateway | undefined;

  // Registered first so the gateway closes before the fake and the home go away.
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });
  const harness = useFakeProviderB({ homePrefix: 'pb-proxy-' });
  beforeAll(async () => {
    proxy = await ConnectProxy.start();
  });
  afterAll(() => proxy.close());
  beforeEach(() => {
    proxy.reset();
    fake = harness.fake();
    home = harness.home();
  });

  const fakeTarget = () => `127.0.0.1:${new URL(fake.baseUrl).port}`;
  const chat = (gw: TestGateway, stream = true) =>
    postChatBody(gw, { model: 'gemini-2.5-pro', stream, messages: [{ role: 'user', content: 'hi' }] });

  it('tunnels setup, the token refresh and the generate calls through HTTP_PROXY', async () => {
    gateway = await startGateway({
      ...providerBSettings(fake, home, { creds: { expiryDateMs: Date.now() - 1000 } }),
      GATEWAY_PROVIDERS: 'provider_b',
      HTTP_PROXY: proxy.url,
    });
    expect((await chat(gateway)).status).toBe(200);
    expect((await chat(gateway, false)).status).toBe(200);
    expect(fake.requests().map((request) => request.route)).toEqual([
      'token',
      'loadCodeAssist',
      'streamGenerateContent',
      'generateContent',
    ]);
    expect(proxy.connections().length).toBeGreaterThanOrEqual(1);
    expect(proxy.connections().every((entry) => entry.method === 'CONNECT' && entry.target === fakeTarget())).toBe(
      true,
    );
  });

  it('fails with 502 when the proxy refuses: the traffic really depends on it', async () => {
    gateway = await startGateway({
      ...providerBSettings(fake, home),
      GATEWAY_PROVIDERS: 'provider_b',
      HTTP_PROXY: proxy.url,
    });
    proxy.refuse();
    const response = await chat(gateway);
    expect(response.status).toBe(502);
    expect(fake.requests()).toHaveLength(0);
    expect(proxy.connections().length).toBeGreaterThanOrEqual(1);
  });

  it('refreshes an expired token through the proxy too: when it refuses, not even the token endpoint is reached', async () => {
    gateway = await startGateway({
      ...providerBSettings(fake, home, { creds: { expiryDateMs: Date.now() - 1000 } }),
      GATEWAY_PROVIDERS: 'provider_b',
      HTTP_PROXY: proxy.url,
    });
    proxy.refuse();
    expect((await chat(gateway)).status).toBe(502);
    expect(fake.requests()).toEqual([]);
    expect(proxy.connections().length).toBeGreaterThanOrEqual(1);
  });

  it('goes direct for a host in NO_PROXY (read in lower case too)', async () => {
    gateway = await startGateway({
      ...providerBSettings(fake, home),
      GATEWAY_PROVIDERS: 'provider_b',
      HTTP_PROXY: proxy.url,
      no_proxy: 'localhost,127.0.0.1',
    });
    expect((await chat(gateway)).status).toBe(200);
    expect(proxy.connections()).toEqual([]);
  });

  it('names the errno, the host and the setting when PROVIDER_B_URL refuses', async () => {
    const port = await closedLoopbackPort();
    gateway = await startGateway({
      ...providerBSettings(fake, home, { project: 'test-project' }),
      GATEWAY_PROVIDERS: 'provider_b',
      PROVIDER_B_URL: `http://127.0.0.1:${port}/v1internal`,
    });
    expect((await chat(gateway)).status).toBe(502);
    const lines = gateway.logs.records('upstream_turn_failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      error_code: 'upstream',
      upstream_errno: 'ECONNREFUSED',
      upstream_host: `127.0.0.1:${port}`,
    });
    expect(lines[0].fix).toMatch(/PROVIDER_B_URL.*HTTPS_PROXY/);
    // A refused connection is a network blip until proven otherwise: retried before the 502.
    expect(gateway.logs.records('upstream_retry').length).toBeGreaterThan(0);
  });

  it('names the proxy, never its credentials, when the proxy cannot be reached', async () => {
    const port = await closedLoopbackPort();
    gateway = await startGateway({
      ...providerBSettings(fake, home, { project: 'test-project' }),
      GATEWAY_PROVIDERS: 'provider_b',
      HTTP_PROXY: `http://someone:proxy-password@127.0.0.1:${port}`,
    });
    expect((await chat(gateway)).status).toBe(502);
    const [line] = gateway.logs.records('upstream_turn_failed');
    expect(line).toMatchObject({ upstream_errno: 'ECONNREFUSED', proxy_host: `127.0.0.1:${port}` });
    expect(gateway.logs.text).not.toContain('proxy-password');
  });
});
