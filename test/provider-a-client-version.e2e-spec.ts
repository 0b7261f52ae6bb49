import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { cliModelList } from './support/fake-provider-a';
import { providerASettings, textReply } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { pollUntil } from './support/poll';
import { postChatBody } from './support/chat-sse';
import { CODEX_PIN } from './support/oracle-pins';

type Json = Record<string, any>;

/** A Codex CLI version newer than the pinned one: the pin with its minor raised. */
const NEWER = CODEX_PIN.replace(
  /^(\d+)\.(\d+)\..*$/,
  (_whole, major: string, minor: string) => `${major}.${Number(minor) + 1}.0`,
);

/** A model the backend serves only to a Codex CLI newer than the one the gateway verifies. */
const NEWER_ONLY = {
  slug: 'gpt-7-sol',
  visibility: 'list' as const,
  priority: 0,
  supported_reasoning_levels: [{ effort: 'low' }, { effort: 'high' }],
  default_reasoning_level: 'low',
  service_tiers: [],
  use_responses_lite: true,
  context_window: 500000,
  input_modalities: ['text', 'image'],
  default_verbosity: 'low',
  minimal_client_version: NEWER,
};

/**
 * The client version the gateway claims (docs/providers.md "Client version"): the backend shapes
 * its model list by it and refuses newer-only models to older clients. The fake does both, with
 * the real refusal text, and its list carries a field the gateway does not know.
 */
describe('provider_a client version (PROVIDER_A_CLIENT_VERSION)', () => {
  const gateways: TestGateway[] = [];
  afterEach(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));
    gateways.length = 0;
  });
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-client-version-', homeScope: 'test' });
  beforeEach(() =>
    fake().serveModels([
      ...cliModelList().map((model) => ({ ...model, multi_agent_tools_in_code_mode: true })),
      NEWER_ONLY,
    ]),
  );

  async function start(extra: Record<string, string> = {}): Promise<TestGateway> {
    const gateway = await startGateway({
      ...providerASettings(fake(), home(), { transport: 'sse' }),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '15m',
      ...extra,
    });
    gateways.push(gateway);
    return gateway;
  }
  const modelIds = async (gateway: TestGateway) =>
    (((await (await fetch(`${gateway.url}/v1/models`)).json()) as Json).data as Json[]).map(
      (entry) => entry.id as string,
    );
  const chat = (gateway: TestGateway, body: Json) =>
    postChatBody(gateway, { messages: [{ role: 'user', content: 'hi' }], ...body });

  it(`by default claims the pinned ${CODEX_PIN}: the newest bundled models are listed, a newer-only model is refused with a message naming the setting and the gateway upgrade`, async () => {
    const gateway = await start();
    const ids = await pollUntil(
      () => modelIds(gateway),
      () => fake().modelsRequests().length > 0,
    );
    expect(fake().modelsRequests()[0].url).toContain(`client_version=${CODEX_PIN}`);
    expect(ids).toEqual(expect.arrayContaining(['gpt-6.2-sol', 'gpt-6.2-astra']));
    expect(ids).not.toContain('gpt-7-sol');
    expect(gateway.logs.records('provider_a_client_version_unverified')).toEqual([]);

    for (const stream of [false, true]) {
      const response = await chat(gateway, { model: 'provider_a/gpt-7-sol', stream });
      expect(response.status).toBe(400);
      const error = ((await response.json()) as Json).error;
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 'model_requires_newer_client' });
      expect(error.message).toContain('"gpt-7-sol"');
      expect(error.message).toContain('PROVIDER_A_CLIENT_VERSION');
      expect(error.message).toContain('upgrade the gateway');
      expect(error.message).not.toContain('Please upgrade');
    }
    // Refused by the backend, never retried: one POST per request.
    expect(fake().requests()).toHaveLength(2);
  });

  it('an operator can claim a newer version: the list and every request say it, the newer model is served, and startup logs one warning that its wire is unverified', async () => {
    const gateway = await start({ PROVIDER_A_CLIENT_VERSION: NEWER });
    const ids = await pollUntil(
      () => modelIds(gateway),
      (list) => list.includes('gpt-7-sol'),
    );
    expect(ids).toContain('gpt-7-sol-high');
    const [list] = fake().modelsRequests();
    expect(list.url).toContain(`client_version=${NEWER}`);
    expect(list.headers['user-agent']).toBe(`codex_exec/${NEWER} (api wrapper) unknown (codex_exec; ${NEWER})`);

    fake().enqueue(textReply('from the newer model'));
    const response = await chat(gateway, { model: 'gpt-7-sol-high' });
    expect(response.status).toBe(200);
    expect(((await response.json()) as Json).choices[0].message.content).toBe('from the newer model');
    const [request] = fake().requests();
    expect(request.violation).toBeUndefined();
    expect(request.headers['user-agent']).toMatch(/^codex_exec\/0\.172\.0 /);

    const warnings = gateway.logs.records('provider_a_client_version_unverified');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, client_version: NEWER, verified_version: CODEX_PIN });
    expect(String(warnings[0].fix)).toContain('PROVIDER_A_CLIENT_VERSION');
  });

  it('refuses a value that is not a version at startup, naming the setting', async () => {
    await expect(start({ PROVIDER_A_CLIENT_VERSION: 'latest' })).rejects.toThrow(
      /PROVIDER_A_CLIENT_VERSION .*must be a Codex CLI version such as 0\.171\.0/,
    );
  });
});
