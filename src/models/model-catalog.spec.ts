import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError } from '../config/app-config';
import { familyIds } from '../core/family-registry';
import type { CatalogEntry } from './model-catalog';
import { BUILT_IN_CATALOG_PATH, builtInCatalogFile, checkEffort, ModelCatalog } from './model-catalog';
import { modelListEntry } from './model-list-entry';

const ALL = familyIds();

describe(ModelCatalog.name, () => {
  describe('the built-in catalog (docs/design/decisions.md §3)', () => {
    const catalog = ModelCatalog.load(undefined, ALL);
    const ids = catalog.entries.map((entry) => entry.id);

    it('has the provider_a tiers with effort suffixes and -fast variants', () => {
      for (const tier of ['sol', 'terra', 'luna']) {
        const base = `gpt-5.6-${tier}`;
        for (const suffix of [
          '',
          '-low',
          '-medium',
          '-high',
          '-xhigh',
          '-fast',
          '-fast-low',
          '-fast-medium',
          '-fast-high',
          '-fast-xhigh',
        ]) {
          expect(ids).toContain(`${base}${suffix}`);
        }
      }
    });

    it('marks -fast ids, and only them, with the priority service tier', () => {
      for (const entry of catalog.entries) {
        expect({ id: entry.id, tier: entry.service_tier }).toEqual({
          id: entry.id,
          tier: entry.id.includes('-fast') ? 'priority' : null,
        });
      }
    });

    it('gives -high ids a higher effort than the base id', () => {
      expect(catalog.get('gpt-5.6-sol-high')?.reasoning_effort).toBe('high');
      expect(catalog.get('gpt-5.6-terra-fast-xhigh')?.reasoning_effort).toBe('xhigh');
    });

    it('serves all three families, with structured output only on provider_a', () => {
      expect(new Set(catalog.entries.map((entry) => entry.provider))).toEqual(new Set(ALL));
      for (const entry of catalog.entries) if (entry.structured) expect(entry.provider).toBe('provider_a');
    });

    describe('prefix-free provider_a tier aliases for agent clients (docs/clients.md "Model ids")', () => {
      // Without a live list a tier means the first model of that tier in the file (docs/chat.md "Model ids").
      const firstOfTier = (tier: string) =>
        catalog.allEntries.find((row) => row.provider === 'provider_a' && row.upstream_model.endsWith(`-${tier}`))!
          .upstream_model;
      const tierIds = (tier: string) =>
        ids.filter((id) => id === firstOfTier(tier) || id.startsWith(`${firstOfTier(tier)}-`));
      // Clients route these prefixes to /v1/responses (Continue `cn`) or treat them as reasoning models.
      const RESPONSES_PREFIX = /^(gpt-5|o\d)/;

      it.each(['sol', 'terra', 'luna'])(
        'has one %s alias per id of the tier model, resolving exactly like it',
        (tier) => {
          expect(tierIds(tier).length).toBeGreaterThanOrEqual(10);
          for (const id of tierIds(tier)) {
            const alias = tier + id.slice(firstOfTier(tier).length);
            expect(catalog.resolve(alias)).toEqual({ ...catalog.resolve(id), requestedId: alias, catalogId: alias });
            expect(catalog.aliasOf(alias)).toEqual({ tier, target: id, source: 'bundled_catalog' });
            expect(alias).not.toMatch(RESPONSES_PREFIX);
            // Off the structured allowlist: one id per policy row.
            expect(catalog.get(alias)?.structured).toBe(false);
          }
        },
      );

      it('the catalog file itself holds no tier alias rows: they are derived, so they follow the tiers', () => {
        const fileIds = catalog.allEntries.map((row) => row.id);
        expect(fileIds.filter((id) => /^(sol|terra|luna)(-|$)/.test(id))).toEqual([]);
        expect(catalog.defaultModel).toBe('sol');
      });
    });

    it('is shipped as a data file next to the code', () => {
      expect(path.basename(BUILT_IN_CATALOG_PATH)).toBe('catalog.json');
      expect(fs.existsSync(BUILT_IN_CATALOG_PATH)).toBe(true);
    });

    it("is, as one file, exactly the families' rows files joined (npm run catalog:json rewrites it)", () => {
      expect(fs.readFileSync(BUILT_IN_CATALOG_PATH, 'utf8')).toBe(builtInCatalogFile());
      const file = ModelCatalog.load(BUILT_IN_CATALOG_PATH, ALL);
      expect(file.allEntries).toEqual(catalog.allEntries);
      expect(file.defaultModel).toBe(catalog.defaultModel);
      expect(file.bundledEntries()).toEqual(catalog.bundledEntries());
    });
  });

  describe('filtering by GATEWAY_PROVIDERS', () => {
    it('keeps only the enabled families and resolves nothing of a disabled one', () => {
      const catalog = ModelCatalog.load(undefined, ['provider_b']);
      expect(new Set(catalog.entries.map((entry) => entry.provider))).toEqual(new Set(['provider_b']));
      expect(catalog.get('gpt-5.6-sol')).toBeUndefined();
      expect(catalog.resolve('gpt-5.6-sol')).toBeUndefined();
      expect(catalog.resolve('provider_a/gpt-5.7')).toBeUndefined();
      expect(catalog.resolve('gemini-2.5-pro')?.provider).toBe('provider_b');
    });
  });

  describe('resolve', () => {
    const catalog = ModelCatalog.load(undefined, ALL);

    it('resolves a catalog id with its defaults, and request overrides win', () => {
      expect(catalog.resolve('gpt-5.6-sol-fast-high')).toMatchObject({
        requestedId: 'gpt-5.6-sol-fast-high',
        catalogId: 'gpt-5.6-sol-fast-high',
        provider: 'provider_a',
        upstreamModel: 'gpt-5.6-sol',
        reasoningEffort: 'high',
        serviceTier: 'priority',
      });
      expect(catalog.resolve('gpt-5.6-sol', { reasoningEffort: 'xhigh', verbosity: 'high' })).toMatchObject({
        reasoningEffort: 'xhigh',
        verbosity: 'high',
      });
    });

    it('passes an explicit provider_x/<model> through without a catalog id', () => {
      expect(catalog.resolve('provider_a/gpt-5.7-preview')).toMatchObject({
        catalogId: null,
        provider: 'provider_a',
        upstreamModel: 'gpt-5.7-preview',
        serviceTier: null,
      });
      expect(catalog.resolve('provider_c/anthropic/claude-sonnet-4.5')).toMatchObject({
        provider: 'provider_c',
        upstreamModel: 'claude-sonnet-4-5',
      });
    });

    it('returns undefined for unknown ids and malformed passthroughs', () => {
      for (const id of ['gpt-4o', 'provider_a/', 'provider_z/model', '/gpt', 'GPT-5.6-SOL', 'provider_a/gpt-5.6-sol '])
        expect(catalog.resolve(id)).toBeUndefined();
    });

    it('refuses with 400 a passthrough model id no upstream can name: non-ASCII, spaces, controls, over 128', () => {
      for (const model of ['gemini-2.5-pro✓', 'two words', 'line\nbreak', 'x'.repeat(129)])
        expect(() => catalog.resolve(`provider_a/${model}`)).toThrow(
          expect.objectContaining({ code: 'invalid_request', param: 'model' }) as Error,
        );
      expect(catalog.resolve(`provider_a/${'x'.repeat(128)}`)).toMatchObject({ upstreamModel: 'x'.repeat(128) });
    });

    it('checks a request effort against a model’s list, and takes any effort when the list is empty', () => {
      expect(() => checkEffort('m1', ['low', 'high'], 'medium')).toThrow(
        expect.objectContaining({
          code: 'invalid_request',
          param: 'reasoning_effort',
          publicMessage: 'reasoning_effort must be one of low, high for model m1',
        }) as Error,
      );
      // A live list that names no efforts for a model: the Codex CLI still sends its effort setting.
      expect(() => checkEffort('m1', [], 'high')).not.toThrow();
      expect(() => checkEffort('m1', undefined, 'high')).not.toThrow();
    });

    it('names at most 128 characters of the model id in the effort error', () => {
      const id = `provider_a/${'m'.repeat(200)}`;
      expect(() => checkEffort(id, ['low'], 'high')).toThrow(
        expect.objectContaining({
          publicMessage: `reasoning_effort must be one of low for model ${id.slice(0, 128)}`,
        }) as Error,
      );
    });
  });

  describe('the /v1/models entry', () => {
    const row: CatalogEntry = {
      id: 'gpt-5.6-sol-ultra',
      provider: 'provider_a',
      upstream_model: 'gpt-5.6-sol',
      reasoning_effort: 'ultra',
      verbosity: null,
      service_tier: null,
      structured: false,
    };

    it('shows the effort the id sends on the wire, and leaves out an efforts list with nothing to offer', () => {
      // `ultra` is a CLI-only mode of provider_a: it goes upstream as xhigh and is never offered.
      const entry = modelListEntry(row, { provider: 'provider_a', slug: 'gpt-5.6-sol', efforts: ['ultra'] });
      expect(entry.reasoning_effort).toBe('xhigh');
      expect(entry).not.toHaveProperty('supported_reasoning_efforts');
      expect(
        modelListEntry(row, { provider: 'provider_a', slug: 'gpt-5.6-sol', efforts: ['low', 'ultra'] })
          .supported_reasoning_efforts,
      ).toEqual(['low']);
    });
  });

  describe('GATEWAY_MODEL_CATALOG replacing the built-in file', () => {
    let directory: string;
    const write = (name: string, content: unknown) => {
      const file = path.join(directory, name);
      fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
      return file;
    };
    const entry = (overrides: Partial<CatalogEntry> = {}): CatalogEntry => ({
      id: 'team-model',
      provider: 'provider_a',
      upstream_model: 'gpt-5.6-terra',
      reasoning_effort: 'medium',
      verbosity: null,
      service_tier: null,
      structured: false,
      ...overrides,
    });

    beforeEach(() => {
      directory = fs.mkdtempSync(path.join(os.tmpdir(), 'catalog-'));
    });

    afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

    it("takes the file's default_model as the default, and the contract's when it names none", () => {
      expect(
        ModelCatalog.load(write('m.json', { default_model: 'team-model', models: [entry()] }), ALL).defaultModel,
      ).toBe('team-model');
      const sol = entry({ id: 'gpt-9-sol', upstream_model: 'gpt-9-sol' });
      expect(ModelCatalog.load(write('n.json', { models: [entry(), sol] }), ALL).defaultModel).toBe('sol');
      expect(ModelCatalog.load(undefined, ALL).defaultModel).toBe('sol');
    });

    it('refuses a file that names no default_model when the fallback sol is no model of it, naming the fix', () => {
      const onlyB = entry({ id: 'team-gemini', provider: 'provider_b', upstream_model: 'gemini-2.5-pro' });
      expect(() => ModelCatalog.load(write('b.json', { models: [onlyB] }), ALL)).toThrow(
        new ConfigError(
          `invalid setting GATEWAY_MODEL_CATALOG / --gateway-model-catalog: the file names no "default_model", and the fallback "sol" (a tier alias) is no model of this catalog, whose rows define no sol tier model: add a "default_model" naming one of its ids, e.g. "team-gemini" (what a chat request without model asks for) (${path.join(directory, 'b.json')})`,
        ),
      );
      // Checked with every family enabled: a default of a disabled family only warns (models.module.ts).
      expect(
        ModelCatalog.load(write('c.json', { models: [onlyB], default_model: 'team-gemini' }), ['provider_a'])
          .defaultModel,
      ).toBe('team-gemini');
    });

    it('accepts a tier alias as default_model when the file has a model of that tier, and lets its own rows win', () => {
      const sol = entry({ id: 'gpt-9-sol', provider: 'provider_a', upstream_model: 'gpt-9-sol' });
      const own = entry({ id: 'terra', provider: 'provider_a', upstream_model: 'gpt-9-sol' });
      const catalog = ModelCatalog.load(write('a.json', { default_model: 'terra', models: [sol, own] }), ALL);
      expect(catalog.resolve('sol')?.upstreamModel).toBe('gpt-9-sol');
      expect(catalog.aliasOf('terra')).toBeUndefined();
      expect(() => ModelCatalog.load(write('b.json', { default_model: 'luna', models: [sol] }), ALL)).toThrow(
        /"default_model" must name a model id of the catalog or a tier alias/,
      );
    });

    it("gives a passthrough id the max_output_tokens the file's upstream_models names for its model", () => {
      const catalog = ModelCatalog.load(
        write('u.json', {
          default_model: 'team-model',
          models: [entry()],
          upstream_models: { 'gpt-9-preview': { provider: 'provider_a', max_output_tokens: 4096 } },
        }),
        ALL,
      );
      expect(catalog.resolve('provider_a/gpt-9-preview')?.maxOutputTokens).toBe(4096);
      expect(catalog.resolve('provider_a/gpt-9-other')?.maxOutputTokens).toBeUndefined();
    });

    it('uses only the entries of the given file', () => {
      const catalog = ModelCatalog.load(write('ok.json', { default_model: 'team-model', models: [entry()] }), ALL);
      expect(catalog.entries.map((row) => row.id)).toEqual(['team-model']);
      expect(catalog.resolve('gpt-5.6-sol')).toBeUndefined();
    });

    it.each([
      [
        'a missing file',
        () => path.join(directory, 'nope.json'),
        /^invalid setting GATEWAY_MODEL_CATALOG \/ --gateway-model-catalog: file not found: correct the path, or unset the setting for the built-in one \(.*nope\.json\)$/,
      ],
      [
        'invalid JSON',
        () => write('bad.json', '{"models": ['),
        /GATEWAY_MODEL_CATALOG \/ --gateway-model-catalog: not readable JSON: Unexpected end of JSON input \(.*bad\.json\)$/,
      ],
      [
        'a directory',
        () => directory,
        /GATEWAY_MODEL_CATALOG \/ --gateway-model-catalog: is a directory, not a file \(EISDIR\): point the setting at the JSON file/,
      ],
      ['no models array', () => write('shape.json', { data: [] }), /"models" array/],
      [
        'an unknown provider',
        () => write('p.json', { models: [entry({ provider: 'openrouter' })] }),
        /models\[0\] \(id "team-model"\) has an unknown "provider"/,
      ],
      ['an empty id', () => write('id.json', { models: [entry({ id: ' ' })] }), /models\[0\] needs a non-empty "id"/],
      [
        'an empty reasoning_efforts list',
        () => write('r.json', { models: [entry({ id: 'x1', reasoning_effort: null, reasoning_efforts: [] })] }),
        /models\[0\] \(id "x1"\) "reasoning_efforts" must be a non-empty array of strings/,
      ],
      [
        'a fractional context_window in upstream_models',
        () =>
          write('c.json', {
            models: [entry()],
            upstream_models: { 'gpt-5.6-terra': { provider: 'provider_a', context_window: 1.5 } },
          }),
        /upstream_models\.gpt-5\.6-terra\.context_window must be a positive integer/,
      ],
      [
        'a bad service tier',
        () => write('t.json', { models: [entry({ service_tier: 'flex' as never })] }),
        /"service_tier" must be "priority" or null/,
      ],
      ['a duplicate id', () => write('d.json', { models: [entry(), entry()] }), /duplicate model id "team-model"/],
      [
        'a non-boolean structured flag',
        () => write('s.json', { models: [entry({ structured: 'yes' as never })] }),
        /"structured" must be true or false/,
      ],
      [
        'a null default_model',
        () => write('z.json', { default_model: null, models: [entry()] }),
        /"default_model" must name a model id of the catalog or a tier alias its rows define, not null: /,
      ],
      [
        'a default_model outside the file',
        () => write('m.json', { default_model: 'gpt-6.1-sol', models: [entry()] }),
        /"default_model" must name a model id of the catalog or a tier alias its rows define, not "gpt-6\.1-sol": name one of its ids, e\.g\. "team-model" \(/,
      ],
      [
        "a reasoning_effort outside the row's reasoning_efforts",
        () =>
          write('e.json', {
            models: [entry({ id: 'x1', reasoning_effort: 'bogus', reasoning_efforts: ['low', 'high'] })],
          }),
        /: models\[0\] \(id "x1"\) has "reasoning_effort" "bogus", not one of its "reasoning_efforts" \(low, high\): use one of them, or null for the upstream's default \(/,
      ],
      [
        'a reasoning_effort its family does not take, on a row without reasoning_efforts',
        () =>
          write('f.json', {
            models: [entry({ id: 'c1', provider: 'provider_c', upstream_model: 'opus', reasoning_effort: 'ultra' })],
          }),
        /models\[0\] \(id "c1"\) has "reasoning_effort" "ultra", not an effort provider_c takes \(none, minimal, low, medium, high, xhigh, max\): use one of them/,
      ],
      [
        'reasoning_efforts its family does not take',
        () =>
          write('g.json', {
            models: [
              entry({
                id: 'b1',
                provider: 'provider_b',
                upstream_model: 'gemini-2.5-pro',
                reasoning_effort: null,
                reasoning_efforts: ['low', 'turbo'],
              }),
            ],
          }),
        /models\[0\] \(id "b1"\) has "turbo" in "reasoning_efforts", not an effort provider_b takes \(none, minimal, low, medium, high, xhigh\): remove it/,
      ],
      [
        'a verbosity other than low, medium, high or null',
        () => write('v.json', { models: [entry({ id: 'x1', verbosity: 'loud' })] }),
        /models\[0\] \(id "x1"\) has "verbosity" "loud", not one of low, medium, high: use one of them, or null for the upstream's default/,
      ],
      [
        'an id with whitespace around it',
        () => write('w.json', { models: [entry({ id: ' x2 ' })] }),
        /models\[0\] \(id " x2 "\) has whitespace around its "id": write the id without it/,
      ],
      [
        "an id in another family's passthrough namespace",
        () => write('n.json', { models: [entry({ id: 'provider_b/foo' })] }),
        /models\[0\] \(id "provider_b\/foo"\) has an "id" starting with "provider_b\/", which names provider_b's passthrough ids .*: name the row without that prefix/,
      ],
      [
        "an id in its own family's passthrough namespace",
        () => write('o.json', { models: [entry({ id: 'provider_a/gpt-5.6-terra' })] }),
        /models\[0\] \(id "provider_a\/gpt-5\.6-terra"\) has an "id" starting with "provider_a\/"/,
      ],
    ])('fails start-up with one ConfigError line for %s', (_name, file, expected) => {
      let thrown: unknown;
      try {
        ModelCatalog.load(file(), ALL);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message).toMatch(expected);
      expect((thrown as Error).message).not.toContain('\n');
    });
  });
});
