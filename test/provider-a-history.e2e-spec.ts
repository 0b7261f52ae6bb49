import * as path from 'node:path';
import { useGateway } from './support/create-test-app';
import {
  completed,
  created,
  errorEvent,
  functionCallItem,
  providerASettings,
  textReply,
} from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { postChatBody } from './support/chat-sse';

type Json = Record<string, any>;

const VALID_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const LONG_MCP = 'mcp__filesystem_server_for_the_monorepo__read_multiple_files_with_line_numbers';

const tool = (name: string) => ({
  type: 'function',
  function: { name, description: 'd', parameters: { type: 'object', properties: {} } },
});
const call = (id: string, name: string, args = '{}') => ({ id, type: 'function', function: { name, arguments: args } });

/**
 * Histories real agent clients send (a cancelled parallel call, a history trimmed from the front,
 * MCP tool names) through provider_a against a fake that refuses what the real backend refuses:
 * without the repair each of these requests would come back 400.
 */

/**
 * The client tools and the conversation items of an upstream body in either request shape:
 * classic (`tools`, `instructions`) or Responses lite (an `additional_tools` item and developer
 * messages ahead of the conversation; gpt-6.1-sol and gpt-5.6-sol take lite).
 */
function upstreamTools(body: Json): Json[] {
  if (Array.isArray(body.tools)) return body.tools as Json[];
  const item = (body.input as Json[]).find((entry) => entry.type === 'additional_tools');
  return (item?.tools as Json[] | undefined)?.find((entry) => entry.name === 'functions')?.tools ?? [];
}
function conversation(body: Json): Json[] {
  return (body.input as Json[]).filter(
    (item) => item.type !== 'additional_tools' && !(item.type === 'message' && item.role === 'developer'),
  );
}

