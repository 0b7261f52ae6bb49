import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { completed, created, functionCallItem, providerASettings, textReply } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { bundledTierModel } from './support/bundled-tiers';
import { postChatBody } from './support/chat-sse';

type Json = Record<string, any>;

/** Small enough that a long message does not fit, large enough for a short turn. */
const LIMIT = 8 * 1024;
const LITE_FLAG = 'ws_request_header_x_openai_internal_codex_responses_lite';

/**
 * The backend's WebSocket message limit (docs/providers.md "WebSocket message limit"): the fake
 * announces `x-codex-websocket-max-message-bytes` on every upgrade answer and, like a real
 * server, closes a connection that sends a larger frame. A turn whose `response.create` would
 * exceed it goes over HTTP + SSE instead, as Codex CLI 0.171.0 does.
 */
describe('provider_a honours the WebSocket message limit the server announces', () => {
  const gateways: TestGateway[] = [];
  afterAll(() => Promise.all(gateways.map((gateway) => gateway.close())));
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-ws-limit-' });
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' });
    gateways.push(gateway);
  });
  beforeEach(() => {
    fake().keepConnectionsOpen();
    fake().limitWebSocketMessages(LIMIT);
  });

  const post = (conversation: string, body: Json) =>
    postChatBody(gateway, body, { headers: { 'x-conversation-id': conversation } });
  const frameSizes = () =>
    fake()
      .requests()
      .filter((request) => request.transport === 'ws' && request.raw !== '')
      .map((request) => Buffer.byteLength(request.raw));

  it('a turn whose request exceeds the limit still answers 200, over HTTP + SSE, and no frame over the limit is sent', async () => {
    fake().enqueue(textReply('short answer'), textReply('long answer'));
    const short = await post('limit-fresh', { messages: [{ role: 'user', content: 'hi' }] });
    expect(short.status).toBe(200);
    const long = await post('limit-fresh', {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'short answer' },
        { role: 'user', content: 'x'.repeat(3 * LIMIT) },
      ],
    });
    expect(long.status).toBe(200);
    expect(((await long.json()) as Json).choices[0].message.content).toBe('long answer');

    const [first, second] = fake().requests();
    expect(first.transport).toBe('ws');
    expect(second.transport).toBe('sse');
    expect(Buffer.byteLength(second.raw)).toBeGreaterThan(LIMIT);
    // The whole history, in the HTTP form of the lite shape (the flag as a header), as the CLI posts it.
    expect(second.body).not.toHaveProperty('previous_response_id');
    expect(second.body).not.toHaveProperty('type');
    expect((second.body!.input as Json[]).filter((item) => item.role === 'user')).toHaveLength(2);
    expect(second.headers['x-openai-internal-codex-responses-lite']).toBe('true');
    expect((second.body!.client_metadata as Json | undefined)?.[LITE_FLAG]).toBeUndefined();
    expect(second.violation).toBeUndefined();
    expect(fake().oversizedFrames()).toEqual([]);
    expect(Math.max(...frameSizes())).toBeLessThanOrEqual(LIMIT);
    const [line] = gateway.logs.records('provider_a_websocket_message_too_large');
    expect(line).toMatchObject({ limit_bytes: LIMIT, frame_bytes: expect.any(Number) });
    expect(line.frame_bytes as number).toBeGreaterThan(LIMIT);
    expect(JSON.stringify(line)).not.toContain('xxxx');
  });

  it('a continuation on a kept connection that would exceed the limit goes over HTTP with the full history', async () => {
    fake().enqueue(
      { frames: [created('resp_1'), ...functionCallItem('call_1', 'read_file', '{}'), completed(undefined, 'resp_1')] },
      textReply('done'),
    );
    const tool = { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: {} } } };
    const call = { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{}' } };
    const messages = [{ role: 'user', content: 'read it' }];
    expect((await post('limit-chain', { messages, tools: [tool] })).status).toBe(200);
    const after = await post('limit-chain', {
      tools: [tool],
      messages: [
        ...messages,
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_1', content: 'y'.repeat(2 * LIMIT) },
      ],
    });
    expect(after.status).toBe(200);
    const [, continuation] = fake().requests();
    expect(continuation.transport).toBe('sse');
    expect(continuation.body).not.toHaveProperty('previous_response_id');
    expect((continuation.body!.input as Json[]).map((item) => item.type)).toEqual(
      expect.arrayContaining(['function_call', 'function_call_output']),
    );
    expect(continuation.violation).toBeUndefined();
    expect(fake().oversizedFrames()).toEqual([]);
    // The turn's line says what went out: the full input over HTTP, neither a reuse nor a continuation.
    const line = gateway.logs.records('chat_completion').at(-1)!;
    expect(line).toMatchObject({ session_reused: false, incremental: false });
    expect(line.input_items_sent).toBe((continuation.body!.input as Json[]).length);
    expect(line.input_items_sent).toBe(line.input_items);
  });

  it('structured inference over WebSocket also sends a request over the limit by HTTP + SSE', async () => {
    const structured = await startGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      STRUCTURED_INFERENCE_ENABLED: 'true',
    });
    gateways.push(structured);
    fake().enqueue(textReply('{"headline":"Growth"}'));
    const response = await fetch(`${structured.url}/v1/structured/inference`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        request_id: 'req-limit',
        operation: 'summarize',
        // A model of the route's default allowlist: the bundled sol tier model (docs/structured.md "Models").
        model: bundledTierModel('sol').model,
        input: `Revenue grew. ${'z'.repeat(2 * LIMIT)}`,
        schema_version: 'v1',
        schema_name: 'summary',
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['headline'],
          properties: { headline: { type: 'string' } },
        },
      }),
    });
    expect(response.status).toBe(200);
    expect(
      fake()
        .requests()
        .map((request) => request.transport),
    ).toEqual(['sse']);
    expect(fake().requests()[0].violation).toBeUndefined();
    expect(fake().oversizedFrames()).toEqual([]);
  });
});
