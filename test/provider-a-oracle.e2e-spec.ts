import * as path from 'node:path';
import type { TestGateway } from './support/create-test-app';
import { startGateway, useGateway } from './support/create-test-app';
import type { FakeProviderA, RecordedRequest } from './support/fake-provider-a';
import { cliChangedListCapture } from './support/fake-provider-a';
import { completed, created, functionCallItem, providerASettings, textReply } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { pollUntil } from './support/poll';
import { codexClient } from '../src/providers/provider-a/provider-a.client';
import { CONNECTION_MECHANICS } from '../scripts/oracle/codex-check';
import { CODEX_PIN, readCodexCapture } from './support/oracle-pins';
import { postChatBody } from './support/chat-sse';

type Json = Record<string, any>;

/**
 * The oracle: what the real Codex CLI of the pin (`codex exec`, classic Responses model gpt-5.5)
 * sent to a recording fake, captured by scripts/capture-codex-oracle.mjs. The gateway's upstream
 * request for the equivalent chat turn must match it on every header and body field the backend
 * sees — names, presence and JSON types (ids and texts differ by nature) — except the intended
 * differences listed below, each justified in docs/providers.md ("What the real Codex CLI sends").
 */
const CAPTURE = readCodexCapture('gpt-5.5.capture.json');
const transcript = CAPTURE.transcript as Json[];
const cliHandshake = transcript.find((entry) => entry.kind === 'ws-handshake' && entry.connection === 1)!
  .headers as Record<string, string>;
const cliFrames = transcript
  .filter((entry) => entry.kind === 'ws-message' && entry.connection === 1)
  .map((entry) => entry.body as Json);
/** The sampling request of the user turn (after the CLI's warm-up) and the one after the tool call. */
const [cliTurn, cliAfterTool] = cliFrames.filter((frame) => frame.generate !== false);

/** The same CLI over HTTP + SSE (the provider's `supports_websockets = false`). */
const HTTP_CAPTURE = readCodexCapture('gpt-5.5.http.capture.json');
const [cliPost, cliPostAfterTool] = (HTTP_CAPTURE.transcript as Json[]).filter(
  (entry) => entry.kind === 'http' && entry.method === 'POST',
);

/** The tool call the oracle's chat makes on its first turn and answers on its second. */
const ORACLE_CALL = {
  id: 'call_oracle_1',
  type: 'function',
  function: { name: 'exec_command', arguments: '{"cmd":"echo oracle"}' },
};

/**
 * The two turns every oracle comparison drives, as the CLI's capture did them: the model calls
 * `exec_command`, then the continuation carries the call and its output. `post` sends one chat
 * body with the given history; the two upstream requests the fake recorded are returned.
 */
async function toolRound(
  fake: FakeProviderA,
  model: string,
  post: (messages: Json[]) => Promise<Response>,
): Promise<[RecordedRequest, RecordedRequest]> {
  fake.enqueue({
    frames: [
      created('resp_1', model),
      ...functionCallItem(ORACLE_CALL.id, ORACLE_CALL.function.name, ORACLE_CALL.function.arguments),
      completed(undefined, 'resp_1', model),
    ],
  });
  expect((await post([])).status).toBe(200);
  fake.enqueue(textReply('Done.'));
  const continuation = [
    { role: 'assistant', content: null, tool_calls: [ORACLE_CALL] },
    { role: 'tool', tool_call_id: ORACLE_CALL.id, content: 'oracle' },
  ];
  expect((await post(continuation)).status).toBe(200);
  const [first, after] = fake.requests();
  return [first, after];
}

/**
 * Headers left out of the comparison: the connection mechanics the oracle check ignores too, and
 * what the gateway's own HTTP client (fetch) adds by itself.
 */
const WEBSOCKET_MECHANICS = new Set([...CONNECTION_MECHANICS, 'accept-encoding', 'accept-language', 'sec-fetch-mode']);

