import { classifyRunFailure, parseRetryAfterSeconds } from './provider-c.errors';

const exit = (stderr: string, code = 1) => classifyRunFailure({ kind: 'exit', code, signal: null, stderr });

describe(classifyRunFailure.name, () => {
  it.each([
    'Invalid API key · Please run /login',
    'Error: Not logged in',
    'Please log in first',
    'OAuth token has expired',
    'API Error: 401 {"type":"error"}',
    'Unauthorized',
    'authentication_error',
  ])('classifies %j as auth (401), not retryable', (stderr) => {
    const error = exit(stderr);
    expect(error.code).toBe('auth');
    expect(error.retryable).toBe(false);
  });

  it.each(['Claude AI usage limit reached', 'rate limit exceeded', 'API Error: 429', 'Too Many Requests', 'quota exhausted', '5-hour limit reached'])(
    'classifies %j as rate_limited with Retry-After 60 by default',
    (stderr) => {
      const error = exit(stderr);
      expect(error.code).toBe('rate_limited');
      expect(error.retryAfterHeader).toBe(60);
      expect(error.retryable).toBe(false);
    },
  );

  it('checks auth before limits (table order)', () => {
    expect(exit('login required: usage limit reached').code).toBe('auth');
  });

  it('classifies anything else as a retryable upstream error', () => {
    const error = exit('Claude crashed');
    expect(error.code).toBe('upstream');
    expect(error.retryable).toBe(true);
  });

  it('prefers the result text of an error result over stderr', () => {
    expect(classifyRunFailure({ kind: 'error_result', text: 'usage limit reached', stderr: 'please login' }).code).toBe('rate_limited');
    expect(classifyRunFailure({ kind: 'error_result', text: '', stderr: 'please login' }).code).toBe('auth');
  });

  it('never retries spawn failures, oversized lines or timeouts', () => {
    expect(classifyRunFailure({ kind: 'spawn', errno: 'ENOENT' })).toMatchObject({ code: 'upstream', retryable: false });
    expect(classifyRunFailure({ kind: 'line_too_long' })).toMatchObject({ code: 'upstream', retryable: false });
    expect(classifyRunFailure({ kind: 'timeout', idle: true })).toMatchObject({ code: 'timeout', retryable: false });
  });

  it('keeps upstream text out of the error message and public message', () => {
    const error = exit('secret-ish stderr text: Invalid API key sk-ant-123');
    expect(error.message).not.toContain('sk-ant');
    expect(error.publicMessage).toBeUndefined();
  });
});

describe(parseRetryAfterSeconds.name, () => {
  const now = () => 1_767_225_600_000;
  it.each([
    ['rate limited, retry after 30', 30],
    ['retry after 2 minutes', 120],
    ['usage limit reached, resets in 3 hours', 10800],
    ['claude ai usage limit reached|1767229200', 3600],
    ['limit reached ∙ resets 1767225660', 60],
  ])('%j → %d s', (text, seconds) => {
    expect(parseRetryAfterSeconds(text, now)).toBe(seconds);
  });

  it.each(['usage limit reached ∙ resets 3pm (europe/berlin)', 'rate limit', 'resets 1767225000'])('%j has no usable hint', (text) => {
    expect(parseRetryAfterSeconds(text, now)).toBeUndefined();
  });
});
