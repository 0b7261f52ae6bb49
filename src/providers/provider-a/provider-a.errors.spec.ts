import { isUpstreamAuthRejection } from '../shared/login-rejection';
import { GatewayError } from '../../core/gateway.error';
import { classifyUpstreamFailure, connectionFailure, namingModel, retryHints } from './provider-a.errors';

const NOW = Date.parse('2026-03-01T00:00:00Z');

describe(classifyUpstreamFailure.name, () => {
  it.each([
    [
      'usage_limit_reached type',
      { status: 429, payload: { type: 'error', status: 429, error: { type: 'usage_limit_reached' } } },
      'usage_limit',
      false,
    ],
    ['usage_not_included code', { payload: { error: { code: 'usage_not_included' } } }, 'usage_limit', false],
    [
      'insufficient_quota on a 429',
      { status: 429, payload: { error: { code: 'insufficient_quota' } } },
      'usage_limit',
      false,
    ],
    [
      'context_length_exceeded',
      { payload: { type: 'response.failed', response: { error: { code: 'context_length_exceeded' } } } },
      'context_window',
      false,
    ],
    ['plain 429', { status: 429 }, 'rate_limited', true],
    ['rate_limit_exceeded code', { payload: { error: { code: 'rate_limit_exceeded' } } }, 'rate_limited', true],
    ['401', { status: 401 }, 'auth', false],
    ['403 in an error event', { payload: { type: 'error', status: 403, error: { message: 'no' } } }, 'upstream', false],
    ['403 Cloudflare challenge page', { status: 403, payload: undefined }, 'upstream', false],
    [
      '403 saying the token is invalid',
      { status: 403, payload: { error: { message: 'Your authentication token has been invalidated.' } } },
      'auth',
      false,
    ],
    ['403 with code token_expired', { status: 403, payload: { error: { code: 'token_expired' } } }, 'auth', false],
    ['400', { status: 400 }, 'bad_request', false],
    ['404', { status: 404 }, 'bad_request', false],
    ['422', { status: 422 }, 'bad_request', false],
    ['503', { status: 503 }, 'upstream', true],
    [
      'server_error event',
      { payload: { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error' } } } },
      'upstream',
      true,
    ],
    ['unknown', { payload: { type: 'error', error: { code: 'weird' } } }, 'upstream', true],
  ])('%s → %s', (_name, failure, code, retryable) => {
    const error = classifyUpstreamFailure({ now: NOW, ...failure });
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
  });

  it('takes the usage-limit Retry-After from resets_in_seconds', () => {
    const error = classifyUpstreamFailure({
      payload: { type: 'error', status: 429, error: { type: 'usage_limit_reached', resets_in_seconds: 30 } },
      now: NOW,
    });
    expect(error.retryAfterSeconds).toBe(30);
    expect(error.retryAfterHeader).toBe(30);
  });

  it('lets the latest usage-limit reset win', () => {
    const payload = { error: { type: 'usage_limit_reached', resets_in_seconds: 30, resets_at: NOW / 1000 + 120 } };
    expect(classifyUpstreamFailure({ payload, now: NOW }).retryAfterSeconds).toBe(120);
  });

  it('falls back to the earliest exhausted telemetry window, else the table default of 300 s', () => {
    const planWindows = [
      { name: 'primary', usedRatio: 1, resetsAt: NOW + 900_000 },
      { name: 'secondary', usedRatio: 0.4, resetsAt: NOW + 10_000 },
    ];
    const payload = { error: { type: 'usage_limit_reached' } };
    expect(classifyUpstreamFailure({ payload, planWindows, now: NOW }).retryAfterSeconds).toBe(900);
    const unknown = classifyUpstreamFailure({ payload, now: NOW });
    expect(unknown.retryAfterSeconds).toBeUndefined();
    expect(unknown.retryAfterHeader).toBe(300);
  });

  it('prefers a usage-limit hint in the error to the plan-window fallback', () => {
    const planWindows = [{ name: 'primary', usedRatio: 1, resetsAt: NOW + 900_000 }];
    const payload = { error: { type: 'usage_limit_reached', resets_in_seconds: 30 } };
    expect(classifyUpstreamFailure({ payload, planWindows, now: NOW }).retryAfterSeconds).toBe(30);
  });

  it('reads several hints the same way in every branch: the latest one', () => {
    const payload = { error: { code: 'rate_limit_exceeded', resets_in_seconds: 45 } };
    expect(
      classifyUpstreamFailure({ status: 429, headers: { 'retry-after': '2' }, payload, now: NOW }).retryAfterSeconds,
    ).toBe(45);
    expect(
      classifyUpstreamFailure({
        status: 503,
        headers: { 'retry-after': '2' },
        payload: { error: { resets_in_seconds: 45 } },
        now: NOW,
      }).retryAfterSeconds,
    ).toBe(45);
    const usage = { error: { code: 'usage_limit_reached', resets_in_seconds: 45 } };
    expect(
      classifyUpstreamFailure({ status: 429, headers: { 'retry-after': '2' }, payload: usage, now: NOW })
        .retryAfterSeconds,
    ).toBe(45);
  });

  it('reads Retry-After headers as seconds or HTTP dates', () => {
    expect(classifyUpstreamFailure({ status: 429, headers: { 'retry-after': '7' }, now: NOW }).retryAfterSeconds).toBe(
      7,
    );
    const date = new Date(NOW + 12_000).toUTCString();
    expect(classifyUpstreamFailure({ status: 503, headers: { 'retry-after': date }, now: NOW }).retryAfterSeconds).toBe(
      12,
    );
  });

  it('finds hints anywhere: dashed keys, unix ms, RFC 3339 and "try again in" messages', () => {
    expect(retryHints({ a: { 'Retry-After-Seconds': '4' } }, undefined, NOW)).toEqual([4]);
    expect(retryHints({ reset_at: NOW + 5000 }, undefined, NOW)).toEqual([5]);
    expect(retryHints({ resets_at: new Date(NOW + 9000).toISOString() }, undefined, NOW)).toEqual([9]);
    expect(retryHints({ error: { message: 'Rate limit reached. Please try again in 1.5s.' } }, undefined, NOW)).toEqual(
      [1.5],
    );
    expect(retryHints({ error: { message: 'try again in 250ms' } }, undefined, NOW)).toEqual([0.25]);
  });

  it('finds hints nested up to eight levels deep, and none deeper', () => {
    const nest = (levels: number): unknown => {
      let value: unknown = { retry_after: 6 };
      for (let i = 0; i < levels; i++) value = { inner: value };
      return value;
    };
    // The object holding the hint sits at depth `levels`; depth 8 is the last one read.
    expect(retryHints(nest(3), undefined, NOW)).toEqual([6]);
    expect(retryHints(nest(8), undefined, NOW)).toEqual([6]);
    expect(retryHints(nest(9), undefined, NOW)).toEqual([]);
  });

  it('never copies the upstream message into the error (secrets stay out)', () => {
    const secret = 'sk-SECRET-abc123 Bearer eyJhbGciOi';
    const error = classifyUpstreamFailure({
      status: 500,
      payload: { error: { code: 'server_error', message: secret } },
      now: NOW,
    });
    expect(JSON.stringify({ message: error.message, detail: error.detail, public: error.publicMessage })).not.toContain(
      'SECRET',
    );
    expect(error.detail).toBe('upstream status 500 code server_error');
  });

  it('keeps dotted codes, which are plain identifiers, in the detail and the log', () => {
    const error = classifyUpstreamFailure({
      status: 500,
      payload: { error: { code: 'server_error.overloaded' } },
      now: NOW,
    });
    expect(error.detail).toBe('upstream status 500 code server_error.overloaded');
    expect(error.upstream?.code).toBe('server_error.overloaded');
  });

  it('tells a client a plain 403 is an upstream refusal with its status', () => {
    const error = classifyUpstreamFailure({ status: 403, now: NOW });
    expect(error.publicMessage).toBe('the upstream refused access (HTTP 403)');
  });

  it('leaves out codes that are not plain identifiers', () => {
    const error = classifyUpstreamFailure({ payload: { error: { code: 'has spaces and a secret sk-1' } }, now: NOW });
    expect(error.detail).toBe('upstream');
  });

  it('marks connection failures as retryable upstream errors and refreshes only on an upstream 401', () => {
    const failure = connectionFailure('early close', Object.assign(new Error('secret text'), { code: 'ECONNRESET' }));
    expect(failure.code).toBe('upstream');
    expect(failure.retryable).toBe(true);
    expect(failure.cause).toEqual({ name: 'Error', code: 'ECONNRESET' });
    expect(isUpstreamAuthRejection(classifyUpstreamFailure({ status: 401 }))).toBe(true);
    expect(isUpstreamAuthRejection(classifyUpstreamFailure({ status: 403 }))).toBe(false);
    expect(
      isUpstreamAuthRejection(classifyUpstreamFailure({ status: 403, payload: { error: { code: 'invalid_token' } } })),
    ).toBe(false);
    const forbidden = classifyUpstreamFailure({ status: 403 });
    expect(forbidden.publicMessage ?? forbidden.spec.message).not.toMatch(/log in/);
    expect(isUpstreamAuthRejection(failure)).toBe(false);
  });

  it("logs the errno of a network error wrapped in another error's cause", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const failure = connectionFailure('connect failed', new TypeError('fetch failed', { cause: refused }));
    expect(failure.cause).toEqual({ name: 'TypeError', code: 'ECONNREFUSED' });
  });
});

describe('model refusals: model errors, not request or login errors', () => {
  it.each([
    [
      400,
      { error: { message: "The 'gpt-6-luna' model requires a newer version of Codex. Please upgrade." } },
      'model_requires_newer_client',
    ],
    [
      400,
      { error: { message: "The 'gpt-6-luna' model is not supported when using Codex with a ChatGPT account." } },
      'model_not_entitled',
    ],
    [404, { detail: 'Model not found' }, 'not_found'],
    [404, { error: { code: 'model_not_found', message: 'x' } }, 'not_found'],
    [
      undefined,
      { type: 'error', status: 400, error: { message: "The 'x' model requires a newer version of Codex." } },
      'model_requires_newer_client',
    ],
  ])('status %s %j → %s, never retried', (status, payload, code) => {
    const error = classifyUpstreamFailure({ status, payload });
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(false);
    expect(isUpstreamAuthRejection(error)).toBe(false);
  });

  it('keeps other 400s and 404s as they were', () => {
    expect(classifyUpstreamFailure({ status: 400, payload: { error: { message: 'Invalid input' } } }).code).toBe(
      'bad_request',
    );
    expect(classifyUpstreamFailure({ status: 404, payload: { detail: 'Not Found' } }).code).toBe('bad_request');
  });

  it('names the model and the fix in the public message, never the upstream text', () => {
    const named = namingModel(
      classifyUpstreamFailure({
        status: 400,
        payload: { error: { message: "The 'gpt-6-luna' model requires a newer version of Codex. SECRET" } },
      }),
      'gpt-6-luna',
    ) as GatewayError;
    expect(named.code).toBe('model_requires_newer_client');
    expect(named.publicMessage).toMatch(/^model "gpt-6-luna": .*GET \/v1\/models/);
    expect(named.publicMessage).not.toContain('SECRET');
    const notFound = namingModel(
      classifyUpstreamFailure({ status: 404, payload: { detail: 'Model not found' } }),
      'gpt-0',
    ) as GatewayError;
    expect(notFound.publicMessage).toContain('"gpt-0"');
    const longId = 'm'.repeat(200);
    const long = namingModel(
      classifyUpstreamFailure({ status: 404, payload: { detail: 'Model not found' } }),
      longId,
    ) as GatewayError;
    // The id is cut at 128 characters, whole up to there.
    expect(long.publicMessage).toMatch(new RegExp(`^model "m{128}": `));
    const other = new GatewayError('upstream');
    expect(namingModel(other, 'x')).toBe(other);
  });
});

describe('the upstream cause (log only)', () => {
  it("keeps the error's type, code and a sanitized message on GatewayError.upstream, never in what a client sees", () => {
    const failure = classifyUpstreamFailure({
      status: 429,
      payload: {
        error: {
          type: 'rate_limit_error',
          code: 'rate_limit_exceeded',
          message: 'Slow down, key sk-proj-0123456789abcdef',
        },
      },
      now: NOW,
    });
    expect(failure.upstream).toEqual({
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      message: 'Slow down, key [redacted]',
    });
    expect(failure.publicMessage ?? failure.spec.message).not.toContain('Slow down');
    expect(failure.detail).not.toContain('Slow down');
  });
});
