import { providerBQuotaBucket } from './provider-b.quota-buckets';

describe('providerBQuotaBucket (Gemini CLI 0.61.0 refreshUserQuota)', () => {
  it('puts the three Flash ids in one bucket and the two Flash-Lite ids in another', () => {
    const flash = ['gemini-3-flash', 'gemini-3.5-flash', 'gemini-3.8-flash'].map(providerBQuotaBucket);
    const lite = ['gemini-3.1-flash-lite', 'gemini-3.5-flash-lite'].map(providerBQuotaBucket);
    expect(new Set(flash).size).toBe(1);
    expect(new Set(lite).size).toBe(1);
    expect(flash[0]).not.toBe(lite[0]);
  });

  it('leaves every other id a bucket of its own: previews, 2.5 models, unknown ids', () => {
    const own = [
      'gemini-3-flash-preview',
      'gemini-3-pro-preview',
      'gemini-3.1-pro-preview',
      'gemini-2.5-pro',
      'gemini-2.5-flash',
      'gemini-2.5-flash-lite',
      'gemini-9-flash',
    ];
    for (const model of own) expect(providerBQuotaBucket(model)).toBe(model);
    const buckets = new Set([...own, 'gemini-3-flash', 'gemini-3.1-flash-lite'].map(providerBQuotaBucket));
    expect(buckets.size).toBe(own.length + 2);
  });
});
