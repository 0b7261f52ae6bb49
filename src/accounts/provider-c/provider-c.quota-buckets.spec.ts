import { PROVIDER_C_MODEL_WINDOWS, providerCQuotaBucket } from './provider-c.quota-buckets';

describe(providerCQuotaBucket.name, () => {
  it('files every Opus and every Sonnet id, alias or full, under its family, as Claude Code scopes its weekly windows', () => {
    for (const id of [
      'opus',
      'opus[1m]',
      'claude-opus-4-8',
      'claude-opus-5-5',
      'claude-3-opus-20240229',
      'Claude-Opus-4-1',
    ])
      expect(providerCQuotaBucket(id)).toBe('opus');
    for (const id of [
      'sonnet',
      'sonnet[1m]',
      'claude-sonnet-5',
      'claude-sonnet-4-5-20250929',
      'claude-3-5-sonnet-20241022',
    ])
      expect(providerCQuotaBucket(id)).toBe('sonnet');
    // The windows name their family by the same word.
    expect(Object.values(PROVIDER_C_MODEL_WINDOWS).map(providerCQuotaBucket)).toEqual(['opus', 'sonnet']);
  });

  it('leaves every other id its own bucket', () => {
    for (const id of ['haiku', 'fable', 'claude-fable-5', 'claude-haiku-4-5-20251001', 'opusplan', 'magnum-opusx'])
      expect(providerCQuotaBucket(id)).toBe(id);
  });
});
