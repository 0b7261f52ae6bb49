import { recordingLogger } from '../../../test/support/recorders';
import daily429 from './__fixtures__/provider-b-error-429-daily.json';
import retry429 from './__fixtures__/provider-b-error-429-retry.json';
import { UpstreamErrorEvent } from '../shared/upstream-failure';
import {
  classifyProviderBError,
  classifyProviderBFailure,
  parseProviderBError,
  parseRetryDelay,
} from './provider-b.errors';

const body = (code: number, status: string, message = 'x', details: unknown[] = []) => ({
  error: { code, message, status, details },
});
const detail = (type: string, fields: Record<string, unknown>) => ({
  '@type': `type.googleapis.com/google.rpc.${type}`,
  ...fields,
});

describe(classifyProviderBError.name, () => {
  it('429 with a PerDay quota is a terminal usage_limit, never echoing the message (docs/upstream/provider-b.md §13.23)', () => {
    // 2026-11-23T20:00:00Z is 12:00 in Los Angeles: the daily quota resets in 12 hours.
    const error = classifyProviderBError(429, daily429, Date.parse('2026-11-23T20:00:00Z'));
    expect(error).toMatchObject({ code: 'usage_limit', retryable: false, upstreamStatus: 429 });
    expect(error.retryAfterHeader).toBe(12 * 3600);
    expect(`${error.message} ${error.detail}`).not.toContain('SECRET-UPSTREAM-TEXT');
  });

  it('429 with RetryInfo is retryable rate_limited with that hint, from an array body (docs/upstream/provider-b.md §13.22)', () => {
    expect(classifyProviderBError(429, retry429)).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      retryAfterSeconds: 34.5,
    });
  });

  it('reads a Retry-After header (seconds or HTTP date) as one more hint, the later one counting (docs/providers.md "Retries")', () => {
    const now = Date.parse('2026-11-23T20:00:00Z');
    const classify = (status: number, errorBody: unknown, retryAfter: string) =>
      classifyProviderBError(status, errorBody, now, undefined, retryAfter);
    expect(classify(429, body(429, 'RESOURCE_EXHAUSTED'), '45')).toMatchObject({
      code: 'rate_limited',
      retryAfterSeconds: 45,
    });
    expect(classify(429, retry429, '3')).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 34.5 });
    expect(classify(503, body(503, 'UNAVAILABLE'), 'Mon, 23 Nov 2026 20:00:03 GMT')).toMatchObject({
      code: 'upstream',
      retryable: true,
      retryAfterSeconds: 3,
    });
    const busy = body(503, 'UNAVAILABLE', 'x', [detail('ErrorInfo', { reason: 'MODEL_CAPACITY_EXHAUSTED' })]);
    expect(classify(503, busy, '20')).toMatchObject({ code: 'provider_model_at_capacity', retryAfterSeconds: 20 });
    // Past the CLI's 300 s bound a header makes the limit terminal, as a body's delay that long does.
    expect(classify(429, body(429, 'RESOURCE_EXHAUSTED'), '600')).toMatchObject({
      code: 'usage_limit',
      retryAfterSeconds: 600,
    });
    expect(classify(429, body(429, 'RESOURCE_EXHAUSTED'), 'soon')).toMatchObject({ retryAfterSeconds: 5 });
  });

  it('keeps a Retry-After header of exactly 300 s a retryable rate limit: only a longer one is terminal, as the CLI bounds a delay', () => {
    expect(classifyProviderBError(429, body(429, 'RESOURCE_EXHAUSTED'), Date.now(), undefined, '300')).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      retryAfterSeconds: 300,
    });
  });

  it.each([
    ['"limit: 0" (no access to the model)', body(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded, limit: 0, model: m')],
    [
      'QUOTA_EXHAUSTED without a delay',
      body(429, 'RESOURCE_EXHAUSTED', 'x', [
        detail('ErrorInfo', { reason: 'QUOTA_EXHAUSTED', domain: 'cloudcode-pa.googleapis.com' }),
      ]),
    ],
  ])(
    'ignores a short Retry-After header on a terminal quota with %s, so the model gets the long default rest instead of the header’s seconds',
    (_label, errorBody) => {
      const error = classifyProviderBError(429, errorBody, Date.now(), undefined, '30');
      expect(error).toMatchObject({ code: 'usage_limit', retryable: false, limitsModel: true });
      expect(error.retryAfterSeconds).toBeUndefined();
    },
  );

  it.each([
    [
      'QUOTA_EXHAUSTED on the Code Assist domain',
      body(429, 'RESOURCE_EXHAUSTED', 'x', [
        detail('ErrorInfo', { reason: 'QUOTA_EXHAUSTED', domain: 'cloudcode-pa.googleapis.com' }),
      ]),
    ],
    [
      'INSUFFICIENT_G1_CREDITS_BALANCE',
      body(429, 'RESOURCE_EXHAUSTED', 'x', [detail('ErrorInfo', { reason: 'INSUFFICIENT_G1_CREDITS_BALANCE' })]),
    ],
    [
      'a retry delay over 300 s',
      body(429, 'RESOURCE_EXHAUSTED', 'x', [detail('RetryInfo', { retryDelay: '3600s' })]),
      3600,
    ],
    [
      'RATE_LIMIT_EXCEEDED on the Code Assist domain without RetryInfo',
      body(429, 'RESOURCE_EXHAUSTED', 'x', [
        detail('ErrorInfo', { reason: 'RATE_LIMIT_EXCEEDED', domain: 'cloudcode-pa.googleapis.com' }),
      ]),
    ],
    [
      '"limit: 0" in the message (no access to the model)',
      body(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for metric: x, limit: 0, model: gemini-3-pro'),
    ],
    ['"limit: 0" on a 503', body(503, 'UNAVAILABLE', 'limit: 0')],
    ['"Please retry in" over 300 s', body(429, 'RESOURCE_EXHAUSTED', 'Please retry in 4000s.'), 4000],
  ])(
    '429 with %s is a usage_limit of the model, never retried, with its reset when told (CLI googleQuotaErrors)',
    (_label, errorBody, retryAfter: number | undefined = undefined) => {
      const error = classifyProviderBError(errorBody.error.code, errorBody);
      expect(error).toMatchObject({ code: 'usage_limit', retryable: false, limitsModel: true });
      // No reset told: none is made up; the account pool rests the model for ACCOUNT_COOLDOWN_DEFAULT
      // and the client is told that rest (AccountTurn.finalError).
      expect(error.retryAfterSeconds).toBe(retryAfter);
    },
  );

  it.each([
    [
      'MODEL_CAPACITY_EXHAUSTED',
      body(429, 'RESOURCE_EXHAUSTED', 'x', [
        detail('ErrorInfo', { reason: 'MODEL_CAPACITY_EXHAUSTED', domain: 'cloudcode-pa.googleapis.com' }),
      ]),
      undefined,
    ],
    [
      'MODEL_CAPACITY_EXCEEDED with a RetryInfo',
      body(503, 'UNAVAILABLE', 'x', [
        detail('ErrorInfo', { reason: 'MODEL_CAPACITY_EXCEEDED' }),
        detail('RetryInfo', { retryDelay: '2s' }),
      ]),
      2,
    ],
    [
      'an exhausted-capacity message',
      body(429, 'RESOURCE_EXHAUSTED', 'You have exhausted your capacity on this model.'),
      undefined,
    ],
  ])(
    '%s is the model at capacity for everyone: retried, no login at fault (CLI "high demand")',
    (_label, errorBody, retryAfter) => {
      const error = classifyProviderBError(errorBody.error.code, errorBody);
      expect(error).toMatchObject({ code: 'provider_model_at_capacity', retryable: true, limitsModel: false });
      expect(error.retryAfterSeconds).toBe(retryAfter);
      expect(error.spec.status).toBe(503);
    },
  );

  it('keeps RATE_LIMIT_EXCEEDED with a short RetryInfo on the Code Assist domain a short rate limit', () => {
    const errorBody = body(429, 'RESOURCE_EXHAUSTED', 'x', [
      detail('ErrorInfo', { reason: 'RATE_LIMIT_EXCEEDED', domain: 'cloudcode-pa.googleapis.com' }),
      detail('RetryInfo', { retryDelay: '7s' }),
    ]);
    expect(classifyProviderBError(429, errorBody)).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      retryAfterSeconds: 7,
    });
  });

  it('reads a PerMinute quota_limit from ErrorInfo metadata as a 60 s rate limit', () => {
    const errorBody = body(429, 'RESOURCE_EXHAUSTED', 'x', [
      detail('ErrorInfo', { reason: 'OTHER', metadata: { quota_limit: 'RequestsPerMinutePerProject' } }),
    ]);
    expect(classifyProviderBError(429, errorBody)).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 60 });
  });

  it.each([
    ['a message "Please retry in 12s"', body(429, 'RESOURCE_EXHAUSTED', 'Please retry in 12s.'), 12],
    ['a message "Please retry in 900ms"', body(429, 'RESOURCE_EXHAUSTED', 'Please retry in 900ms'), 0.9],
    [
      'a PerMinute quota',
      body(429, 'RESOURCE_EXHAUSTED', 'x', [
        detail('QuotaFailure', { violations: [{ quotaId: 'RequestsPerMinutePerUser' }] }),
      ]),
      60,
    ],
    [
      'RATE_LIMIT_EXCEEDED',
      body(429, 'RESOURCE_EXHAUSTED', 'x', [detail('ErrorInfo', { reason: 'RATE_LIMIT_EXCEEDED' })]),
      10,
    ],
    ['nothing', body(429, 'RESOURCE_EXHAUSTED'), 5],
  ])('429 with %s hints the right delay', (_label, errorBody, seconds) => {
    expect(classifyProviderBError(429, errorBody)).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      retryAfterSeconds: seconds,
    });
  });

  it.each([
    [401, 'auth', false],
    [403, 'auth', false],
    [404, 'not_found', false],
    [499, 'rate_limited', true],
    [500, 'upstream', true],
    [502, 'upstream', true],
    [503, 'upstream', true],
    [504, 'upstream', true],
    [409, 'bad_request', false],
    [408, 'upstream', true],
    [501, 'upstream', true],
    [507, 'upstream', true],
  ])('HTTP %i → %s (retryable %s)', (status, code, retryable) => {
    expect(classifyProviderBError(status, undefined)).toMatchObject({ code, retryable });
  });

  it('makes a 404 (a login without access to the model) rest that model on that login alone, so the turn moves to another login', () => {
    expect(classifyProviderBError(404, body(404, 'NOT_FOUND'))).toMatchObject({
      code: 'not_found',
      retryable: false,
      limitsModel: true,
    });
  });

  it('keeps a 503 whose details carry no quota facts an upstream failure, not a rate limit', () => {
    const errorBody = body(503, 'UNAVAILABLE', 'x', [detail('DebugInfo', { detail: 'backend restarting' })]);
    const error = classifyProviderBError(503, errorBody);
    expect(error).toMatchObject({ code: 'upstream', retryable: true, upstreamStatus: 503 });
    expect(error.spec.status).toBe(502);
  });

  it('reads a RESOURCE_EXHAUSTED body as a quota whatever status it came with', () => {
    const daily = body(429, 'RESOURCE_EXHAUSTED', 'x', [
      detail('QuotaFailure', { violations: [{ quotaId: 'RequestsPerDayPerUser' }] }),
    ]);
    // 2026-11-23T20:00:00Z is 12:00 in Los Angeles.
    expect(classifyProviderBError(500, daily, Date.parse('2026-11-23T20:00:00Z'))).toMatchObject({
      code: 'usage_limit',
      retryAfterSeconds: 12 * 3600,
      limitsModel: true,
    });
  });

  describe('a 403 that a new login does not fix (docs/upstream/provider-b.md §10.2)', () => {
    const CODE_ASSIST = 'cloudcode-pa.googleapis.com';
    // Google's link carries a sign-in token (`plt`) and may name the account: neither reaches a log.
    const VALIDATION_URL =
      'https://accounts.google.com/signin/continue?sarp=1&scc=1&plt=AKgnsbsHydDq7Xv0b1c2d3e4f5g6h7i8j9k0lmnopqrstuv&authuser=someone@example.com&Email=victim%40example.org#frag';
    const forbidden = (reason: string, fields: Record<string, unknown> = {}, more: unknown[] = []) =>
      body(403, 'PERMISSION_DENIED', 'UPSTREAM-SECRET-403', [detail('ErrorInfo', { reason, ...fields }), ...more]);
    const help = (...urls: string[]) =>
      detail('Help', { links: urls.map((url, index) => ({ description: `link ${index}`, url })) });

    it('VALIDATION_REQUIRED on the Code Assist domain is provider_project_required naming the validation, and the log line carries the link without its query', () => {
      const logger = recordingLogger();
      const error = classifyProviderBError(
        403,
        forbidden('VALIDATION_REQUIRED', { domain: CODE_ASSIST }, [
          help(VALIDATION_URL, 'https://support.google.com/accounts?p=al_alert'),
        ]),
        Date.now(),
        logger,
      );
      expect(error).toMatchObject({ code: 'provider_project_required', retryable: false, upstreamStatus: 403 });
      expect(error.publicMessage).toMatch(
        /^provider_b: Google asks this account to be validated: open the Gemini CLI \(`gemini`\) once .*; see docs\/providers\.md#a-403-that-a-new-login-does-not-fix$/,
      );
      expect(`${error.publicMessage} ${error.detail}`).not.toMatch(/UPSTREAM-SECRET|accounts\.google/);
      expect(error.detail).toMatch(/^provider_b_validation_required: /);
      expect(logger.records).toEqual([
        expect.objectContaining({
          event: 'provider_b_login_refused',
          reason: 'provider_b_validation_required',
          fix: expect.stringContaining('validated'),
          // The page only: its query (a sign-in token, the account's e-mail, percent-encoded or
          // not) and fragment stay out of the log.
          link: 'https://accounts.google.com/signin/continue',
        }),
      ]);
    });

    it.each([
      [
        'the validation_link metadata',
        { validation_link: 'https://accounts.google.com/v?x=1' },
        'https://accounts.google.com/v',
      ],
      [
        'the validation_url metadata',
        { validation_url: 'https://accounts.google.com/u' },
        'https://accounts.google.com/u',
      ],
      [
        'an activation link, keeping its project',
        { validation_link: 'https://console.cloud.google.com/apis/library/x?project=my-proj-1&authuser=a%40b.c' },
        'https://console.cloud.google.com/apis/library/x?project=my-proj-1',
      ],
      ['a link off Google', { validation_link: 'https://accounts.google.com.evil.example/v' }, undefined],
      ['a plain-http link', { validation_link: 'http://accounts.google.com/v' }, undefined],
    ])('without Help links reads %s', (_label, metadata, link) => {
      const logger = recordingLogger();
      const error = classifyProviderBError(
        403,
        forbidden('VALIDATION_REQUIRED', { domain: CODE_ASSIST, metadata }),
        Date.now(),
        logger,
      );
      expect(error.code).toBe('provider_project_required');
      expect(logger.records[0]?.link).toBe(link);
    });

    it.each([
      [
        'SERVICE_DISABLED',
        'provider_project_required',
        'provider_b_api_disabled',
        {
          metadata: {
            activationUrl:
              'https://console.developers.google.com/apis/api/cloudaicompanion.googleapis.com/overview?project=123',
          },
        },
      ],
      [
        'IAM_PERMISSION_DENIED',
        'provider_project_required',
        'provider_b_project_denied',
        { domain: 'iam.googleapis.com' },
      ],
      ['SECURITY_POLICY_VIOLATED', 'provider_project_required', 'provider_b_network_denied', {}],
      [
        'TOS_VIOLATION',
        'provider_account_unsupported',
        'provider_b_account_suspended',
        { metadata: { appeal_url: 'https://support.google.com/appeal' } },
      ],
    ])('%s is %s (%s), not a login error', (reason, code, fixReason, fields) => {
      const logger = recordingLogger();
      const error = classifyProviderBError(403, forbidden(reason, fields), Date.now(), logger);
      expect(error).toMatchObject({ code, retryable: false });
      expect(error.publicMessage).toContain('docs/providers.md#a-403-that-a-new-login-does-not-fix');
      expect(logger.records).toEqual([
        expect.objectContaining({ event: 'provider_b_login_refused', reason: fixReason }),
      ]);
    });

    it.each([
      ['ACCESS_TOKEN_SCOPE_INSUFFICIENT', forbidden('ACCESS_TOKEN_SCOPE_INSUFFICIENT', { domain: 'googleapis.com' })],
      [
        'VALIDATION_REQUIRED off the Code Assist domain (the CLI reads it only there)',
        forbidden('VALIDATION_REQUIRED', { domain: 'example.com' }),
      ],
      ['no ErrorInfo', body(403, 'PERMISSION_DENIED', 'The caller does not have permission')],
      [
        'a token reason before a project reason (the CLI reads the first)',
        forbidden('ACCESS_TOKEN_SCOPE_INSUFFICIENT', {}, [detail('ErrorInfo', { reason: 'SERVICE_DISABLED' })]),
      ],
    ])('a 403 with %s stays a login error, logged by nothing but the turn', (_label, errorBody) => {
      const logger = recordingLogger();
      expect(classifyProviderBError(403, errorBody, Date.now(), logger)).toMatchObject({
        code: 'auth',
        retryable: false,
      });
      expect(logger.records).toEqual([]);
    });

    it('reads an error frame inside the stream the same way', () => {
      expect(classifyProviderBError(undefined, forbidden('VALIDATION_REQUIRED', { domain: CODE_ASSIST })).code).toBe(
        'provider_project_required',
      );
    });

    it("gives the request log line the fix with Google's page, as the provider_b_login_refused line does", () => {
      const error = classifyProviderBError(
        403,
        forbidden('VALIDATION_REQUIRED', { domain: CODE_ASSIST }, [help(VALIDATION_URL)]),
      );
      expect(error.fix).toMatch(/validated.* \(Google's page: https:\/\/accounts\.google\.com\/signin\/continue\)$/);
    });
  });

  it('400 about the token count is context_window; other 400s are bad_request', () => {
    expect(
      classifyProviderBError(
        400,
        body(
          400,
          'INVALID_ARGUMENT',
          'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
        ),
      ).code,
    ).toBe('context_window');
    expect(classifyProviderBError(400, body(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.')).code).toBe(
      'bad_request',
    );
  });

  it('classifies an in-stream error frame by its own code or gRPC status', () => {
    expect(classifyProviderBError(undefined, body(429, 'RESOURCE_EXHAUSTED')).code).toBe('rate_limited');
    expect(classifyProviderBError(undefined, { error: { status: 'UNAVAILABLE', message: 'x' } })).toMatchObject({
      code: 'upstream',
      upstreamStatus: 503,
    });
  });

  it.each([
    ['a code alone', { error: { code: 400, message: 'x' } }, 'bad_request', 400],
    ['a 429 code alone', { error: { code: 429, message: 'x' } }, 'rate_limited', 429],
    ['PERMISSION_DENIED without a code', { error: { status: 'PERMISSION_DENIED', message: 'x' } }, 'auth', 403],
  ])('classifies an in-stream error frame with %s by it', (_label, frame, code, upstreamStatus) => {
    expect(classifyProviderBError(undefined, frame)).toMatchObject({ code, upstreamStatus });
  });
});

describe(classifyProviderBFailure.name, () => {
  it.each([
    ['INVALID_ARGUMENT', body(400, 'INVALID_ARGUMENT'), 'bad_request', 400],
    [
      'FAILED_PRECONDITION without a code',
      { error: { status: 'FAILED_PRECONDITION', message: 'x' } },
      'bad_request',
      400,
    ],
    ['NOT_FOUND', body(404, 'NOT_FOUND'), 'not_found', 404],
  ])(
    'classifies an in-stream error frame of %s by its own status, never retried',
    (_label, frame, code, upstreamStatus) => {
      expect(classifyProviderBFailure(new UpstreamErrorEvent(frame), Date.now())).toMatchObject({
        code,
        upstreamStatus,
        retryable: false,
      });
    },
  );
});

describe(parseProviderBError.name, () => {
  it('reads typed details', () => {
    expect(parseProviderBError(daily429)).toMatchObject({
      code: 429,
      status: 'RESOURCE_EXHAUSTED',
      quotaIds: ['Gemini25ProRequestsPerDayPerUser'],
      reasons: ['RATE_LIMIT_EXCEEDED'],
    });
  });
});

describe(parseRetryDelay.name, () => {
  it.each([
    ['34.5s', 34.5],
    ['900ms', 0.9],
    ['soon', undefined],
  ])('%s → %s', (value, expected) => expect(parseRetryDelay(value)).toBe(expected));
});
