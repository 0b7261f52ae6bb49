import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { failedGrantError, postRefreshGrant, tokenEndpointFailure } from './refresh-grant';

describe(postRefreshGrant.name, () => {
  let server: http.Server;
  let tokenUrl: string;
  /** What the loopback token endpoint answers next. */
  let answer: { status: number; body: string };

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      request.resume();
      request.on('end', () =>
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    tokenUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const grant = (status: number, body: unknown) => {
    answer = { status, body: typeof body === 'string' ? body : JSON.stringify(body) };
    return postRefreshGrant(tokenUrl, { grant_type: 'refresh_token', refresh_token: 'rt' }, 30_000);
  };

  it('renews on HTTP 200 with an access token, and takes a positive expires_in', async () => {
    expect(await grant(200, { access_token: 'at-new', expires_in: 3600 })).toEqual({
      ok: true,
      accessToken: 'at-new',
      body: { access_token: 'at-new', expires_in: 3600 },
      expiresInSeconds: 3600,
    });
  });

  it('leaves the expiry unknown for an expires_in of 0, which would make every request refresh again', async () => {
    expect(await grant(200, { access_token: 'at-new', expires_in: 0 })).toMatchObject({
      ok: true,
      expiresInSeconds: undefined,
    });
  });

  // A proxy's 201/203, or an error page that carries a token anyway: only a 200 is a renewal.
  it.each([201, 203, 500])('is no renewal when HTTP %i carries an access token', async (status) => {
    expect(await grant(status, { access_token: 'at-new', error: 'server_error' })).toEqual({
      ok: false,
      status,
      errorCode: 'server_error',
    });
  });

  it('reads no more than 1 MiB of an answer: a larger one is no renewal', async () => {
    const body = JSON.stringify({ access_token: 'at-new', padding: 'x'.repeat(1024 * 1024) });
    expect(await grant(200, body)).toEqual({ ok: false, status: 200, errorCode: undefined });
  });
});

describe(tokenEndpointFailure.name, () => {
  it('is a retryable upstream error when the endpoint cannot be reached: never a login problem', () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    const failure = tokenEndpointFailure('provider_a', refused);
    expect({ code: failure.code, retryable: failure.retryable, status: failure.spec.status }).toEqual({
      code: 'upstream',
      retryable: true,
      status: 502,
    });
  });

  it('is a timeout when the endpoint did not answer within its own bound', () => {
    const failure = tokenEndpointFailure(
      'provider_b',
      new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
    );
    expect({ code: failure.code, retryable: failure.retryable, status: failure.spec.status }).toEqual({
      code: 'timeout',
      retryable: false,
      status: 504,
    });
  });
});

describe(failedGrantError.name, () => {
  it.each([
    [400, 'invalid_grant'],
    [401, 'invalid_client'],
  ])('is auth, the login to make again, when the endpoint refuses the grant (%i %s)', (status, errorCode) => {
    const failure = failedGrantError('provider_b', { ok: false, status, errorCode }, 'check the network');
    // A refusal of the refresh token: a turn served on the access token the login still had says
    // nothing of it (the pool keeps the login dead until its file changes).
    expect({
      code: failure.code,
      retryable: failure.retryable,
      detail: failure.detail,
      refreshRefused: failure.refreshRefused,
    }).toEqual({
      code: 'auth',
      retryable: false,
      detail: `provider_b token refresh refused (${status} ${errorCode})`,
      refreshRefused: true,
    });
  });

  it.each([
    ['a server error', 503, 'backend_error'],
    ['a rate limit', 429, undefined],
    ['a 200 without a token or a body that is not JSON', 200, undefined],
  ])('is a retryable upstream error with the given fix for %s: never a login problem', (_name, status, errorCode) => {
    const failure = failedGrantError('provider_c', { ok: false, status, errorCode }, 'check the network');
    expect({
      code: failure.code,
      retryable: failure.retryable,
      status: failure.spec.status,
      upstreamStatus: failure.upstreamStatus,
      fix: failure.fix,
      refreshRefused: failure.refreshRefused,
    }).toEqual({
      code: 'upstream',
      retryable: true,
      status: 502,
      upstreamStatus: status,
      fix: 'check the network',
      refreshRefused: false,
    });
  });
});
