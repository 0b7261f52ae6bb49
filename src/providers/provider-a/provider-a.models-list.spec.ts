import { CODEX_PIN } from '../../../test/support/oracle-pins';
import { codexClient } from './provider-a.client';
import type { UpstreamModelInfo } from '../../models/upstream-model-info';
import { modelsListHeaders, modelsListUrl, parseModelsList } from './provider-a.models-list';

describe('the live model list, read as the pinned Codex CLI reads it', () => {
  const client = codexClient();
  it.each([
    [
      'wss://chatgpt.com/backend-api/codex/responses',
      `https://chatgpt.com/backend-api/codex/models?client_version=${CODEX_PIN}`,
    ],
    [
      'https://chatgpt.com/backend-api/codex/responses',
      `https://chatgpt.com/backend-api/codex/models?client_version=${CODEX_PIN}`,
    ],
    [
      'ws://127.0.0.1:4000/backend-api/codex/responses/',
      `http://127.0.0.1:4000/backend-api/codex/models?client_version=${CODEX_PIN}`,
    ],
    ['http://proxy.internal/codex/responses?x=1', `http://proxy.internal/codex/models?client_version=${CODEX_PIN}`],
  ])('derives the list URL from PROVIDER_A_URL %s', (responses, models) => {
    expect(modelsListUrl(responses, client)).toBe(models);
  });

  it("sends the CLI's headers: bearer, account id, originator, user agent, accept */*, accept-encoding", () => {
    expect(modelsListHeaders({ accessToken: 'at', accountId: 'acc' }, client)).toEqual({
      authorization: 'Bearer at',
      'chatgpt-account-id': 'acc',
      originator: 'codex_exec',
      'user-agent': expect.stringMatching(new RegExp(`^codex_exec/${CODEX_PIN.replaceAll('.', '\\.')} `)),
      accept: '*/*',
      'accept-encoding': client.acceptEncoding,
    });
  });

  it('asks for the list as the version PROVIDER_A_CLIENT_VERSION claims, in the query and the user agent', () => {
    const newer = codexClient('0.173.0');
    expect(modelsListUrl('wss://chatgpt.com/backend-api/codex/responses', newer)).toBe(
      'https://chatgpt.com/backend-api/codex/models?client_version=0.173.0',
    );
    expect(modelsListHeaders({ accessToken: 'at', accountId: 'acc' }, newer)['user-agent']).toBe(
      'codex_exec/0.173.0 (api wrapper) unknown (codex_exec; 0.173.0)',
    );
  });

  it('tolerates fields it does not know, such as multi_agent_tools_in_code_mode', () => {
    const [info] = parseModelsList({
      models: [
        {
          slug: 'gpt-6.2-sol',
          visibility: 'list',
          supported_reasoning_levels: [{ effort: 'low' }],
          service_tiers: [],
          multi_agent_tools_in_code_mode: true,
          minimal_client_version: '0.171.0',
          some_future_field: { nested: [1, 2] },
        },
      ],
    }) as UpstreamModelInfo[];
    expect(info).toMatchObject({ slug: 'gpt-6.2-sol', listed: true, efforts: ['low'] });
  });

  it('reads the entries the CLI prints (objects for efforts and tiers) and the reduced forms (strings)', () => {
    const infos = parseModelsList({
      models: [
        {
          slug: 'gpt-7-sol',
          visibility: 'list',
          supported_reasoning_levels: [{ effort: 'low', description: '…' }, { effort: 'ultra' }],
          default_reasoning_level: 'low',
          service_tiers: [{ id: 'priority', name: 'Fast' }],
          use_responses_lite: true,
          context_window: 272000,
          input_modalities: ['text', 'image'],
          default_verbosity: 'low',
          support_verbosity: false,
          default_reasoning_summary: 'detailed',
          supports_reasoning_summary_parameter: true,
          priority: 3,
        },
        { slug: 'hidden-one', visibility: 'hide', supported_reasoning_levels: ['medium'], service_tiers: [] },
        { slug: 'bad slug with spaces' },
        'not an object',
      ],
    });
    expect(infos).toEqual([
      {
        provider: 'provider_a',
        slug: 'gpt-7-sol',
        listed: true,
        efforts: ['low', 'ultra'],
        defaultEffort: 'low',
        defaultVerbosity: 'low',
        supportsVerbosity: false,
        defaultReasoningSummary: 'detailed',
        supportsReasoningSummary: true,
        serviceTiers: ['priority'],
        responsesLite: true,
        contextWindow: 272000,
        inputModalities: ['text', 'image'],
        priority: 3,
      },
      expect.objectContaining({
        slug: 'hidden-one',
        listed: false,
        efforts: ['medium'],
        serviceTiers: [],
        responsesLite: undefined,
        defaultEffort: null,
      }),
    ]);
  });

  it('says why a body is not a list it can apply (the last good list is kept)', () => {
    for (const body of [undefined, null, [], { data: [] }, { models: 'x' }])
      expect(parseModelsList(body)).toBe('not_a_model_list');
    // Entries, none readable: the backend renamed `slug`. Applying it would empty the catalog.
    expect(parseModelsList({ models: [{ id: 'gpt-6.2-sol' }, { id: 'gpt-6.1-sol' }] })).toBe('no_readable_entry');
    expect(parseModelsList({ models: [] })).toEqual([]);
  });

  it('keeps slugs with dots, dashes, underscores and colons, and skips other slugs', () => {
    const infos = parseModelsList({
      models: [{ slug: 'ft:gpt-6.2_sol-x' }, { slug: '-leading-dash' }, { slug: 'a/b' }],
    }) as UpstreamModelInfo[];
    expect(infos.map((info) => info.slug)).toEqual(['ft:gpt-6.2_sol-x']);
  });

  it('reads a context window that is not a positive integer as unknown', () => {
    const windows = (
      parseModelsList({
        models: [0, -1, 1.5, '272000', 1].map((context_window, index) => ({ slug: `m${index}`, context_window })),
      }) as UpstreamModelInfo[]
    ).map((info) => info.contextWindow);
    expect(windows).toEqual([undefined, undefined, undefined, undefined, 1]);
  });

  it('reads a reshaped effort or tier field as unknown (not checked), never as "none"', () => {
    const [info] = parseModelsList({
      models: [
        {
          slug: 'gpt-6.2-sol',
          supported_reasoning_levels: [{ level: 'low' }, { level: 'high' }],
          service_tiers: [{ tier: 'priority' }],
        },
      ],
    }) as UpstreamModelInfo[];
    expect(info.efforts).toBeUndefined();
    expect(info.serviceTiers).toBeUndefined();
    expect(
      (parseModelsList({ models: [{ slug: 'm', supported_reasoning_levels: [] }] }) as UpstreamModelInfo[])[0].efforts,
    ).toEqual([]);
  });
});
