import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError, loadConfig } from '../src/config/app-config';
import { ProviderAAdapter } from '../src/providers/provider-a/provider-a.adapter';
import { CODEX_OAUTH_CLIENT_ID } from '../src/accounts/provider-a/provider-a.token-refresh';
import { sessionIdForChat } from '../src/providers/provider-a/provider-a.request';
import {
  callContext,
  collectEvents,
  completed,
  created,
  errorEvent,
  makeJwt,
  providerAChatRequest,
  providerAModel,
  rejectionOf,
  textDelta,
  textReply,
  writeAuthFile,
  writeFaithfulProfile,
  writeInstallationId,
} from './support/provider-a-fixtures';
import { recordingLogger } from './support/recorders';
import { useFakeProviderA } from './support/provider-a-harness';
import { adapterModule, closeAdapterModules } from './support/adapter-module';
import { makeProviderAAdapter } from './support/provider-a-adapter';
import { CODEX_PIN } from './support/oracle-pins';

const now = () => Math.floor(Date.now() / 1000);

/** provider_a adapter against the loopback fake: login, transports, request bodies (docs/upstream/provider-a.md §12). */
describe('ProviderAAdapter (login, transport, body)', () => {
  afterEach(closeAdapterModules);
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-adapter-', homeScope: 'test' });

  describe.each(['ws', 'sse'] as const)('over %s', (transport) => {
    it('sends the bearer and account id from auth.json and never calls the token endpoint (docs/upstream/provider-a.md §12.1)', async () => {
      const { adapter, authFile } = await makeProviderAAdapter(fake(), home(), { transport });
      const { tokens } = JSON.parse(fs.readFileSync(authFile, 'utf8'));
      fake().enqueue(textReply('Hello'));
      const events = await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
      expect(events).toEqual([
        { type: 'text-delta', text: 'Hello' },
        { type: 'usage', usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17 } },
        { type: 'finish', reason: 'stop' },
      ]);
      const [request] = fake().requests();
      expect(request.headers.authorization).toBe(`Bearer ${tokens.access_token}`);
      expect(request.headers['chatgpt-account-id']).toBe('acct-test-1');
      expect(fake().tokenRequests()).toHaveLength(0);
    });

    it('falls back to the id token account claim; with none the turn fails auth before any connection (docs/upstream/provider-a.md §12.2)', async () => {
      const { adapter, codexHome } = await makeProviderAAdapter(fake(), home(), {
        transport,
        auth: { accountId: null, idTokenAccountId: 'acct-from-claim' },
      });
      fake().enqueue(textReply('ok'));
      await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
      expect(fake().requests()[0].headers['chatgpt-account-id']).toBe('acct-from-claim');

      writeAuthFile(codexHome, { accountId: null });
      const { adapter: fresh } = await adapterModule(
        ProviderAAdapter,
        loadConfig({
          HOME: home(),
          CODEX_HOME: codexHome,
          PROVIDER_A_URL: transport === 'ws' ? fake().wsUrl : fake().httpUrl,
          PROVIDER_A_TOKEN_URL: fake().tokenUrl,
          PROVIDER_A_MODELS_REFRESH: '0',
        }),
      );
      const failure = await rejectionOf(fresh.stream(providerAChatRequest(), callContext()));
      expect(failure.code).toBe('auth');
      expect(fake().requests()).toHaveLength(1);
    });

    it('refreshes a token 30 s from expiry once, with the stored refresh token and client id (docs/upstream/provider-a.md §12.3)', async () => {
      const { adapter } = await makeProviderAAdapter(fake(), home(), {
        transport,
        auth: { exp: now() + 30, refreshToken: 'rt-stored' },
      });
      fake().enqueue(textReply('ok'));
      await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
      expect(fake().tokenRequests()).toEqual([
        { grant_type: 'refresh_token', refresh_token: 'rt-stored', client_id: CODEX_OAUTH_CLIENT_ID },
      ]);
      expect(fake().requests()[0].headers.authorization).toMatch(/^Bearer /);
      expect(
        JSON.parse(Buffer.from(fake().requests()[0].headers.authorization.split('.')[1], 'base64url').toString()).jti,
      ).toBe('at-1');
    });

    it('runs one refresh for ten concurrent turns and all ten use the new token (docs/upstream/provider-a.md §12.4)', async () => {
      const { adapter } = await makeProviderAAdapter(fake(), home(), { transport, auth: { exp: now() - 100 } });
      fake().enqueueToken({
        status: 200,
        delayMs: 100,
        body: { access_token: makeJwt({ exp: now() + 3600, jti: 'fresh' }), refresh_token: 'rt-2' },
      });
      fake().enqueue(...Array.from({ length: 10 }, () => textReply('ok')));
      await Promise.all(
        Array.from({ length: 10 }, async (_, index) =>
          collectEvents(await adapter.stream(providerAChatRequest({ conversationId: `c${index}` }), callContext())),
        ),
      );
      expect(fake().tokenRequests()).toHaveLength(1);
      const bearer = `Bearer ${makeJwt({ exp: JSON.parse(Buffer.from(fake().requests()[0].headers.authorization.split('.')[1], 'base64url').toString()).exp, jti: 'fresh' })}`;
      expect(
        fake()
          .requests()
          .map((request) => request.headers.authorization),
      ).toEqual(Array(10).fill(bearer));
    });

    it('fails auth with no connection and no token call when expired without a refresh token (docs/upstream/provider-a.md §12.7)', async () => {
      const { adapter } = await makeProviderAAdapter(fake(), home(), {
        transport,
        auth: { exp: now() - 100, refreshToken: null },
      });
      const failure = await rejectionOf(adapter.stream(providerAChatRequest(), callContext()));
      expect(failure.code).toBe('auth');
      expect(fake().requests()).toHaveLength(0);
      expect(fake().tokenRequests()).toHaveLength(0);
    });

    it('maps a token endpoint invalid_grant to auth without token text in the error or logs (docs/upstream/provider-a.md §12.8)', async () => {
      const { adapter, authFile } = await makeProviderAAdapter(fake(), home(), {
        transport,
        auth: { exp: now() - 100, refreshToken: 'rt-SECRET-1' },
      });
      const { tokens } = JSON.parse(fs.readFileSync(authFile, 'utf8'));
      fake().enqueueToken({
        status: 400,
        body: { error: 'invalid_grant', error_description: 'refresh token rt-SECRET-1 already used' },
      });
      const logger = recordingLogger();
      const failure = await rejectionOf(adapter.stream(providerAChatRequest(), callContext(undefined, logger)));
      expect(failure.code).toBe('auth');
      const everything = logger.text() + JSON.stringify({ message: failure.message, detail: failure.detail });
      expect(everything).toContain('invalid_grant');
      for (const secret of ['SECRET', tokens.access_token, 'already used']) expect(everything).not.toContain(secret);
      expect(fake().requests()).toHaveLength(0);
    });

    it('after an upstream 401 refreshes once (token not expired) and retries with the new token (docs/upstream/provider-a.md §12.9)', async () => {
      const { adapter } = await makeProviderAAdapter(fake(), home(), { transport });
      fake().enqueue(
        { reject: { status: 401, body: { error: { message: 'expired' } } }, frames: [] },
        textReply('after refresh'),
      );
      const events = await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
      expect(events[0]).toEqual({ type: 'text-delta', text: 'after refresh' });
      expect(fake().tokenRequests()).toHaveLength(1);
      const [first, second] = fake().requests();
      expect(second.headers.authorization).not.toBe(first.headers.authorization);
      expect(JSON.parse(Buffer.from(second.headers.authorization.split('.')[1], 'base64url').toString()).jti).toBe(
        'at-1',
      );
    });

    it('gives up with auth after a 401 on both attempts: two connections, one refresh (docs/upstream/provider-a.md §12.10)', async () => {
      const { adapter } = await makeProviderAAdapter(fake(), home(), { transport });
      fake().enqueue(
        { reject: { status: 401 }, frames: [] },
        { reject: { status: 401 }, frames: [] },
        textReply('never'),
      );
      const failure = await rejectionOf(adapter.stream(providerAChatRequest(), callContext()));
      expect(failure.code).toBe('auth');
      expect(fake().requests()).toHaveLength(2);
      expect(fake().tokenRequests()).toHaveLength(1);
    });

    it('treats a 401 error event before output like a rejected upgrade', async () => {
      const { adapter } = await makeProviderAAdapter(fake(), home(), { transport });
      fake().enqueue({ frames: [errorEvent({ status: 401, message: 'bad token' })] }, textReply('ok'));
      const events = await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
      expect(events[0]).toEqual({ type: 'text-delta', text: 'ok' });
      expect(fake().tokenRequests()).toHaveLength(1);
    });

    it('uses a different valid token already in the file after a 401, without calling the endpoint (docs/upstream/provider-a.md §12.11)', async () => {
      const { adapter, codexHome } = await makeProviderAAdapter(fake(), home(), { transport });
      fake().enqueue(textReply('first'));
      await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
      const replaced = writeAuthFile(codexHome, { refreshToken: 'rt-other' });
      fake().enqueue({ reject: { status: 401 }, frames: [] }, textReply('second'));
      const events = await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
      expect(events[0]).toEqual({ type: 'text-delta', text: 'second' });
      expect(fake().requests()[2].headers.authorization).toBe(`Bearer ${replaced.accessToken}`);
      expect(fake().tokenRequests()).toHaveLength(0);
    });

    it('keeps prompt_cache_key and the session header per chat and separates chats (docs/upstream/provider-a.md §12.15)', async () => {
      const { adapter } = await makeProviderAAdapter(fake(), home(), { transport });
      fake().enqueue(textReply('1'), textReply('2'), textReply('3'));
      for (const conversationId of [
        'chat:header:x-conversation-id:conv-42',
        'chat:header:x-conversation-id:conv-42',
        'chat:other',
      ]) {
        await collectEvents(await adapter.stream(providerAChatRequest({ conversationId }), callContext()));
      }
      const sessionHeader = 'session-id';
      const [a, b, c] = fake().requests();
      expect(a.body!.prompt_cache_key).toBe('47b61fd1-c0eb-3d05-2adc-5c4396baffee');
      expect(a.headers[sessionHeader]).toBe('47b61fd1-c0eb-3d05-2adc-5c4396baffee');
      expect(b.body!.prompt_cache_key).toBe(a.body!.prompt_cache_key);
      expect(b.headers[sessionHeader]).toBe(a.headers[sessionHeader]);
      expect(c.body!.prompt_cache_key).toBe(sessionIdForChat('chat:other'));
      expect(c.headers[sessionHeader]).not.toBe(a.headers[sessionHeader]);
    });

    it('sends the minimal body and headers: no include, client_metadata, output cap or faithful headers (docs/upstream/provider-a.md §12.14)', async () => {
      const { adapter } = await makeProviderAAdapter(fake(), home(), { transport });
      fake().enqueue(textReply('ok'));
      const request = providerAChatRequest({
        modelId: 'gpt-5.6-terra-fast-high',
        messages: [
          { role: 'system', content: 'One' },
          { role: 'system', content: 'Two' },
          { role: 'user', content: 'hi' },
        ],
        sampling: { maxTokens: 10, temperature: 0.5, topP: 0.5 },
        tools: [{ type: 'function', function: { name: 'read_file' } }],
      });
      await collectEvents(await adapter.stream(request, callContext()));
      const [recorded] = fake().requests();
      const body = recorded.body!;
      expect(body.instructions).toBe('One\n\nTwo');
      for (const key of ['include', 'client_metadata', 'max_output_tokens', 'temperature', 'top_p', 'tool_choice'])
        expect(body).not.toHaveProperty(key);
      expect(body).toMatchObject({
        model: 'gpt-5.6-terra',
        reasoning: { effort: 'high' },
        text: { verbosity: 'low' },
        service_tier: 'priority',
        stream: true,
        store: false,
      });
      expect(recorded.headers).toMatchObject({
        originator: 'codex_exec',
        'user-agent': `codex_exec/${CODEX_PIN} (api wrapper) unknown (codex_exec; ${CODEX_PIN})`,
      });
      expect(recorded.headers).not.toHaveProperty('version');
      for (const header of ['x-codex-beta-features', 'x-client-request-id', 'thread-id', 'x-codex-turn-metadata'])
        expect(recorded.headers).not.toHaveProperty(header);
    });

    it('sends the faithful profile, scaffold with today, developer message, metadata and headers (docs/upstream/provider-a.md §12.23)', async () => {
      const profilePath = writeFaithfulProfile(home());
      // Read once, when the adapter starts: the file is there before the gateway, as a CLI's is.
      writeInstallationId(path.join(home(), '.codex'));
      const { adapter } = await makeProviderAAdapter(fake(), home(), {
        transport,
        settings: { PRIMARY_FAITHFUL_PROFILE: profilePath },
      });
      fake().enqueue(textReply('ok'));
      // The local date on either side of the request: a run that crosses midnight sees one of them.
      const localDate = () =>
        new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
      const dateBefore = localDate();
      const request = providerAChatRequest({
        faithful: true,
        conversationId: 'chat:faithful',
        messages: [
          { role: 'system', content: 'client system' },
          { role: 'user', content: 'hi' },
        ],
        tools: [{ type: 'function', function: { name: 'client_tool' } }],
      });
      await collectEvents(await adapter.stream(request, callContext()));
      const [recorded] = fake().requests();
      const body = recorded.body!;
      const session = sessionIdForChat('chat:faithful');
      const dateAfter = localDate();
      expect(body.instructions).toBe('Profile instructions for tests.');
      expect(body.tools).toEqual([
        {
          type: 'function',
          name: 'profile_tool',
          description: 'From the profile.',
          parameters: { type: 'object', properties: {} },
        },
      ]);
      expect(body.parallel_tool_calls).toBe(false);
      expect(body.include).toEqual(['reasoning.encrypted_content']);
      const input = body.input as Array<Record<string, unknown>>;
      const sentDate = /<current_date>([^<]*)<\/current_date>/.exec(JSON.stringify(input[0]))?.[1];
      expect([dateBefore, dateAfter]).toContain(sentDate);
      expect(input[1]).toEqual({
        type: 'message',
        role: 'developer',
        content: [{ type: 'input_text', text: 'client system' }],
      });
      const metadata = body.client_metadata as Record<string, string>;
      expect(metadata).toMatchObject({
        session_id: session,
        thread_id: session,
        'x-codex-installation-id': 'install-test-1',
        'x-codex-window-id': `${session}:0`,
      });
      expect(metadata.turn_id).toMatch(/^[0-9a-f-]{36}$/);
      if (transport === 'ws')
        expect(Number(metadata['x-codex-ws-stream-request-start-ms'])).toBeGreaterThan(Date.now() - 60_000);
      else expect(metadata).not.toHaveProperty('x-codex-ws-stream-request-start-ms');
      expect(recorded.headers).toMatchObject({
        'x-codex-beta-features': 'remote_compaction_v2',
        'x-client-request-id': session,
        'thread-id': session,
        'x-codex-window-id': `${session}:0`,
        'x-codex-turn-metadata': metadata['x-codex-turn-metadata'],
        'user-agent': `codex_exec/${CODEX_PIN} (Mac OS 26.2.0; arm64) unknown (codex_exec; ${CODEX_PIN})`,
      });
      expect(JSON.parse(recorded.headers['x-codex-turn-metadata'])).toMatchObject({
        installation_id: 'install-test-1',
        turn_id: metadata.turn_id,
        sandbox: 'seatbelt',
      });
    });

    it('extracts with exactly the docs/upstream/provider-a.md §6.1 keys over one connection and returns text, id, model and usage (§12.24)', async () => {
      const { adapter } = await makeProviderAAdapter(fake(), home(), { transport });
      fake().enqueue({
        frames: [
          created('resp_x', 'gpt-5.6-sol'),
          textDelta('{"total":'),
          textDelta('12}'),
          completed({ input_tokens: 7, output_tokens: 3 }, 'resp_x', 'gpt-5.6-sol-2026'),
        ],
      });
      const schema = {
        type: 'object',
        properties: { total: { type: 'number' } },
        required: ['total'],
        additionalProperties: false,
      };
      const result = await adapter.extract(
        {
          model: providerAModel('gpt-5.6-sol-fast'),
          input: 'Total: 12',
          schema,
          schemaName: 'quarter_summary',
          conversationId: 'anonymous\nop\nabc',
        },
        callContext(),
      );
      expect(result).toEqual({
        text: '{"total":12}',
        upstreamResponseId: 'resp_x',
        upstreamModel: 'gpt-5.6-sol-2026',
        usage: { promptTokens: 7, completionTokens: 3, totalTokens: 10 },
      });
      expect(fake().requests()).toHaveLength(1);
      const [recorded] = fake().requests();
      const expectedKeys = [
        'input',
        'instructions',
        'model',
        'prompt_cache_key',
        'reasoning',
        'service_tier',
        'store',
        'stream',
        'text',
        ...(transport === 'ws' ? ['type'] : []),
      ];
      expect(Object.keys(recorded.body!).sort()).toEqual(expectedKeys.sort());
      expect(recorded.body!.text).toEqual({
        verbosity: 'low',
        format: { type: 'json_schema', name: 'quarter_summary', strict: true, schema },
      });
      // The structured cache key derived from the neutral conversation id (docs/providers.md).
      expect(recorded.body!.prompt_cache_key).toBe('1745057b-868b-4cd5-6c06-648f79f732a0');
      expect(recorded.headers).not.toHaveProperty('x-codex-beta-features');
    });
  });

  it('opens one upgrade and sends exactly one text frame typed response.create over WebSocket (docs/upstream/provider-a.md §12.12)', async () => {
    // Without kept sessions (PROVIDER_A_MAX_KEPT_SESSIONS=0) every turn is one connection, closed at its end.
    const { adapter } = await makeProviderAAdapter(fake(), home(), {
      transport: 'ws',
      settings: { PROVIDER_A_MAX_KEPT_SESSIONS: '0' },
    });
    fake().enqueue({ ...textReply('ok'), holdOpen: true });
    await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
    const [recorded] = fake().requests();
    expect(fake().requests()).toHaveLength(1);
    expect(recorded.transport).toBe('ws');
    expect(recorded.body!.type).toBe('response.create');
    expect(recorded.headers['openai-beta']).toBe('responses_websockets=2026-02-06');
    expect(recorded.headers).not.toHaveProperty('sec-websocket-extensions');
    // The fake held the socket open: the adapter itself closed it at the terminal event.
    await expect(recorded.closedByClient.then(() => 'closed')).resolves.toBe('closed');
  });

  it.each(['ws', 'sse'] as const)(
    'closes the upstream when an accepted turn is closed before its first event is read (%s)',
    async (transport) => {
      const { adapter } = await makeProviderAAdapter(fake(), home(), { transport });
      // Accepted (response.created), then silence: the attempt is still waiting for its first output.
      fake().enqueue({ frames: [created()], holdOpen: true });
      const events = await adapter.stream(providerAChatRequest(), callContext());
      await events[Symbol.asyncIterator]().return!();
      const [recorded] = fake().requests();
      await expect(recorded.closedByClient.then(() => 'closed')).resolves.toBe('closed');
    },
  );

  it('POSTs the same body without type, with SSE headers, over HTTP (docs/upstream/provider-a.md §12.12)', async () => {
    const { adapter } = await makeProviderAAdapter(fake(), home(), { transport: 'sse' });
    fake().enqueue(textReply('ok'));
    await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
    const [recorded] = fake().requests();
    expect(recorded.transport).toBe('sse');
    expect(recorded.body).not.toHaveProperty('type');
    expect(recorded.body!.model).toBe('gpt-5.6-sol');
    expect(recorded.headers).toMatchObject({ accept: 'text/event-stream', 'content-type': 'application/json' });
    // Codex CLI 0.171.0 sends no openai-beta over HTTP (test/fixtures/codex-oracle/…http.capture.json).
    expect(recorded.headers).not.toHaveProperty('openai-beta');
  });

  it('fails construction with a ConfigError naming PRIMARY_FAITHFUL_PROFILE for a missing profile', async () => {
    const config = loadConfig({ HOME: home(), PRIMARY_FAITHFUL_PROFILE: path.join(home(), 'missing.json') });
    const failure = await adapterModule(ProviderAAdapter, config).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).message).toMatch(/PRIMARY_FAITHFUL_PROFILE/);
  });

  it('does not read the login file at construction (a missing file only fails requests, naming where the login goes)', async () => {
    const file = path.join(home(), 'none.json');
    const { adapter } = await adapterModule(
      ProviderAAdapter,
      loadConfig({
        HOME: home(),
        PROVIDER_A_URL: fake().wsUrl,
        PROVIDER_A_AUTH_FILE: file,
        PROVIDER_A_MODELS_REFRESH: '0',
      }),
    );
    const failure = await rejectionOf(adapter.stream(providerAChatRequest(), callContext()));
    expect(failure.code).toBe('auth');
    expect(failure.detail).toBe('provider_a login file missing');
    // Not the CLI's default file: `codex login` alone would write ~/.codex/auth.json, not this one.
    const command = `run \`codex login\` and put the auth.json it writes at ${file}`;
    expect(failure.fix).toBe(command);
    expect(failure.publicMessage).toContain(command);
  });
});
