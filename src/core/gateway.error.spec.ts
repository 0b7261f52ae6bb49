import { GatewayError } from './gateway.error';

describe('GatewayError.with', () => {
  const original = new GatewayError('usage_limit', {
    publicMessage: 'our words',
    param: 'model',
    details: ['one'],
    retryAfterSeconds: 60,
    detail: 'for the log',
    fix: 'what the operator does',
    upstreamStatus: 429,
    retryable: true,
    resetsAt: Date.UTC(2030, 0, 1),
    provider: 'provider_c',
    upstream: { type: 'rate_limit_error', code: 'usage_limit_reached', message: 'limit' },
    cause: new Error('root'),
  });

  it('keeps every field it is not told to change', () => {
    const copy = original.with({ retryAfterSeconds: 300 });
    expect(copy).not.toBe(original);
    expect(copy).toBeInstanceOf(GatewayError);
    expect({ ...copy, message: copy.message, cause: copy.cause }).toEqual({
      ...original,
      message: original.message,
      cause: original.cause,
      retryAfterSeconds: 300,
    });
  });

  it('changes only what it is given, the cause included', () => {
    const copy = original.with({ publicMessage: 'upstream error', cause: original });
    expect(copy.publicMessage).toBe('upstream error');
    expect(copy.cause).toBe(original);
    expect(copy.resetsAt).toBe(Date.UTC(2030, 0, 1));
    expect(copy.upstream).toBe(original.upstream);
    expect(copy.provider).toBe('provider_c');
  });
});
