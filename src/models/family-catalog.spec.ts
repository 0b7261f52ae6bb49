import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError } from '../config/app-config';
import { registerFamily } from '../core/family-registry';
import type { CatalogEntry } from './catalog-entry';
import { ModelCatalog } from './model-catalog';
import { partialFamily as testFamily } from '../../test/support/partial-family';

/** A family that declares no catalog part. */
const plain = testFamily({ id: 'catalog_plain' });

const row = (id: string, upstream: string, effort: string | null = null): CatalogEntry => ({
  id,
  provider: plain.id,
  upstream_model: upstream,
  reasoning_effort: effort,
  verbosity: null,
  service_tier: null,
  structured: false,
});

describe('a family’s catalog part (FamilyCatalog)', () => {
  beforeAll(() => registerFamily(plain));

  it('absent: a passthrough id reaches the model as written, with no effort or verbosity of its own', () => {
    const catalog = new ModelCatalog([], [plain.id]);
    expect(catalog.resolve('catalog_plain/some.model-1')).toEqual({
      requestedId: 'catalog_plain/some.model-1',
      catalogId: null,
      provider: plain.id,
      upstreamModel: 'some.model-1',
      reasoningEffort: null,
      verbosity: null,
      serviceTier: null,
    });
  });

  it('absent: every effort is one the upstream takes (none is resolved to another or left unlisted)', () => {
    const catalog = new ModelCatalog([row('m-ultra', 'm', 'ultra')], [plain.id]);
    expect(catalog.resolve('catalog_plain/m', { reasoningEffort: 'ultra' })?.reasoningEffort).toBe('ultra');
    expect(catalog.resolve('m-ultra')?.reasoningEffort).toBe('ultra');
    expect(catalog.listed.map((entry) => entry.id)).toEqual(['m-ultra']);
  });

  it('without `tiers`, a slug ending in a tier word gets no tier alias', () => {
    const catalog = new ModelCatalog([row('x-sol', 'x-sol')], [plain.id], 'x-sol');
    expect(catalog.tiers).toEqual([]);
    expect(catalog.get('sol')).toBeUndefined();
  });

  it('the tier aliases reach only the models of the family that declares tiers', () => {
    const catalog = new ModelCatalog(
      [row('x-sol', 'x-sol'), { ...row('gpt-1-sol', 'gpt-1-sol'), provider: 'provider_a' }],
      [plain.id, 'provider_a'],
      'x-sol',
    );
    expect(catalog.tiers).toEqual([{ tier: 'sol', upstreamModel: 'gpt-1-sol', source: 'bundled_catalog' }]);
    expect(catalog.aliasOf('sol')).toEqual({ tier: 'sol', target: 'gpt-1-sol', source: 'bundled_catalog' });
  });

  // Last: the family it registers puts its rows into every later built-in catalog of this file.
  it("refuses a family's rows file that names another family", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'family-rows-')), 'rows.json');
    fs.writeFileSync(file, JSON.stringify({ models: [{ ...row('y-1', 'y-1'), provider: 'provider_b' }] }));
    registerFamily({
      ...plain,
      id: 'catalog_rows',
      catalog: { passthroughDefaults: { effort: null, verbosity: null }, rows: file },
    });
    expect(() => ModelCatalog.load(undefined, ['catalog_rows'])).toThrow(
      new ConfigError(
        `invalid model catalog of catalog_rows: models[0] (id "y-1") names "provider" provider_b, not catalog_rows (${file})`,
      ),
    );
  });
});
