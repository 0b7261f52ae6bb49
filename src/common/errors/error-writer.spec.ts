import { errorSpec, errorTable } from '../../core/error-codes';
import { familyIds, familyOf } from '../../core/family-registry';
import { GatewayError } from '../../core/gateway.error';
import {
  CLIENT_RETRY_AFTER_MAX_SECONDS,
  clientErrorLogFields,
  errorAnswer,
  markStructuredRoute,
  rawErrorResponse,
  shouldRetryHeader,
  streamErrorContent,
  writeErrorResponse,
} from './error-writer';

describe(errorAnswer.name, () => {
  it('renders the OpenAI shape with param null and our message, never the internal detail', () => {
    const error = new GatewayError('upstream', { detail: 'upstream said: secret stack trace' });
    expect(errorAnswer(error, 'openai')).toEqual({
      status: 502,
      headers: [],
      body: {
        error: {
          message:
            "the upstream failed to answer; retry in a few seconds. If it keeps failing, the gateway's operator finds the cause in the gateway log under this response's x-request-id",
          type: 'upstream_error',
          code: 'upstream_error',
          param: null,
        },
      },
    });
  });

  it('renders the structured shape with details, the request id echo and the contract version', () => {
    const error = new GatewayError('invalid_schema', { details: ['$ref is not supported'] });
    expect(errorAnswer(error, 'structured', { requestId: 'req-1' })).toEqual({
      status: 400,
      headers: [['x-should-retry', 'false']],
      body: {
        error: {
          code: 'invalid_schema',
          message: 'schema uses unsupported constructs',
          details: ['$ref is not supported'],
        },
        request_id: 'req-1',
        contract_version: '2.0.0',
      },
    });
  });

  it("names the request field the error is about in the OpenAI shape's param", () => {
    expect(errorAnswer(new GatewayError('unsupported_parameter', { param: 'n' }), 'openai').body).toMatchObject({
      error: { code: 'unsupported_parameter', param: 'n' },
    });
  });

  it('turns anything else thrown into the table through toGatewayError', () => {
    expect(errorAnswer(new Error('boom'), 'openai')).toEqual({
      status: 500,
      headers: [],
      body: { error: { message: 'internal error', type: 'server_error', code: 'internal_error', param: null } },
    });
    expect(errorAnswer(new Error('boom'), 'structured').status).toBe(502);
  });

  it('adds Retry-After (the hint rounded up, else the table default) and x-should-retry on 429 and 503, and Connection: close when asked', () => {
    expect(errorAnswer(new GatewayError('rate_limited', { retryAfterSeconds: 1.2 }), 'openai').headers).toEqual([
      ['Retry-After', '2'],
      ['x-should-retry', 'true'],
    ]);
    expect(errorAnswer(new GatewayError('draining'), 'structured').headers).toEqual([
      ['Retry-After', '5'],
      ['x-should-retry', 'true'],
    ]);
    expect(errorAnswer(new GatewayError('invalid_request'), 'openai', { connectionClose: true }).headers).toEqual([
      ['x-should-retry', 'false'],
      ['Connection', 'close'],
    ]);
  });

  it('echoes only a usable request_id, and only in the structured shape', () => {
    expect(errorAnswer(new GatewayError('invalid_request'), 'structured', { requestId: ' ' }).body).not.toHaveProperty(
      'request_id',
    );
    expect(
      errorAnswer(new GatewayError('invalid_request'), 'structured', { requestId: 'x'.repeat(129) }).body,
    ).not.toHaveProperty('request_id');
    // The bound is 128 code points, itself included: an id of astral characters is twice as long in UTF-16.
    for (const requestId of ['x'.repeat(128), '😀'.repeat(128)])
      expect(errorAnswer(new GatewayError('invalid_request'), 'structured', { requestId }).body).toHaveProperty(
        'request_id',
        requestId,
      );
    expect(
      errorAnswer(new GatewayError('invalid_request'), 'structured', { requestId: '😀'.repeat(129) }).body,
    ).not.toHaveProperty('request_id');
    expect(errorAnswer(new GatewayError('invalid_request'), 'openai', { requestId: 'req-1' }).body).not.toHaveProperty(
      'request_id',
    );
  });
});

