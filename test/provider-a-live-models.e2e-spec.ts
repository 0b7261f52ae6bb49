import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { LiveModelLists } from '../src/models/live-model-lists';
import type { FakeModel } from './support/fake-provider-a-rules';
import { bundledTierModel } from './support/bundled-tiers';
import { cliChangedListCapture, cliModelList } from './support/fake-provider-a';
import { makeJwt, providerASettings, textReply } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { codexClient } from '../src/providers/provider-a/provider-a.client';
import { pollUntil } from './support/poll';
import { postChatBody } from './support/chat-sse';
import { readCodexCapture } from './support/oracle-pins';

type Json = Record<string, any>;

/** The model-list GET of the real Codex CLI of the pin (against a fake serving its bundled list). */
const CLI_MODELS_GET = readCodexCapture('gpt-6.1-sol.models-served.capture.json').transcript.find(
  (entry: Json) => entry.kind === 'http' && entry.method === 'GET',
) as Json;

const bundledTier = (tier: 'sol' | 'terra' | 'luna') => bundledTierModel(tier).model;

/**
 * A backend list a newer Codex release could see: a new sol model first (`priority` 0), a new
 * astra, and the terra and luna models of the pinned CLI's list.
 */
function newerList(): FakeModel[] {
  const pinned = cliModelList();
  const like = (slug: string, from: string, priority: number): FakeModel => ({
    ...pinned.find((model) => model.slug === from)!,
    slug,
    priority,
  });
  return [like('gpt-6.2-sol', 'gpt-6.1-sol', 0), like('gpt-6.2-astra', 'gpt-6-astra', 0), ...pinned];
}

