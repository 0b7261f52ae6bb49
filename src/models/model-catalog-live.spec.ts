import { familyIds } from '../core/family-registry';
import { LiveModelLists } from './live-model-lists';
import { ModelCatalog } from './model-catalog';
import { modelListEntry } from './model-list-entry';
import type { UpstreamModelInfo } from './upstream-model-info';

const live = (slug: string, extra: Partial<UpstreamModelInfo> = {}): UpstreamModelInfo => ({
  provider: 'provider_a',
  slug,
  listed: true,
  efforts: ['low', 'medium', 'high', 'xhigh', 'max', 'ultra'],
  defaultEffort: 'low',
  defaultVerbosity: 'low',
  serviceTiers: ['priority'],
  responsesLite: true,
  contextWindow: 272000,
  inputModalities: ['text', 'image'],
  ...extra,
});

describe('ModelCatalog with a live provider_a list (docs/design/decisions.md §3)', () => {
  const fresh = () => ModelCatalog.load(undefined, familyIds());
  const listedIds = (catalog: ModelCatalog) => catalog.listed.map((entry) => entry.id);

  it('reads the live lists as a source: what an adapter publishes there shows, and the catalog offers no way to edit it', () => {
    const lists = new LiveModelLists();
    const catalog = ModelCatalog.load(undefined, familyIds(), lists);
    const revision = catalog.revision;
    expect(catalog.resolve('gpt-9-sol')).toBeUndefined();
    lists.publish('provider_a', [live('gpt-9-sol')]);
    expect(catalog.resolve('gpt-9-sol')).toMatchObject({ upstreamModel: 'gpt-9-sol' });
    expect(catalog.revision).toBeGreaterThan(revision);
    lists.refuse('provider_a', 'gpt-9-sol');
    expect(listedIds(catalog)).not.toContain('gpt-9-sol');
    const writers = Object.getOwnPropertyNames(ModelCatalog.prototype).filter((name) =>
      /apply|drop|publish|refuse|set/i.test(name),
    );
    expect(writers).toEqual([]);
  });

  it('offers no ultra variant (a Codex CLI mode) yet resolves ultra to what the CLI sends: xhigh', () => {
    const catalog = fresh();
    expect(listedIds(catalog).filter((id) => id.endsWith('-ultra'))).toEqual([]);
    expect(catalog.resolve('gpt-6.1-sol-ultra')).toMatchObject({
      upstreamModel: 'gpt-6.1-sol',
      reasoningEffort: 'xhigh',
    });
    expect(catalog.resolve('gpt-6.1-sol', { reasoningEffort: 'ultra' })?.reasoningEffort).toBe('xhigh');
    expect(catalog.resolve('provider_a/gpt-6.1-sol', { reasoningEffort: 'ultra' })?.reasoningEffort).toBe('xhigh');
    expect(catalog.resolve('gpt-6.1-sol-max')?.reasoningEffort).toBe('max');
  });

  it('adds the variants of a new slug: one per listed effort, -fast ones only with the priority tier', () => {
    const catalog = fresh();
    catalog.live.publish('provider_a', [
      live('gpt-7-sol', { efforts: ['low', 'high'], defaultEffort: 'high', serviceTiers: [] }),
      live('gpt-7-terra', { efforts: ['medium', 'ultra'], defaultEffort: 'medium' }),
    ]);
    expect(listedIds(catalog).filter((id) => id.startsWith('gpt-7'))).toEqual([
      'gpt-7-sol',
      'gpt-7-sol-low',
      'gpt-7-sol-high',
      'gpt-7-terra',
      'gpt-7-terra-medium',
      'gpt-7-terra-fast',
      'gpt-7-terra-fast-medium',
    ]);
    expect(catalog.resolve('gpt-7-sol')).toMatchObject({
      upstreamModel: 'gpt-7-sol',
      reasoningEffort: 'high',
      verbosity: 'low',
      serviceTier: null,
    });
    expect(catalog.resolve('gpt-7-terra-fast-ultra')).toMatchObject({
      reasoningEffort: 'xhigh',
      serviceTier: 'priority',
    });
    expect(() => catalog.resolve('gpt-7-sol', { reasoningEffort: 'max' })).toThrow(
      expect.objectContaining({ publicMessage: expect.stringContaining('low, high') }),
    );
  });

  it('does not list hidden or missing slugs, efforts the list no longer offers, or -fast ids without the tier; bundled ids still resolve', () => {
    const catalog = fresh();
    catalog.live.publish('provider_a', [
      live('gpt-6.1-sol', { efforts: ['low', 'medium'], serviceTiers: [] }),
      live('gpt-6-astra', { listed: false }),
      live('gpt-7-hidden', { listed: false }),
    ]);
    const ids = listedIds(catalog);
    expect(ids.filter((id) => id.startsWith('gpt-6.1-sol'))).toEqual([
      'gpt-6.1-sol',
      'gpt-6.1-sol-low',
      'gpt-6.1-sol-medium',
    ]);
    expect(ids.filter((id) => id.startsWith('gpt-6-astra') || id.startsWith('gpt-7-hidden'))).toEqual([]);
    expect(catalog.resolve('gpt-6.1-sol-fast-high')).toMatchObject({
      serviceTier: 'priority',
      reasoningEffort: 'high',
    });
    expect(catalog.resolve('gpt-7-hidden-low')).toMatchObject({ upstreamModel: 'gpt-7-hidden' });
    // Families without a live list are untouched; a bundled slug the list does not mention is
    // no longer offered, yet its ids still resolve.
    expect(ids).toContain('gemini-2.5-pro');
    expect(ids.filter((id) => id.startsWith('gpt-5.5'))).toEqual([]);
    expect(catalog.resolve('gpt-5.5-xhigh')).toMatchObject({ upstreamModel: 'gpt-5.5', reasoningEffort: 'xhigh' });
  });

  it('takes wire flags and metadata from the live list over the bundled data', () => {
    const catalog = fresh();
    expect(catalog.upstreamInfo('gpt-5.5')).toMatchObject({ responsesLite: false, contextWindow: 272000 });
    catalog.live.publish('provider_a', [live('gpt-5.5', { responsesLite: true, contextWindow: 300000 })]);
    expect(catalog.upstreamInfo('gpt-5.5')).toMatchObject({
      responsesLite: true,
      contextWindow: 300000,
      inputModalities: ['text', 'image'],
    });
  });

  it('keeps the bundled fields a live entry leaves out: the provider_a list reader writes them as undefined', () => {
    const catalog = fresh();
    const bare: UpstreamModelInfo = {
      provider: 'provider_a',
      slug: 'gpt-5.5',
      listed: true,
      efforts: ['low'],
      defaultEffort: null,
      defaultVerbosity: null,
      supportsVerbosity: undefined,
      serviceTiers: undefined,
      responsesLite: undefined,
      contextWindow: undefined,
      inputModalities: undefined,
      priority: undefined,
    };
    catalog.live.publish('provider_a', [bare]);
    expect(catalog.upstreamInfo('gpt-5.5')).toMatchObject({
      efforts: ['low'],
      responsesLite: false,
      contextWindow: 272000,
      inputModalities: ['text', 'image'],
    });
  });

  it('checks no reasoning_effort against a live entry that lists no efforts (the Codex CLI still sends its setting)', () => {
    const catalog = fresh();
    catalog.live.publish('provider_a', [live('gpt-7-sol', { efforts: [], defaultEffort: null, serviceTiers: [] })]);
    expect(catalog.resolve('gpt-7-sol', { reasoningEffort: 'high' })).toMatchObject({ reasoningEffort: 'high' });
    expect(catalog.resolve('provider_a/gpt-7-sol', { reasoningEffort: 'high' })).toMatchObject({
      reasoningEffort: 'high',
    });
    // A bundled model the list names without efforts: its file efforts no longer hold either.
    catalog.live.publish('provider_a', [live('gpt-5.5', { efforts: [] })]);
    expect(catalog.resolve('gpt-5.5', { reasoningEffort: 'minimal' })).toMatchObject({ reasoningEffort: 'minimal' });
  });

  it("adds a live list's variant rows in the order of its priority, not of the array", () => {
    const catalog = fresh();
    catalog.live.publish('provider_a', [
      live('gpt-7-terra', { priority: 2, efforts: ['low'], serviceTiers: [] }),
      live('gpt-7-sol', { priority: 1, efforts: ['low'], serviceTiers: [] }),
    ]);
    expect(listedIds(catalog).filter((id) => id.startsWith('gpt-7'))).toEqual([
      'gpt-7-sol',
      'gpt-7-sol-low',
      'gpt-7-terra',
      'gpt-7-terra-low',
    ]);
  });

  it('drops a refused model from the list until the live list changes its entry, and bumps the revision each time', () => {
    const catalog = fresh();
    const luna = live('gpt-6-luna');
    catalog.live.publish('provider_a', [luna]);
    const start = catalog.revision;
    catalog.live.refuse('provider_a', 'gpt-6-luna');
    expect(listedIds(catalog).filter((id) => id.startsWith('gpt-6-luna'))).toEqual([]);
    expect(catalog.resolve('gpt-6-luna-high')).toMatchObject({
      provider: 'provider_a',
      upstreamModel: 'gpt-6-luna',
      reasoningEffort: 'high',
    });
    // The same entry again: the refusal stands.
    catalog.live.publish('provider_a', [{ ...luna }]);
    expect(listedIds(catalog)).not.toContain('gpt-6-luna-high');
    // The backend changed what it says about the model: listed again.
    catalog.live.publish('provider_a', [live('gpt-6-luna', { efforts: ['low', 'high'] })]);
    expect(listedIds(catalog)).toContain('gpt-6-luna-high');
    expect(catalog.revision).toBe(start + 3);
  });

  it('a 404 for an id of a model the list dropped says so until a list offers it again, with the passthrough of what the id meant', () => {
    const catalog = fresh();
    const message = (id: string) => catalog.notFound(id).publicMessage;
    const gpt9 = live('gpt-9-sol', { efforts: ['low', 'high'], defaultEffort: 'low', serviceTiers: [] });
    catalog.live.publish('provider_a', [gpt9, live('gpt-6-luna')]);
    expect(catalog.resolve('gpt-9-sol-high')).toBeDefined();
    catalog.live.publish('provider_a', [live('gpt-6-luna')]);
    expect(catalog.live.droppedModel('provider_a', 'gpt-9-sol')).toEqual(gpt9);
    expect(message('gpt-9-sol-high')).toMatch(
      /^the model does not exist or is not enabled: the upstream's model list no longer offers gpt-9-sol; did you mean provider_a\/gpt-9-sol with reasoning_effort: "high" \(/,
    );
    expect(message('gpt-9-sol')).toContain('provider_a/gpt-9-sol with reasoning_effort: "low"');
    // A name spelled past the model's name that the gateway never gave it: no passthrough.
    expect(message('gpt-9-sol-hihg')).toBe(
      "the model does not exist or is not enabled: the upstream's model list no longer offers gpt-9-sol; GET /v1/models lists the models this gateway serves",
    );
    // Never listed in this process: no such words, only the passthrough.
    expect(message('gpt-8-sol-high')).toMatch(
      /^the model does not exist or is not enabled; did you mean provider_a\/gpt-8-sol with/,
    );
    catalog.live.publish('provider_a', [gpt9]);
    expect(catalog.live.droppedModel('provider_a', 'gpt-9-sol')).toBeUndefined();
    expect(catalog.live.droppedModel('provider_a', 'gpt-6-luna')).toBeDefined();
  });

  it('keeps aliases working and lists them while their upstream model is listed', () => {
    const catalog = fresh();
    catalog.live.publish('provider_a', [live('gpt-5.6-sol', { efforts: ['low', 'medium', 'high'] })]);
    expect(listedIds(catalog)).toEqual(expect.arrayContaining(['sol', 'sol-high']));
    expect(listedIds(catalog)).not.toContain('sol-xhigh');
    expect(catalog.resolve('sol-xhigh')).toMatchObject({ upstreamModel: 'gpt-5.6-sol', reasoningEffort: 'xhigh' });
  });

  describe('tier aliases follow the live list (docs/chat.md "Model ids")', () => {
    const bundledTier = (catalog: ModelCatalog, tier: string) =>
      catalog.allEntries.find((row) => row.provider === 'provider_a' && row.upstream_model.endsWith(`-${tier}`))!
        .upstream_model;

    it('each tier is the first listed model of that tier in priority order; explicit ids keep their model', () => {
      const catalog = fresh();
      catalog.live.publish('provider_a', [
        live('gpt-6.1-sol', { priority: 3 }),
        live('gpt-7-sol', { priority: 2, efforts: ['low', 'high'], defaultEffort: 'high' }),
        live('gpt-7-sol-preview', { priority: 0 }),
        live('gpt-8-sol', { priority: 1, listed: false }),
        live('gpt-7-terra', { priority: 5 }),
        live('gpt-6-terra', { priority: 4 }),
      ]);
      expect(catalog.tiers).toEqual([
        { tier: 'sol', upstreamModel: 'gpt-7-sol', source: 'live_list' },
        { tier: 'terra', upstreamModel: 'gpt-6-terra', source: 'live_list' },
        { tier: 'luna', upstreamModel: bundledTier(catalog, 'luna'), source: 'bundled_catalog' },
      ]);
      expect(catalog.resolve('sol')).toMatchObject({
        requestedId: 'sol',
        upstreamModel: 'gpt-7-sol',
        reasoningEffort: 'high',
      });
      expect(catalog.resolve('sol-fast-low')).toMatchObject({ upstreamModel: 'gpt-7-sol', serviceTier: 'priority' });
      // The tier model lists no xhigh: neither does its alias.
      expect(catalog.resolve('sol-xhigh')).toBeUndefined();
      expect(catalog.resolve('gpt-6.1-sol-xhigh')).toMatchObject({ upstreamModel: 'gpt-6.1-sol' });
      expect(catalog.aliasOf('sol-high')).toEqual({ tier: 'sol', target: 'gpt-7-sol-high', source: 'live_list' });
      expect(catalog.resolve('luna')?.upstreamModel).toBe(bundledTier(catalog, 'luna'));
    });

    it('a refused tier model hands the tier to the next one; an empty list gives every tier back to the file', () => {
      const catalog = fresh();
      catalog.live.publish('provider_a', [live('gpt-7-sol', { priority: 1 }), live('gpt-6.1-sol', { priority: 2 })]);
      catalog.live.refuse('provider_a', 'gpt-7-sol');
      expect(catalog.resolve('sol')?.upstreamModel).toBe('gpt-6.1-sol');
      catalog.live.publish('provider_a', []);
      for (const tier of ['sol', 'terra', 'luna']) {
        expect(catalog.resolve(tier)?.upstreamModel).toBe(bundledTier(catalog, tier));
        expect(catalog.aliasOf(tier)?.source).toBe('bundled_catalog');
      }
    });

    it('a 404 for a tier id the tier had before it moved names what the tier means now and its ids', () => {
      const catalog = fresh();
      catalog.live.publish('provider_a', [
        live('gpt-7-luna', { priority: 1, efforts: ['low', 'medium'], defaultEffort: 'low', serviceTiers: [] }),
      ]);
      expect(catalog.notFound('luna-high').publicMessage).toBe(
        'luna now means gpt-7-luna, which offers luna, luna-low, luna-medium; GET /v1/models lists the models this gateway serves',
      );
      // A suffix the bundled tier never had is a misspelling, not a move.
      expect(catalog.notFound('luna-hihg').publicMessage).toMatch(
        /^the model does not exist or is not enabled; did you mean/,
      );
    });

    it('/v1/models says which id an alias means today and where that came from', () => {
      const catalog = fresh();
      catalog.live.publish('provider_a', [live('gpt-7-sol', { priority: 1 })]);
      const row = catalog.get('sol-fast-high')!;
      expect(modelListEntry(row, catalog.upstreamInfo(row.upstream_model), catalog.aliasOf(row.id))).toMatchObject({
        id: 'sol-fast-high',
        family: 'gpt-7-sol',
        reasoning_effort: 'high',
        alias_for: 'gpt-7-sol-fast-high',
        tier: 'sol',
        tier_source: 'live_list',
      });
    });
  });

  it('ignores the live list of a disabled family', () => {
    const catalog = ModelCatalog.load(undefined, ['provider_b']);
    catalog.live.publish('provider_a', [live('gpt-7-sol')]);
    expect(catalog.resolve('gpt-7-sol')).toBeUndefined();
  });
});