describe('provider_a repairs agent histories before every request (fake rejects unpaired items and bad names)', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-history-' });

  describe.each(['ws', 'sse'] as const)('over %s', (transport) => {
    const gateway = useGateway(() => ({
      ...providerASettings(fake(), path.join(home(), transport), { transport }),
      GATEWAY_PROVIDERS: 'provider_a',
      LOG_LEVEL: 'debug',
    }));

    const post = (body: Json) => postChatBody(gateway, body);

    it('answers a cancelled parallel call with an aborted output placed after the calls, in call order', async () => {
      fake().enqueue(textReply('ok'));
      const response = await post({
        model: 'gpt-5.6-sol',
        tools: [tool('read_file'), tool('grep')],
        messages: [
          { role: 'user', content: 'look' },
          { role: 'assistant', content: null, tool_calls: [call('call_a', 'read_file'), call('call_b', 'grep')] },
          { role: 'tool', tool_call_id: 'call_a', content: 'FILE-CONTENT' },
          { role: 'user', content: 'I cancelled grep, go on' },
        ],
      });
      expect(response.status).toBe(200);
      const [request] = fake().requests();
      expect(request.violation).toBeUndefined();
      const calls = (request.body!.input as Json[]).filter(
        (item) => item.type !== 'message' && item.type !== 'additional_tools',
      );
      expect(calls).toEqual([
        expect.objectContaining({ type: 'function_call', call_id: 'call_a' }),
        expect.objectContaining({ type: 'function_call', call_id: 'call_b' }),
        { type: 'function_call_output', call_id: 'call_a', output: 'FILE-CONTENT' },
        { type: 'function_call_output', call_id: 'call_b', output: 'aborted' },
      ]);
    });

    it('drops the orphan outputs of a history trimmed from the front and counts them in a debug line without content', async () => {
      fake().enqueue(textReply('ok'));
      const response = await post({
        model: 'gpt-5.6-sol',
        tools: [tool('read_file'), tool('grep')],
        messages: [
          { role: 'tool', tool_call_id: 'call_trimmed', content: 'ORPHAN-OUTPUT-SECRET' },
          { role: 'assistant', content: 'earlier answer' },
          { role: 'user', content: 'continue' },
        ],
      });
      expect(response.status).toBe(200);
      const input = conversation(fake().requests()[0].body!);
      expect(input.some((item) => item.type === 'function_call_output')).toBe(false);
      const lines = gateway.logs.lines
        .map((text) => JSON.parse(text) as Json)
        .filter(
          (record) => record.event === 'provider_a_request' && record.reqId === response.headers.get('x-request-id'),
        );
      expect(lines.map((record) => record.orphan_outputs)).toEqual([1]);
      // gpt-5.6-sol takes the lite shape: its tools travel in the additional_tools item, and count.
      expect(upstreamTools(fake().requests()[0].body!)).toHaveLength(2);
      expect(lines.map((record) => record.tools)).toEqual([2]);
      expect(gateway.logs.text).not.toContain('ORPHAN-OUTPUT-SECRET');
    });

    it('adds an aborted output for a trailing call with no result at all (the client stopped the agent)', async () => {
      fake().enqueue(textReply('ok'));
      const response = await post({
        model: 'gpt-5.6-sol',
        tools: [tool('read_file')],
        messages: [
          { role: 'user', content: 'look' },
          { role: 'assistant', content: 'reading', tool_calls: [call('call_last', 'read_file')] },
        ],
      });
      expect(response.status).toBe(200);
      expect(conversation(fake().requests()[0].body!).at(-1)).toEqual({
        type: 'function_call_output',
        call_id: 'call_last',
        output: 'aborted',
      });
    });

    const output = (id: string, text: string, type = 'function_call_output') => ({ type, call_id: id, output: text });
    const callItem = (id: string, name: string) =>
      expect.objectContaining({ type: 'function_call', call_id: id, name });

    it('moves results sent after two call turns each right after its own call', async () => {
      fake().enqueue(textReply('ok'));
      const response = await post({
        model: 'gpt-5.6-sol',
        tools: [tool('read_file'), tool('grep')],
        messages: [
          { role: 'user', content: 'read, then grep' },
          { role: 'assistant', content: null, tool_calls: [call('call_a', 'read_file')] },
          { role: 'assistant', content: null, tool_calls: [call('call_b', 'grep')] },
          { role: 'tool', tool_call_id: 'call_a', content: 'R-A' },
          { role: 'tool', tool_call_id: 'call_b', content: 'R-B' },
        ],
      });
      expect(response.status).toBe(200);
      const [request] = fake().requests();
      expect(request.violation).toBeUndefined();
      expect(conversation(request.body!).slice(1)).toEqual([
        callItem('call_a', 'read_file'),
        output('call_a', 'R-A'),
        callItem('call_b', 'grep'),
        output('call_b', 'R-B'),
      ]);
    });

    it('takes a result sent after a user message as its call’s answer, placed before that message', async () => {
      fake().enqueue(textReply('ok'));
      const response = await post({
        model: 'gpt-5.6-sol',
        tools: [tool('read_file'), tool('grep')],
        messages: [
          { role: 'user', content: 'look' },
          { role: 'assistant', content: null, tool_calls: [call('call_a', 'read_file'), call('call_b', 'grep')] },
          { role: 'tool', tool_call_id: 'call_a', content: 'R-A' },
          { role: 'user', content: 'grep is slow' },
          { role: 'tool', tool_call_id: 'call_b', content: 'R-B' },
        ],
      });
      expect(response.status).toBe(200);
      const [request] = fake().requests();
      expect(request.violation).toBeUndefined();
      expect(conversation(request.body!).slice(1)).toEqual([
        callItem('call_a', 'read_file'),
        callItem('call_b', 'grep'),
        output('call_a', 'R-A'),
        output('call_b', 'R-B'),
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'grep is slow' }] },
      ]);
    });

    it('gives each result the kind of the call it answers when two turns reuse one call id', async () => {
      fake().enqueue(textReply('ok'));
      const response = await post({
        model: 'gpt-5.6-sol',
        tools: [tool('read_file'), { type: 'custom', custom: { name: 'apply_patch', description: 'patch' } }],
        messages: [
          { role: 'user', content: 'read, then patch' },
          { role: 'assistant', content: null, tool_calls: [call('call_0', 'read_file')] },
          { role: 'tool', tool_call_id: 'call_0', content: 'R-A' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_0', type: 'custom', custom: { name: 'apply_patch', input: 'PATCH' } }],
          },
          { role: 'tool', tool_call_id: 'call_0', content: 'R-B' },
        ],
      });
      expect(response.status).toBe(200);
      const [request] = fake().requests();
      expect(request.violation).toBeUndefined();
      expect(conversation(request.body!).slice(1)).toEqual([
        callItem('call_0', 'read_file'),
        output('call_0', 'R-A'),
        { type: 'custom_tool_call', call_id: 'call_0', name: 'apply_patch', input: 'PATCH' },
        output('call_0', 'R-B', 'custom_tool_call_output'),
      ]);
    });

    it('shortens MCP and dotted tool names in tools, tool_choice and history, and maps calls back to the client name', async () => {
      // The reply must use the upstream name the gateway chose: compute it from the request.
      fake().respondWith((body) => {
        const upstream = upstreamTools(body).find((entry) => String(entry.name).startsWith('mcp__'))!.name as string;
        return [created(), ...functionCallItem('call_new', upstream, '{"path":"a"}'), completed()];
      });
      const response = await post({
        model: 'gpt-5.6-sol',
        tools: [tool(LONG_MCP), tool('files.search'), tool('read_file')],
        tool_choice: { type: 'function', function: { name: LONG_MCP } },
        messages: [
          { role: 'user', content: 'look' },
          { role: 'assistant', content: null, tool_calls: [call('call_old', 'files.search')] },
          { role: 'tool', tool_call_id: 'call_old', content: 'r' },
        ],
      });
      expect(response.status).toBe(200);
      const message = ((await response.json()) as Json).choices[0].message;
      expect(message.tool_calls).toEqual([
        expect.objectContaining({ function: { name: LONG_MCP, arguments: '{"path":"a"}' } }),
      ]);
      const body = fake().requests()[0].body!;
      const names = upstreamTools(body).map((entry) => entry.name as string);
      for (const name of names) expect(name).toMatch(VALID_NAME);
      expect(new Set(names).size).toBe(3);
      expect(names[0]).toMatch(/^mcp__.*read_multiple_files_with_line_numbers_[0-9a-f]{8}$/);
      expect(names[1]).toMatch(/^files_search_[0-9a-f]{8}$/);
      expect(names[2]).toBe('read_file');
      expect(body.tool_choice).toEqual({ type: 'function', name: names[0] });
      expect((body.input as Json[]).find((item) => item.type === 'function_call')!.name).toBe(names[1]);
    });

    it('takes tool names exactly as sent: " read_file " is a tool of its own in tools, tool_choice and history, and its calls come back under that name', async () => {
      const spaced = ' read_file ';
      fake().respondWith((body) => {
        // The model calls the second tool by its upstream name (a made-up one when there is none).
        const second = upstreamTools(body).find((entry) => entry.name !== 'read_file');
        const upstream = typeof second?.name === 'string' ? second.name : 'no_second_tool';
        return [created(), ...functionCallItem('call_new', upstream, '{"path":"a"}'), completed()];
      });
      const response = await post({
        model: 'gpt-5.6-sol',
        tools: [tool('read_file'), tool(spaced)],
        tool_choice: { type: 'function', function: { name: spaced } },
        messages: [
          { role: 'user', content: 'look' },
          { role: 'assistant', content: null, tool_calls: [call('call_old', spaced)] },
          { role: 'tool', tool_call_id: 'call_old', content: 'r' },
        ],
      });
      expect(response.status).toBe(200);
      const message = ((await response.json()) as Json).choices[0].message;
      expect(message.tool_calls).toEqual([
        expect.objectContaining({ function: { name: spaced, arguments: '{"path":"a"}' } }),
      ]);
      const body = fake().requests()[0].body!;
      const names = upstreamTools(body).map((entry) => entry.name as string);
      expect(names[0]).toBe('read_file');
      expect(names[1]).toMatch(/^_read_file__[0-9a-f]{8}$/);
      // The forced tool and the history call are the declared one, under its upstream name.
      expect(body.tool_choice).toEqual({ type: 'function', name: names[1] });
      expect((body.input as Json[]).find((item) => item.type === 'function_call')!.name).toBe(names[1]);
    });

    it('sends a 75-character call id hashed to 64 characters on both halves, which the backend accepts', async () => {
      fake().enqueue(textReply('ok'));
      const longId = `call_${'a'.repeat(70)}`;
      const response = await post({
        model: 'gpt-5.6-sol',
        tools: [tool('read_file')],
        messages: [
          { role: 'user', content: 'look' },
          { role: 'assistant', content: null, tool_calls: [call(longId, 'read_file')] },
          { role: 'tool', tool_call_id: longId, content: 'r' },
        ],
      });
      expect(response.status).toBe(200);
      expect(fake().requests()[0].violation).toBeUndefined();
    });
  });
});

