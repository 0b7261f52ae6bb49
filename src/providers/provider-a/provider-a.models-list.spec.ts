import { modelsListHeaders, modelsListUrl, parseModelsList } from './provider-a.models-list';

describe('the live model list, read as Codex CLI 0.169.0 reads it', () => {
  it.each([
    [
      'wss://chatgpt.com/backend-api/codex/responses',
      'https://chatgpt.com/backend-api/codex/models?client_version=0.169.0',
    ],
    [
      'https://chatgpt.com/backend-api/codex/responses',
      'https://chatgpt.com/backend-api/codex/models?client_version=0.169.0',
    ],
    [
      'ws://127.0.0.1:4000/backend-api/codex/responses/',
      'http://127.0.0.1:4000/backend-api/codex/models?client_version=0.169.0',
    ],
    ['http://proxy.internal/codex/responses?x=1', 'http://proxy.internal/codex/models?client_version=0.169.0'],
  ])('derives the list URL from PROVIDER_A_URL %s', (responses, models) => {
    expect(modelsListUrl(responses)).toBe(models);
  });

  it("sends the CLI's headers: bearer, account id, originator, user agent, accept */*", () => {
    expect(modelsListHeaders({ accessToken: 'at', accountId: 'acc' })).toEqual({
      authorization: 'Bearer at',
      'chatgpt-account-id': 'acc',
      originator: 'codex_exec',
      'user-agent': expect.stringMatching(/^codex_exec\/0\.169\.0 /),
      accept: '*/*',
    });
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

  it('answers undefined for a body that is not a model list (the last good list is kept)', () => {
    for (const body of [undefined, null, [], { data: [] }, { models: 'x' }])
      expect(parseModelsList(body)).toBeUndefined();
  });
});