describe(modelListEntry.name, () => {
  const catalog = ModelCatalog.load(undefined, familyIds());
  const entry = (id: string) => modelListEntry(catalog.get(id)!, catalog.upstreamInfo(catalog.get(id)!.upstream_model));

  it('carries what agents configure themselves with, for all three families', () => {
    expect(entry('gpt-6.1-sol-fast-high')).toEqual({
      id: 'gpt-6.1-sol-fast-high',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'provider_a',
      family: 'gpt-6.1-sol',
      context_window: 500000,
      input_modalities: ['text', 'image'],
      reasoning_effort: 'high',
      supported_reasoning_efforts: ['low', 'medium', 'high', 'xhigh', 'max'],
    });
    expect(entry('gemini-2.5-pro')).toMatchObject({
      owned_by: 'provider_b',
      family: 'gemini-2.5-pro',
      context_window: 1048576,
      max_output_tokens: 65536,
      input_modalities: ['text', 'image'],
    });
    expect(entry('claude-haiku-4-5-20251001')).toMatchObject({
      owned_by: 'provider_c',
      context_window: 200000,
      max_output_tokens: 32000,
      input_modalities: ['text'],
    });
    expect(entry('sonnet')).not.toHaveProperty('reasoning_effort');
  });

  it('says what the wire carries for an -ultra id (xhigh), and leaves unknown fields out', () => {
    expect(entry('gpt-6.1-sol-ultra').reasoning_effort).toBe('xhigh');
    const bare = new ModelCatalog(
      [
        {
          id: 'x',
          provider: 'provider_a',
          upstream_model: 'x',
          reasoning_effort: null,
          verbosity: null,
          service_tier: null,
          structured: false,
        },
      ],
      familyIds(),
      'x',
    );
    expect(modelListEntry(bare.get('x')!, bare.upstreamInfo('x'))).toEqual({
      id: 'x',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'provider_a',
      family: 'x',
    });
  });
});