describe(writeErrorResponse.name, () => {
  /** A response that records what was written on it. */
  const recordingResponse = (headersSent = false) => ({
    headersSent,
    writableEnded: false,
    setHeader: jest.fn(),
    status: jest.fn(function (this: unknown) {
      return this;
    }),
    json: jest.fn(),
    end: jest.fn(),
  });

  it("echoes a structured request's own request_id in its contract's error shape", () => {
    const request = { body: { request_id: 'req-7' } };
    markStructuredRoute()(request as never, {} as never, () => undefined);
    const response = recordingResponse();
    writeErrorResponse(request as never, response as never, new GatewayError('invalid_schema'));
    expect(response.status.mock.calls).toEqual([[400]]);
    expect(response.json.mock.calls).toEqual([
      [
        {
          error: { code: 'invalid_schema', message: 'schema uses unsupported constructs' },
          request_id: 'req-7',
          contract_version: '2.0.0',
        },
      ],
    ]);
  });

  it('only ends a response whose headers already went out: the stream owns its error', () => {
    const response = recordingResponse(true);
    writeErrorResponse({} as never, response as never, new GatewayError('upstream'));
    expect([response.setHeader, response.status, response.json, response.end].map((fn) => fn.mock.calls)).toEqual([
      [],
      [],
      [],
      [[]],
    ]);
  });

  it('writes nothing for a client that left (canceled): its connection is gone', () => {
    const response = { headersSent: false, setHeader: jest.fn(), status: jest.fn(), json: jest.fn(), end: jest.fn() };
    writeErrorResponse({} as never, response as never, new GatewayError('canceled'));
    expect([response.setHeader, response.status, response.json, response.end].map((fn) => fn.mock.calls)).toEqual([
      [],
      [],
      [],
      [],
    ]);
  });
});

