import { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { connectionCause } from './connection-failure';

/** fetch's shape: a TypeError whose cause is the socket's error. */
function fetchFailed(code: string): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(`getaddrinfo ${code}`), { code }) });
}

describe('connectionCause', () => {
  it("names the errno from fetch's cause, the host without path or query, and DNS for a name that does not resolve", () => {
    expect(
      connectionCause(fetchFailed('ENOTFOUND'), {
        url: 'https://api.invalid/v1/responses?key=secret',
        setting: 'PROVIDER_X_URL',
      }),
    ).toEqual({
      errno: 'ENOTFOUND',
      host: 'api.invalid',
      proxyHost: undefined,
      fix: "the upstream's host name did not resolve: check PROVIDER_X_URL and this machine's DNS, or set HTTPS_PROXY if the upstream is reachable only through a proxy",
    });
  });

  it("names the proxy's host and port, never its credentials, and NO_PROXY", () => {
    const proxy = new UpstreamProxy({ httpsProxy: 'http://user:pass@proxy.internal:3128' });
    const cause = connectionCause(fetchFailed('ECONNREFUSED'), {
      url: 'https://api.example:8443/x',
      setting: 'PROVIDER_X_URL',
      proxy,
    });
    expect(cause).toMatchObject({ errno: 'ECONNREFUSED', host: 'api.example:8443', proxyHost: 'proxy.internal:3128' });
    expect(cause.fix).toMatch(/proxy\.internal:3128.*NO_PROXY.*PROVIDER_X_URL/);
    expect(JSON.stringify(cause)).not.toMatch(/user|pass@/);
  });

  it('reads the first error of an AggregateError, and keeps only what looks like an error code', () => {
    const both = new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], 'connect failed');
    expect(connectionCause(both, { url: 'ws://127.0.0.1:9/', setting: 'S' }).errno).toBe('ECONNREFUSED');
    const odd = Object.assign(new Error('x'), { code: 'some text with spaces' });
    expect(connectionCause(odd, { url: 'ws://127.0.0.1:9/', setting: 'S' }).errno).toBeUndefined();
  });
});