describe('provider_a carries images and refuses what it cannot carry', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-images-' });
  const gateway = useGateway(() => ({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' }));

  const post = (messages: Json[]) => postChatBody(gateway, { model: 'gpt-6.1-sol', messages });
  const PNG =
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

  it('sends image_url parts (data and https URLs) as input_image items in order', async () => {
    fake().enqueue(textReply('a cat'));
    const response = await post([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: PNG, detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://example.test/cat.jpg' } },
        ],
      },
    ]);
    expect(response.status).toBe(200);
    const [request] = fake().requests();
    expect(request.violation).toBeUndefined();
    expect(conversation(request.body!)).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in these?' },
          { type: 'input_image', image_url: PNG, detail: 'low' },
          { type: 'input_image', image_url: 'https://example.test/cat.jpg' },
        ],
      },
    ]);
  });

  it('sends a tool result holding a screenshot as a function_call_output with parts', async () => {
    fake().enqueue(textReply('seen'));
    const response = await post([
      { role: 'user', content: 'screenshot please' },
      { role: 'assistant', content: null, tool_calls: [call('call_shot', 'screenshot')] },
      {
        role: 'tool',
        tool_call_id: 'call_shot',
        content: [
          { type: 'text', text: 'here' },
          { type: 'image_url', image_url: { url: PNG } },
        ],
      },
    ]);
    expect(response.status).toBe(200);
    expect(conversation(fake().requests()[0].body!).at(-1)).toEqual({
      type: 'function_call_output',
      call_id: 'call_shot',
      output: [
        { type: 'input_text', text: 'here' },
        { type: 'input_image', image_url: PNG },
      ],
    });
  });

  it('sends a line-wrapped base64 image without the line breaks the backend refuses', async () => {
    fake().enqueue(textReply('a dot'));
    const wrapped = `${PNG.slice(0, 60)}\n${PNG.slice(60, 100)}\r\n ${PNG.slice(100)}`;
    const response = await post([{ role: 'user', content: [{ type: 'image_url', image_url: { url: wrapped } }] }]);
    expect(response.status).toBe(200);
    const [request] = fake().requests();
    expect(request.violation).toBeUndefined();
    expect(conversation(request.body!)).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_image', image_url: PNG }] },
    ]);
  });

  it.each<[Json, string]>([
    [
      { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
      'messages[0].content[1]: part type "input_audio" is not supported by provider_a; send its transcript as a text part (no family takes audio)',
    ],
    [
      { type: 'image_url', image_url: { url: 'file:///home/me/cat.png' } },
      'messages[0].content[1]: an image that is not an https URL or a base64 data:image URL is not supported by provider_a',
    ],
    [
      { type: 'image_url', image_url: { url: 'data:image/svg+xml;base64,PHN2Zy8+' } },
      'messages[0].content[1]: an image of type image/svg+xml is not supported by provider_a; send it as image/png, image/jpeg, image/webp or image/gif',
    ],
    // A detail OpenAI does not define is the chat body rules' 400, on every family.
    [
      { type: 'image_url', image_url: { url: PNG, detail: 'ultra' } },
      'messages.0.content.1.image_url.detail must be one of auto, low, high, original, or left out',
    ],
    [
      { type: 'input_image', image_url: 'https://example.test/cat.jpg', detail: 5 },
      'messages.0.content.1.detail must be one of auto, low, high, original, or left out',
    ],
    ...['A', 'A=A=', 'AAAAA'].map((data): [Json, string] => [
      { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } },
      'messages[0].content[1]: an image whose data is not base64 is not supported by provider_a; send the whole image base64-encoded: its length is a multiple of 4, with "=" padding only at the end',
    ]),
  ])('answers 400 naming a part it cannot carry (%j), with no upstream call', async (part, message) => {
    const response = await post([{ role: 'user', content: [{ type: 'text', text: 'hi' }, part] }]);
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).error).toMatchObject({
      type: 'invalid_request_error',
      message,
      param: 'messages',
    });
    expect(fake().requests()).toHaveLength(0);
  });
});