/** Intended differences (docs/providers.md lists and justifies each one). */
const INTENDED = {
  /** Minimal mode does not claim a Codex thread, window or turn: no faithful headers. */
  minimalMissingHeaders: [
    'x-codex-beta-features',
    'x-client-request-id',
    'thread-id',
    'x-codex-window-id',
    'x-codex-turn-metadata',
  ],
  /** Both modes send the system text as `instructions`; the CLI puts its prompt in a developer message. */
  extraBodyKeys: ['instructions'],
  /** Minimal mode: no reasoning replay (store is false) and no Codex turn metadata. */
  minimalMissingBodyKeys: ['include', 'client_metadata'],
  /** Reasoning summaries are asked for, so clients get `reasoning_content`. */
  extraReasoningKeys: ['summary'],
  /** The CLI's first sampling request chains to its warm-up (`generate: false`), which the gateway never sends. */
  firstTurnMissingKeys: ['previous_response_id'],
  /** The CLI numbers its input items; the backend does not need ids. */
  missingItemKeys: ['id'],
} as const;

/**
 * The CLI accepts `zstd,gzip` on its HTTP requests; the gateway accepts what the running Node's
 * fetch decodes, always gzip (docs/providers.md "Compressed answers").
 */
function expectCliEncodings(gatewayHeaders: Record<string, string>, cliHeaders: Record<string, string>): void {
  expect(cliHeaders['accept-encoding']).toBe('zstd,gzip');
  expect(gatewayHeaders['accept-encoding']).toBe(codexClient().acceptEncoding);
  const cliEncodings = cliHeaders['accept-encoding'].split(',');
  for (const encoding of gatewayHeaders['accept-encoding'].split(',')) expect(cliEncodings).toContain(encoding);
}

/** `{key: JSON type}` of an object, for presence-and-type comparison. */
function shape(value: Json): Record<string, string> {
  return Object.fromEntries(
    Object.entries(value).map(([key, entry]) => [
      key,
      Array.isArray(entry) ? 'array' : entry === null ? 'null' : typeof entry,
    ]),
  );
}

const without = (record: Record<string, string>, keys: readonly string[]) =>
  Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)));
const headerNames = (headers: Record<string, string>) =>
  Object.keys(headers)
    .filter((name) => !WEBSOCKET_MECHANICS.has(name))
    .sort();

/** The chat equivalent of the CLI's turn: a system prompt, a user message, the CLI's tool choice settings, one function tool. */
function oracleTurnBody(model: string, parallelToolCalls: boolean, faithful: boolean, messages: Json[]): Json {
  const tool = {
    type: 'function',
    function: {
      name: 'exec_command',
      description: 'Runs a command.',
      strict: false,
      parameters: {
        type: 'object',
        properties: { cmd: { type: 'string' } },
        required: ['cmd'],
        additionalProperties: false,
      },
    },
  };
  return {
    model,
    faithful,
    tools: [tool],
    tool_choice: 'auto',
    parallel_tool_calls: parallelToolCalls,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Run echo oracle, then say Done.' },
      ...messages,
    ],
  };
}

/**
 * The oracle turn with its one tool sent flat and without `type` (`{name, description, strict,
 * parameters}`), as some clients write a function tool, and a forced choice of it.
 */
function typelessToolBody(model: string): Json {
  const body = oracleTurnBody(model, false, false, []);
  const [{ function: tool }] = body.tools as Json[];
  return { ...body, tools: [tool], tool_choice: { type: 'function', function: { name: tool.name } } };
}

