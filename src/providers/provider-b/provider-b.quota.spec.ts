import { planReportFromQuota } from './provider-b.quota';

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
});
