import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { bundledTierModel } from './support/bundled-tiers';
import { FakeProviderA } from './support/fake-provider-a';
import { postChatBody, sseChunks, sseData } from './support/chat-sse';
import { eventually } from './support/poll';
import { metricValue } from './support/prometheus-text';
import {
  completed,
  created,
  customToolCallItem,
  functionCallItem,
  providerASettings,
  textDelta,
  textReply,
} from './support/provider-a-fixtures';

/** Chat-layer behaviours over real HTTP against the provider_a fake (docs/design/behaviours.md §10 items 1–10). */
describe('POST /v1/chat/completions (chat layer)', () => {
  let fake: FakeProviderA;
  let gateway: TestGateway;
  let home: string;
  const secret = 'bearer-SECRET-VALUE-123';

  beforeAll(async () => {
    fake = await FakeProviderA.start();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-e2e-'));
    gateway = await startGateway({
      GATEWAY_PROVIDERS: 'provider_a',
      GATEWAY_BEARER_SECRET: secret,
      ...providerASettings(fake, home),
    });
  });
  afterAll(async () => {
    await gateway.close();
    await fake.close();
    fs.rmSync(home, { recursive: true, force: true });
  });
  beforeEach(() => fake.reset());

  const headers = { 'content-type': 'application/json', authorization: `Bearer ${secret}` };
  const post = (body: unknown, extra: Record<string, string> = {}) =>
    postChatBody(gateway, body, { headers: { ...headers, ...extra } });

  it('never compresses a stream, and its first chunk reaches the client before the last frame is written', async () => {
    fake.enqueue({ frames: [created(), textDelta('first'), { ...textDelta('second'), delayMs: 800 }, completed()] });
    const response = await post(
      { stream: true, messages: [{ role: 'user', content: 'hi' }] },
      { 'accept-encoding': 'gzip, br, deflate' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBeNull();
    // Nothing of compression is set up for a stream, so it names no Vary either.
    expect(response.headers.get('vary')).toBeNull();
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    // What the client had when "first" arrived: an order of events, not a duration, so a busy
    // machine cannot blur it (a buffered or compressed stream would deliver both at the end).
    let whenFirstArrived: string | undefined;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (whenFirstArrived === undefined && text.includes('"content":"first"')) whenFirstArrived = text;
    }
    // Ids and timestamps in the chunks cannot be known: the shape is asserted.
    expect(whenFirstArrived).toMatch(/^data: .*"content":"first"/s);
    expect(whenFirstArrived).not.toContain('"content":"second"');
    expect(text).toContain('"content":"second"');
    expect(sseData(text).at(-1)).toBe('[DONE]');
  });

  it('delivers every delta of a large stream in order to a client that stops reading and resumes', async () => {
    // 4 MiB of numbered deltas: more than loopback buffers hold, so while the client does not read,
    // the gateway's writes wait for the socket and the upstream's frames pile up behind them.
    const deltas = Array.from({ length: 4096 }, (_, index) => `<${index}>${'x'.repeat(1000)}`);
    fake.enqueue({ frames: [created(), ...deltas.map((text) => textDelta(text)), completed()] });
    const response = await post({ stream: true, messages: [{ role: 'user', content: 'a long answer' }] });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value, { stream: true });
    // The client stops reading for a while; however long the pause, nothing may be lost or reordered.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const { chunks, done } = sseChunks(text);
    expect(done).toBe(true);
    const content = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(content).toBe(deltas.join(''));
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('compresses a non-streaming JSON answer when the client accepts gzip', async () => {
    const long = 'word '.repeat(600);
    fake.enqueue(textReply(long));
    const response = await new Promise<{ encoding?: string; body: Buffer }>((resolve, reject) => {
      const request = http.request(
        `${gateway.url}/v1/chat/completions`,
        { method: 'POST', headers: { ...headers, 'accept-encoding': 'gzip' } },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('end', () =>
            resolve({ encoding: incoming.headers['content-encoding'], body: Buffer.concat(chunks) }),
          );
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
    });
    expect(response.encoding).toBe('gzip');
    const completion = JSON.parse(gunzipSync(response.body).toString('utf8'));
    expect(completion.choices[0].message.content).toBe(long);
  });

  it('uses the default model when none is sent and reports usage with include_usage', async () => {
    fake.enqueue(textReply('ok'));
    const response = await post({
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    const chunks = sseData(await response.text())
      .filter((line) => line !== '[DONE]')
      .map((line) => JSON.parse(line));
    // The default is the `sol` tier id: the upstream gets the sol tier model, the client the id
    // that was used (docs/chat.md "Model ids").
    expect(fake.lastBody()?.model).toBe(bundledTierModel('sol').model);
    expect(chunks.every((chunk) => chunk.model === 'sol')).toBe(true);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    });
  });

  it('takes a null model as no model (the default), and answers an empty or blank model 400 naming the field, no upstream call', async () => {
    fake.enqueue(textReply('ok'));
    const defaulted = await post({ model: null, messages: [{ role: 'user', content: 'hi' }] });
    expect(defaulted.status).toBe(200);
    expect(fake.lastBody()?.model).toBe(bundledTierModel('sol').model);
    fake.reset();
    for (const model of ['', '   ', '\t\n']) {
      const response = await post({ model, messages: [{ role: 'user', content: 'hi' }] });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: unknown }).error).toEqual({
        message:
          "model must not be empty or blank: send a model id from GET /v1/models, or leave model out (or null) for the gateway's default model",
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'model',
      });
      // Refused before any turn, still the request's one chat_completion line.
      await gateway.logs.failureLine(response.headers.get('x-request-id')!, 40, {
        status: 400,
        error_code: 'invalid_request',
      });
    }
    expect(fake.requests()).toHaveLength(0);
  });

  it('ends a turn whose only call has broken arguments with the invalid-tool-call chunk and logs index and reason only', async () => {
    fake.enqueue({
      frames: [created(), ...functionCallItem('call_bad', 'read_file', '{"path": MARKER-BROKEN'), completed()],
    });
    const response = await post({
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }],
    });
    const lines = sseData(await response.text());
    expect(JSON.parse(lines.at(-2)!).choices[0]).toMatchObject({
      delta: { content: '[error: invalid upstream tool call]' },
      finish_reason: 'stop',
    });
    expect(lines.at(-1)).toBe('[DONE]');
    const [record] = gateway.logs.records('tool_call_invalid');
    expect(record).toMatchObject({ index: 0, reason: 'invalid_json_arguments' });
    expect(gateway.logs.text).not.toContain('MARKER-BROKEN');
  });

  describe('a turn with an invalid function call among valid ones ends in the invalid-tool-call error, never a tool_calls finish (docs/chat.md "Tool calls")', () => {
    const tools = [
      { type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'ls', parameters: { type: 'object' } } },
    ];
    const goodAndBad = (badArguments: string) => ({
      frames: [
        created(),
        ...functionCallItem('call_good', 'read_file', '{"path":"MARKER-GOOD-ARGS"}', { outputIndex: 1 }),
        ...functionCallItem('call_bad', 'ls', badArguments, { outputIndex: 2 }),
        completed(),
      ],
    });
    const message = (reason: string) =>
      `the upstream produced an invalid tool call: the tool call at index 1 ("ls") has arguments that ${reason}, so none of the answer's tool calls was returned; send the request again, as the model may write a valid call on another try`;

    it('streamed: one valid and one broken call give the error chunk and [DONE], no call frame, and one warning naming the call by index', async () => {
      fake.enqueue(goodAndBad('{"dir": MARKER-BAD-ARGS'));
      const response = await post({ stream: true, messages: [{ role: 'user', content: 'hi' }], tools });
      expect(response.status).toBe(200);
      const { chunks, data } = sseChunks(await response.text());
      expect(chunks.some((chunk) => chunk.choices[0]?.delta?.tool_calls)).toBe(false);
      expect(chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'tool_calls')).toBe(false);
      expect(chunks.at(-1)!.choices[0]).toMatchObject({
        delta: { content: '[error: invalid upstream tool call]' },
        finish_reason: 'stop',
      });
      expect(data.at(-1)).toBe('[DONE]');
      // The request's one warning is its own line, naming the call; the call's line is info.
      const requestId = response.headers.get('x-request-id')!;
      await gateway.logs.failureLine(requestId, 50, {
        status: 200,
        error_code: 'invalid_tool_call',
        detail: 'tool call at index 1: invalid_json_arguments',
      });
      expect(gateway.logs.records('tool_call_invalid').filter((record) => record.reqId === requestId)).toEqual([
        expect.objectContaining({ index: 1, reason: 'invalid_json_arguments', level: 30 }),
      ]);
      expect(gateway.logs.text).not.toContain('MARKER-BAD-ARGS');
      expect(gateway.logs.text).not.toContain('MARKER-GOOD-ARGS');
    });

    it('non-streamed: one valid and one broken call give 502 invalid_tool_call naming the call, never its arguments', async () => {
      fake.enqueue(goodAndBad('{"dir": MARKER-BAD-ARGS'));
      const response = await post({ messages: [{ role: 'user', content: 'hi' }], tools });
      expect(response.status).toBe(502);
      expect(((await response.json()) as { error: unknown }).error).toEqual({
        message: message('are not valid JSON'),
        type: 'upstream_error',
        code: 'invalid_tool_call',
        param: null,
      });
    });

    it.each(['[1,2]', '5', '"x"', 'null'])(
      'arguments that are JSON but not an object (%s) are an invalid call, streamed and not',
      async (badArguments) => {
        fake.enqueue(goodAndBad(badArguments));
        const streamed = await post({ stream: true, messages: [{ role: 'user', content: 'hi' }], tools });
        const { chunks, data } = sseChunks(await streamed.text());
        expect(chunks.some((chunk) => chunk.choices[0]?.delta?.tool_calls)).toBe(false);
        expect(chunks.at(-1)!.choices[0]).toMatchObject({
          delta: { content: '[error: invalid upstream tool call]' },
          finish_reason: 'stop',
        });
        expect(data.at(-1)).toBe('[DONE]');

        fake.enqueue(goodAndBad(badArguments));
        const whole = await post({ messages: [{ role: 'user', content: 'hi' }], tools });
        expect(whole.status).toBe(502);
        expect(((await whole.json()) as { error: { code: string; message: string } }).error).toMatchObject({
          code: 'invalid_tool_call',
          message: message('are JSON but not an object'),
        });
      },
    );

    it("blank function arguments are {} and a custom call's free text passes: a tool_calls finish with every call", async () => {
      fake.enqueue({
        frames: [
          created(),
          ...functionCallItem('call_blank', 'ls', '', { outputIndex: 1 }),
          ...customToolCallItem('call_patch', 'apply_patch', '*** Begin Patch\n[1,2]', { outputIndex: 2 }),
          completed(),
        ],
      });
      const response = await post({
        messages: [{ role: 'user', content: 'hi' }],
        tools: [...tools, { type: 'custom', custom: { name: 'apply_patch', description: 'Apply a patch' } }],
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        choices: { message: { tool_calls: unknown[] }; finish_reason: string }[];
      };
      expect(body.choices[0].finish_reason).toBe('tool_calls');
      expect(body.choices[0].message.tool_calls).toEqual([
        { id: 'call_blank', type: 'function', function: { name: 'ls', arguments: '{}' } },
        { id: 'call_patch', type: 'function', function: { name: 'apply_patch', arguments: '*** Begin Patch\n[1,2]' } },
      ]);
    });
  });

  describe('a non-streamed tool turn (docs/chat.md "Tool calls")', () => {
    const tools = [
      { type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'ls', parameters: { type: 'object' } } },
    ];
    /** A call the upstream sent without a call id, an empty call, and a call with its id. */
    const callWithoutId = () => ({
      frames: [
        created(),
        ...functionCallItem('', 'read_file', '{"path":"a"}', { outputIndex: 1, itemId: 'fc_a' }),
        ...functionCallItem('call_empty', '', '', { outputIndex: 2 }),
        ...functionCallItem('call_b', 'ls', '{}', { outputIndex: 3 }),
        completed(),
      ],
    });
    type Completion = {
      model: string;
      choices: { message: { tool_calls: { id: string }[] }; finish_reason: string }[];
    };
    const turn = async (extra: Record<string, unknown> = {}) => {
      const response = await post({ model: 'sol', messages: [{ role: 'user', content: 'hi' }], tools, ...extra });
      expect(response.status).toBe(200);
      return { requestId: response.headers.get('x-request-id')!, body: (await response.json()) as Completion };
    };

    it("echoes the client's model, names calls without an id after the request, and logs the count and the dropped call", async () => {
      fake.enqueue(callWithoutId(), callWithoutId());
      const one = await turn();
      const two = await turn();
      expect(one.body.model).toBe('sol');
      expect(one.body.choices[0].finish_reason).toBe('tool_calls');
      const idsOf = (body: Completion) => body.choices[0].message.tool_calls.map((call) => call.id);
      const sanitized = (requestId: string) => requestId.replace(/[^A-Za-z0-9_-]/g, '');
      expect(idsOf(one.body)).toEqual([`call_${sanitized(one.requestId)}_0`, 'call_b']);
      // Ids made from the request's own id: a later turn's calls never take an earlier turn's ids.
      expect(idsOf(two.body)).toEqual([`call_${sanitized(two.requestId)}_0`, 'call_b']);
      expect(idsOf(two.body)[0]).not.toBe(idsOf(one.body)[0]);
      await gateway.logs.waitForLine((line) => line.includes('"chat_completion"') && line.includes(one.requestId));
      const ofOne = gateway.logs.records().filter((record) => record.reqId === one.requestId);
      expect(ofOne).toContainEqual(expect.objectContaining({ event: 'chat_completion', status: 200, tool_calls: 2 }));
      expect(ofOne).toContainEqual(
        expect.objectContaining({ event: 'tool_call_empty', provider: 'provider_a', index: 1 }),
      );
    });

    it('with parallel_tool_calls false returns only the first call', async () => {
      fake.enqueue({
        frames: [
          created(),
          ...functionCallItem('call_first', 'read_file', '{"path":"a"}', { outputIndex: 1 }),
          ...functionCallItem('call_second', 'ls', '{}', { outputIndex: 2 }),
          completed(),
        ],
      });
      const { body } = await turn({ parallel_tool_calls: false });
      expect(body.choices[0].finish_reason).toBe('tool_calls');
      expect(body.choices[0].message.tool_calls).toEqual([
        { id: 'call_first', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } },
      ]);
    });
  });

  it('never logs prompt text, tool arguments, tool output, model output or the bearer', async () => {
    fake.enqueue({
      frames: [
        created(),
        textDelta('MARKER-REPLY-TEXT'),
        ...functionCallItem('call_2', 'read_file', '{"path":"MARKER-REPLY-ARGS"}'),
        completed(),
      ],
    });
    const response = await post({
      stream: true,
      messages: [
        { role: 'system', content: 'MARKER-SYSTEM' },
        { role: 'user', content: 'MARKER-PROMPT' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"MARKER-ARGS"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'MARKER-TOOL-OUTPUT' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
        },
      ],
    });
    const text = await response.text();
    expect(text).toContain('MARKER-REPLY-ARGS');
    expect(gateway.logs.lines.length).toBeGreaterThan(0);
    for (const marker of [
      'MARKER-SYSTEM',
      'MARKER-PROMPT',
      'MARKER-ARGS',
      'MARKER-TOOL-OUTPUT',
      'MARKER-REPLY-TEXT',
      'MARKER-REPLY-ARGS',
      secret,
    ]) {
      expect(gateway.logs.text).not.toContain(marker);
    }
  });

  it('records a client disconnect as status 499, closes the upstream and frees the slot for the next tool turn', async () => {
    const metric = () => metricValue(gateway, 'gateway_chat_api_requests_total', { status: '499' }, headers);
    const before = await metric();
    fake.enqueue({ frames: [created(), textDelta('partial')], holdOpen: true });
    const turn = {
      stream: true,
      messages: [{ role: 'user', content: 'same chat' }],
      tools: [{ type: 'function', function: { name: 'ls', parameters: { type: 'object' } } }],
    };
    const abort = new AbortController();
    const response = await postChatBody(gateway, turn, { headers, signal: abort.signal });
    expect(response.status).toBe(200);
    await response.body!.getReader().read();
    abort.abort();
    const [recorded] = await fake.waitForRequests(1);
    // The upstream sees the gateway close it; no bound of our own (a busy machine may take a
    // while), Jest's timeout catches a gateway that never does.
    await expect(recorded.closedByClient.then(() => 'closed')).resolves.toBe('closed');
    await eventually(async () => (await metric()) > before);
    // Same chat key, per-key cap 1: the next tool turn runs only if the slot was freed.
    fake.enqueue(textReply('next'));
    const next = await post({ ...turn, stream: false });
    expect(next.status).toBe(200);
  });
});