describe(`provider_a requests match the real Codex CLI ${CODEX_PIN} (oracle capture)`, () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-oracle-' });
  const gateway = useGateway(() => ({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' }));
  beforeEach(() => fake().keepConnectionsOpen());

  const turnBody = (faithful: boolean, messages: Json[]) => oracleTurnBody('gpt-5.5', true, faithful, messages);
  const post = (body: Json, conversation: string) =>
    postChatBody(gateway, body, { headers: { 'x-conversation-id': conversation } });

  /** Turn 1 ends in a tool call, turn 2 sends its result: the same two sampling requests as the capture. */
  async function twoTurns(faithful: boolean): Promise<[RecordedRequest, RecordedRequest]> {
    const conversation = `oracle-${faithful ? 'faithful' : 'minimal'}`;
    return toolRound(fake(), 'gpt-5.5', (messages) => post(turnBody(faithful, messages), conversation));
  }

  it('captured a real CLI run (sanity of the fixture)', () => {
    expect(CAPTURE.codex_version).toBe(CODEX_PIN);
    expect(CAPTURE.exit_codes).toEqual([0, 0]);
    expect(cliAfterTool.previous_response_id).toEqual(expect.any(String));
    expect(cliHandshake.authorization).toBe('Bearer <access_token>');
  });

  it('faithful mode: the same handshake headers, body fields and types as the CLI, chained the same way', async () => {
    const [turn, afterTool] = await twoTurns(true);
    expect(headerNames(turn.headers)).toEqual(headerNames(cliHandshake));
    for (const name of ['originator', 'openai-beta', 'x-codex-beta-features'])
      expect(turn.headers[name]).toBe(cliHandshake[name]);
    const uaShape = /^(\w+)\/(\d+\.\d+\.\d+) \(.+\) \S+ \((\w+); (\d+\.\d+\.\d+)\)$/;
    expect(turn.headers['user-agent'].match(uaShape)!.slice(1)).toEqual(
      cliHandshake['user-agent'].match(uaShape)!.slice(1),
    );
    for (const headers of [turn.headers, cliHandshake]) {
      expect(headers['thread-id']).toBe(headers['session-id']);
      expect(headers['x-client-request-id']).toBe(headers['session-id']);
      expect(headers['x-codex-window-id']).toBe(`${headers['session-id']}:0`);
    }
    const gatewayMetadata = JSON.parse(turn.headers['x-codex-turn-metadata']) as Json;
    const cliMetadata = JSON.parse(cliTurn.client_metadata['x-codex-turn-metadata']) as Json;
    expect(Object.keys(gatewayMetadata)).toEqual(Object.keys(cliMetadata));
    expect(shape(gatewayMetadata)).toEqual(shape(cliMetadata));

    expect(without(shape(turn.body!), INTENDED.extraBodyKeys)).toEqual(
      without(shape(cliTurn), INTENDED.firstTurnMissingKeys),
    );
    expect(without(shape(turn.body!.reasoning as Json), INTENDED.extraReasoningKeys)).toEqual(shape(cliTurn.reasoning));
    expect(shape(turn.body!.text as Json)).toEqual(shape(cliTurn.text));
    expect(shape(turn.body!.client_metadata as Json)).toEqual(shape(cliTurn.client_metadata));
    expect(turn.body!.include).toEqual(cliTurn.include);

    // After the tool call both send only the new output, chained to the previous response.
    expect(without(shape(afterTool.body!), INTENDED.extraBodyKeys)).toEqual(shape(cliAfterTool));
    expect(afterTool.body!.previous_response_id).toBe('resp_1');
    expect((afterTool.body!.input as Json[]).map((item) => item.type)).toEqual(
      (cliAfterTool.input as Json[]).map((item) => item.type),
    );
    expect(shape((afterTool.body!.input as Json[])[0])).toEqual(
      without(shape((cliAfterTool.input as Json[])[0]), INTENDED.missingItemKeys),
    );
    expect(afterTool.connection).toBe(turn.connection);
  });

  it('minimal mode: the CLI headers and body fields minus the listed intended differences', async () => {
    const [turn, afterTool] = await twoTurns(false);
    expect(headerNames(turn.headers)).toEqual(
      headerNames(cliHandshake).filter((name) => !(INTENDED.minimalMissingHeaders as readonly string[]).includes(name)),
    );
    for (const name of ['originator', 'openai-beta']) expect(turn.headers[name]).toBe(cliHandshake[name]);

    const cliKeys = without(shape(cliTurn), [...INTENDED.minimalMissingBodyKeys, ...INTENDED.firstTurnMissingKeys]);
    expect(without(shape(turn.body!), INTENDED.extraBodyKeys)).toEqual(cliKeys);
    expect(turn.body!.tool_choice).toBe(cliTurn.tool_choice);
    expect(turn.body!.parallel_tool_calls).toBe(cliTurn.parallel_tool_calls);
    const cliTool = (cliTurn.tools as Json[]).find((tool) => tool.name === 'exec_command')!;
    expect(shape((turn.body!.tools as Json[])[0])).toEqual(shape(cliTool));
    const userItem = (cliTurn.input as Json[]).find((item) => item.type === 'message' && item.role === 'user')!;
    expect(shape((turn.body!.input as Json[]).find((item) => item.role === 'user')!)).toEqual(
      without(shape(userItem), INTENDED.missingItemKeys),
    );

    expect(without(shape(afterTool.body!), INTENDED.extraBodyKeys)).toEqual(
      without(shape(cliAfterTool), INTENDED.minimalMissingBodyKeys),
    );
    expect(afterTool.body!.previous_response_id).toBe('resp_1');
  });

  it('faithful mode over HTTP + SSE: the same POST headers and body fields as the CLI over HTTP, full history each time', async () => {
    const sse = await startGateway({
      ...providerASettings(fake(), path.join(home(), 'sse'), { transport: 'sse' }),
      GATEWAY_PROVIDERS: 'provider_a',
    });
    try {
      const post = (messages: Json[]) =>
        postChatBody(sse, turnBody(true, messages), { headers: { 'x-conversation-id': 'oracle-sse' } });
      const [turn, afterTool] = await toolRound(fake(), 'gpt-5.5', post);
      const cliHeaders = cliPost.headers as Record<string, string>;
      expect(headerNames(turn.headers)).toEqual(headerNames(cliHeaders));
      for (const name of ['originator', 'accept', 'content-type', 'x-codex-beta-features'])
        expect(turn.headers[name]).toBe(cliHeaders[name]);
      expect(turn.headers).not.toHaveProperty('openai-beta');
      expectCliEncodings(turn.headers, cliHeaders);
      expect(without(shape(turn.body!), INTENDED.extraBodyKeys)).toEqual(shape(cliPost.body));
      expect(shape(turn.body!.client_metadata as Json)).toEqual(shape(cliPost.body.client_metadata));
      // Over HTTP neither chains: the tool follow-up carries the whole history again.
      expect(without(shape(afterTool.body!), INTENDED.extraBodyKeys)).toEqual(shape(cliPostAfterTool.body));
      expect((afterTool.body!.input as Json[]).slice(-2).map((item) => item.type)).toEqual([
        'function_call',
        'function_call_output',
      ]);
      expect((cliPostAfterTool.body.input as Json[]).slice(-2).map((item) => item.type)).toEqual([
        'function_call',
        'function_call_output',
      ]);
    } finally {
      await sse.close();
    }
  });

  it("a tool sent without type is the CLI's function tool on the wire, and a forced choice of it names it", async () => {
    fake().enqueue(textReply('Done.'));
    const response = await post(typelessToolBody('gpt-5.5'), 'oracle-typeless');
    const [turn] = fake().requests();
    // The backend refuses a tool without a type (the fake too): the turn would be a 400.
    expect(turn.violation).toBeUndefined();
    expect(response.status).toBe(200);
    const cliTool = (cliTurn.tools as Json[]).find((tool) => tool.name === 'exec_command')!;
    const [sent] = turn.body!.tools as Json[];
    expect(sent).toMatchObject({ type: 'function', name: 'exec_command' });
    expect(shape(sent)).toEqual(shape(cliTool));
    expect(turn.body!.tool_choice).toEqual({ type: 'function', name: 'exec_command' });
  });

  it('documents from the app-server capture: one WebSocket across user turns, each request chained to the previous response', () => {
    const appServer = readCodexCapture('gpt-5.5.app-server.capture.json').transcript as Json[];
    expect(appServer.filter((entry) => entry.kind === 'ws-handshake')).toHaveLength(1);
    const frames = appServer.filter((entry) => entry.kind === 'ws-message').map((entry) => entry.body as Json);
    expect(frames.map((frame) => frame.generate === false)).toEqual([true, false, false, false]);
    const secondUserTurn = frames[3];
    expect(secondUserTurn.previous_response_id).toBe('resp_oracle_3');
    expect((secondUserTurn.input as Json[]).map((item) => `${item.type}:${item.role}`)).toEqual(['message:user']);
  });
});

/**
 * The lite oracle: the same CLI with gpt-6.1-sol, which its model list marks `use_responses_lite`
 * (codex-<pin>.gpt-6.1-sol.capture.json over WebSocket, .http.capture.json over HTTP + SSE).
 * The gateway's request for the equivalent turn has every header and body field the CLI's has,
 * with the same JSON types, minus the intended differences below (docs/providers.md).
 */
const LITE = readCodexCapture('gpt-6.1-sol.capture.json');
const liteTranscript = LITE.transcript as Json[];
const liteHandshake = liteTranscript.find((entry) => entry.kind === 'ws-handshake' && entry.connection === 1)!
  .headers as Record<string, string>;
const [liteTurn, liteAfterTool] = liteTranscript
  .filter((entry) => entry.kind === 'ws-message' && entry.connection === 1 && entry.body.generate !== false)
  .map((entry) => entry.body as Json);
const LITE_HTTP = readCodexCapture('gpt-6.1-sol.http.capture.json');
const [litePost] = (LITE_HTTP.transcript as Json[]).filter((entry) => entry.kind === 'http' && entry.method === 'POST');
const LITE_FLAG = 'ws_request_header_x_openai_internal_codex_responses_lite';

/** Intended differences of the lite shape (docs/providers.md "What the real Codex CLI sends"). */
const LITE_INTENDED = {
  /** Reasoning summaries are asked for, so clients get `reasoning_content`. */
  extraReasoningKeys: ['summary'],
  /** The CLI's first sampling request chains to its warm-up (`generate: false`), which the gateway never sends. */
  firstTurnMissingKeys: ['previous_response_id'],
  /** Minimal mode: no reasoning replay (store is false); its client_metadata holds only the lite flag. */
  minimalMissingBodyKeys: ['include'],
  /** The CLI numbers its input items; the backend does not need ids. */
  missingItemKeys: ['id'],
} as const;

describe(`provider_a lite requests match the real Codex CLI ${CODEX_PIN} (gpt-6.1-sol capture)`, () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-oracle-lite-' });
  const gateways: TestGateway[] = [];
  afterAll(() => Promise.all(gateways.map((gateway) => gateway.close())));
  beforeEach(() => fake().keepConnectionsOpen());

  const turnBody = (faithful: boolean, messages: Json[]) => oracleTurnBody('gpt-6.1-sol', false, faithful, messages);

  async function twoTurns(transport: 'ws' | 'sse', faithful: boolean): Promise<[RecordedRequest, RecordedRequest]> {
    const gateway = await startGateway({
      ...providerASettings(fake(), path.join(home(), `${transport}-${faithful}`), { transport }),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '0',
    });
    gateways.push(gateway);
    const post = (messages: Json[]) =>
      postChatBody(gateway, turnBody(faithful, messages), {
        headers: { 'x-conversation-id': `lite-${transport}-${faithful}` },
      });
    const [turn, afterTool] = await toolRound(fake(), 'gpt-6.1-sol', post);
    expect(
      fake()
        .requests()
        .filter((request) => request.violation),
    ).toEqual([]);
    return [turn, afterTool];
  }

  /** The lite items: additional_tools (namespace `functions`) and developer messages ahead of the conversation. */
  function expectLiteItems(input: Json[], cliInput: Json[]): void {
    const tools = input.find((item) => item.type === 'additional_tools')!;
    const cliTools = cliInput.find((item) => item.type === 'additional_tools')!;
    expect(shape(tools)).toEqual(without(shape(cliTools), LITE_INTENDED.missingItemKeys));
    expect(tools.tools[0]).toMatchObject({ type: 'namespace', name: 'functions' });
    expect(shape(tools.tools[0])).toEqual(shape(cliTools.tools[0]));
    expect(shape(tools.tools[0].tools[0])).toEqual(
      shape((cliTools.tools[0].tools as Json[]).find((tool) => tool.type === 'function')!),
    );
    const developer = input.find((item) => item.role === 'developer' && item.type === 'message')!;
    expect(shape(developer)).toEqual(
      without(
        shape(cliInput.find((item) => item.role === 'developer' && item.type === 'message')!),
        LITE_INTENDED.missingItemKeys,
      ),
    );
    expect(input[0].type).toBe('additional_tools');
    expect(new Set(input.map((item) => `${item.type}:${item.role ?? ''}`))).toEqual(
      new Set(cliInput.map((item) => `${item.type}:${item.role ?? ''}`)),
    );
  }

  it('captured a real CLI run (sanity of the fixtures): lite over both transports, the model list asked for', () => {
    expect([LITE.codex_version, LITE_HTTP.codex_version]).toEqual([CODEX_PIN, CODEX_PIN]);
    expect([LITE.exit_codes, LITE_HTTP.exit_codes]).toEqual([
      [0, 0],
      [0, 0],
    ]);
    expect(liteTurn.client_metadata[LITE_FLAG]).toBe('true');
    expect(litePost.headers['x-openai-internal-codex-responses-lite']).toBe('true');
    for (const body of [liteTurn, litePost.body]) {
      expect(body.reasoning.context).toBe('all_turns');
      expect(body).not.toHaveProperty('tools');
      expect(body).not.toHaveProperty('instructions');
    }
    expect(liteTranscript.find((entry) => entry.kind === 'http' && entry.method === 'GET')!.url).toBe(
      `/backend-api/codex/models?client_version=${CODEX_PIN}`,
    );
  });

  it('faithful mode over WebSocket: the CLI handshake headers and every body field with its type, chained the same way', async () => {
    const [turn, afterTool] = await twoTurns('ws', true);
    expect(headerNames(turn.headers)).toEqual(headerNames(liteHandshake));
    expect(shape(turn.body!)).toEqual(without(shape(liteTurn), LITE_INTENDED.firstTurnMissingKeys));
    expect(without(shape(turn.body!.reasoning as Json), LITE_INTENDED.extraReasoningKeys)).toEqual(
      shape(liteTurn.reasoning),
    );
    expect(shape(turn.body!.client_metadata as Json)).toEqual(shape(liteTurn.client_metadata));
    expect(turn.body!.client_metadata).toMatchObject({ [LITE_FLAG]: 'true' });
    expect(turn.body!.reasoning).toMatchObject({ context: 'all_turns' });
    // Faithful mode sends what the CLI sends, whatever the profile says for a classic model.
    expect(turn.body!.parallel_tool_calls).toBe(liteTurn.parallel_tool_calls);
    expectLiteItems(turn.body!.input as Json[], liteTurn.input as Json[]);

    expect(shape(afterTool.body!)).toEqual(shape(liteAfterTool));
    expect(afterTool.body!.previous_response_id).toBe('resp_1');
    expect((afterTool.body!.input as Json[]).map((item) => item.type)).toEqual(
      (liteAfterTool.input as Json[]).map((item) => item.type),
    );
  });

  it('minimal mode over WebSocket: the CLI fields minus the listed differences; client_metadata carries the lite flag only', async () => {
    const [turn, afterTool] = await twoTurns('ws', false);
    expect(shape(turn.body!)).toEqual(
      without(shape(liteTurn), [...LITE_INTENDED.firstTurnMissingKeys, ...LITE_INTENDED.minimalMissingBodyKeys]),
    );
    expect(turn.body!.client_metadata).toEqual({
      [LITE_FLAG]: 'true',
      'x-codex-ws-stream-request-start-ms': expect.any(String),
    });
    expect(turn.body!.parallel_tool_calls).toBe(liteTurn.parallel_tool_calls);
    expect(turn.body!.tool_choice).toBe(liteTurn.tool_choice);
    expectLiteItems(turn.body!.input as Json[], liteTurn.input as Json[]);
    expect(shape(afterTool.body!)).toEqual(without(shape(liteAfterTool), LITE_INTENDED.minimalMissingBodyKeys));
  });

  it('faithful mode over HTTP + SSE: the CLI POST headers (the lite header, no metadata flag) and body fields', async () => {
    const [turn] = await twoTurns('sse', true);
    const cliHeaders = litePost.headers as Record<string, string>;
    expect(headerNames(turn.headers)).toEqual(headerNames(cliHeaders));
    expect(turn.headers['x-openai-internal-codex-responses-lite']).toBe('true');
    expectCliEncodings(turn.headers, cliHeaders);
    expect(shape(turn.body!)).toEqual(shape(litePost.body));
    expect(without(shape(turn.body!.reasoning as Json), LITE_INTENDED.extraReasoningKeys)).toEqual(
      shape(litePost.body.reasoning),
    );
    expect(shape(turn.body!.client_metadata as Json)).toEqual(shape(litePost.body.client_metadata));
    expect(turn.body!.parallel_tool_calls).toBe(litePost.body.parallel_tool_calls);
    expectLiteItems(turn.body!.input as Json[], litePost.body.input as Json[]);
  });
  // The CLI sends `parallel_tool_calls: false` exactly when it sends the lite shape: against a list
  // that marks gpt-6.1-sol classic it sends true, and one without the model's `tool_mode` changes nothing.
  it.each(['classic-shape', 'no-tool-mode'])(
    'faithful mode sends the parallel_tool_calls the CLI sent against the %s list, whatever the client sent',
    async (label) => {
      const cli = cliChangedListCapture(label);
      fake().serveModels(cli.models);
      const gateway = await startGateway({
        ...providerASettings(fake(), path.join(home(), label), { transport: 'sse' }),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_MODELS_REFRESH: '15m',
      });
      gateways.push(gateway);
      await pollUntil(
        async () => gateway.logs.lines.filter((line) => line.includes('provider_a_models_refreshed')),
        (lines) => lines.length > 0,
      );
      fake().enqueue(textReply('Done.'));
      const body = oracleTurnBody('gpt-6.1-sol', !cli.sent.parallel_tool_calls, true, []);
      expect((await postChatBody(gateway, body)).status).toBe(200);
      const [turn] = fake().requests();
      expect(turn.violation).toBeUndefined();
      expect(typeof cli.sent.parallel_tool_calls).toBe('boolean');
      expect(turn.body!.parallel_tool_calls).toBe(cli.sent.parallel_tool_calls);
    },
  );

  it("a tool sent without type is the CLI's function tool in the functions namespace, and a forced choice of it names it", async () => {
    const gateway = await startGateway({
      ...providerASettings(fake(), path.join(home(), 'typeless')),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '0',
    });
    gateways.push(gateway);
    fake().enqueue(textReply('Done.'));
    const response = await postChatBody(gateway, typelessToolBody('gpt-6.1-sol'));
    expect(response.status).toBe(200);
    const [turn] = fake().requests();
    expect(turn.violation).toBeUndefined();
    // The tool is in the lite tools item, not left out of it.
    const tools = (turn.body!.input as Json[]).find((item) => item.type === 'additional_tools');
    expect(tools).toBeDefined();
    const cliTools = (liteTurn.input as Json[]).find((item) => item.type === 'additional_tools')!;
    const cliFunction = (cliTools.tools[0].tools as Json[]).find((tool) => tool.type === 'function')!;
    expect(tools!.tools).toEqual([expect.objectContaining({ type: 'namespace', name: 'functions' })]);
    const [sent] = tools!.tools[0].tools as Json[];
    expect(sent).toMatchObject({ type: 'function', name: 'exec_command' });
    expect(shape(sent)).toEqual(shape(cliFunction));
    expect(turn.body!.tool_choice).toEqual({ type: 'function', name: 'exec_command' });
  });
});

/**
 * The message-limit oracle: the same CLI against a fake announcing
 * `x-codex-websocket-max-message-bytes: 8192` (codex-<pin>.gpt-6.1-sol.ws-limit.capture.json).
 * Its warm-up fit and went over the WebSocket; its sampling requests did not and went over HTTP +
 * SSE, with the HTTP headers and the whole history. The gateway's request for a turn over the
 * limit must be that POST (docs/providers.md "WebSocket message limit").
 */
const WS_LIMIT = readCodexCapture('gpt-6.1-sol.ws-limit.capture.json');
const CAPTURED_LIMIT = 8192;

describe(`provider_a over the WebSocket message limit matches the real Codex CLI ${CODEX_PIN} (ws-limit capture)`, () => {
  const gateways: TestGateway[] = [];
  afterAll(() => Promise.all(gateways.map((gateway) => gateway.close())));
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-oracle-ws-limit-' });
  const transcript = WS_LIMIT.transcript as Json[];
  const [cliFallbackPost] = transcript.filter((entry) => entry.kind === 'http' && entry.method === 'POST');

  it('captured a real CLI run (sanity of the fixture): no frame over the limit, the sampling requests posted instead', () => {
    expect(WS_LIMIT.codex_version).toBe(CODEX_PIN);
    expect(WS_LIMIT.exit_codes).toEqual([0, 0]);
    const frames = transcript.filter((entry) => entry.kind === 'ws-message');
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) {
      expect(frame.bytes).toBeLessThanOrEqual(CAPTURED_LIMIT);
      expect(frame.body.generate).toBe(false);
    }
    const posts = transcript.filter((entry) => entry.kind === 'http' && entry.method === 'POST');
    expect(posts.length).toBeGreaterThan(0);
    for (const post of posts) {
      expect(post.bytes).toBeGreaterThan(CAPTURED_LIMIT);
      expect(post.body).not.toHaveProperty('previous_response_id');
    }
    // The connection whose request did not fit was given up before the POST.
    const close = transcript.find((entry) => entry.kind === 'ws-close' && entry.connection === 1)!;
    expect(close.at_ms).toBeLessThanOrEqual(cliFallbackPost.at_ms);
  });

  it('faithful mode: a turn over the limit is the POST the CLI sends, headers and body fields with their types', async () => {
    fake().keepConnectionsOpen();
    fake().limitWebSocketMessages(CAPTURED_LIMIT);
    const gateway = await startGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_MODELS_REFRESH: '0',
    });
    gateways.push(gateway);
    fake().enqueue(textReply('Done.'));
    const body = oracleTurnBody('gpt-6.1-sol', false, true, []);
    body.messages[1].content = `Run echo oracle, then say Done. ${'o'.repeat(2 * CAPTURED_LIMIT)}`;
    const response = await postChatBody(gateway, body, { headers: { 'x-conversation-id': 'oracle-ws-limit' } });
    expect(response.status).toBe(200);
    const [post] = fake().requests();
    expect(post.transport).toBe('sse');
    expect(post.violation).toBeUndefined();
    const cliHeaders = cliFallbackPost.headers as Record<string, string>;
    expect(headerNames(post.headers)).toEqual(headerNames(cliHeaders));
    expect(post.headers['x-openai-internal-codex-responses-lite']).toBe('true');
    expectCliEncodings(post.headers, cliHeaders);
    expect(shape(post.body!)).toEqual(shape(cliFallbackPost.body));
    expect(post.body!.parallel_tool_calls).toBe(cliFallbackPost.body.parallel_tool_calls);
    expect(fake().oversizedFrames()).toEqual([]);
  });
});