describe('provider_a live model list (PROVIDER_A_MODELS_REFRESH)', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-live-' });
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  const modelIds = async () =>
    (((await (await fetch(`${gateway!.url}/v1/models`)).json()) as Json).data as Json[]).map(
      (entry) => entry.id as string,
    );
  const models = async () => ((await (await fetch(`${gateway!.url}/v1/models`)).json()) as Json).data as Json[];

  it('serves a model the upstream lists and the bundled catalog lacks, with exactly its variants; a hidden one is not listed', async () => {
    fake().serveModels([
      ...cliModelList(),
      {
        slug: 'gpt-7-sol',
        visibility: 'list',
        priority: 0,
        supported_reasoning_levels: [{ effort: 'low' }, { effort: 'high' }],
        default_reasoning_level: 'high',
        service_tiers: [],
        use_responses_lite: true,
        context_window: 400000,
        input_modalities: ['text', 'image'],
        default_verbosity: 'low',
      },
      {
        slug: 'gpt-7-secret',
        visibility: 'hide',
        supported_reasoning_levels: [{ effort: 'low' }],
        service_tiers: [{ id: 'priority' }],
        use_responses_lite: true,
      },
    ]);
    gateway = await startGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '15m',
    });
    const ids = await pollUntil(modelIds, (list) => list.includes('gpt-7-sol'));
    expect(ids.filter((id) => id.startsWith('gpt-7'))).toEqual(['gpt-7-sol', 'gpt-7-sol-low', 'gpt-7-sol-high']);

    const entry = (await models()).find((model) => model.id === 'gpt-7-sol')!;
    expect(entry).toMatchObject({
      owned_by: 'provider_a',
      family: 'gpt-7-sol',
      context_window: 400000,
      input_modalities: ['text', 'image'],
      reasoning_effort: 'high',
      supported_reasoning_efforts: ['low', 'high'],
    });

    // Served as the list says: its default effort, and the lite shape it is marked for.
    fake().enqueue(textReply('ok'));
    const chat = await postChatBody(gateway, { model: 'gpt-7-sol', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);
    expect(fake().lastBody()).toMatchObject({
      model: 'gpt-7-sol',
      reasoning: { effort: 'high', context: 'all_turns' },
      client_metadata: { ws_request_header_x_openai_internal_codex_responses_lite: 'true' },
    });
  });

  describe('tier aliases and the default follow the live list (docs/chat.md "Model ids")', () => {
    const chat = async (body: Json) => {
      fake().enqueue(textReply('ok'));
      const response = await postChatBody(gateway!, { messages: [{ role: 'user', content: 'hi' }], ...body });
      expect(response.status).toBe(200);
      return fake().lastBody() as Json;
    };
    const aliasEntry = async (id: string) => (await models()).find((model) => model.id === id);
    const start = async () => {
      gateway = await startGateway({
        ...providerASettings(fake(), home()),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_MODELS_REFRESH: '15m',
      });
    };

    it('lists the new models, and no model, sol, sol-high and sol-fast reach the first sol model; terra and luna the first of theirs', async () => {
      fake().serveModels(newerList());
      await start();
      const ids = await pollUntil(modelIds, (list) => list.includes('gpt-6.2-sol'));
      expect(ids).toEqual(expect.arrayContaining(['gpt-6.2-sol', 'gpt-6.2-astra', 'gpt-6.1-terra', 'gpt-6-luna']));
      expect(await aliasEntry('sol-high')).toMatchObject({
        family: 'gpt-6.2-sol',
        alias_for: 'gpt-6.2-sol-high',
        tier: 'sol',
        tier_source: 'live_list',
      });

      expect(await chat({})).toMatchObject({ model: 'gpt-6.2-sol', reasoning: { effort: 'low' } });
      expect(await chat({ model: 'sol' })).toMatchObject({ model: 'gpt-6.2-sol' });
      expect(await chat({ model: 'sol-high' })).toMatchObject({ model: 'gpt-6.2-sol', reasoning: { effort: 'high' } });
      const fast = await chat({ model: 'sol-fast' });
      expect(fast).toMatchObject({ model: 'gpt-6.2-sol', service_tier: 'priority' });
      expect((await chat({ model: 'terra' })).model).toBe('gpt-6.1-terra');
      expect((await chat({ model: 'luna-fast-high' })).model).toBe('gpt-6-luna');
      // An explicit id keeps meaning exactly that model.
      expect((await chat({ model: 'gpt-6.1-sol-high' })).model).toBe('gpt-6.1-sol');
      const refreshed = gateway!.logs.lines.map((line) => JSON.parse(line) as Json);
      expect(refreshed.find((line) => line.event === 'provider_a_models_refreshed')?.tiers).toEqual({
        sol: 'gpt-6.2-sol',
        terra: 'gpt-6.1-terra',
        luna: 'gpt-6-luna',
      });
    });

    it("a tier is the live list's choice: with gpt-6.1-terra hidden, terra is the next terra model the list offers", async () => {
      fake().serveModels(
        newerList().map((model) => (model.slug === 'gpt-6.1-terra' ? { ...model, visibility: 'hide' } : model)),
      );
      await start();
      await pollUntil(modelIds, (list) => list.includes('gpt-6.2-sol'));
      expect((await chat({ model: 'terra-high' })).model).toBe('gpt-5.6-terra');
      expect(await aliasEntry('terra')).toMatchObject({ alias_for: 'gpt-5.6-terra', tier_source: 'live_list' });
    });

    it('a list without a luna model keeps the bundled luna model, says so in /v1/models and in one warning', async () => {
      fake().serveModels(newerList().filter((model) => !model.slug.endsWith('-luna')));
      await start();
      await pollUntil(modelIds, (list) => list.includes('gpt-6.2-sol'));
      expect(await aliasEntry('luna')).toMatchObject({
        family: bundledTier('luna'),
        tier: 'luna',
        tier_source: 'bundled_catalog',
      });
      const warning = gateway!.logs.lines
        .map((line) => JSON.parse(line) as Json)
        .find((line) => line.event === 'provider_a_tier_not_in_live_list');
      expect(warning).toMatchObject({
        tiers: { luna: bundledTier('luna') },
        fix: expect.stringContaining('GET /v1/models'),
      });
      // The fake answers only models its list holds: it gets luna back (the gateway's list is not refetched).
      fake().serveModels(newerList());
      expect((await chat({ model: 'luna' })).model).toBe(bundledTier('luna'));
      expect((await chat({ model: 'sol' })).model).toBe('gpt-6.2-sol');
    });

    it('a tier moved to a model without some suffixes: those ids answer 404 naming what the tier means now, and a warning says which went', async () => {
      const pinnedLuna = cliModelList().find((model) => model.slug === bundledTier('luna'))!;
      fake().serveModels([
        {
          ...pinnedLuna,
          slug: 'gpt-7-luna',
          priority: -1,
          default_reasoning_level: 'low',
          supported_reasoning_levels: [
            { effort: 'low', description: '' },
            { effort: 'medium', description: '' },
          ],
          service_tiers: [],
        },
        ...newerList(),
      ]);
      await start();
      await pollUntil(modelIds, (list) => list.includes('gpt-7-luna'));
      expect((await modelIds()).filter((id) => id.startsWith('luna'))).toEqual(['luna', 'luna-low', 'luna-medium']);
      const moved =
        'luna now means gpt-7-luna, which offers luna, luna-low, luna-medium; GET /v1/models lists the models this gateway serves';
      for (const model of ['luna-high', 'luna-max', 'luna-fast', 'luna-fast-low']) {
        const response = await postChatBody(gateway!, { model, messages: [{ role: 'user', content: 'hi' }] });
        const retrieved = await fetch(`${gateway!.url}/v1/models/${model}`);
        for (const answer of [response, retrieved]) {
          expect([model, answer.status, ((await answer.json()) as Json).error]).toEqual([
            model,
            404,
            expect.objectContaining({ code: 'model_not_found', message: moved }),
          ]);
        }
      }
      expect(fake().requests()).toHaveLength(0);
      const gone = gateway!.logs.lines
        .map((line) => JSON.parse(line) as Json)
        .filter((line) => line.event === 'provider_a_tier_ids_gone');
      expect(gone).toEqual([
        expect.objectContaining({
          level: 40,
          ids: expect.arrayContaining(['luna-high', 'luna-max', 'luna-fast', 'luna-fast-low', 'luna-fast-medium']),
          tiers: { luna: 'gpt-7-luna' },
          fix: expect.stringContaining('GET /v1/models'),
        }),
      ]);
      expect(gone[0].ids).not.toContain('luna-medium');
      expect((gone[0].ids as string[]).filter((id) => !id.startsWith('luna'))).toEqual([]);
      // The ids the tier still has are served by the new model.
      expect(await chat({ model: 'luna-medium' })).toMatchObject({
        model: 'gpt-7-luna',
        reasoning: { effort: 'medium' },
      });
    });

    it('a moved tier with many ids names three of them and how many more; a misspelled suffix is no move', async () => {
      const pinnedSol = cliModelList().find((model) => model.slug === bundledTier('sol'))!;
      fake().serveModels([
        {
          ...pinnedSol,
          slug: 'gpt-7-sol',
          priority: -1,
          default_reasoning_level: 'low',
          supported_reasoning_levels: ['low', 'medium', 'high', 'xhigh'].map((effort) => ({ effort, description: '' })),
          service_tiers: [],
        },
        ...newerList(),
      ]);
      await start();
      await pollUntil(modelIds, (list) => list.includes('gpt-7-sol'));
      expect((await modelIds()).filter((id) => id === 'sol' || id.startsWith('sol-'))).toEqual([
        'sol',
        'sol-low',
        'sol-medium',
        'sol-high',
        'sol-xhigh',
      ]);
      const answer = async (model: string) => {
        const response = await postChatBody(gateway!, { model, messages: [{ role: 'user', content: 'hi' }] });
        return [model, response.status, ((await response.json()) as Json).error.message];
      };
      const tail = 'GET /v1/models lists the models this gateway serves';
      for (const model of ['sol-max', 'sol-fast', 'sol-fast-xhigh'])
        expect(await answer(model)).toEqual([
          model,
          404,
          `sol now means gpt-7-sol, which offers sol, sol-low, sol-medium and 2 more; ${tail}`,
        ]);
      expect(await answer('sol-hgh')).toEqual([
        'sol-hgh',
        404,
        `the model does not exist or is not enabled; did you mean sol-high? ${tail}`,
      ]);
      expect(fake().requests()).toHaveLength(0);
    });

    it('without a live list (the fetch fails) every tier and the default are the bundled tier models', async () => {
      fake().serveModels(newerList());
      fake().failModelsList(503, 10);
      await start();
      await pollUntil(
        async () => fake().modelsRequests(),
        (list) => list.length > 0,
      );
      expect(await aliasEntry('sol')).toMatchObject({ family: bundledTier('sol'), tier_source: 'bundled_catalog' });
      expect((await chat({})).model).toBe(bundledTier('sol'));
      expect((await chat({ model: 'sol-high' })).model).toBe(bundledTier('sol'));
      expect((await chat({ model: 'terra' })).model).toBe(bundledTier('terra'));
      expect((await chat({ model: 'luna' })).model).toBe(bundledTier('luna'));
    });
  });

  describe("the list's per-model flags, as the real CLI reads them (its captures against the same list)", () => {
    const startWith = async (models: FakeModel[]) => {
      fake().serveModels(models);
      gateway = await startGateway({
        ...providerASettings(fake(), home()),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_MODELS_REFRESH: '15m',
      });
      await pollUntil(
        async () => gateway!.logs.lines.filter((line) => line.includes('provider_a_models_refresh')),
        (lines) => lines.length > 0,
      );
    };
    const chat = async (body: Json) => {
      fake().enqueue(textReply('ok'));
      const response = await postChatBody(gateway!, { messages: [{ role: 'user', content: 'hi' }], ...body });
      const text = await response.text();
      return { status: response.status, text, sent: fake().lastBody() as Json };
    };
    const entry = async (id: string) => (await models()).find((model) => model.id === id);

    it("a bundled model's plain and -fast ids take the list's default effort and verbosity; -<effort> ids keep theirs", async () => {
      const cli = cliChangedListCapture('live-defaults');
      expect(cli.sent).toMatchObject({ reasoning: { effort: 'high' }, text: { verbosity: 'medium' } });
      await startWith(cli.models);
      for (const id of ['gpt-6.1-sol', 'gpt-6.1-sol-fast']) {
        const { status, sent } = await chat({ model: id });
        expect(status).toBe(200);
        expect(sent.reasoning.effort).toBe(cli.sent.reasoning!.effort);
        expect(sent.text.verbosity).toBe(cli.sent.text!.verbosity);
        expect(await entry(id)).toMatchObject({ reasoning_effort: 'high' });
      }
      const low = await chat({ model: 'gpt-6.1-sol-low' });
      expect(low.sent).toMatchObject({ reasoning: { effort: 'low' }, text: { verbosity: 'medium' } });
      // A request's own values still win.
      const asked = await chat({ model: 'gpt-6.1-sol', reasoning_effort: 'medium', verbosity: 'low' });
      expect(asked.sent).toMatchObject({ reasoning: { effort: 'medium' }, text: { verbosity: 'low' } });
    });

    it('a tier alias copies the changed default of its model', async () => {
      const tierModel = cliModelList().find((model) => model.slug.endsWith('-sol'))!.slug;
      await startWith(
        cliModelList().map((model) =>
          model.slug === tierModel ? { ...model, default_reasoning_level: 'xhigh', default_verbosity: 'high' } : model,
        ),
      );
      const { sent } = await chat({ model: 'sol' });
      expect(sent).toMatchObject({ model: tierModel, reasoning: { effort: 'xhigh' }, text: { verbosity: 'high' } });
      expect(await entry('sol-fast')).toMatchObject({ reasoning_effort: 'xhigh' });
    });

    it.each([
      // The model's own default summary, as the CLI sends it.
      ['summary-detailed', 'detailed'],
      // No summary at all for a model that takes none, as the CLI.
      ['no-summary-parameter', undefined],
      // The list's default is `none`: auto, what the CLI sends with model_reasoning_summary = "auto".
      ['summary-setting-auto', 'auto'],
    ])('reasoning.summary follows the list as the CLI does (capture %s)', async (label, summary) => {
      const cli = cliChangedListCapture(label);
      expect(cli.sent.reasoning?.summary).toBe(summary);
      await startWith(cli.models);
      for (const body of [{ model: 'gpt-6.1-sol' }, { model: 'gpt-6.1-sol-fast-high', faithful: true }]) {
        const { status, sent } = await chat(body);
        expect(status).toBe(200);
        expect(sent.reasoning.summary).toBe(cli.sent.reasoning!.summary);
      }
    });

    it('a model listed without effort levels takes any effort, as the CLI sends its setting', async () => {
      const cli = cliChangedListCapture('no-effort-levels');
      expect(cli.config).toEqual(['model_reasoning_effort = "high"']);
      await startWith(cli.models);
      const { status, text, sent } = await chat({ model: 'gpt-6.1-sol', reasoning_effort: 'high' });
      expect(text).not.toContain('must be one of');
      expect(status).toBe(200);
      expect(sent.reasoning.effort).toBe(cli.sent.reasoning!.effort);
      expect(await modelIds()).toEqual(expect.arrayContaining(['gpt-6.1-sol', 'gpt-6.1-sol-high']));
    });

    it('a list that drops the bundled default effort: the plain id stays listed and sends the new default', async () => {
      const cli = cliChangedListCapture('effort-dropped');
      expect(cli.sent.reasoning).toMatchObject({ effort: 'medium' });
      await startWith(cli.models);
      const ids = await modelIds();
      expect(ids).toEqual(expect.arrayContaining(['gpt-6.1-sol', 'gpt-6.1-sol-fast', 'gpt-6.1-sol-medium']));
      expect(ids).not.toContain('gpt-6.1-sol-low');
      expect(ids).not.toContain('gpt-6.1-sol-fast-low');
      const { status, sent } = await chat({ model: 'gpt-6.1-sol' });
      expect(status).toBe(200);
      expect(sent.reasoning.effort).toBe(cli.sent.reasoning!.effort);
    });
  });

  it('a bundled model the live list no longer has leaves /v1/models at once, and its ids still reach the upstream', async () => {
    fake().serveModels(cliModelList().filter((model) => model.slug !== 'gpt-5.5'));
    gateway = await startGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '15m',
    });
    await pollUntil(modelIds, (list) => !list.includes('gpt-5.5'));
    expect((await modelIds()).filter((id) => id.startsWith('gpt-5.5'))).toEqual([]);
    expect(await modelIds()).toContain('gpt-6.1-sol-high');
    expect((await fetch(`${gateway.url}/v1/models/gpt-5.5-high`)).status).toBe(404);
    // Still resolvable for chat: what the backend says about it is the answer.
    fake().enqueue(textReply('ok'));
    await postChatBody(gateway, { model: 'gpt-5.5-high', messages: [{ role: 'user', content: 'hi' }] });
    expect(fake().lastBody()).toMatchObject({ model: 'gpt-5.5', reasoning: { effort: 'high' } });
  });

  it('a live-only model the list dropped: its ids answer 404 saying so and naming a passthrough that works, effort as a field', async () => {
    const gpt7: FakeModel = {
      slug: 'gpt-7-sol',
      visibility: 'list',
      priority: 0,
      supported_reasoning_levels: [{ effort: 'low' }, { effort: 'high' }],
      default_reasoning_level: 'high',
      service_tiers: [{ id: 'priority' }],
      use_responses_lite: false,
      context_window: 123456,
      input_modalities: ['text'],
      default_verbosity: 'medium',
    };
    fake().serveModels([gpt7, ...cliModelList()]);
    gateway = await startGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '1s',
    });
    await pollUntil(modelIds, (list) => list.includes('gpt-7-sol-high'));
    fake().enqueue(textReply('ok'));
    const served = await postChatBody(gateway, {
      model: 'gpt-7-sol-high',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(served.status).toBe(200);
    expect(fake().lastBody()).toMatchObject({ model: 'gpt-7-sol', reasoning: { effort: 'high' } });

    // The list withdraws it; the backend still serves it to a client that names it.
    fake().reshapeModelsList((models) => ({ models: models.filter((model) => model.slug !== 'gpt-7-sol') }));
    await pollUntil(modelIds, (list) => !list.includes('gpt-7-sol'));
    const requestsBefore = fake().requests().length;
    const notFound = async (model: string) => {
      const response = await postChatBody(gateway!, { model, messages: [{ role: 'user', content: 'hi' }] });
      return [response.status, ((await response.json()) as Json).error];
    };
    const dropped = "the model does not exist or is not enabled: the upstream's model list no longer offers gpt-7-sol";
    const tail = 'GET /v1/models lists the models this gateway serves';
    const passthrough = (effort: string) =>
      `; did you mean provider_a/gpt-7-sol with reasoning_effort: "${effort}" (an id with a family's prefix goes to that family's upstream as written)? ${tail}`;
    expect(await notFound('gpt-7-sol-high')).toEqual([
      404,
      expect.objectContaining({ code: 'model_not_found', message: `${dropped}${passthrough('high')}` }),
    ]);
    // The plain id meant the model's default effort, which the passthrough would not send by itself.
    expect(await notFound('gpt-7-sol')).toEqual([
      404,
      expect.objectContaining({ message: `${dropped}${passthrough('high')}` }),
    ]);
    // An effort the model never had, and the priority tier (no passthrough carries it): no passthrough.
    for (const model of ['gpt-7-sol-medium', 'gpt-7-sol-fast-high'])
      expect(await notFound(model)).toEqual([404, expect.objectContaining({ message: `${dropped}; ${tail}` })]);
    expect(fake().requests()).toHaveLength(requestsBefore);
    // GET /v1/models/{id} says the same of the id as the chat route.
    const retrieved = await fetch(`${gateway.url}/v1/models/gpt-7-sol-high`);
    expect(retrieved.status).toBe(404);
    expect(((await retrieved.json()) as Json).error).toMatchObject({
      code: 'model_not_found',
      message: `${dropped}${passthrough('high')}`,
    });

    // Following the hint reaches the model with the effort the id named.
    fake().enqueue(textReply('ok'));
    const followed = await postChatBody(gateway, {
      model: 'provider_a/gpt-7-sol',
      reasoning_effort: 'high',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(followed.status).toBe(200);
    expect(fake().lastBody()).toMatchObject({ model: 'gpt-7-sol', reasoning: { effort: 'high' } });
  });

  describe('a list the gateway cannot read is not applied', () => {
    const refreshLines = () =>
      gateway!.logs.lines
        .map((line) => JSON.parse(line) as Json)
        .filter((line) => String(line.event).startsWith('provider_a_models_refresh'));

    it('entries without a slug (renamed): the last good list stays, and the warning says what to do', async () => {
      fake().serveModels([{ ...cliModelList()[0], slug: 'gpt-7-sol', priority: -1 }, ...cliModelList()]);
      gateway = await startGateway({
        ...providerASettings(fake(), home()),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_MODELS_REFRESH: '1s',
      });
      await pollUntil(modelIds, (list) => list.includes('gpt-7-sol'));
      const before = await modelIds();
      fake().reshapeModelsList((models) => ({
        models: models.map(({ slug, ...rest }) => ({ ...rest, id: slug })),
      }));
      const failures = await pollUntil(
        async () => refreshLines().filter((line) => line.event === 'provider_a_models_refresh_failed'),
        (lines) => lines.length > 0,
      );
      expect(failures[0]).toMatchObject({
        reason: 'no entry of the model list has a readable slug',
        fix: expect.stringContaining('PROVIDER_A_MODELS_REFRESH=0'),
      });
      expect(await modelIds()).toEqual(before);
      fake().enqueue(textReply('ok'));
      const chat = await postChatBody(gateway, { model: 'sol', messages: [{ role: 'user', content: 'hi' }] });
      expect(chat.status).toBe(200);
      expect(fake().lastBody()).toMatchObject({ model: 'gpt-7-sol' });
    });

    it('a reshaped supported_reasoning_levels leaves the efforts unknown: every id listed, every effort sent', async () => {
      fake().reshapeModelsList((models) => ({
        models: models.map((model) => ({
          ...model,
          supported_reasoning_levels: model.supported_reasoning_levels.map(({ effort }) => ({ level: effort })),
        })),
      }));
      gateway = await startGateway({
        ...providerASettings(fake(), home()),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_MODELS_REFRESH: '15m',
      });
      await pollUntil(
        async () => refreshLines().filter((line) => line.event === 'provider_a_models_refreshed'),
        (lines) => lines.length > 0,
      );
      expect(await modelIds()).toEqual(expect.arrayContaining(['gpt-6.1-sol', 'gpt-6.1-sol-high', 'gpt-5.5-xhigh']));
      fake().enqueue(textReply('ok'));
      const chat = await postChatBody(gateway, {
        model: 'gpt-6.1-sol',
        reasoning_effort: 'high',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(chat.status).toBe(200);
      expect(fake().lastBody()).toMatchObject({ reasoning: { effort: 'high' } });
    });
  });

  describe('support_verbosity: false', () => {
    it('sends no text.verbosity, not even one the request asks for; a response_format still goes in text.format', async () => {
      const cli = cliChangedListCapture('no-verbosity');
      // The CLI drops even its model_verbosity setting for such a model.
      expect(cli.config).toEqual(['model_verbosity = "high"']);
      expect(cli.sent.text).toBeUndefined();
      fake().serveModels(cli.models);
      gateway = await startGateway({
        ...providerASettings(fake(), home()),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_MODELS_REFRESH: '15m',
      });
      await pollUntil(
        async () => gateway!.logs.lines.filter((line) => line.includes('provider_a_models_refreshed')),
        (lines) => lines.length > 0,
      );
      const send = async (body: Json) => {
        fake().enqueue(textReply('{}'));
        const response = await postChatBody(gateway!, { messages: [{ role: 'user', content: 'hi' }], ...body });
        expect(response.status).toBe(200);
        return fake().lastBody() as Json;
      };
      expect((await send({ model: 'gpt-6.1-sol' })).text).toBeUndefined();
      expect((await send({ model: 'gpt-6.1-sol-fast-high', verbosity: 'high' })).text).toBeUndefined();
      const json = await send({ model: 'gpt-6.1-sol', verbosity: 'high', response_format: { type: 'json_object' } });
      expect(json.text).toEqual({ format: { type: 'json_object' } });
      // Another model of the same list still gets its verbosity.
      expect((await send({ model: 'gpt-5.5' })).text).toEqual({ verbosity: 'low' });
    });
  });

  describe('input_modalities: images reach only a model whose list entry takes them (docs/chat.md "messages")', () => {
    const PNG = 'data:image/png;base64,iVBORw0KGgo=';
    const image = { type: 'image_url', image_url: { url: PNG } };
    const shot = { id: 'call_shot', type: 'function', function: { name: 'screenshot', arguments: '{}' } };
    const screenshotTool = {
      type: 'function',
      function: { name: 'screenshot', description: 'd', parameters: { type: 'object', properties: {} } },
    };
    const start = async () => {
      const luna = cliModelList().find((model) => model.slug === 'gpt-6-luna')!;
      // First in priority: the `luna` tier reaches it.
      fake().serveModels([
        { ...luna, slug: 'gpt-7-luna', priority: -1, input_modalities: ['text'] },
        ...cliModelList(),
      ]);
      gateway = await startGateway({
        ...providerASettings(fake(), home()),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_MODELS_REFRESH: '15m',
      });
      await pollUntil(modelIds, (list) => list.includes('gpt-7-luna'));
    };

    it.each([
      [
        'luna',
        'an image in a user message',
        [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, image] }],
        0,
      ],
      [
        'gpt-7-luna',
        'an image in a tool result',
        [
          { role: 'user', content: 'take a screenshot' },
          { role: 'assistant', content: null, tool_calls: [shot] },
          { role: 'tool', tool_call_id: 'call_shot', content: [{ type: 'text', text: 'here' }, image] },
        ],
        2,
      ],
    ])(
      '%s, whose entry says ["text"]: %s is 400 naming the part, the model and the fix, with no upstream call',
      async (model, _what, messages, index) => {
        await start();
        expect((await models()).find((entry) => entry.id === 'gpt-7-luna')).toMatchObject({
          input_modalities: ['text'],
        });
        const response = await postChatBody(gateway!, { model, tools: [screenshotTool], messages });
        expect(response.status).toBe(400);
        const error = ((await response.json()) as Json).error;
        expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'messages' });
        expect(error.message).toMatch(
          new RegExp(`^messages\\[${index}\\]\\.content\\[1\\]: an image is not supported by model "${model}"`),
        );
        expect(error.message).toContain('gpt-7-luna');
        expect(error.message).toContain('["text"]');
        expect(error.message).toContain('choose a model whose input_modalities include image, see GET /v1/models');
        // Streamed: the same JSON 400, before any SSE header.
        const streamed = await postChatBody(gateway!, { model, stream: true, tools: [screenshotTool], messages });
        expect(streamed.status).toBe(400);
        expect(((await streamed.json()) as Json).error.message).toBe(error.message);
        expect(fake().requests()).toHaveLength(0);
      },
    );

    it('an image to a model whose entry includes image still goes upstream; text alone still reaches the text-only model', async () => {
      await start();
      fake().enqueue(textReply('a cat'));
      const withImage = await postChatBody(gateway!, {
        model: 'gpt-6-luna',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, image] }],
      });
      expect(withImage.status).toBe(200);
      expect(JSON.stringify(fake().lastBody())).toContain(`{"type":"input_image","image_url":"${PNG}"}`);
      fake().enqueue(textReply('ok'));
      const textOnly = await postChatBody(gateway!, {
        model: 'luna',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      });
      expect(textOnly.status).toBe(200);
      expect(fake().lastBody()).toMatchObject({ model: 'gpt-7-luna' });
    });
  });

  it('asks for the list as the pinned CLI does: path, client_version, header names', async () => {
    gateway = await startGateway({
      ...providerASettings(fake(), home(), { transport: 'sse' }),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '15m',
    });
    const [request] = await pollUntil(
      async () => fake().modelsRequests(),
      (list) => list.length > 0,
    );
    expect(request.url).toBe(CLI_MODELS_GET.url);
    const mechanics = new Set([
      'host',
      'connection',
      'accept-encoding',
      'accept-language',
      'sec-fetch-mode',
      'content-length',
    ]);
    const names = (headers: Record<string, string>) =>
      Object.keys(headers)
        .filter((name) => !mechanics.has(name))
        .sort();
    expect(names(request.headers)).toEqual(names(CLI_MODELS_GET.headers));
    expect(request.headers.authorization).toMatch(/^Bearer ./);
    expect(request.headers['chatgpt-account-id']).toEqual(expect.any(String));
    expect(request.headers.accept).toBe(CLI_MODELS_GET.headers.accept);
    expect(request.headers.originator).toBe(CLI_MODELS_GET.headers.originator);
    // The CLI accepts zstd and gzip; the gateway what its Node's fetch decodes (always gzip).
    expect(CLI_MODELS_GET.headers['accept-encoding']).toBe('zstd,gzip');
    expect(request.headers['accept-encoding']).toBe(codexClient().acceptEncoding);
  });

  it('a failing list keeps the bundled catalog, and startup, readiness and chat do not wait for it', async () => {
    fake().failModelsList(503, 10);
    gateway = await startGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '15m',
    });
    expect((await fetch(`${gateway.url}/health/ready`)).status).toBe(200);
    await pollUntil(
      async () => fake().modelsRequests(),
      (list) => list.length > 0,
    );
    expect(await modelIds()).toContain('gpt-6.1-sol-high');
    fake().enqueue(textReply('ok'));
    const chat = await postChatBody(gateway, { model: 'gpt-6.1-sol', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);
  });

  it.each([
    [503, /^nothing, if it passes: the list is fetched again in 60 s$/],
    [401, /codex login/],
    [404, /^check PROVIDER_A_URL/],
  ])('a list fetch answered %i logs the fix for that failure', async (status, fix) => {
    fake().failModelsList(status, 10);
    gateway = await startGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '15m',
    });
    const [failure] = await pollUntil(
      async () =>
        gateway!.logs.lines
          .map((line) => JSON.parse(line) as Json)
          .filter((line) => line.event === 'provider_a_models_refresh_failed'),
      (lines) => lines.length > 0,
    );
    expect(failure).toMatchObject({ reason: `upstream status ${status}`, fix: expect.stringMatching(fix) });
  });

  describe('a list fetch refused with 401 (docs/accounts.md: one forced refresh, as a turn gets)', () => {
    const stale = makeJwt({ exp: Math.floor(Date.now() / 1000) + 3600, jti: 'stale' });
    const events = () => gateway!.logs.lines.map((line) => JSON.parse(line) as Json);
    /** The first fetch's outcome: the list applied, or the failure logged. */
    const firstOutcome = async () => {
      gateway = await startGateway({
        ...providerASettings(fake(), home(), { auth: { accessToken: stale } }),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_MODELS_REFRESH: '15m',
      });
      const outcome = await pollUntil(
        async () =>
          events().filter((line) =>
            ['provider_a_models_refreshed', 'provider_a_models_refresh_failed'].includes(line.event as string),
          ),
        (lines) => lines.length > 0,
      );
      return outcome.map(({ event, reason }) => ({ event, reason }));
    };

    it('refreshes the token once and asks again with the new one: the list is applied', async () => {
      fake().serveModels(newerList());
      fake().refuseModelsListToken(stale);
      expect(await firstOutcome()).toEqual([{ event: 'provider_a_models_refreshed', reason: undefined }]);
      const bearers = fake()
        .modelsRequests()
        .map((request) => request.headers.authorization);
      expect(bearers).toHaveLength(2);
      expect(bearers[0]).toBe(`Bearer ${stale}`);
      expect(bearers[1]).toMatch(/^Bearer ./);
      expect(bearers[1]).not.toBe(bearers[0]);
      expect(fake().tokenRequests()).toEqual([
        expect.objectContaining({ grant_type: 'refresh_token', refresh_token: 'rt-initial' }),
      ]);
      expect(events().filter((line) => line.event === 'provider_a_auth_retry')).toEqual([
        expect.objectContaining({ upstream_status: 401 }),
      ]);
      expect(await modelIds()).toContain('gpt-6.2-astra');
    });

    it('a 401 to the refreshed token too is the login failure, after one refresh and two asks', async () => {
      fake().failModelsList(401, 2);
      expect(await firstOutcome()).toEqual([
        { event: 'provider_a_models_refresh_failed', reason: 'upstream status 401' },
      ]);
      expect(fake().modelsRequests()).toHaveLength(2);
      expect(fake().tokenRequests()).toHaveLength(1);
      expect(events().find((line) => line.event === 'provider_a_models_refresh_failed')).toMatchObject({
        level: 40,
        fix: expect.stringMatching(/codex login/),
      });
    });
  });

  it('PROVIDER_A_MODELS_REFRESH=0 never asks for the list', async () => {
    gateway = await startGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '0',
    });
    fake().enqueue(textReply('ok'));
    expect((await postChatBody(gateway, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    expect(fake().modelsRequests()).toEqual([]);
  });

  it.each([
    [
      "The 'gpt-6-luna' model requires a newer version of Codex. Please upgrade to the latest app or CLI and try again.",
      400,
      'model_requires_newer_client',
      'invalid_request_error',
    ],
    [
      "The 'gpt-6-luna' model is not supported when using Codex with a ChatGPT account.",
      403,
      'model_not_available_for_account',
      'permission_error',
    ],
  ])(
    'a model refusal (%s) is its own error naming the model, not retried, no token refresh, and the model leaves the list',
    async (message, status, code, type) => {
      gateway = await startGateway({
        ...providerASettings(fake(), home(), { transport: 'sse' }),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_MODELS_REFRESH: '15m',
      });
      await pollUntil(
        async () => fake().modelsRequests(),
        (list) => list.length > 0,
      );
      expect(await modelIds()).toContain('gpt-6-luna-high');
      fake().enqueue({
        reject: {
          status: 400,
          body: { error: { message, type: 'invalid_request_error', param: 'model', code: null } },
        },
        frames: [],
      });
      const response = await postChatBody(gateway, {
        model: 'gpt-6-luna-high',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(response.status).toBe(status);
      const error = ((await response.json()) as Json).error;
      expect(error).toMatchObject({ type, code });
      expect(error.message).toContain('"gpt-6-luna"');
      expect(error.message).toContain('GET /v1/models');
      expect(error.message).not.toContain('Please upgrade');
      expect(fake().requests()).toHaveLength(1);
      expect(fake().tokenRequests()).toHaveLength(0);
      expect((await modelIds()).filter((id) => id.startsWith('gpt-6-luna'))).toEqual([]);
    },
  );

  it('a refused passthrough id the catalog never had is not remembered: made-up ids cannot grow the gateway', async () => {
    gateway = await startGateway({
      ...providerASettings(fake(), home(), { transport: 'sse' }),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '0',
    });
    const live = gateway.app.get(LiveModelLists, { strict: false });
    const before = live.revision;
    for (const id of ['gpt-made-up-1', 'gpt-made-up-2']) {
      fake().enqueue({
        reject: {
          status: 400,
          body: {
            error: {
              message: `The '${id}' model is not supported when using Codex with a ChatGPT account.`,
              type: 'invalid_request_error',
              param: 'model',
              code: null,
            },
          },
        },
        frames: [],
      });
      const response = await postChatBody(gateway, {
        model: `provider_a/${id}`,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(response.status).toBe(404);
      expect(((await response.json()) as Json).error).toMatchObject({ code: 'model_not_found' });
      expect(live.isRefused('provider_a', id)).toBe(false);
    }
    expect(live.revision).toBe(before);
  });
});
