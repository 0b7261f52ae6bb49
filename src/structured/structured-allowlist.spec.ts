import { GatewayError } from '../core/gateway.error';
import { ConfigError } from '../config/app-config';
import { ModelCatalog } from '../models/model-catalog';
import { StructuredAllowlist } from './structured-allowlist';

const ALL = ['provider_a', 'provider_b', 'provider_c'] as const;
const catalog = ModelCatalog.load(undefined, ALL).bundledEntries();
/** The tier models of the bundled catalog: the first model of each tier in the file (docs/chat.md "Model ids"). */
const tierModel = (tier: string) =>
  catalog.find((row) => row.provider === 'provider_a' && row.upstream_model.endsWith(`-${tier}`))!.upstream_model;
const DEFAULT_IDS = ['sol', 'terra', 'luna'].flatMap((tier) =>
  ['', '-fast'].flatMap((fast) =>
    ['', '-low', '-medium', '-high', '-xhigh'].map((effort) => `${tierModel(tier)}${fast}${effort}`),
  ),
);

describe(StructuredAllowlist.name, () => {
  it('defaults to the 30 ids of the sol, terra and luna tier models at the efforts the route takes, not their aliases', () => {
    const allowlist = StructuredAllowlist.build({ catalog, enabledProviders: ALL });
    expect(allowlist.ids).toEqual([...DEFAULT_IDS].sort());
    expect(allowlist.policyVersion).toMatch(/^[0-9a-f]{16}$/);
    expect(allowlist.dropped).toEqual([]);
    // The families the route calls, whose structured upstream errors the metrics list from start-up.
    expect(allowlist.providers).toEqual(['provider_a']);
  });

  it('lets STRUCTURED_MODELS name an older tier model, or a tier alias (fixed to its startup model)', () => {
    const allowlist = StructuredAllowlist.build({
      catalog,
      requested: ['gpt-5.6-luna-high', 'sol-high', 'gpt-6-astra', `${tierModel('sol')}-max`],
      enabledProviders: ALL,
    });
    expect(allowlist.ids).toEqual(['gpt-5.6-luna-high', 'sol-high']);
    expect(allowlist.resolve('sol-high').upstreamModel).toBe(tierModel('sol'));
    expect(allowlist.dropped).toEqual([
      { id: 'gpt-6-astra', reason: 'no_strict_schema' },
      { id: `${tierModel('sol')}-max`, reason: 'no_strict_schema' },
    ]);
  });

  it('gives the same version for the same set in any order, with duplicates', () => {
    const byDefault = StructuredAllowlist.build({ catalog, enabledProviders: ALL });
    const ids = [...byDefault.ids].reverse();
    const allowlist = StructuredAllowlist.build({ catalog, requested: [...ids, ids[0]], enabledProviders: ALL });
    expect(allowlist.policyVersion).toBe(byDefault.policyVersion);
  });

  it('changes the version when the allowlist or a resolution changes', () => {
    const smaller = StructuredAllowlist.build({ catalog, requested: ['gpt-5.6-sol'], enabledProviders: ALL });
    expect(smaller.policyVersion).toMatch(/^[0-9a-f]{16}$/);
    expect(smaller.policyVersion).not.toBe(StructuredAllowlist.build({ catalog, enabledProviders: ALL }).policyVersion);
    const changed = catalog.map((entry) =>
      entry.id === 'gpt-5.6-sol' ? { ...entry, reasoning_effort: 'medium' } : entry,
    );
    const sameIds = StructuredAllowlist.build({ catalog: changed, requested: ['gpt-5.6-sol'], enabledProviders: ALL });
    expect(sameIds.ids).toEqual(smaller.ids);
    expect(sameIds.policyVersion).not.toBe(smaller.policyVersion);
    // The service tier decides how the upstream serves the call: a new tier is a new policy too.
    const retiered = catalog.map((entry) =>
      entry.id === 'gpt-5.6-sol' ? { ...entry, service_tier: 'priority' as const } : entry,
    );
    const newTier = StructuredAllowlist.build({
      catalog: retiered,
      requested: ['gpt-5.6-sol'],
      enabledProviders: ALL,
    });
    expect(newTier.ids).toEqual(smaller.ids);
    expect(newTier.policyVersion).not.toBe(smaller.policyVersion);
  });

  it('fails startup with a ConfigError naming STRUCTURED_MODELS for an id outside the catalog', () => {
    const build = () =>
      StructuredAllowlist.build({ catalog, requested: ['gpt-5.6-sol', 'gpt-9'], enabledProviders: ALL });
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(/STRUCTURED_MODELS.*"gpt-9"/);
  });

  it('fails startup with a ConfigError naming STRUCTURED_MODELS, its ids and the fix when none of them can be served', () => {
    const sol = tierModel('sol');
    expect(() =>
      StructuredAllowlist.build({ catalog, requested: [`${sol}-max`, 'sonnet'], enabledProviders: ALL }),
    ).toThrow(
      new ConfigError(
        `invalid setting STRUCTURED_MODELS / --structured-models: none of its ids can serve structured inference: "${sol}-max" (cannot serve strict schemas), "sonnet" (cannot serve strict schemas); name at least one that can (a provider_a tier model at an effort this route takes, e.g. ${sol}, or a catalog row marked "structured": true, of an enabled family), or unset it for the default allowlist`,
      ),
    );
    expect(() =>
      StructuredAllowlist.build({ catalog, requested: [`${sol}-high`], enabledProviders: ['provider_b'] }),
    ).toThrow(/: "[^"]+-high" \(its family provider_a is not in GATEWAY_PROVIDERS\); name at least one that can \(/);
  });

  it('names the first five ids that cannot be served and counts the rest', () => {
    const sol = tierModel('sol');
    const requested = [`${sol}-max`, 'sonnet', 'gemini-2.5-pro', 'gpt-6-astra', `${tierModel('terra')}-max`];
    const message = (ids: string[]) => {
      try {
        StructuredAllowlist.build({ catalog, requested: ids, enabledProviders: ALL });
      } catch (error) {
        return (error as ConfigError).message;
      }
      throw new Error('startup was not refused');
    };
    const five = message(requested);
    expect(five.match(/\(cannot serve strict schemas\)/g)).toHaveLength(5);
    expect(five).not.toContain(' more;');
    const six = message([...requested, `${tierModel('luna')}-max`]);
    expect(six.match(/\(cannot serve strict schemas\)/g)).toHaveLength(5);
    expect(six).toContain(`"${tierModel('terra')}-max" (cannot serve strict schemas) and 1 more; name at least one`);
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
    const terra = tierModel('terra');
    expect(allowlist.resolve(`${terra}-fast-high`)).toEqual({
      requestedId: `${terra}-fast-high`,
      catalogId: `${terra}-fast-high`,
      provider: 'provider_a',
      upstreamModel: terra,
      reasoningEffort: 'high',
      verbosity: 'low',
      serviceTier: 'priority',
    });
    expect(allowlist.resolve(tierModel('sol'), { reasoningEffort: 'xhigh', verbosity: 'high' })).toMatchObject({
      reasoningEffort: 'xhigh',
      verbosity: 'high',
    });
    const sol = tierModel('sol');
    for (const id of [sol.toUpperCase(), 'gemini-2.5-pro', 'sonnet', 'sol', `provider_a/${sol}`, ` ${sol}`]) {
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

  it('refuses an effort the model does not take, naming only the efforts this route accepts', () => {
    // The catalog row also lists efforts beyond the route's (max, ultra): naming them would send
    // the client to a value the body rules refuse.
    const allowlist = StructuredAllowlist.build({ catalog, requested: ['gpt-5.6-sol'], enabledProviders: ALL });
    let error: unknown;
    try {
      allowlist.resolve('gpt-5.6-sol', { reasoningEffort: 'minimal' });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({
      code: 'invalid_request',
      param: 'reasoning_effort',
      publicMessage: 'reasoning_effort must be one of low, medium, high, xhigh for model gpt-5.6-sol',
    });
  });
});
