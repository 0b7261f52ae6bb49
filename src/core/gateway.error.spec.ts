import { ClientDisconnectedError, clientLeft, endedByGateway, GatewayError, isCanceled } from './gateway.error';

describe('GatewayError.with', () => {
  const original = new GatewayError('usage_limit', {
    publicMessage: 'our words',
    param: 'model',
    quotesRequest: true,
    details: ['one'],
    retryAfterSeconds: 60,
    detail: 'for the log',
    fix: 'what the operator does',
    upstreamStatus: 429,
    retryable: true,
    resetsAt: Date.UTC(2030, 0, 1),
    limitsModel: true,
    provider: 'provider_c',
    upstream: { type: 'rate_limit_error', code: 'usage_limit_reached', message: 'limit' },
    loginFileCause: true,
    refreshRefused: true,
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

describe('GatewayError', () => {
  it('claims nothing it is not told: it quotes no request, is not retried, and blames neither a model, a login file nor a refresh', () => {
    const error = new GatewayError('upstream');
    expect({
      quotesRequest: error.quotesRequest,
      retryable: error.retryable,
      limitsModel: error.limitsModel,
      loginFileCause: error.loginFileCause,
      refreshRefused: error.refreshRefused,
    }).toEqual({
      quotesRequest: false,
      retryable: false,
      limitsModel: false,
      loginFileCause: false,
      refreshRefused: false,
    });
  });

  it('names its code and the internal detail in its own message, for a stack trace', () => {
    expect(new GatewayError('upstream', { detail: 'socket hang up' }).message).toBe('upstream: socket hang up');
    expect(new GatewayError('upstream').message).toBe('upstream');
  });
});

describe('GatewayError.retryAfterHeader', () => {
  it('is the hint in whole seconds rounded up and at least 1, else the table default, else none', () => {
    expect(new GatewayError('rate_limited', { retryAfterSeconds: 1.2 }).retryAfterHeader).toBe(2);
    expect(new GatewayError('rate_limited', { retryAfterSeconds: 0 }).retryAfterHeader).toBe(1);
    expect(new GatewayError('usage_limit').retryAfterHeader).toBe(300);
    expect(new GatewayError('upstream').retryAfterHeader).toBeUndefined();
  });
});

describe('who ended a request', () => {
  const aborted = (reason: unknown): AbortSignal => {
    const controller = new AbortController();
    controller.abort(reason);
    return controller.signal;
  };

  it('is the client when it left, and the gateway when it ended the turn with an error of its own (a drain, a timeout)', () => {
    const draining = new GatewayError('draining');
    expect(clientLeft(aborted(new ClientDisconnectedError()))).toBe(true);
    expect(clientLeft(aborted(draining))).toBe(false);
    expect(clientLeft(new AbortController().signal)).toBe(false);
    expect(clientLeft(undefined)).toBe(false);
    expect(endedByGateway(aborted(draining))).toBe(draining);
    expect(endedByGateway(aborted(new ClientDisconnectedError()))).toBeUndefined();
  });

  it('takes only the canceled error for a client that left before its body ended', () => {
    expect(isCanceled(new GatewayError('canceled'))).toBe(true);
    expect(isCanceled(new GatewayError('timeout'))).toBe(false);
    expect(isCanceled(new Error('canceled'))).toBe(false);
  });
});
