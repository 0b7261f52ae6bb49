import { GatewayError } from '../core/gateway.error';
import { ConfigError } from '../config/app-config';
import { ModelCatalog } from '../models/model-catalog';
import { StructuredAllowlist } from './structured-allowlist';

const ALL = ['provider_a', 'provider_b', 'provider_c'] as const;
const catalog = ModelCatalog.load(undefined, ALL).entries;

describe(StructuredAllowlist.name, () => {
  it('defaults to the 30 provider_a ids with model_policy_version 4a18bfa0d9c258ef', () => {
    const allowlist = StructuredAllowlist.build({ catalog, enabledProviders: ALL });
    expect(allowlist.ids).toHaveLength(30);
    expect(allowlist.ids.every((id) => /^gpt-5\.6-(sol|terra|luna)(-fast)?(-(low|medium|high|xhigh))?$/.test(id))).toBe(
      true,
    );
    expect(allowlist.policyVersion).toBe('4a18bfa0d9c258ef');
    expect(allowlist.dropped).toEqual([]);
  });

  it('gives the same version for the same set in any order, with duplicates', () => {
    const ids = [...StructuredAllowlist.build({ catalog, enabledProviders: ALL }).ids].reverse();
    const allowlist = StructuredAllowlist.build({ catalog, requested: [...ids, ids[0]], enabledProviders: ALL });
    expect(allowlist.policyVersion).toBe('4a18bfa0d9c258ef');
  });

  it('changes the version when the allowlist or a resolution changes', () => {
    const smaller = StructuredAllowlist.build({ catalog, requested: ['gpt-5.6-sol'], enabledProviders: ALL });
    expect(smaller.policyVersion).toMatch(/^[0-9a-f]{16}$/);
    expect(smaller.policyVersion).not.toBe('4a18bfa0d9c258ef');
    const changed = catalog.map((entry) =>
      entry.id === 'gpt-5.6-sol' ? { ...entry, reasoning_effort: 'medium' } : entry,
    );
    const sameIds = StructuredAllowlist.build({ catalog: changed, requested: ['gpt-5.6-sol'], enabledProviders: ALL });
    expect(sameIds.ids).toEqual(smaller.ids);
    expect(sameIds.policyVersion).not.toBe(smaller.policyVersion);
  });

  it('fails startup with a ConfigError naming STRUCTURED_MODELS for an id outside the catalog', () => {
    const build = () =>
      StructuredAllowlist.build({ catalog, requested: ['gpt-5.6-sol', 'gpt-9'], enabledProviders: ALL });
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(/STRUCTURED_MODELS.*"gpt-9"/);
  });

  it('drops provider_b and provider_c ids, and ids of disabled families', () => {
    const allowlist = StructuredAllowlist.build({
      catalog,
      requested: ['gpt-5.6-sol', 'gemini-2.5-pro', 'sonnet'],
      enabledProviders: ['provider_a', 'provider_b', 'provider_c'],
    });
    expect(allowlist.ids).toEqual(['gpt-5.6-sol']);
    expect(allowlist.dropped).toEqual([
      { id: 'gemini-2.5-pro', reason: 'no_strict_schema' },
      { id: 'sonnet', reason: 'no_strict_schema' },
    ]);
    const disabled = StructuredAllowlist.build({ catalog, enabledProviders: ['provider_b'] });
    expect(disabled.ids).toEqual([]);
    expect(disabled.dropped).toHaveLength(30);
    expect(disabled.dropped.every((model) => model.reason === 'provider_disabled')).toBe(true);
  });

  it('resolves exactly and case-sensitively, applying effort and verbosity overrides', () => {
    const allowlist = StructuredAllowlist.build({ catalog, enabledProviders: ALL });
    expect(allowlist.resolve('gpt-5.6-terra-fast-high')).toEqual({
      requestedId: 'gpt-5.6-terra-fast-high',
      catalogId: 'gpt-5.6-terra-fast-high',
      provider: 'provider_a',
      upstreamModel: 'gpt-5.6-terra',
      reasoningEffort: 'high',
      verbosity: 'low',
      serviceTier: 'priority',
    });
    expect(allowlist.resolve('gpt-5.6-sol', { reasoningEffort: 'xhigh', verbosity: 'high' })).toMatchObject({
      reasoningEffort: 'xhigh',
      verbosity: 'high',
    });
    for (const id of ['GPT-5.6-SOL', 'gemini-2.5-pro', 'sonnet', 'provider_a/gpt-5.6-sol', ' gpt-5.6-sol']) {
      let error: unknown;
      try {
        allowlist.resolve(id);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).code).toBe('unsupported_model');
      expect((error as GatewayError).publicMessage).toBe('model is not enabled for structured inference');
      expect((error as GatewayError).details).toEqual([`supported models: ${allowlist.ids.join(', ')}`]);
    }
    expect(allowlist.ids).toEqual([...allowlist.ids].sort());
  });
});
