import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { providerASettings, textReply, writeFaithfulProfile } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { postChatBody } from './support/chat-sse';

type Json = Record<string, any>;

/** PROVIDER_A_WIRE: the operator's escape hatch should the backend move again (docs/providers.md). */
describe('PROVIDER_A_WIRE forces one request shape', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-wire-' });
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });
  const TOOLS = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: {} } } }];
  const chat = (model: string) =>
    postChatBody(gateway!, {
      model,
      tools: TOOLS,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });

  it.each(['ws', 'sse'] as const)(
    'classic (over %s): a lite model gets top-level instructions and tools, no flag, no reasoning.context',
    async (transport) => {
      gateway = await startGateway({
        ...providerASettings(fake(), home(), { transport }),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_WIRE: 'classic',
      });
      fake().enqueue(textReply('ok'));
      expect((await chat('gpt-6.1-sol')).status).toBe(200);
      const [request] = fake().requests();
      expect(request.body).toMatchObject({
        instructions: 'Be brief.',
        tools: [expect.objectContaining({ name: 'read_file' })],
        reasoning: { effort: 'low' },
      });
      expect(request.body!.reasoning).not.toHaveProperty('context');
      expect(request.body).not.toHaveProperty('client_metadata');
      expect(request.headers).not.toHaveProperty('x-openai-internal-codex-responses-lite');
    },
  );

  it('auto (the default): each model in its own shape, never a mix', async () => {
    gateway = await startGateway({
      ...providerASettings(fake(), home(), { transport: 'sse' }),
      GATEWAY_PROVIDERS: 'provider_a',
    });
    fake().enqueue(textReply('ok'), textReply('ok'));
    expect((await chat('gpt-6.1-sol')).status).toBe(200);
    expect((await chat('gpt-5.5')).status).toBe(200);
    const [lite, classic] = fake().requests();
    expect(lite.headers['x-openai-internal-codex-responses-lite']).toBe('true');
    expect(lite.body).not.toHaveProperty('tools');
    expect((lite.body!.input as Json[])[0].type).toBe('additional_tools');
    expect(classic.headers).not.toHaveProperty('x-openai-internal-codex-responses-lite');
    expect(classic.body).toHaveProperty('tools');
  });

  it('lite forced on a classic model is refused by the backend, as the real one refuses it (400, no retry)', async () => {
    gateway = await startGateway({
      ...providerASettings(fake(), home(), { transport: 'sse' }),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_WIRE: 'lite',
    });
    fake().enqueue(textReply('never'));
    const response = await chat('gpt-5.5');
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as Json;
    expect(error.code).toBe('upstream_rejected_request');
    // What the user can try and where the operator finds the reason; never the upstream's words.
    expect(error.message).toBe(
      "the upstream rejected the request as the gateway sent it; try again without unusual parameters, tools or attachments, or with another model from GET /v1/models. The gateway's operator finds the upstream's reason in the gateway log under this response's x-request-id",
    );
    expect(fake().requests()).toHaveLength(1);
    expect(fake().requests()[0].violation).toMatch(/not supported for model 'gpt-5.5'/);
  });

  describe('a tool whose type is null or not a string is a function tool, as the body rules read it', () => {
    const PARAMETERS = { type: 'object', properties: {} };
    /** The client's function tools in the body the backend got, in either request shape. */
    const functionTools = (body: Json): Json[] => {
      if (Array.isArray(body.tools)) return body.tools as Json[];
      const item = (body.input as Json[]).find((entry) => entry.type === 'additional_tools');
      return (item?.tools as Json[] | undefined)?.find((entry) => entry.name === 'functions')?.tools ?? [];
    };

    it.each([
      ['gpt-5.6-sol', null],
      ['gpt-5.6-sol', 5],
      ['gpt-5.5', null],
      ['gpt-5.5', false],
    ])(
      'on %s with type %p reaches the backend as a function tool, the forced tool_choice with it',
      async (model, type) => {
        gateway = await startGateway({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' });
        fake().enqueue(textReply('ok'));
        const response = await postChatBody(gateway, {
          model,
          tools: [{ type, function: { name: 'read_file', parameters: PARAMETERS } }],
          tool_choice: { type: 'function', function: { name: 'read_file' } },
          messages: [{ role: 'user', content: 'x' }],
        });
        expect(response.status).toBe(200);
        const [request] = fake().requests();
        expect(request.violation).toBeUndefined();
        expect(functionTools(request.body!)).toEqual([{ type: 'function', name: 'read_file', parameters: PARAMETERS }]);
        expect(request.body!.tool_choice).toEqual({ type: 'function', name: 'read_file' });
      },
    );

    it.each(['gpt-5.6-sol', 'gpt-5.5'])(
      'on %s a forced tool is sent as the type it is declared with, whichever type the choice names',
      async (model) => {
        gateway = await startGateway({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' });
        const tools = [
          { type: 'custom', custom: { name: 'apply_patch' } },
          { type: 'function', function: { name: 'read_file', parameters: PARAMETERS } },
        ];
        for (const [choice, sent] of [
          [
            { type: 'function', function: { name: 'apply_patch' } },
            { type: 'custom', name: 'apply_patch' },
          ],
          [
            { type: 'custom', custom: { name: 'read_file' } },
            { type: 'function', name: 'read_file' },
          ],
        ]) {
          fake().enqueue(textReply('ok'));
          const response = await postChatBody(gateway, {
            model,
            tools,
            tool_choice: choice,
            messages: [{ role: 'user', content: 'x' }],
          });
          expect(response.status).toBe(200);
          const request = fake().requests().at(-1)!;
          expect(request.violation).toBeUndefined();
          expect(request.body!.tool_choice).toEqual(sent);
        }
      },
    );

    it('flat, with type null, on a lite model is sent with type "function"', async () => {
      gateway = await startGateway({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' });
      fake().enqueue(textReply('ok'));
      const response = await postChatBody(gateway, {
        model: 'gpt-5.6-sol',
        tools: [{ type: null, name: 'read_file' }],
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(response.status).toBe(200);
      expect(functionTools(fake().requests()[0].body!)).toEqual([
        { type: 'function', name: 'read_file', parameters: PARAMETERS },
      ]);
    });
  });

  describe("a client's hosted tool (web_search…)", () => {
    const HOSTED = [...TOOLS, { type: 'web_search' }];
    const ask = (model: string, extra: Json = {}) =>
      postChatBody(gateway!, { model, tools: HOSTED, messages: [{ role: 'user', content: 'search' }], ...extra });

    it('on a lite model is 400 naming tools, the model and the way out, with no upstream request', async () => {
      gateway = await startGateway({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' });
      fake().enqueue(textReply('never'));
      const response = await ask('gpt-5.6-sol', { stream: true });
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as Json;
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'tools' });
      expect(error.message).toContain('tools.1 is the hosted tool "web_search"');
      expect(error.message).toContain('model "gpt-5.6-sol"');
      expect(error.message).toContain('gpt-5.5');
      expect(error.message).toContain('or drop the tool');
      expect(fake().requests()).toHaveLength(0);
      expect(fake().pendingScripts()).toBe(1);
    });

    it('forced by tool_choice is 400 naming tool_choice on any model: a forced tool is a function or custom one', async () => {
      gateway = await startGateway({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' });
      for (const model of ['gpt-5.6-sol', 'gpt-5.5']) {
        const response = await ask(model, { tool_choice: { type: 'web_search' } });
        expect(response.status).toBe(400);
        expect(((await response.json()) as Json).error).toMatchObject({
          code: 'invalid_request',
          param: 'tool_choice',
        });
      }
      expect(fake().requests()).toHaveLength(0);
    });

    it('on a classic model is sent to the backend as the client sent it', async () => {
      gateway = await startGateway({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' });
      fake().enqueue(textReply('ok'));
      expect((await ask('gpt-5.5')).status).toBe(200);
      const [request] = fake().requests();
      expect(request.body!.tools).toEqual([expect.objectContaining({ name: 'read_file' }), { type: 'web_search' }]);
    });

    it('alone with tool_choice "required" on a classic model is a tool to call: both reach the backend as sent', async () => {
      gateway = await startGateway({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' });
      fake().enqueue(textReply('found'));
      const response = await postChatBody(gateway, {
        model: 'gpt-5.5',
        tools: [{ type: 'web_search' }],
        tool_choice: 'required',
        messages: [{ role: 'user', content: 'search' }],
      });
      expect(response.status).toBe(200);
      const [request] = fake().requests();
      expect(request.violation).toBeUndefined();
      expect(request.body).toMatchObject({ tools: [{ type: 'web_search' }], tool_choice: 'required' });
    });

    it('alone with tool_choice "required" on a lite model is refused for the tool, not for a missing one', async () => {
      gateway = await startGateway({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' });
      const response = await postChatBody(gateway, {
        model: 'gpt-5.6-sol',
        tools: [{ type: 'web_search' }],
        tool_choice: 'required',
        messages: [{ role: 'user', content: 'search' }],
      });
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as Json;
      expect(error).toMatchObject({ code: 'invalid_request', param: 'tools' });
      expect(error.message).toContain('tools.0 is the hosted tool "web_search"');
      expect(fake().requests()).toHaveLength(0);
    });

    it("of a captured faithful profile is left out on a lite model, as the CLI leaves it out; the client's are replaced", async () => {
      gateway = await startGateway({
        ...providerASettings(fake(), home()),
        GATEWAY_PROVIDERS: 'provider_a',
        PRIMARY_FAITHFUL_PROFILE: writeFaithfulProfile(home(), [{ type: 'web_search' }]),
      });
      fake().enqueue(textReply('ok'));
      expect((await ask('gpt-5.6-sol', { faithful: true })).status).toBe(200);
      const [request] = fake().requests();
      expect(request.violation).toBeUndefined();
      const [tools] = request.body!.input as Json[];
      expect(tools.type).toBe('additional_tools');
      expect(JSON.stringify(tools)).not.toContain('web_search');
      expect(tools.tools[0].tools.map((tool: Json) => tool.name)).toEqual(['profile_tool']);
    });
  });
});
