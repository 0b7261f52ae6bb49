import type { QuotaErrorFacts } from './provider-b.quota';
import { classifyQuota, planReportFromQuota } from './provider-b.quota';

describe('planReportFromQuota (retrieveUserQuota, Gemini CLI 0.61.0 /stats)', () => {
  it('makes one model window per bucket: used = 1 − remaining, the reset, the token type when not requests', () => {
    expect(
      planReportFromQuota({
        buckets: [
          {
            modelId: 'gemini-2.5-pro',
            tokenType: 'REQUESTS',
            remainingFraction: 0.75,
            resetTime: '2026-11-30T00:00:00Z',
          },
          { modelId: 'gemini-2.5-flash', tokenType: 'INPUT_TOKENS', remainingFraction: 0 },
        ],
      }),
    ).toEqual({
      source: 'usage_endpoint',
      windows: [
        { name: 'gemini-2.5-pro', model: 'gemini-2.5-pro', usedRatio: 0.25, resetsAt: Date.UTC(2026, 10, 30) },
        { name: 'gemini-2.5-flash:input_tokens', model: 'gemini-2.5-flash', usedRatio: 1, resetsAt: undefined },
      ],
    });
  });

  it('skips buckets without a model or a fraction (as the CLI does) and odd model ids', () => {
    expect(
      planReportFromQuota({
        buckets: [{ remainingFraction: 0.5 }, { modelId: 'gemini-2.5-pro' }, { modelId: 'a b', remainingFraction: 1 }],
      }),
    ).toEqual({ source: 'usage_endpoint', windows: [] });
    expect(planReportFromQuota({})).toBeUndefined();
    expect(planReportFromQuota('nope')).toBeUndefined();
  });

  it('keeps the used ratio within 0..1 when a bucket reports a fraction outside it', () => {
    const report = planReportFromQuota({
      buckets: [
        { modelId: 'gemini-2.5-pro', remainingFraction: 1.2 },
        { modelId: 'gemini-2.5-flash', remainingFraction: -0.1 },
      ],
    });
    expect(report?.windows.map((window) => window.usedRatio)).toEqual([0, 1]);
  });
});

describe(classifyQuota.name, () => {
  const NOW = Date.parse('2026-11-23T20:00:00Z');
  /** Google's message to a login out of its quota for a model (the free tier's), with the reset it names. */
  const capacityMessage = (reset: string) =>
    `You have exhausted your capacity on this model. Your quota will reset after ${reset}.`;
  const quotaExhausted = { reason: 'QUOTA_EXHAUSTED', domain: 'cloudcode-pa.googleapis.com' };
  const facts = (fields: Partial<QuotaErrorFacts>): QuotaErrorFacts => ({
    quotaIds: [],
    reasons: [],
    errorInfos: [],
    detailCount: 1,
    ...fields,
  });

  it.each([
    ['with a short RetryInfo', 5.1, { kind: 'capacity', retryAfterSeconds: 5.1 }],
    ['with a RetryInfo of exactly 300 s', 300, { kind: 'capacity', retryAfterSeconds: 300 }],
    ['without a RetryInfo', undefined, { kind: 'capacity', retryAfterSeconds: undefined }],
    // Past the CLI's retryable bound: the login's quota is spent until then.
    ['with a RetryInfo over 300 s', 71_366, { kind: 'terminal', retryAfterSeconds: 71_366 }],
  ])(
    'retries QUOTA_EXHAUSTED whose message says "exhausted your capacity" as capacity, as the CLI does, %s',
    (_label, retryDelaySeconds, verdict) => {
      const info = facts({
        message: capacityMessage('5s'),
        retryDelaySeconds,
        reasons: ['QUOTA_EXHAUSTED'],
        errorInfos: [quotaExhausted],
        detailCount: retryDelaySeconds === undefined ? 1 : 2,
      });
      expect(classifyQuota(429, info, NOW)).toEqual(verdict);
    },
  );

  it('leaves a rate limit the CLI retries anyway as it is: a capacity message changes only terminal verdicts', () => {
    const rateLimit = { reason: 'RATE_LIMIT_EXCEEDED', domain: 'cloudcode-pa.googleapis.com' };
    const info = (retryDelaySeconds?: number) =>
      facts({
        message: capacityMessage('7s'),
        retryDelaySeconds,
        reasons: ['RATE_LIMIT_EXCEEDED'],
        errorInfos: [rateLimit],
      });
    // With a short delay the CLI's RetryableQuotaError; without one its TerminalQuotaError, retried as capacity.
    expect(classifyQuota(429, info(7), NOW)).toEqual({ kind: 'retryable', retryAfterSeconds: 7 });
    expect(classifyQuota(429, info(), NOW)).toEqual({ kind: 'capacity', retryAfterSeconds: undefined });
  });

  it('keeps QUOTA_EXHAUSTED with another message terminal, its delay the reset', () => {
    const info = facts({
      message: 'Quota exceeded.',
      retryDelaySeconds: 5.1,
      reasons: ['QUOTA_EXHAUSTED'],
      errorInfos: [quotaExhausted],
      detailCount: 2,
    });
    expect(classifyQuota(429, info, NOW)).toEqual({ kind: 'terminal', retryAfterSeconds: 5.1 });
  });

  it.each([
    ['"PerDay"', 'GenerateRequestsPerDayPerProjectPerModel'],
    ['"Daily"', 'DailyGenerateRequestsPerUser'],
  ])('reads a quota id with %s as the daily quota, terminal until midnight Pacific', (_label, quotaId) => {
    expect(classifyQuota(429, facts({ quotaIds: [quotaId] }), NOW)).toEqual({
      kind: 'terminal',
      retryAfterSeconds: 12 * 3600,
    });
  });

  it('keeps "Please retry in 300s" with no details a retryable limit: only a longer delay is terminal', () => {
    const info = facts({ message: 'Resource exhausted. Please retry in 300s.', detailCount: 0 });
    expect(classifyQuota(429, info, NOW)).toEqual({ kind: 'retryable', retryAfterSeconds: 300 });
  });

  it('matches a Code Assist ErrorInfo domain with stray characters around it, as the CLI does', () => {
    const info = facts({
      reasons: ['QUOTA_EXHAUSTED'],
      errorInfos: [{ reason: 'QUOTA_EXHAUSTED', domain: ' cloudcode-pa.googleapis.com\n' }],
    });
    expect(classifyQuota(429, info, NOW)).toEqual({ kind: 'terminal', retryAfterSeconds: undefined });
  });

  it('takes a RetryInfo of 0 s as no delay and goes on to the per-minute rule (60 s), as the CLI does', () => {
    const info = facts({ retryDelaySeconds: 0, quotaIds: ['RequestsPerMinutePerUser'], detailCount: 2 });
    expect(classifyQuota(429, info, NOW)).toEqual({ kind: 'retryable', retryAfterSeconds: 60 });
  });

  it('leaves a 503 whose details carry no quota facts not a quota error; a 429 like it is a 5 s rate limit', () => {
    expect(classifyQuota(503, facts({}), NOW)).toBeUndefined();
    expect(classifyQuota(429, facts({}), NOW)).toEqual({ kind: 'retryable', retryAfterSeconds: 5 });
  });

  it('keeps a daily quota terminal until midnight Pacific whatever its message says', () => {
    const info = facts({ message: capacityMessage('12h'), quotaIds: ['GenerateRequestsPerDayPerProjectPerModel'] });
    expect(classifyQuota(429, info, NOW)).toEqual({ kind: 'terminal', retryAfterSeconds: 12 * 3600 });
  });
});
