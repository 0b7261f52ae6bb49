import { tokenEndpointFailure } from './refresh-grant';

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
