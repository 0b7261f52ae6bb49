import { failedGrantError, tokenEndpointFailure } from './refresh-grant';

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