describe(rawErrorResponse.name, () => {
  it('writes the OpenAI answer as one HTTP/1.1 response with Content-Length, its x-request-id and Connection: close', () => {
    const { status, bytes } = rawErrorResponse(new GatewayError('headers_too_large'), 'the-request-id');
    const body =
      '{"error":{"message":"the request headers exceed the maximum size","type":"invalid_request_error","code":"request_header_fields_too_large","param":null}}';
    expect(status).toBe(431);
    expect(bytes.toString('latin1')).toBe(
      'HTTP/1.1 431 Request Header Fields Too Large\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${body.length}\r\n` +
        'x-request-id: the-request-id\r\n' +
        'x-should-retry: false\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
});

describe('the log fields of an answered error', () => {
  it("give a client error's param and the words the client got, bounded to 400 code points", () => {
    expect(
      clientErrorLogFields(new GatewayError('unsupported_parameter', { param: 'n', publicMessage: 'n must be 1' })),
    ).toEqual({ param: 'n', error_message: 'n must be 1' });
    const long = clientErrorLogFields(new GatewayError('invalid_request', { publicMessage: 'x'.repeat(1000) }));
    expect(long.error_message).toBe('x'.repeat(400));
  });

  it("keep only the param of a message that quotes the client's request", () => {
    const quoting = new GatewayError('invalid_schema', {
      param: 'schema',
      quotesRequest: true,
      publicMessage: 'schema/properties/secret: must be object',
    });
    expect(clientErrorLogFields(quoting)).toEqual({ param: 'schema' });
  });

  it('name the code of every answer, and the words only of a client error (4xx, not a client that left)', () => {
    expect(rawErrorResponse(new GatewayError('request_timeout'), 'id').logFields).toEqual({
      error_code: 'request_timeout',
      param: undefined,
      error_message: 'the request did not arrive in time',
    });
    expect(rawErrorResponse(new GatewayError('internal'), 'id').logFields).toEqual({ error_code: 'internal' });
    expect(rawErrorResponse(new GatewayError('canceled'), 'id').logFields).toEqual({ error_code: 'canceled' });
  });
});

describe(streamErrorContent.name, () => {
  it("is the table's stream text in the contract's brackets", () => {
    expect(streamErrorContent(new GatewayError('usage_limit', { provider: 'provider_a' }))).toBe(
      '[error: usage limit reached]',
    );
  });
});

describe('failures of a known family name the fix', () => {
  it.each([
    ['provider_a', 'Codex CLI', '`codex login`'],
    ['provider_b', 'Gemini CLI', '"Login with Google"'],
    ['provider_c', 'Claude Code CLI', '`/login`'],
  ] as const)('%s: a missing login is a 403 upstream_login_required naming %s and %s', (provider, cli, command) => {
    const { status, body } = errorAnswer(new GatewayError('auth', { provider }), 'openai');
    expect(status).toBe(403);
    expect(body).toEqual({
      error: {
        message: expect.stringContaining(command),
        type: 'permission_error',
        code: 'upstream_login_required',
        param: null,
      },
    });
    expect(JSON.stringify(body)).toContain(cli);
    // Structured inference keeps the contract's auth_error 401, with the same message.
    const structured = errorAnswer(new GatewayError('auth', { provider }), 'structured');
    expect(structured).toMatchObject({
      status: 401,
      body: { error: { code: 'auth_error', message: expect.stringContaining(command) } },
    });
  });

  it('names the install for a missing claude, and the reset of a spent credit', () => {
    expect(
      errorAnswer(new GatewayError('provider_cli_missing', { provider: 'provider_c' }), 'openai').body,
    ).toMatchObject({
      error: {
        code: 'provider_cli_missing',
        message: expect.stringContaining('npm install -g @anthropic-ai/claude-code'),
      },
    });
    const credit = errorAnswer(
      new GatewayError('usage_credit_exhausted', {
        provider: 'provider_c',
        resetsAt: Date.UTC(2030, 2, 17, 17, 46, 40),
      }),
      'openai',
    );
    expect(credit).toEqual({
      status: 429,
      headers: [
        ['Retry-After', '3600'],
        ['x-should-retry', 'false'],
      ],
      body: {
        error: {
          message: expect.stringContaining('the usage credit of this Claude Code CLI login is used up'),
          type: 'insufficient_quota',
          code: 'insufficient_quota',
          param: null,
        },
      },
    });
    expect(JSON.stringify(credit.body)).toContain('resets 2030-03-17T17:46:40.000Z');
  });

  it('keeps an explicit public message, and the generic one when the family is unknown', () => {
    expect(
      errorAnswer(new GatewayError('auth', { provider: 'provider_a', publicMessage: 'ours' }), 'openai').body,
    ).toMatchObject({ error: { message: 'ours' } });
    expect(errorAnswer(new GatewayError('auth'), 'openai').body).toMatchObject({
      error: { message: errorSpec('auth').message },
    });
  });
});

describe('every 429 says when', () => {
  const families = familyIds();
  /** The 429s an upstream family answers with, and the gateway's own refusals on a login's behalf. */
  const familyCodes = [...errorTable().keys()].filter(
    (code) => errorSpec(code).status === 429 && !code.startsWith('queue_'),
  );

  it.each(families.flatMap((provider) => familyCodes.map((code) => [provider, code] as const)))(
    '%s %s: the message carries the wait its Retry-After says',
    (provider, code) => {
      const answer = errorAnswer(new GatewayError(code, { provider, retryAfterSeconds: 39.2 }), 'openai');
      expect(answer.headers).toEqual([
        ['Retry-After', '40'],
        ['x-should-retry', 'true'],
      ]);
      const { message } = (answer.body as { error: { message: string } }).error;
      // A family whose vendor bills no paid usage never meets paid_usage_not_allowed: the table's words stand.
      if (code === 'paid_usage_not_allowed' && familyOf(provider).fix.paidUsage === undefined) return;
      expect(message).toContain('retry in 40 s');
      expect(message).toContain(provider);
    },
  );

  it('names a reported reset and the wait, which may be shorter when the pool has another login sooner', () => {
    const resetsAt = Date.UTC(2030, 2, 17, 17, 46, 40);
    const limited = new GatewayError('usage_limit', { provider: 'provider_c', resetsAt });
    expect((errorAnswer(limited, 'openai').body as { error: { message: string } }).error.message).toBe(
      'provider_c: this Claude Code CLI login reached its usage limit (resets 2030-03-17T17:46:40.000Z); retry after the reset, or add another login',
    );
    const moved = limited.with({ retryAfterSeconds: 295 });
    expect((errorAnswer(moved, 'structured').body as { error: { message: string } }).error.message).toBe(
      'provider_c: this Claude Code CLI login reached its usage limit (resets 2030-03-17T17:46:40.000Z); retry in 5 min, or add another login',
    );
  });

  it("keeps the family's own words when nothing says when", () => {
    const answer = errorAnswer(new GatewayError('rate_limited', { provider: 'provider_b' }), 'openai');
    expect(answer.headers).toEqual([
      ['Retry-After', '5'],
      ['x-should-retry', 'true'],
    ]);
    expect(answer.body).toMatchObject({
      error: { message: 'provider_b: the upstream is rate limiting this Gemini CLI login; retry later' },
    });
  });

  it("says the queue's own Retry-After", () => {
    for (const code of ['queue_full', 'queue_timeout'] as const) {
      const answer = errorAnswer(new GatewayError(code), 'openai');
      expect(answer.headers).toEqual([
        ['Retry-After', '5'],
        ['x-should-retry', 'true'],
      ]);
      expect((answer.body as { error: { message: string } }).error.message).toMatch(/; retry in 5 s$/);
    }
  });
});

describe('x-should-retry: whether a client may retry by itself', () => {
  const headersOf = (error: GatewayError) => Object.fromEntries(errorAnswer(error, 'openai').headers);

  it('says true up to the 60 s the openai SDK and LangChain.js wait out, false beyond', () => {
    expect(CLIENT_RETRY_AFTER_MAX_SECONDS).toBe(60);
    expect([1, 5, 59, 60].map(shouldRetryHeader)).toEqual(['true', 'true', 'true', 'true']);
    expect([61, 300, 3600, 18_000].map(shouldRetryHeader)).toEqual(['false', 'false', 'false', 'false']);
  });

  it.each(['usage_limit', 'usage_credit_exhausted', 'paid_usage_not_allowed', 'usage_paused'] as const)(
    '%s with its reset unknown: no client retry (the table wait is over the minute)',
    (code) => {
      const headers = headersOf(new GatewayError(code, { provider: 'provider_a' }));
      expect(Number(headers['Retry-After'])).toBeGreaterThan(CLIENT_RETRY_AFTER_MAX_SECONDS);
      expect(headers['x-should-retry']).toBe('false');
    },
  );

  it('a usage limit with no reset known waits 300 s, the default cooldown of the login', () => {
    expect(headersOf(new GatewayError('usage_limit'))).toEqual({ 'Retry-After': '300', 'x-should-retry': 'false' });
  });

  it('follows the wait the error knows, whatever its code: a reset within the minute may be retried', () => {
    expect(headersOf(new GatewayError('usage_limit', { retryAfterSeconds: 30 }))).toEqual({
      'Retry-After': '30',
      'x-should-retry': 'true',
    });
    expect(headersOf(new GatewayError('usage_limit', { retryAfterSeconds: 18_000 }))['x-should-retry']).toBe('false');
    // A rate limit longer than a minute: the SDK would ignore its Retry-After and ask again at once.
    expect(headersOf(new GatewayError('rate_limited', { retryAfterSeconds: 120 }))).toEqual({
      'Retry-After': '120',
      'x-should-retry': 'false',
    });
    expect(headersOf(new GatewayError('rate_limited', { retryAfterSeconds: 60 }))['x-should-retry']).toBe('true');
  });

  it('is false on every other 4xx, which the same request meets again: 409 and 422 above all, which the SDK would retry or a client might', () => {
    for (const code of [
      'invalid_request',
      'auth',
      'model_not_found',
      'idempotency_conflict',
      'output_validation_failed',
    ] as const)
      expect(headersOf(new GatewayError(code))).toEqual({ 'x-should-retry': 'false' });
    const structured = (code: 'idempotency_conflict' | 'invalid_schema' | 'auth') =>
      errorAnswer(new GatewayError(code), 'structured');
    expect(structured('idempotency_conflict')).toMatchObject({ status: 409, headers: [['x-should-retry', 'false']] });
    expect(structured('invalid_schema')).toMatchObject({ status: 400, headers: [['x-should-retry', 'false']] });
    expect(structured('auth')).toMatchObject({ status: 401, headers: [['x-should-retry', 'false']] });
  });

  it('is true on 408: a request that was too slow to arrive may make it when sent again', () => {
    expect(headersOf(new GatewayError('request_timeout'))).toEqual({ 'x-should-retry': 'true' });
  });

  it("is false on the structured route's 502 for an upstream refusal of the request: the same request meets it again", () => {
    for (const code of ['bad_request', 'context_window'] as const)
      expect(errorAnswer(new GatewayError(code), 'structured')).toMatchObject({
        status: 502,
        headers: [['x-should-retry', 'false']],
      });
  });

  it('is left to the client on the 5xx without a Retry-After', () => {
    for (const code of ['upstream', 'timeout', 'internal'] as const)
      expect(headersOf(new GatewayError(code))).toEqual({});
  });

  it('is in the raw clientError answer too', () => {
    const head = rawErrorResponse(new GatewayError('usage_limit'), 'id').bytes.toString('latin1').split('\r\n\r\n')[0];
    expect(head).toContain('\r\nRetry-After: 300\r\nx-should-retry: false\r\n');
  });
});