describe("provider_a logs an image it could not download without the link's credential", () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-images-log-' });
  const gateway = useGateway(() => ({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' }));

  it("keeps a signed URL's query out of every log line that quotes the upstream", async () => {
    const url =
      'https://acct.blob.core.windows.net/c/x.png?sv=2022-11-02&se=2030-01-01&sp=r&sig=Zm9vYmFy%2BYmF6cXV4MTIzNDU2Nzg5MGFi%2Fa%3D';
    fake().enqueue({
      frames: [errorEvent({ status: 400, code: 'invalid_image_url', message: `Error while downloading ${url}.` })],
    });
    const response = await postChatBody(gateway, {
      model: 'gpt-6.1-sol',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
    });
    expect(response.status).toBe(400);
    const requestId = response.headers.get('x-request-id')!;
    await gateway.logs.warnings(requestId);
    const quoted = 'Error while downloading https://acct.blob.core.windows.net/c/x.png?[redacted].';
    const lines = gateway.logs.records().filter((line) => line.reqId === requestId && 'upstream_message' in line);
    expect(lines.map((line) => [line.event, line.upstream_message])).toEqual(
      expect.arrayContaining([
        ['upstream_attempt_failed', quoted],
        ['chat_completion', quoted],
      ]),
    );
    for (const secret of ['sig=', 'Zm9vYmFy', 'sv=2022']) expect(gateway.logs.text).not.toContain(secret);
  });
});

describe('provider_a repairs a cancelled call on a kept WebSocket session (chained with previous_response_id)', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-history-session-' });
  const gateway = useGateway(() => ({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' }));
  beforeEach(() => fake().keepConnectionsOpen());

  const post = (messages: Json[]) =>
    postChatBody(
      gateway,
      { model: 'gpt-6.1-sol', tools: [tool('read_file')], messages },
      { headers: { 'x-conversation-id': 'cancelled-call' } },
    );

  it('sends the aborted output as part of the new items, and the backend (fake) accepts the chain', async () => {
    fake().enqueue({
      frames: [
        created('resp_c1', 'gpt-6.1-sol'),
        ...functionCallItem('call_x', 'read_file', '{"path":"a"}'),
        completed(undefined, 'resp_c1', 'gpt-6.1-sol'),
      ],
    });
    expect((await post([{ role: 'user', content: 'read a' }])).status).toBe(200);
    fake().enqueue(textReply('ok, stopped'));
    // The user pressed stop: the client sends the call but no tool result, then a new message.
    const response = await post([
      { role: 'user', content: 'read a' },
      { role: 'assistant', content: null, tool_calls: [call('call_x', 'read_file', '{"path":"a"}')] },
      { role: 'user', content: 'never mind' },
    ]);
    expect(response.status).toBe(200);
    const [, second] = fake().requests();
    expect(second.violation).toBeUndefined();
    expect(second.body!.previous_response_id).toBe('resp_c1');
    expect((second.body!.input as Json[]).map((item) => item.type)).toEqual(['function_call_output', 'message']);
    expect((second.body!.input as Json[])[0]).toEqual({
      type: 'function_call_output',
      call_id: 'call_x',
      output: 'aborted',
    });
  });

  it('keeps chaining when a tool name had to be shortened (the same client name always maps to the same upstream name)', async () => {
    fake().respondWith((body) => {
      // In the lite shape a chained request carries no tools (they are in the chain's first input).
      return body.previous_response_id === undefined
        ? [
            created('resp_m1', 'gpt-6.1-sol'),
            ...functionCallItem('call_m', upstreamTools(body)[0].name as string, '{}'),
            completed(undefined, 'resp_m1', 'gpt-6.1-sol'),
          ]
        : textReply('done').frames;
    });
    const send = (messages: Json[]) =>
      postChatBody(
        gateway,
        { model: 'gpt-6.1-sol', tools: [tool(LONG_MCP)], messages },
        { headers: { 'x-conversation-id': 'renamed-tool' } },
      );
    const first = (await (await send([{ role: 'user', content: 'go' }])).json()) as Json;
    expect(first.choices[0].message.tool_calls[0].function.name).toBe(LONG_MCP);
    const response = await send([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('call_m', LONG_MCP)] },
      { role: 'tool', tool_call_id: 'call_m', content: 'result' },
    ]);
    expect(response.status).toBe(200);
    const [, second] = fake().requests();
    expect(second.violation).toBeUndefined();
    expect(second.body!.previous_response_id).toBe('resp_m1');
    expect((second.body!.input as Json[]).map((item) => item.type)).toEqual(['function_call_output']);
  });
});
