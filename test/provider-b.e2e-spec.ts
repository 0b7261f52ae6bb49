import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { zodFunction } from 'openai/helpers/zod';
import { z } from 'zod';
import { FakeCodeAssist } from './support/fake-provider-b';
import {
  callFrame,
  errorFrame,
  finishFrame,
  PERIMETER_REFUSAL,
  providerBSettings,
  quotaFailure,
  textFrame,
} from './support/provider-b-fixtures';
import { accountState } from './support/accounts';
import { postChatBody, sseChunks } from './support/chat-sse';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { useFakeProviderB } from './support/provider-b-harness';
import { metricValue, tokensCounted } from './support/prometheus-text';
import { RETRY_NUDGES, TOOL_RESULTS_CLOSED } from '../src/providers/provider-b/provider-b.constants';
import { INVALID_TURN_RETRY } from '../src/providers/provider-b/provider-b.empty-turn';

interface SseResult {
  readonly status: number;
  readonly headers: Headers;
  readonly chunks: any[];
  readonly done: boolean;
}

/** POSTs a streaming chat request and parses every `data:` line until the end. */
async function streamChat(
  gateway: TestGateway,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<SseResult> {
  const response = await postChat(gateway, { ...body, stream: true }, headers);
  const { chunks, done } = sseChunks(await response.text());
  return { status: response.status, headers: response.headers, chunks, done };
}

function postChat(
  gateway: TestGateway,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return postChatBody(
    gateway,
    { model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'hi' }], ...body },
    { headers, signal },
  );
}

/** Sends `declarations` to the fake directly, as a request the gateway never builds: what the fake refuses. */
function declareToFake(baseUrl: string, declarations: Record<string, unknown>[]): Promise<Response> {
  return fetch(`${baseUrl}:streamGenerateContent?alt=sse`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      model: 'gemini-2.5-pro',
      project: 'p',
      request: {
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        tools: [{ functionDeclarations: declarations }],
      },
    }),
  });
}

const deltas = (chunks: any[]) => chunks.flatMap((chunk) => chunk.choices.map((choice: any) => choice.delta));

describe('provider_b over POST /v1/chat/completions', () => {
  let gateway: TestGateway;
  // Registered first so the gateway closes before the fake and the home go away.
  afterAll(() => gateway.close());
  const harness = useFakeProviderB({ homePrefix: 'provider-b-e2e-', home: 'suite' });
  let fake: FakeCodeAssist;
  let home: string;
  beforeAll(async () => {
    fake = harness.fake();
    home = harness.home();
    gateway = await startGateway({ ...providerBSettings(fake, home), GATEWAY_PROVIDERS: 'provider_b' });
  });

  it('discovers the project once and streams reasoning_content, content, finish and usage (docs/upstream/provider-b.md §13.1, §13.18, §13.21)', async () => {
    fake.enqueue('streamGenerateContent', {
      frames: [
        { json: textFrame('thinking…', { thought: true }) },
        { json: textFrame('Hello') },
        { json: finishFrame('STOP', { prompt: 10, candidates: 4, thoughts: 3 }) },
      ],
    });
    const result = await streamChat(gateway, { stream_options: { include_usage: true } });
    expect(result.status).toBe(200);
    expect(result.done).toBe(true);
    expect(deltas(result.chunks)).toEqual([
      { role: 'assistant' },
      { reasoning_content: 'thinking…' },
      { content: 'Hello' },
      {},
    ]);
    expect(result.chunks.at(-2).choices[0].finish_reason).toBe('stop');
    expect(result.chunks.at(-1).usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 7,
      total_tokens: 17,
      completion_tokens_details: { reasoning_tokens: 3 },
    });
    await streamChat(gateway, {});
    // First test of the file: the gateway discovers here, once.
    expect(fake.requests('loadCodeAssist')).toHaveLength(1);
    expect(fake.requests('streamGenerateContent').map((request) => request.body.project)).toEqual([
      'fake-project',
      'fake-project',
    ]);
  });

  it('counts the tool-use prompt in prompt_tokens, and total_tokens is prompt + completion, streamed or not, in the token counters too (docs/upstream/provider-b.md §9.3)', async () => {
    const usage = { prompt: 10, candidates: 4, thoughts: 3, toolUse: 6, cached: 2, total: 23 };
    const expected = {
      prompt_tokens: 16,
      completion_tokens: 7,
      total_tokens: 23,
      prompt_tokens_details: { cached_tokens: 2 },
      completion_tokens_details: { reasoning_tokens: 3 },
    };
    const counted = { prompt: 16, completion: 7, cached: 2, reasoning: 3 };
    fake.enqueue('streamGenerateContent', {
      frames: [{ json: textFrame('ok') }, { json: finishFrame('STOP', usage) }],
    });
    expect(
      await tokensCounted(gateway, 'provider_b', async () => {
        const result = await streamChat(gateway, { stream_options: { include_usage: true } });
        expect(result.chunks.at(-1).usage).toEqual(expected);
      }),
    ).toEqual(counted);
    const answer = { ...(finishFrame('STOP', usage) as { response: Record<string, any> }) };
    answer.response.candidates[0].content.parts = [{ text: 'ok' }];
    fake.enqueue('generateContent', { body: answer });
    expect(
      await tokensCounted(gateway, 'provider_b', async () => {
        const response = await postChat(gateway, {});
        expect(((await response.json()) as { usage: unknown }).usage).toEqual(expected);
      }),
    ).toEqual(counted);
  });

  it('keeps each usage count from the latest frame that has it when the counts are spread over frames, to the client and the token counters (docs/upstream/provider-b.md §9.3)', async () => {
    // Gemini's counts are running totals and a frame may carry only some: the prompt early, the
    // candidates at the end.
    const spread = (response: Record<string, any>) => {
      response.usageMetadata = { promptTokenCount: 10, cachedContentTokenCount: 2, totalTokenCount: 10 };
      return { response };
    };
    fake.enqueue('streamGenerateContent', {
      frames: [
        { json: spread({ candidates: [{ content: { role: 'model', parts: [{ text: 'a' }] } }] }) },
        { json: finishFrame('STOP', { candidates: 4, total: 14 }) },
      ],
    });
    expect(
      await tokensCounted(gateway, 'provider_b', async () => {
        const result = await streamChat(gateway, { stream_options: { include_usage: true } });
        expect(result.chunks.at(-1).usage).toEqual({
          prompt_tokens: 10,
          completion_tokens: 4,
          total_tokens: 14,
          prompt_tokens_details: { cached_tokens: 2 },
        });
      }),
    ).toEqual({ prompt: 10, completion: 4, cached: 2, reasoning: 0 });
  });

  it('counts the usage of the frames before an error payload in the token counters, though the answer fails (docs/chat.md "Non-streaming response")', async () => {
    const partial = {
      response: {
        candidates: [{ content: { role: 'model', parts: [{ text: 'partial' }] } }],
        usageMetadata: { promptTokenCount: 21, candidatesTokenCount: 4, totalTokenCount: 25 },
      },
    };
    fake.enqueue('streamGenerateContent', {
      frames: [{ json: partial }, { json: { error: { code: 500, message: 'internal', status: 'INTERNAL' } } }],
    });
    expect(
      await tokensCounted(gateway, 'provider_b', async () => {
        const result = await streamChat(gateway, { stream_options: { include_usage: true } });
        expect(result.chunks.at(-1).choices[0].delta.content).toMatch(/^\[error: /);
        expect(result.chunks.some((chunk) => chunk.usage)).toBe(false);
      }),
    ).toEqual({ prompt: 21, completion: 4, cached: 0, reasoning: 0 });
  });

  it('refuses a :generateContent answer larger than 16 MiB with 502 instead of buffering it', async () => {
    const huge = 'x'.repeat(17 * 1024 * 1024);
    fake.enqueue('generateContent', {
      body: {
        response: { candidates: [{ content: { role: 'model', parts: [{ text: huge }] }, finishReason: 'STOP' }] },
      },
    });
    const response = await postChat(gateway, {});
    expect(response.status).toBe(502);
    expect(((await response.json()) as any).error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    // Not retried: the same answer would be as large again.
    expect(fake.requests('generateContent')).toHaveLength(1);
  });

  it('lists the Gemini models the pinned CLI offers on Code Assist and sends their wire ids (docs/upstream/provider-b.md §11)', async () => {
    const models = ((await (await fetch(`${gateway.url}/v1/models`)).json()) as any).data.map((model: any) => model.id);
    for (const id of [
      'gemini-2.5-pro',
      'gemini-2.5-flash',
      'gemini-3-pro-preview',
      'gemini-3.1-pro-preview',
      'gemini-3-flash-preview',
      'gemini-3.5-flash',
      'gemini-3.1-flash-lite',
    ]) {
      expect(models).toContain(id);
    }
    // On Code Assist the CLI sends gemini-3.5-flash as gemini-3-flash (its backend model mapping),
    // naming the id it was asked for in its User-Agent; its Gemini 3 ids ask for thinkingLevel HIGH.
    for (const model of [
      'gemini-3.5-flash',
      'gemini-3.1-pro-preview',
      'gemini-2.5-pro',
      'provider_b/gemini-3-pro-preview',
    ])
      await streamChat(gateway, { model });
    const sent = fake.requests('streamGenerateContent');
    expect(sent.map((request) => request.body.model)).toEqual([
      'gemini-3-flash',
      'gemini-3.1-pro-preview',
      'gemini-2.5-pro',
      'gemini-3-pro-preview',
    ]);
    expect(
      sent.map((request) => /^GeminiCLI-tui\/[^/]+\/(\S+) /.exec(String(request.headers['user-agent']))?.[1]),
    ).toEqual(['gemini-3.5-flash', 'gemini-3.1-pro-preview', 'gemini-2.5-pro', 'gemini-3-pro-preview']);
    const high = { includeThoughts: true, thinkingLevel: 'HIGH' };
    expect(sent.map((request) => request.body.request.generationConfig.thinkingConfig)).toEqual([
      high,
      high,
      { includeThoughts: true },
      high,
    ]);
  });

  it('answers non-streaming with reasoning_content apart from content (docs/upstream/provider-b.md §13.18)', async () => {
    fake.enqueue('generateContent', {
      body: {
        response: {
          candidates: [
            {
              content: { role: 'model', parts: [{ text: 'hidden plan', thought: true }, { text: 'visible' }] },
              finishReason: 'STOP',
            },
          ],
        },
      },
    });
    const response = await postChat(gateway, {});
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.choices[0].message).toMatchObject({
      role: 'assistant',
      content: 'visible',
      reasoning_content: 'hidden plan',
    });
  });

  it('writes two id-less calls from two frames as tool frames 0 and 1 with distinct ids (docs/upstream/provider-b.md §13.16)', async () => {
    fake.enqueue('streamGenerateContent', {
      frames: [
        { json: callFrame('read_file', { path: 'a' }) },
        { json: callFrame('read_file', { path: 'b' }) },
        { json: finishFrame() },
      ],
    });
    const tools = [
      {
        type: 'function',
        function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      },
    ];
    const result = await streamChat(gateway, { tools });
    const calls = deltas(result.chunks).flatMap((delta) => delta.tool_calls ?? []);
    expect(calls.map((call: any) => call.index)).toEqual([0, 1]);
    expect(new Set(calls.map((call: any) => call.id)).size).toBe(2);
    expect(calls.map((call: any) => call.function.arguments)).toEqual(['{"path":"a"}', '{"path":"b"}']);
    expect(result.chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
  });

  it('ends a turn with a call whose args are not an object in the invalid-tool-call error, the valid call beside it not written', async () => {
    const tools = ['read_file', 'ls'].map((name) => ({
      type: 'function',
      function: { name, parameters: { type: 'object', properties: {} } },
    }));
    const good = { functionCall: { id: 'up_good', name: 'read_file', args: { path: 'a' } } };
    const bad = { functionCall: { id: 'up_bad', name: 'ls', args: [1, 2] } };
    const answer = (parts: object[], finishReason?: string) => ({
      response: { candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }] },
    });
    fake.enqueue('streamGenerateContent', {
      frames: [{ json: answer([good]) }, { json: answer([bad]) }, { json: finishFrame() }],
    });
    const result = await streamChat(gateway, { tools });
    expect(result.done).toBe(true);
    expect(deltas(result.chunks).some((delta) => delta.tool_calls)).toBe(false);
    expect(result.chunks.at(-1).choices[0]).toMatchObject({
      delta: { content: '[error: invalid upstream tool call]' },
      finish_reason: 'stop',
    });
    fake.enqueue('generateContent', { body: answer([good, bad], 'STOP') });
    const whole = await postChat(gateway, { tools });
    expect(whole.status).toBe(502);
    expect(((await whole.json()) as any).error).toMatchObject({
      code: 'invalid_tool_call',
      message: expect.stringContaining('the tool call at index 1 ("ls") has arguments that are JSON but not an object'),
    });
  });

  describe('a strict tool is held to its schema by the gateway (docs/chat.md "Strict tools")', () => {
    const strictReadFile = {
      type: 'function',
      function: {
        name: 'read_file',
        strict: true,
        parameters: {
          type: 'object',
          properties: { path: { type: 'string' } },
          required: ['path'],
          additionalProperties: false,
        },
      },
    };
    const answer = (parts: object[], finishReason?: string) => ({
      response: { candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }] },
    });
    const call = (args: object) => ({ functionCall: { id: 'up_1', name: 'read_file', args } });

    it('passes a call its schema accepts, streamed and not', async () => {
      fake.enqueue('streamGenerateContent', { frames: [{ json: answer([call({ path: 'a.ts' })], 'STOP') }] });
      const streamed = await streamChat(gateway, { tools: [strictReadFile] });
      const calls = deltas(streamed.chunks).flatMap((delta) => delta.tool_calls ?? []);
      expect(calls.map((frame: any) => frame.function.arguments)).toEqual(['{"path":"a.ts"}']);
      expect(streamed.chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
      fake.enqueue('generateContent', { body: answer([call({ path: 'a.ts' })], 'STOP') });
      const whole = await postChat(gateway, { tools: [strictReadFile] });
      expect(whole.status).toBe(200);
      expect(((await whole.json()) as any).choices[0].finish_reason).toBe('tool_calls');
    });

    it("ends a turn whose call the schema refuses in the invalid-tool-call error, never naming the call's arguments", async () => {
      const offSchemaLines = () =>
        gateway.logs.records('tool_call_invalid').filter((record) => record.reason === 'off_schema_arguments').length;
      const linesBefore = offSchemaLines();
      // Streamed after text: the text is out, so the answer is not asked again.
      const streamedBefore = fake.requests('streamGenerateContent').length;
      fake.enqueue('streamGenerateContent', {
        frames: [{ json: answer([{ text: 'Reading it. ' }]) }, { json: answer([call({ file: 'secret.ts' })], 'STOP') }],
      });
      const streamed = await streamChat(gateway, { tools: [strictReadFile] });
      expect(deltas(streamed.chunks).some((delta) => delta.tool_calls)).toBe(false);
      expect(streamed.chunks.at(-1).choices[0]).toMatchObject({
        delta: { content: '[error: invalid upstream tool call]' },
        finish_reason: 'stop',
      });
      expect(offSchemaLines()).toBe(linesBefore + 1);
      expect(fake.requests('streamGenerateContent').length - streamedBefore).toBe(1);
      // Not streamed: asked again twice, then the third answer's call fails it.
      const refusedAnswer = { body: answer([call({ path: 7 })], 'STOP') };
      fake.enqueue('generateContent', refusedAnswer, refusedAnswer, refusedAnswer);
      const sentBefore = fake.requests('generateContent').length;
      const whole = await postChat(gateway, { tools: [strictReadFile] });
      expect(whole.status).toBe(502);
      expect(fake.requests('generateContent').length - sentBefore).toBe(3);
      expect(gateway.logs.recordsOf(whole.headers, 'chat_strict_call_refused')).toEqual([
        expect.objectContaining({ attempt: 1 }),
        expect.objectContaining({ attempt: 2 }),
      ]);
      const error = ((await whole.json()) as any).error;
      expect(error).toMatchObject({
        code: 'invalid_tool_call',
        message: expect.stringContaining(
          `the tool call at index 0 ("read_file") has arguments that its strict tool's parameters schema refuses`,
        ),
      });
      expect(JSON.stringify(error)).not.toContain('secret');
      // The same call without strict is the model's to make.
      fake.enqueue('generateContent', { body: answer([call({ file: 'secret.ts' })], 'STOP') });
      const loose = await postChat(gateway, {
        tools: [{ ...strictReadFile, function: { ...strictReadFile.function, strict: false } }],
      });
      expect(loose.status).toBe(200);
    });

    it('asks a streamed answer that wrote nothing yet again when its call is refused: the client sees only the accepted call', async () => {
      fake.enqueue(
        'streamGenerateContent',
        { frames: [{ json: answer([call({ file: 'a.ts' })], 'STOP') }] },
        { frames: [{ json: answer([{ text: 'Reading a.ts. ' }, call({ path: 'a.ts' })], 'STOP') }] },
      );
      const sentBefore = fake.requests('streamGenerateContent').length;
      const streamed = await streamChat(gateway, { tools: [strictReadFile] });
      expect(deltas(streamed.chunks).flatMap((delta) => (delta.content ? [delta.content] : []))).toEqual([
        'Reading a.ts. ',
      ]);
      const calls = deltas(streamed.chunks).flatMap((delta) => delta.tool_calls ?? []);
      expect(calls.map((frame: any) => frame.function.arguments)).toEqual(['{"path":"a.ts"}']);
      expect(streamed.chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
      expect(fake.requests('streamGenerateContent').length - sentBefore).toBe(2);
      expect(gateway.logs.recordsOf(streamed.headers, 'chat_strict_call_refused')).toEqual([
        expect.objectContaining({ attempt: 1 }),
      ]);
    });

    it('asks a whole answer again when its call is refused, and returns the next answer whose call the schema accepts', async () => {
      fake.enqueue(
        'generateContent',
        { body: answer([call({ file: 'a.ts' })], 'STOP') },
        { body: answer([call({ path: 'a.ts' })], 'STOP') },
      );
      const sentBefore = fake.requests('generateContent').length;
      const whole = await postChat(gateway, { tools: [strictReadFile] });
      expect(whole.status).toBe(200);
      const message = ((await whole.json()) as any).choices[0].message;
      expect(message.tool_calls.map((frame: any) => frame.function)).toEqual([
        { name: 'read_file', arguments: '{"path":"a.ts"}' },
      ]);
      expect(fake.requests('generateContent').length - sentBefore).toBe(2);
      expect(gateway.logs.recordsOf(whole.headers, 'chat_strict_call_refused')).toEqual([
        expect.objectContaining({ attempt: 1 }),
      ]);
      expect(gateway.logs.recordsOf(whole.headers, 'tool_call_invalid')).toEqual([]);
    });

    it("holds the openai SDK's zodFunction tool to its schema: parse() reads a call it accepts, and one it refuses is the SDK's 502", async () => {
      const sdk = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'test', maxRetries: 0, timeout: 20_000 });
      const lookup = zodFunction({
        name: 'lookup',
        parameters: z.object({ city: z.string(), days: z.number().int() }),
      });
      const ask = () =>
        sdk.chat.completions.parse({
          model: 'gemini-2.5-pro',
          messages: [{ role: 'user', content: 'Weather in Oslo for two days?' }],
          tools: [lookup],
        });
      const lookupCall = (args: object) => ({ functionCall: { name: 'lookup', args } });
      fake.enqueue('generateContent', { body: answer([lookupCall({ city: 'Oslo', days: 2 })], 'STOP') });
      const completion = await ask();
      expect(completion.choices[0].message.tool_calls?.[0]).toMatchObject({
        function: { name: 'lookup', parsed_arguments: { city: 'Oslo', days: 2 } },
      });
      const offSchema = { body: answer([lookupCall({ city: 'Oslo', days: 'two' })], 'STOP') };
      fake.enqueue('generateContent', offSchema, offSchema, offSchema);
      const refused = await ask().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect(refused).toMatchObject({ status: 502, code: 'invalid_tool_call' });
    });

    it('refuses a strict tool whose schema cannot be compiled with a 400 naming the tool, before any upstream call', async () => {
      const before = fake.requests('generateContent').length;
      const broken = { type: 'function', function: { name: 'ls', strict: true, parameters: { type: 'nope' } } };
      const response = await postChat(gateway, { tools: [strictReadFile, broken] });
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).error).toMatchObject({
        code: 'invalid_request',
        param: 'tools',
        message: expect.stringMatching(
          /^tools\.1 \("ls"\) is strict, and the gateway checks its calls against its parameters schema, which is not a valid JSON Schema/,
        ),
      });
      expect(fake.requests('generateContent')).toHaveLength(before);
    });
  });

  describe('an empty functionCall (no name, no args) is dropped, as the contract drops empty tool deltas (docs/chat.md "Tool calls")', () => {
    const tools = [
      {
        type: 'function',
        function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      },
    ];
    const answer = (parts: object[], finishReason?: string) => ({
      response: { candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }] },
    });
    const beside = [{ functionCall: { name: 'read_file', args: { path: 'a' } } }, { functionCall: {} }];
    const readFile = { type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } };
    const emptyLines = () => gateway.logs.records().filter((record) => record.event === 'tool_call_empty');

    it('writes the valid call beside it as the only tool frame, index 0, and finishes tool_calls', async () => {
      const before = emptyLines().length;
      fake.enqueue('streamGenerateContent', { frames: [{ json: answer(beside) }, { json: finishFrame() }] });
      const result = await streamChat(gateway, { tools });
      expect(result.status).toBe(200);
      expect(result.done).toBe(true);
      expect(JSON.stringify(result.chunks)).not.toContain('[error:');
      const calls = deltas(result.chunks).flatMap((delta) => delta.tool_calls ?? []);
      expect(calls).toEqual([{ index: 0, id: expect.any(String), ...readFile }]);
      expect(result.chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
      expect(emptyLines().slice(before)).toEqual([
        expect.objectContaining({ level: 30, event: 'tool_call_empty', provider: 'provider_b', index: 1 }),
      ]);
    });

    it('answers non-streaming with the valid call alone and finish tool_calls, not a 502', async () => {
      fake.enqueue('generateContent', { body: answer(beside, 'STOP') });
      const response = await postChat(gateway, { tools });
      expect(response.status).toBe(200);
      const choice = ((await response.json()) as any).choices[0];
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      expect(choice.message.tool_calls).toEqual([{ id: expect.any(String), ...readFile }]);
    });

    it('answers a turn of only empty calls as an empty message that stops, streamed and not', async () => {
      fake.enqueue('streamGenerateContent', {
        frames: [{ json: answer([{ functionCall: {} }]) }, { json: finishFrame() }],
      });
      const result = await streamChat(gateway, { tools });
      expect(result.done).toBe(true);
      expect(deltas(result.chunks)).toEqual([{ role: 'assistant' }, {}]);
      expect(result.chunks.at(-1).choices[0].finish_reason).toBe('stop');
      fake.enqueue('generateContent', { body: answer([{ functionCall: {} }], 'STOP') });
      const response = await postChat(gateway, { tools });
      expect(response.status).toBe(200);
      const choice = ((await response.json()) as any).choices[0];
      expect(choice).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: '' } });
      expect(choice.message).not.toHaveProperty('tool_calls');
    });
  });

  it('returns a custom tool call as a function call whose arguments are the raw patch (docs/upstream/provider-b.md §13.14)', async () => {
    const patch = '*** Begin Patch\n*** Add File: x.txt\n+hi\n*** End Patch';
    fake.enqueue('streamGenerateContent', {
      frames: [{ json: callFrame('apply_patch', { input: patch }) }, { json: finishFrame() }],
    });
    const result = await streamChat(gateway, {
      tools: [{ type: 'custom', custom: { name: 'apply_patch', description: 'patch' } }],
    });
    const declaration = fake.requests('streamGenerateContent')[0].body.request.tools[0].functionDeclarations[0];
    expect(declaration.parametersJsonSchema).toEqual({
      type: 'object',
      properties: { input: { type: 'string', description: 'Raw text input for this tool.' } },
      required: ['input'],
    });
    const calls = deltas(result.chunks).flatMap((delta) => delta.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: expect.any(String), type: 'function', function: { name: 'apply_patch', arguments: patch } },
    ]);
  });

  it("puts a custom tool's grammar into its declaration's description, so the model learns the input syntax", async () => {
    const grammar = 'start: "add " NUMBER\n%import common.NUMBER';
    const tools = [
      {
        type: 'custom',
        custom: {
          name: 'calc',
          description: 'Adds a number.',
          format: { type: 'grammar', grammar: { definition: grammar, syntax: 'lark' } },
        },
      },
      {
        type: 'custom',
        custom: { name: 'regex_tool', format: { type: 'grammar', grammar: { definition: '^\\d+$', syntax: 'regex' } } },
      },
      { type: 'custom', custom: { name: 'notes', description: 'Free text.', format: { type: 'text' } } },
    ];
    expect((await streamChat(gateway, { tools })).status).toBe(200);
    const declarations = fake.requests('streamGenerateContent')[0].body.request.tools[0].functionDeclarations;
    expect(declarations.map((declaration: any) => declaration.description)).toEqual([
      `Adds a number.\n\nThe input must match this lark grammar:\n${grammar}`,
      'The input must match this regex grammar:\n^\\d+$',
      'Free text.',
    ]);
  });

  it('declares real agent schemas (zod discriminated union, const, nullable type arrays) as parametersJsonSchema, which the backend accepts (docs/upstream/provider-b.md §7.2)', async () => {
    // Generated by zod 4.6.7 `z.toJSONSchema` from a typical agent edit tool (see the fixture name).
    const schema = JSON.parse(
      fs.readFileSync(
        path.join(__dirname, '..', 'src', 'providers', 'provider-b', '__fixtures__', 'zod-4.6.7-edit-tool.schema.json'),
        'utf8',
      ),
    );
    const tools = [
      { type: 'function', function: { name: 'edit_files', description: 'Edit files', parameters: schema } },
    ];
    const result = await streamChat(gateway, { tools });
    expect(result.status).toBe(200);
    expect(deltas(result.chunks)).toContainEqual({ content: 'ok' });
    const [declaration] = fake.requests('streamGenerateContent')[0].body.request.tools[0].functionDeclarations;
    const { $schema: _dropped, ...withoutMeta } = schema;
    expect(declaration).toEqual({ name: 'edit_files', description: 'Edit files', parametersJsonSchema: withoutMeta });
    expect(declaration).not.toHaveProperty('parameters');

    // The fake refuses the same schema as `parameters`, word for word like the real backend.
    const refused = await declareToFake(fake.baseUrl, [{ name: 'edit_files', parameters: withoutMeta }]);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).error.message).toMatch(
      /^Invalid JSON payload received\. Unknown name "oneOf" at .*: Cannot find field\.$/,
    );
  });

  it('inlines the $refs of a pydantic Dict[str, Model] and tuple (additionalProperties, prefixItems), so the backend gets every shape and no dangling reference (docs/upstream/provider-b.md §7.2, §13.13)', async () => {
    // Generated by pydantic 2.13.4 `model_json_schema()` (as FastMCP declares an MCP tool's arguments)
    // for `by_file: Dict[str, Edit]` and `pair: Tuple[Mode, int]`, Edit a model and Mode an enum.
    const schema = JSON.parse(
      fs.readFileSync(
        path.join(
          __dirname,
          '..',
          'src',
          'providers',
          'provider-b',
          '__fixtures__',
          'pydantic-2.13.4-dict-model.schema.json',
        ),
        'utf8',
      ),
    );
    const { Edit: edit, Mode: mode } = schema.$defs;
    const tools = [
      { type: 'function', function: { name: 'edit_files', description: 'Edit files', parameters: schema } },
    ];
    const result = await streamChat(gateway, { tools });
    expect(result.status).toBe(200);
    expect(deltas(result.chunks)).toContainEqual({ content: 'ok' });
    const [declaration] = fake.requests('streamGenerateContent')[0].body.request.tools[0].functionDeclarations;
    const sent = declaration.parametersJsonSchema;
    expect(sent.properties.by_file).toEqual({ ...schema.properties.by_file, additionalProperties: edit });
    expect(sent.properties.pair.prefixItems).toEqual([mode, { type: 'integer' }]);
    expect(sent).not.toHaveProperty('$defs');
    expect(JSON.stringify(sent)).not.toContain('$ref');

    // The fake refuses the references without their definitions, as the real backend does, and
    // accepts them with the definitions.
    const { $defs: _definitions, ...withoutDefinitions } = schema;
    const refused = await declareToFake(fake.baseUrl, [
      { name: 'edit_files', parametersJsonSchema: withoutDefinitions },
    ]);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).error.message).toBe(
      'reference to undefined schema at properties.by_file.additionalProperties',
    );
    const accepted = await declareToFake(fake.baseUrl, [{ name: 'edit_files', parametersJsonSchema: schema }]);
    expect(accepted.status).toBe(200);
    await accepted.text();
  });

  describe('tool call/result pairing repaired before every request (docs/upstream/provider-b.md §6)', () => {
    const tools = [
      {
        type: 'function',
        function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      },
    ];
    const call = (id: string, file: string) => ({
      id,
      type: 'function',
      function: { name: 'read_file', arguments: JSON.stringify({ path: file }) },
    });

    it('answers the cancelled one of two parallel calls, so the backend accepts the history', async () => {
      // What an agent sends after the user stopped the second of two parallel reads.
      const messages = [
        { role: 'user', content: 'read a and b' },
        { role: 'assistant', content: null, tool_calls: [call('call_a', 'a'), call('call_b', 'b')] },
        { role: 'tool', tool_call_id: 'call_a', content: 'file a' },
        { role: 'user', content: 'never mind b' },
      ];
      const result = await streamChat(gateway, { tools, messages });
      expect(result.status).toBe(200);
      const contents = fake.requests('streamGenerateContent')[0].body.request.contents;
      expect(contents.map((content: any) => content.role)).toEqual(['user', 'model', 'user']);
      expect(contents[2].parts).toEqual([
        { functionResponse: { id: 'call_a', name: 'read_file', response: { output: 'file a' } } },
        {
          functionResponse: {
            id: 'call_b',
            name: 'read_file',
            response: { output: 'The tool call was cancelled before it returned a result.' },
          },
        },
        { text: 'never mind b' },
      ]);
    });

    it('drops tool results whose call was trimmed from the front of the history, logging only counts', async () => {
      const messages = [
        { role: 'tool', tool_call_id: 'call_gone', content: 'SECRET-TOOL-OUTPUT' },
        { role: 'user', content: 'continue' },
        { role: 'assistant', content: 'Reading.' },
        { role: 'assistant', content: null, tool_calls: [call('call_c', 'c')] },
        { role: 'tool', tool_call_id: 'call_c', content: 'file c' },
        { role: 'tool', tool_call_id: 'call_c', content: 'file c again' },
      ];
      const result = await streamChat(gateway, { tools, messages });
      expect(result.status).toBe(200);
      const contents = fake.requests('streamGenerateContent')[0].body.request.contents;
      expect(contents.map((content: any) => content.role)).toEqual(['user', 'model', 'user']);
      expect(contents[1].parts.map((part: any) => Object.keys(part)[0])).toEqual(['text', 'functionCall']);
      expect(contents[2].parts).toEqual([
        { functionResponse: { id: 'call_c', name: 'read_file', response: { output: 'file c' } } },
      ]);
      expect(JSON.stringify(contents)).not.toContain('SECRET-TOOL-OUTPUT');
    });

    const response = (id: string, name: string, output: string) => ({
      functionResponse: { id, name, response: { output } },
    });
    const callPart = (id: string, name: string, file: string) =>
      expect.objectContaining({ functionCall: { id, name, args: { path: file } } });

    it('moves the results sent after two call turns each right after its own call, never answering one as cancelled', async () => {
      const messages = [
        { role: 'user', content: 'read a, then b' },
        { role: 'assistant', content: null, tool_calls: [call('call_a', 'a')] },
        { role: 'assistant', content: null, tool_calls: [call('call_b', 'b')] },
        { role: 'tool', tool_call_id: 'call_a', content: 'R-A' },
        { role: 'tool', tool_call_id: 'call_b', content: 'R-B' },
      ];
      const result = await streamChat(gateway, { tools, messages });
      expect(result.status).toBe(200);
      const contents = fake.requests('streamGenerateContent')[0].body.request.contents;
      expect(contents).toEqual([
        { role: 'user', parts: [{ text: 'read a, then b' }] },
        { role: 'model', parts: [callPart('call_a', 'read_file', 'a')] },
        { role: 'user', parts: [response('call_a', 'read_file', 'R-A')] },
        { role: 'model', parts: [callPart('call_b', 'read_file', 'b')] },
        { role: 'user', parts: [response('call_b', 'read_file', 'R-B')] },
      ]);
    });

    it('takes a result sent after a user message as its call’s answer, placed before that message', async () => {
      const messages = [
        { role: 'user', content: 'read a and b' },
        { role: 'assistant', content: null, tool_calls: [call('call_a', 'a'), call('call_b', 'b')] },
        { role: 'tool', tool_call_id: 'call_a', content: 'R-A' },
        { role: 'user', content: 'b is slow' },
        { role: 'tool', tool_call_id: 'call_b', content: 'R-B' },
      ];
      const result = await streamChat(gateway, { tools, messages });
      expect(result.status).toBe(200);
      const contents = fake.requests('streamGenerateContent')[0].body.request.contents;
      expect(contents.map((content: any) => content.role)).toEqual(['user', 'model', 'user']);
      expect(contents[2].parts).toEqual([
        response('call_a', 'read_file', 'R-A'),
        response('call_b', 'read_file', 'R-B'),
        { text: 'b is slow' },
      ]);
    });

    it('names each result after the call it answers when two turns reuse one call id', async () => {
      const listDir = { type: 'function', function: { name: 'list_dir', parameters: { type: 'object' } } };
      const messages = [
        { role: 'user', content: 'read a, then list' },
        { role: 'assistant', content: null, tool_calls: [call('call_0', 'a')] },
        { role: 'tool', tool_call_id: 'call_0', content: 'R-A' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'list_dir', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_0', content: 'R-B' },
      ];
      const result = await streamChat(gateway, { tools: [...tools, listDir], messages });
      expect(result.status).toBe(200);
      const contents = fake.requests('streamGenerateContent')[0].body.request.contents;
      expect(contents.slice(1)).toEqual([
        { role: 'model', parts: [callPart('call_0', 'read_file', 'a')] },
        { role: 'user', parts: [response('call_0', 'read_file', 'R-A')] },
        {
          role: 'model',
          parts: [expect.objectContaining({ functionCall: { id: 'call_0', name: 'list_dir', args: {} } })],
        },
        { role: 'user', parts: [response('call_0', 'list_dir', 'R-B')] },
      ]);
    });
  });

  describe('tool names Gemini refuses (docs/upstream/provider-b.md §7.4, §13.30)', () => {
    // What agent clients send: MCP names with dots, slashes and spaces, a leading digit, over 64
    // characters, two names that read the same once their refused characters are replaced, and a
    // name with white space around it (a tool of its own: names are taken exactly as sent).
    const names = [
      'read.file',
      `mcp__${'x'.repeat(70)}__tool`,
      'github/create issue',
      'github create/issue',
      '1password_lookup',
      ' read.file ',
    ];
    const tools = [
      ...names.map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } })),
      { type: 'custom', custom: { name: 'apply patch' } },
    ];
    const clientNames = [...names, 'apply patch'];
    const history = clientNames.map((name, index) => ({
      id: `call_${index}`,
      type: 'function',
      function: { name, arguments: '{}' },
    }));
    const messages = [
      { role: 'user', content: 'use every tool' },
      { role: 'assistant', content: null, tool_calls: history },
      ...history.map((call) => ({ role: 'tool', tool_call_id: call.id, content: `result of ${call.id}` })),
    ];
    const declaredNames = (request: { body: any }): string[] =>
      request.body.request.tools[0].functionDeclarations.map((declaration: any) => declaration.name);

    it('sends every name in a form the backend accepts, the same in declarations, tool_choice and history', async () => {
      const result = await streamChat(gateway, {
        tools,
        messages,
        tool_choice: { type: 'function', function: { name: 'github/create issue' } },
      });
      // The fake refuses an invalid function name anywhere in the body with the backend's 400.
      expect(result.status).toBe(200);
      const [sent] = fake.requests('streamGenerateContent');
      const declared = declaredNames(sent);
      expect(declared[0]).toBe('read.file');
      expect(new Set(declared).size).toBe(clientNames.length);
      const { contents, toolConfig } = sent.body.request;
      expect(contents[1].parts.map((part: any) => part.functionCall.name)).toEqual(declared);
      expect(contents[2].parts.map((part: any) => part.functionResponse.name)).toEqual(declared);
      expect(toolConfig.functionCallingConfig.allowedFunctionNames).toEqual([declared[2]]);

      // The fake refuses the client's own name as the real backend does.
      const refused = await declareToFake(fake.baseUrl, [{ name: 'read_file' }, { name: '1password_lookup' }]);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as any).error).toEqual({
        code: 400,
        message: expect.stringMatching(
          /^The GenerateContentRequest proto is invalid:\n {2}\* tools\[0\]\.function_declarations\[1\]\.name: \[FIELD_INVALID\] Invalid function name\./,
        ),
        status: 'INVALID_ARGUMENT',
      });
    });

    it('refuses two tools of one name with a 400 naming both, before the agent queue and any upstream call', async () => {
      const tool = (name: string, type = 'function') => ({ type, [type]: { name } });
      const response = await postChat(gateway, { tools: [tool('read_file'), tool('ls'), tool('read_file', 'custom')] });
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).error).toEqual({
        message:
          'tools.2.custom.name "read_file" repeats tools.0.function.name: a call names its tool by name alone, so tool names must be unique, function and custom tools alike: rename or remove one of them',
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'tools',
      });
      expect(fake.requests('streamGenerateContent')).toHaveLength(0);
      expect(fake.requests('generateContent')).toHaveLength(0);

      // What the gateway spares the client: the backend's 400 for the request as it was.
      const refused = await declareToFake(fake.baseUrl, [{ name: 'read_file' }, { name: 'ls' }, { name: 'read_file' }]);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as any).error).toEqual({
        code: 400,
        message: 'Duplicate function declaration found: read_file',
        status: 'INVALID_ARGUMENT',
      });
    });

    it("returns the model's calls under the client's exact names, streamed and not", async () => {
      await streamChat(gateway, { tools, messages });
      const declared = declaredNames(fake.requests('streamGenerateContent')[0]);
      // The model calls the tools by the names it was given (the last one is the custom tool).
      const args = (index: number) => (index === declared.length - 1 ? { input: 'raw patch' } : {});
      fake.enqueue('streamGenerateContent', {
        frames: [
          ...declared.map((name, index) => ({ json: callFrame(name, args(index), { id: `up_${index}` }) })),
          { json: finishFrame() },
        ],
      });
      const parts = declared.map((name, index) => ({ functionCall: { id: `up_${index}`, name, args: args(index) } }));
      fake.enqueue('generateContent', {
        body: { response: { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP' }] } },
      });

      const streamed = await streamChat(gateway, { tools, messages });
      expect(streamed.status).toBe(200);
      const streamedCalls = deltas(streamed.chunks).flatMap((delta) => delta.tool_calls ?? []);
      expect(streamedCalls.map((call: any) => call.function.name)).toEqual(clientNames);
      expect(streamedCalls.at(-1).function.arguments).toBe('raw patch');

      const response = await postChat(gateway, { tools, messages });
      expect(response.status).toBe(200);
      const message = ((await response.json()) as any).choices[0].message;
      expect(message.tool_calls.map((call: any) => call.function.name)).toEqual(clientNames);
      // The same client name gets the same upstream name on every turn (the prompt cache holds).
      expect(declaredNames(fake.requests('generateContent')[0])).toEqual(declared);
    });
  });

  it('leaves empty texts out of the user and system messages, which Code Assist refuses as an empty text parameter (docs/upstream/provider-b.md §6)', async () => {
    const result = await streamChat(gateway, {
      messages: [
        { role: 'system', content: '' },
        { role: 'developer', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: 'hello' },
          ],
        },
      ],
    });
    expect(result.status).toBe(200);
    const request = fake.requests('streamGenerateContent')[0].body.request;
    expect(request.systemInstruction.parts).toEqual([{ text: 'Be brief.' }]);
    expect(request.contents).toEqual([{ role: 'user', parts: [{ text: 'hello' }] }]);
  });

  it('leaves out an assistant message with neither text nor calls, which Code Assist would refuse as a content without parts (docs/upstream/provider-b.md §6)', async () => {
    const result = await streamChat(gateway, {
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'second' },
      ],
    });
    expect(result.status).toBe(200);
    expect(fake.requests('streamGenerateContent')[0].body.request.contents).toEqual([
      { role: 'user', parts: [{ text: 'first' }, { text: 'second' }] },
    ]);
  });

  it('sends a request of system text alone as the user turn, since Gemini needs one (docs/upstream/provider-b.md §6)', async () => {
    const result = await streamChat(gateway, {
      messages: [
        { role: 'system', content: 'Say hi.' },
        { role: 'user', content: '' },
      ],
    });
    expect(result.status).toBe(200);
    const request = fake.requests('streamGenerateContent')[0].body.request;
    expect(request.systemInstruction).toBeUndefined();
    expect(request.contents).toEqual([{ role: 'user', parts: [{ text: 'Say hi.' }] }]);
    // With no text at all, Code Assist refuses the empty turn: the client's 400 says the upstream did.
    const empty = await postChat(gateway, { messages: [{ role: 'user', content: '' }] });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: { code: string } }).error.code).toBe('upstream_rejected_request');
  });

  describe('image parts (docs/upstream/provider-b.md §6)', () => {
    // A 1×1 PNG, as an agent pastes a screenshot.
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';

    it('sends a data:image URL as inlineData in place, between the texts', async () => {
      const messages = [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png}`, detail: 'high' } },
            { type: 'text', text: 'short answer' },
          ],
        },
      ];
      const result = await streamChat(gateway, { messages });
      expect(result.status).toBe(200);
      expect(fake.requests('streamGenerateContent')[0].body.request.contents).toEqual([
        {
          role: 'user',
          parts: [
            { text: 'what is this?' },
            { inlineData: { mimeType: 'image/png', data: png } },
            { text: 'short answer' },
          ],
        },
      ]);
    });

    it('sends a HEIC image, and an image/jpg one as image/jpeg', async () => {
      const result = await streamChat(gateway, {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'data:image/heic;base64,AAAAGGZ0eXBoZWlj' } },
              { type: 'image_url', image_url: { url: 'data:image/jpg;base64,/9j/4AAQ' } },
            ],
          },
        ],
      });
      expect(result.status).toBe(200);
      expect(fake.requests('streamGenerateContent')[0].body.request.contents[0].parts).toEqual([
        { inlineData: { mimeType: 'image/heic', data: 'AAAAGGZ0eXBoZWlj' } },
        { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } },
      ]);
    });

    it('sends a line-wrapped base64 image without its line breaks', async () => {
      const wrapped = `data:image/png;base64,${png.slice(0, 40)}\n${png.slice(40, 76)}\r\n ${png.slice(76)}`;
      const result = await streamChat(gateway, {
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: wrapped } }] }],
      });
      expect(result.status).toBe(200);
      expect(fake.requests('streamGenerateContent')[0].body.request.contents).toEqual([
        { role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: png } }] },
      ]);
    });

    it('sends the screenshots of old tool results, which context management replaced, as its marker text; one in the newest result is refused (docs/design/behaviours.md §5.3)', async () => {
      // 61 screenshot results make 123 messages, over the 120 that trigger compaction; results
      // 0–46 lie before the boundary (96). Code Assist takes no image in a functionResponse.
      const tools = [{ type: 'function', function: { name: 'screenshot', parameters: { type: 'object' } } }];
      const shot = { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } };
      const messages: Record<string, unknown>[] = [{ role: 'user', content: 'book the flight' }];
      for (let index = 0; index < 61; index++) {
        messages.push({
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `call_${index}`, type: 'function', function: { name: 'screenshot', arguments: '{}' } }],
        });
        messages.push({
          role: 'tool',
          tool_call_id: `call_${index}`,
          content: index < 40 ? [{ type: 'text', text: `shot ${index}` }, shot] : `page ${index}`,
        });
      }
      const result = await streamChat(gateway, { tools, messages });
      expect(result.status).toBe(200);
      const responses = fake
        .requests('streamGenerateContent')[0]
        .body.request.contents.flatMap((content: any) => content.parts)
        .filter((part: any) => part.functionResponse)
        .map((part: any) => part.functionResponse.response.output);
      expect(responses).toHaveLength(61);
      expect(responses[0]).toBe('shot 0\n[gateway: image of older tool output omitted]');
      expect(responses[39]).toBe('shot 39\n[gateway: image of older tool output omitted]');
      expect(responses[40]).toBe('page 40');

      messages[122] = { ...messages[122], content: [{ type: 'text', text: 'page 60' }, shot] };
      const refused = await postChat(gateway, { tools, messages });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as any).error.message).toMatch(
        /^messages\[122\]\.content\[1\]: an image in a tool message is not supported by provider_b; move the image to a user message$/,
      );
    });

    it.each([
      [
        'an https image URL',
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.test/cat.png' } }] },
        /messages\[0\]\.content\[0\]: an image that is not a base64 data:image URL is not supported by provider_b/,
      ],
      [
        'a GIF, which Gemini does not take',
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lGODlh' } }] },
        /^messages\[0\]\.content\[0\]: an image of type image\/gif is not supported by provider_b; send it as image\/png, image\/jpeg, image\/webp, image\/heic or image\/heif$/,
      ],
      [
        'an image whose data is not base64',
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,A=A=' } }] },
        /^messages\[0\]\.content\[0\]: an image whose data is not base64 is not supported by provider_b; send the whole image base64-encoded/,
      ],
      [
        'audio',
        { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
        /^messages\[0\]\.content\[0\]: part type "input_audio" is not supported by provider_b; send its transcript as a text part \(no family takes audio\)$/,
      ],
      [
        'an image in an assistant message',
        { role: 'assistant', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] },
        /^messages\[0\]\.content\[0\]: an image in an assistant message is not supported by provider_b; move the image to a user message$/,
      ],
    ])('refuses %s with a 400 naming the part, without any upstream call', async (_label, message, expected) => {
      const response = await postChat(gateway, { messages: [message, { role: 'user', content: 'go' }] });
      expect(response.status).toBe(400);
      const body = (await response.json()) as any;
      expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'messages' });
      expect(body.error.message).toMatch(expected);
      expect(fake.requests('streamGenerateContent')).toHaveLength(0);
      expect(fake.requests('generateContent')).toHaveLength(0);
    });
  });

  it('refuses tool schemas whose $refs expand past the inlining bound with a 400 naming tools, before the queue and any upstream call', async () => {
    // Eight definitions, each referencing the next eight times: about 2 KB that would inline to 8^8 copies.
    const defs: Record<string, unknown> = {};
    for (let level = 0; level < 8; level++) {
      const properties: Record<string, unknown> = {};
      for (let field = 0; field < 8; field++)
        properties[`f${field}`] = level < 7 ? { $ref: `#/$defs/d${level + 1}` } : { type: 'string' };
      defs[`d${level}`] = { type: 'object', properties };
    }
    const parameters = { type: 'object', properties: { root: { $ref: '#/$defs/d0' } }, $defs: defs };
    // Every turn the queue lets through is counted, bypassed or not: a refusal before it is not.
    const admitted = () =>
      metricValue(gateway, 'gateway_chat_api_queue_wait_seconds_count', { provider: 'provider_b' });
    const before = await admitted();
    const response = await postChat(gateway, { tools: [{ type: 'function', function: { name: 'bomb', parameters } }] });
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'tools' });
    expect(body.error.message).toContain('fewer shared definitions');
    expect(await admitted()).toBe(before);
    expect(fake.requests('streamGenerateContent')).toHaveLength(0);
    expect(fake.requests('generateContent')).toHaveLength(0);
  });

  it('round-trips a thought signature through a continuation even without extra_content (docs/upstream/provider-b.md §13.19)', async () => {
    fake.enqueue('streamGenerateContent', {
      frames: [{ json: callFrame('read_file', { path: 'a' }, { signature: 'sig-1' }) }, { json: finishFrame() }],
    });
    const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
    const first = await streamChat(gateway, { tools });
    const [call] = deltas(first.chunks).flatMap((delta) => delta.tool_calls ?? []);
    expect(call.extra_content).toEqual({ google: { thought_signature: 'sig-1' } });

    const withoutSignature = { id: call.id, type: 'function', function: call.function };
    await streamChat(gateway, {
      tools,
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            withoutSignature,
            { id: 'call_unknown', type: 'function', function: { name: 'read_file', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: call.id, content: 'file a' },
        { role: 'tool', tool_call_id: 'call_unknown', content: 'file b' },
      ],
    });
    const model = fake.requests('streamGenerateContent')[1].body.request.contents[1];
    expect(model.parts.map((part: any) => part.thoughtSignature)).toEqual(['sig-1', undefined]);
    const results = fake.requests('streamGenerateContent')[1].body.request.contents[2];
    expect(results.parts.map((part: any) => part.functionResponse.name)).toEqual(['read_file', 'read_file']);
  });

  it('keeps session_id per chat and sends a fresh user_prompt_id per request (docs/upstream/provider-b.md §13.26)', async () => {
    await streamChat(gateway, {}, { 'X-Conversation-Id': 'chat-one' });
    await streamChat(gateway, {}, { 'X-Conversation-Id': 'chat-one' });
    await streamChat(gateway, {}, { 'X-Conversation-Id': 'chat-two' });
    const bodies = fake.requests('streamGenerateContent').map((request) => request.body);
    expect(bodies[0].request.session_id).toBe(bodies[1].request.session_id);
    expect(bodies[2].request.session_id).not.toBe(bodies[0].request.session_id);
    expect(new Set(bodies.map((body) => body.user_prompt_id)).size).toBe(3);
  });

  it.each([
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
  ])('maps finishReason %s to finish_reason %s (docs/upstream/provider-b.md §13.20)', async (reason, expected) => {
    fake.enqueue('streamGenerateContent', { frames: [{ json: textFrame('x') }, { json: finishFrame(reason) }] });
    const result = await streamChat(gateway, {});
    expect(result.chunks.at(-1).choices[0].finish_reason).toBe(expected);
  });

  it('ends a MALFORMED_FUNCTION_CALL turn with the invalid-tool-call error chunk (docs/upstream/provider-b.md §13.20)', async () => {
    fake.enqueue('streamGenerateContent', {
      frames: [{ json: textFrame('x') }, { json: finishFrame('MALFORMED_FUNCTION_CALL') }],
    });
    const result = await streamChat(gateway, {});
    expect(result.done).toBe(true);
    expect(result.chunks.at(-1).choices[0]).toMatchObject({
      delta: { content: '[error: invalid upstream tool call]' },
      finish_reason: 'stop',
    });
  });

  it('runs the calls of a turn that ends in MALFORMED_FUNCTION_CALL after a valid call, as the Gemini CLI does (docs/upstream/provider-b.md §9.3)', async () => {
    const tools = [
      {
        type: 'function',
        function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      },
    ];
    fake.enqueue('streamGenerateContent', {
      frames: [{ json: callFrame('read_file', { path: 'a' }) }, { json: finishFrame('MALFORMED_FUNCTION_CALL') }],
    });
    const result = await streamChat(gateway, { tools });
    expect(result.done).toBe(true);
    const calls = deltas(result.chunks).flatMap((delta) => delta.tool_calls ?? []);
    expect(calls.map((call: any) => call.function.arguments)).toEqual(['{"path":"a"}']);
    expect(JSON.stringify(result.chunks)).not.toContain('[error:');
    expect(result.chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
    expect(fake.requests('streamGenerateContent')).toHaveLength(1);
  });

  describe('turns that end with nothing to show are retried as the Gemini CLI retries them (docs/upstream/provider-b.md §9.3)', () => {
    // The CLI's 1 s, 2 s, 4 s, shortened here only: the gateway runs in this process.
    let delay: jest.SpyInstance;
    beforeAll(() => (delay = jest.spyOn(INVALID_TURN_RETRY, 'delayMs').mockImplementation((retry) => 10 * 2 ** retry)));
    afterAll(() => delay.mockRestore());

    it('retries a thoughts-only turn and never sends its reasoning', async () => {
      fake.enqueue(
        'streamGenerateContent',
        { frames: [{ json: textFrame('first plan', { thought: true }) }, { json: finishFrame('STOP') }] },
        {
          frames: [
            { json: textFrame('second plan', { thought: true }) },
            { json: textFrame('answer') },
            { json: finishFrame('STOP') },
          ],
        },
      );
      const result = await streamChat(gateway, {});
      expect(result.status).toBe(200);
      expect(deltas(result.chunks)).toEqual([
        { role: 'assistant' },
        { reasoning_content: 'second plan' },
        { content: 'answer' },
        {},
      ]);
      expect(fake.requests('streamGenerateContent')).toHaveLength(2);
    });

    it("tells the client the delivered turn's usage, and the token counters count the turn sent again too", async () => {
      fake.enqueue(
        'streamGenerateContent',
        {
          frames: [
            { json: textFrame('plan', { thought: true }) },
            { json: finishFrame('STOP', { prompt: 100, candidates: 0, thoughts: 50 }) },
          ],
        },
        { frames: [{ json: textFrame('done') }, { json: finishFrame('STOP', { prompt: 120, candidates: 5 }) }] },
      );
      expect(
        await tokensCounted(gateway, 'provider_b', async () => {
          const result = await streamChat(gateway, { stream_options: { include_usage: true } });
          expect(result.chunks.at(-1).usage).toEqual({ prompt_tokens: 120, completion_tokens: 5, total_tokens: 125 });
        }),
      ).toEqual({ prompt: 220, completion: 55, cached: 0, reasoning: 50 });
    });

    it.each([
      ['an empty STOP', [{ json: finishFrame('STOP') }]],
      ['no finishReason', [{ json: textFrame('', {}) }]],
      ['MALFORMED_FUNCTION_CALL', [{ json: finishFrame('MALFORMED_FUNCTION_CALL') }]],
      ['an empty MAX_TOKENS', [{ json: finishFrame('MAX_TOKENS') }]],
    ])('retries %s and delivers the next turn', async (_label, frames) => {
      fake.enqueue(
        'streamGenerateContent',
        { frames },
        { frames: [{ json: textFrame('fine') }, { json: finishFrame('STOP') }] },
      );
      const result = await streamChat(gateway, {});
      expect(deltas(result.chunks)).toEqual([{ role: 'assistant' }, { content: 'fine' }, {}]);
      expect(result.chunks.at(-1).choices[0].finish_reason).toBe('stop');
      expect(fake.requests('streamGenerateContent')).toHaveLength(2);
    });

    describe('after tool results (the Gemini CLI takes an empty answer to them as the answer, docs/upstream/provider-b.md §13.29)', () => {
      const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
      const messages = [
        { role: 'user', content: 'read a' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'file a' },
      ];

      it.each([
        ['an empty STOP', [{ json: finishFrame('STOP') }]],
        ['no finishReason', [{ json: textFrame('', {}) }]],
      ])('delivers %s at once: one upstream call, an empty answer that stops', async (_label, frames) => {
        fake.enqueue('streamGenerateContent', { frames }, { frames: [{ json: textFrame('never') }] });
        const result = await streamChat(gateway, { tools, messages });
        expect(result.status).toBe(200);
        expect(deltas(result.chunks)).toEqual([{ role: 'assistant' }, {}]);
        expect(result.chunks.at(-1).choices[0].finish_reason).toBe('stop');
        expect(fake.requests('streamGenerateContent')).toHaveLength(1);
      });

      it("sends a thoughts-only answer again with the CLI's nudge after a model turn that closes the results", async () => {
        fake.enqueue(
          'streamGenerateContent',
          { frames: [{ json: textFrame('plan', { thought: true }) }, { json: finishFrame('STOP') }] },
          { frames: [{ json: textFrame('done') }, { json: finishFrame('STOP') }] },
        );
        const result = await streamChat(gateway, { tools, messages });
        expect(deltas(result.chunks)).toContainEqual({ content: 'done' });
        const [first, second] = fake.requests('streamGenerateContent').map((request) => request.body.request.contents);
        expect(first.map((content: any) => content.role)).toEqual(['user', 'model', 'user']);
        expect(second).toEqual([
          ...first,
          { role: 'model', parts: [{ text: TOOL_RESULTS_CLOSED }] },
          { role: 'user', parts: [{ text: RETRY_NUDGES.THINKING_ONLY_RESPONSE }] },
        ]);
      });
    });

    it("appends the CLI's nudge to the user's turn when an empty answer is sent again, and drops it after an invalid call", async () => {
      fake.enqueue(
        'streamGenerateContent',
        { frames: [{ json: finishFrame('STOP') }] },
        { frames: [{ json: finishFrame('MALFORMED_FUNCTION_CALL') }] },
        { frames: [{ json: textFrame('fine') }, { json: finishFrame('STOP') }] },
      );
      const result = await streamChat(gateway, {});
      expect(deltas(result.chunks)).toContainEqual({ content: 'fine' });
      const sent = fake.requests('streamGenerateContent').map((request) => request.body.request.contents);
      expect(sent[0]).toEqual([{ role: 'user', parts: [{ text: 'hi' }] }]);
      expect(sent[1]).toEqual([
        { role: 'user', parts: [{ text: 'hi' }, { text: `\n${RETRY_NUDGES.NO_RESPONSE_TEXT}` }] },
      ]);
      // An invalid call has no nudge of its own: the attempt after it is the client's contents again.
      expect(sent[2]).toEqual(sent[0]);
    });

    it("gives up after the CLI's 4 attempts and then reports the last turn as it ended", async () => {
      const malformed = { frames: [{ json: finishFrame('MALFORMED_FUNCTION_CALL') }] };
      fake.enqueue('streamGenerateContent', malformed, malformed, malformed, malformed, {
        frames: [{ json: textFrame('never') }],
      });
      const result = await streamChat(gateway, {});
      expect(result.done).toBe(true);
      expect(result.chunks.at(-1).choices[0]).toMatchObject({
        delta: { content: '[error: invalid upstream tool call]' },
      });
      expect(fake.requests('streamGenerateContent')).toHaveLength(4);
    });

    it('retries an empty non-streaming answer too', async () => {
      fake.enqueue(
        'generateContent',
        { body: { response: { candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'STOP' }] } } },
        {
          body: {
            response: {
              candidates: [{ content: { role: 'model', parts: [{ text: 'whole' }] }, finishReason: 'STOP' }],
            },
          },
        },
      );
      const response = await postChat(gateway, {});
      expect(response.status).toBe(200);
      expect(((await response.json()) as any).choices[0].message.content).toBe('whole');
      expect(fake.requests('generateContent')).toHaveLength(2);
    });

    it('retries an answer of only whitespace after thoughts, as the CLI judges it empty, and releases whitespace that text follows', async () => {
      fake.enqueue(
        'streamGenerateContent',
        {
          frames: [
            { json: textFrame('plan', { thought: true }) },
            { json: textFrame('\n') },
            { json: textFrame('\u200b <!-- --> ') },
            { json: finishFrame('STOP') },
          ],
        },
        {
          frames: [
            { json: textFrame('second plan', { thought: true }) },
            { json: textFrame('\n') },
            { json: textFrame('answer') },
            { json: finishFrame('STOP') },
          ],
        },
      );
      const result = await streamChat(gateway, {});
      expect(result.status).toBe(200);
      const shown = deltas(result.chunks);
      expect(shown.filter((delta) => delta.reasoning_content).map((delta) => delta.reasoning_content)).toEqual([
        'second plan',
      ]);
      expect(shown.map((delta) => delta.content ?? '').join('')).toBe('\nanswer');
      const sent = fake.requests('streamGenerateContent').map((request) => request.body.request.contents);
      expect(sent).toHaveLength(2);
      expect(sent[1]).toEqual([
        { role: 'user', parts: [{ text: 'hi' }, { text: `\n${RETRY_NUDGES.THINKING_ONLY_RESPONSE}` }] },
      ]);
    });

    it('never retries once text went out', async () => {
      fake.enqueue('streamGenerateContent', { frames: [{ json: textFrame('partial') }] });
      const result = await streamChat(gateway, {});
      expect(deltas(result.chunks)).toContainEqual({ content: 'partial' });
      expect(fake.requests('streamGenerateContent')).toHaveLength(1);
    });
  });

  it('answers an upstream 403 with 403 upstream_login_required and no refresh (docs/upstream/provider-b.md §13.10)', async () => {
    fake.enqueue('streamGenerateContent', {
      status: 403,
      body: errorFrame(403, 'PERMISSION_DENIED', 'UPSTREAM-SECRET-403'),
    });
    const response = await postChat(gateway, { stream: true });
    expect(response.status).toBe(403);
    const body = (await response.json()) as any;
    expect(body.error).toMatchObject({ type: 'permission_error', code: 'upstream_login_required' });
    expect(JSON.stringify(body)).not.toContain('UPSTREAM-SECRET-403');
    expect(fake.requests('token')).toHaveLength(0);
  });

  it('answers two 401s with 403 after exactly one refresh (docs/upstream/provider-b.md §13.9)', async () => {
    const unauthorized = { status: 401, body: errorFrame(401, 'UNAUTHENTICATED') };
    fake.enqueue('streamGenerateContent', unauthorized, unauthorized);
    const response = await postChat(gateway, { stream: true });
    expect(response.status).toBe(403);
    expect(fake.requests('token')).toHaveLength(1);
    expect(fake.requests('streamGenerateContent')).toHaveLength(2);
  });

  it('answers a daily-quota 429 at once with 429 and Retry-After, without upstream text (docs/upstream/provider-b.md §13.23)', async () => {
    fake.enqueue('streamGenerateContent', {
      status: 429,
      body: errorFrame(429, 'RESOURCE_EXHAUSTED', 'UPSTREAM-SECRET-QUOTA', [quotaFailure('RequestsPerDayPerUser')]),
    });
    const response = await postChat(gateway, { stream: true });
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const text = await response.text();
    expect(JSON.parse(text).error.type).toBe('rate_limit_error');
    expect(text).not.toContain('UPSTREAM-SECRET-QUOTA');
    expect(fake.requests('streamGenerateContent')).toHaveLength(1);
  });

  it('answers a 429 whose Retry-After header is above 30 s at once with that Retry-After, though its body names no delay (docs/providers.md "Retries")', async () => {
    fake.enqueue('streamGenerateContent', {
      status: 429,
      headers: { 'retry-after': '45' },
      body: errorFrame(429, 'RESOURCE_EXHAUSTED'),
    });
    const response = await postChat(gateway, { stream: true });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('45');
    expect(fake.requests('streamGenerateContent')).toHaveLength(1);
  });

  it('does not retry a 503 whose Retry-After header (an HTTP date) is above 30 s (docs/providers.md "Retries")', async () => {
    fake.enqueue('streamGenerateContent', {
      status: 503,
      headers: { 'retry-after': new Date(Date.now() + 120_000).toUTCString() },
      body: errorFrame(503, 'UNAVAILABLE'),
    });
    const response = await postChat(gateway, { stream: true });
    expect(response.status).toBe(502);
    expect(fake.requests('streamGenerateContent')).toHaveLength(1);
  });

  it('turns a 503 after a text frame into an error chunk and [DONE] without a second call (docs/upstream/provider-b.md §13.24)', async () => {
    fake.enqueue('streamGenerateContent', {
      frames: [{ json: textFrame('partial') }, { json: errorFrame(503, 'UNAVAILABLE', 'UPSTREAM-SECRET-503') }],
    });
    const result = await streamChat(gateway, {});
    expect(result.status).toBe(200);
    expect(result.done).toBe(true);
    expect(deltas(result.chunks)).toEqual([
      { role: 'assistant' },
      { content: 'partial' },
      { content: '[error: upstream error]' },
    ]);
    expect(JSON.stringify(result.chunks)).not.toContain('UPSTREAM-SECRET-503');
    expect(fake.requests('streamGenerateContent')).toHaveLength(1);
  });

  it('answers a stream whose only frame is an INVALID_ARGUMENT error with 400 upstream_rejected_request at once, without upstream text (docs/upstream/provider-b.md §10.2)', async () => {
    fake.enqueue('streamGenerateContent', {
      frames: [{ json: errorFrame(400, 'INVALID_ARGUMENT', 'UPSTREAM-SECRET-400') }],
    });
    const response = await postChat(gateway, { stream: true });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(JSON.parse(text).error.code).toBe('upstream_rejected_request');
    expect(text).not.toContain('UPSTREAM-SECRET-400');
    expect(fake.requests('streamGenerateContent')).toHaveLength(1);
  });

  it('closes the upstream response within 1 s when the client disconnects (docs/upstream/provider-b.md §13.27)', async () => {
    fake.enqueue('streamGenerateContent', { frames: [{ json: textFrame('first') }], holdOpen: true });
    const abort = new AbortController();
    const response = await postChat(gateway, { stream: true }, {}, abort.signal);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    abort.abort();
    await fake.waitUntil(
      () => fake.requests('streamGenerateContent')[0]?.closedByClient === true,
      1000,
      'the upstream close',
    );
  });

  it('never logs tokens, and upstream error text only as the sanitized upstream_message', () => {
    const logs = gateway.logs.text;
    expect(logs).toContain('provider_b_auth_retry');
    expect(logs).not.toMatch(/fake-access|fake-refresh-token/);
    const withoutCause = gateway.logs.records().map(({ upstream_message: _message, ...rest }) => rest);
    expect(JSON.stringify(withoutCause)).not.toMatch(/UPSTREAM-SECRET/);
  });
});

describe('provider_b disabled (docs/upstream/provider-b.md §13.28)', () => {
  it('lists no gemini model, answers 404 model_not_found and never calls the upstream', async () => {
    const fake = await FakeCodeAssist.start();
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-b-off-'));
    const gateway = await startGateway({ ...providerBSettings(fake, home), GATEWAY_PROVIDERS: 'provider_a' });
    try {
      const models = (await (await fetch(`${gateway.url}/v1/models`)).json()) as any;
      expect(models.data.map((model: { id: string }) => model.id)).not.toContain('gemini-2.5-pro');
      const response = await postChat(gateway, {});
      expect(response.status).toBe(404);
      expect(((await response.json()) as any).error.code).toBe('model_not_found');
      expect(fake.requests()).toHaveLength(0);
    } finally {
      await gateway.close();
      await fake.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('provider_b accounts Code Assist cannot serve as they are (docs/upstream/provider-b.md §4.2)', () => {
  let fake: FakeCodeAssist;
  let home: string;
  let gateway: TestGateway;

  beforeAll(async () => {
    fake = await FakeCodeAssist.start();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-b-ineligible-'));
    gateway = await startGateway({ ...providerBSettings(fake, home), GATEWAY_PROVIDERS: 'provider_b' });
  });
  beforeEach(() => fake.reset());
  afterAll(async () => {
    await gateway.close();
    await fake.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('answers an account with a licence but no project with 403 upstream_project_required naming PROVIDER_B_PROJECT, and leaves the login usable', async () => {
    fake.enqueue('loadCodeAssist', { body: { currentTier: { id: 'standard-tier' } } });
    const response = await postChat(gateway, { stream: true });
    expect(response.status).toBe(403);
    const error = ((await response.json()) as any).error;
    expect(error).toMatchObject({ type: 'permission_error', code: 'upstream_project_required', param: null });
    expect(error.message).toMatch(/^provider_b: .*set PROVIDER_B_PROJECT.*docs\/providers\.md#project-setup/);
    // Not a login to renew: the account stays ready, and the log line says what to do.
    expect(await accountState(gateway, 'provider_b', 'default')).toBe('ready');
    expect(gateway.logs.records('provider_b_project_unavailable')).toEqual([
      expect.objectContaining({
        reason: 'provider_b_project_required',
        fix: expect.stringContaining('PROVIDER_B_PROJECT'),
      }),
    ]);
    expect(fake.requests('streamGenerateContent')).toHaveLength(0);
  });

  it('answers an onboarding that ends without a project with 403 upstream_project_required naming PROVIDER_B_PROJECT, and leaves the login usable', async () => {
    // The Gemini CLI's setup ends here with ProjectIdRequiredError, which says to set GOOGLE_CLOUD_PROJECT.
    const notSetUp = { body: { allowedTiers: [{ id: 'standard-tier', isDefault: true }] } };
    fake.enqueue('loadCodeAssist', notSetUp, notSetUp);
    fake.enqueue('onboardUser', { body: { name: 'operations/onboard-1', done: true, response: {} } });
    const linesBefore = gateway.logs.records('provider_b_project_unavailable').length;
    const response = await postChat(gateway, {});
    expect(response.status).toBe(403);
    const error = ((await response.json()) as any).error;
    expect(error).toMatchObject({ type: 'permission_error', code: 'upstream_project_required', param: null });
    expect(error.message).toMatch(/^provider_b: .*set PROVIDER_B_PROJECT.*docs\/providers\.md#project-setup/);
    expect(await accountState(gateway, 'provider_b', 'default')).toBe('ready');
    expect(gateway.logs.records('provider_b_project_unavailable').slice(linesBefore)).toEqual([
      expect.objectContaining({ reason: 'provider_b_project_required', ineligibleReasons: [] }),
    ]);
    expect(fake.requests('onboardUser')).toHaveLength(1);
    expect(fake.requests('generateContent')).toHaveLength(0);
    // The login still takes turns: the next one sets the account up again (a dead login would get no call).
    fake.enqueue('onboardUser', { body: { name: 'operations/onboard-2', done: true, response: {} } });
    const next = await postChat(gateway, { stream: true });
    expect(next.status).toBe(403);
    expect(((await next.json()) as any).error.code).toBe('upstream_project_required');
    expect(fake.requests('loadCodeAssist')).toHaveLength(2);
    expect(fake.requests('onboardUser')).toHaveLength(2);
  });

  it('answers a burst with 403 permission_error provider_account_unsupported after one loadCodeAssist, no onboarding, no upstream text', async () => {
    // The answer individual accounts get since 2026-06-18 (gemini-cli 0.58.0 IneligibleTierError, quoted in Digital-Process-Tools/claude-remember#532).
    fake.enqueue('loadCodeAssist', {
      body: {
        ineligibleTiers: [
          {
            reasonCode: 'UNSUPPORTED_CLIENT',
            reasonMessage: 'UPSTREAM-SECRET This client is no longer supported…',
            tierId: 'free-tier',
            tierName: 'Gemini Code Assist for individuals',
          },
        ],
      },
    });
    const responses = await Promise.all([1, 2, 3, 4, 5].map((n) => postChat(gateway, { stream: n % 2 === 0 })));
    for (const response of responses) {
      expect(response.status).toBe(403);
      const body = (await response.json()) as any;
      expect(body.error).toMatchObject({ type: 'permission_error', code: 'provider_account_unsupported', param: null });
      expect(body.error.message).toContain('docs/providers.md');
      expect(JSON.stringify(body)).not.toContain('UPSTREAM-SECRET');
    }
    expect(fake.requests('loadCodeAssist')).toHaveLength(1);
    expect(fake.requests('onboardUser')).toHaveLength(0);
    expect(fake.requests('streamGenerateContent')).toHaveLength(0);
    expect(fake.requests('generateContent')).toHaveLength(0);
  });
});

describe('provider_b set-up refused by VPC Service Controls (docs/upstream/provider-b.md §4.2)', () => {
  const harness = useFakeProviderB({ homePrefix: 'provider-b-vpcsc-' });

  it('goes on with PROVIDER_B_PROJECT as the Gemini CLI does, setting it up once per login', async () => {
    const fake = harness.fake();
    const gateway = await startGateway({
      ...providerBSettings(fake, harness.home(), { project: 'perimeter-project' }),
      GATEWAY_PROVIDERS: 'provider_b',
    });
    try {
      fake.enqueue('loadCodeAssist', PERIMETER_REFUSAL, PERIMETER_REFUSAL);
      for (const stream of [true, false]) {
        const response = await postChat(gateway, { stream });
        expect(response.status).toBe(200);
        await response.text();
      }
      expect(fake.requests('loadCodeAssist').map((request) => request.body.cloudaicompanionProject)).toEqual([
        'perimeter-project',
      ]);
      expect(fake.requests('onboardUser')).toHaveLength(0);
      expect(
        [...fake.requests('streamGenerateContent'), ...fake.requests('generateContent')].map(
          (request) => request.body.project,
        ),
      ).toEqual(['perimeter-project', 'perimeter-project']);
      expect(gateway.logs.records('provider_b_login_refused')).toEqual([]);
    } finally {
      await gateway.close();
    }
  });

  it('without PROVIDER_B_PROJECT answers 403 upstream_project_required naming the setting, and leaves the login usable', async () => {
    const fake = harness.fake();
    const gateway = await startGateway({ ...providerBSettings(fake, harness.home()), GATEWAY_PROVIDERS: 'provider_b' });
    try {
      fake.enqueue('loadCodeAssist', PERIMETER_REFUSAL);
      const response = await postChat(gateway, { stream: true });
      expect(response.status).toBe(403);
      const error = ((await response.json()) as any).error;
      expect(error).toMatchObject({ type: 'permission_error', code: 'upstream_project_required', param: null });
      expect(error.message).toMatch(
        /^provider_b: .*VPC Service Controls.*set PROVIDER_B_PROJECT.*docs\/providers\.md#project-setup/,
      );
      expect(await accountState(gateway, 'provider_b', 'default')).toBe('ready');
      expect(gateway.logs.records('provider_b_project_unavailable')).toEqual([
        expect.objectContaining({
          reason: 'provider_b_project_required',
          fix: expect.stringContaining('set PROVIDER_B_PROJECT'),
        }),
      ]);
      expect(fake.requests('streamGenerateContent')).toHaveLength(0);
    } finally {
      await gateway.close();
    }
  });
});

describe('provider_b token endpoint failing for a moment (docs/providers.md "Tokens and login failures")', () => {
  const harness = useFakeProviderB({ homePrefix: 'provider-b-token-' });

  it.each([
    [
      'a server error',
      { status: 503, body: { error: 'backend_error', error_description: 'UPSTREAM-SECRET Backend Error' } },
    ],
    ['a rate limit', { status: 429, body: { error: 'rate_limit_exceeded' } }],
  ])(
    'retries a refresh the endpoint answers with %s, answers the turn and keeps the login usable',
    async (_name, failure) => {
      const fake = harness.fake();
      fake.enqueue('token', failure);
      const gateway = await startGateway({
        ...providerBSettings(fake, harness.home(), { project: 'p', creds: { expiryDateMs: Date.now() - 1000 } }),
        GATEWAY_PROVIDERS: 'provider_b',
      });
      try {
        const response = await postChat(gateway, {});
        expect(response.status).toBe(200);
        await response.text();
        // Retried before output like an endpoint that gave no answer: the second refresh serves the turn.
        expect(fake.requests('token')).toHaveLength(2);
        expect(fake.requests('generateContent').map((request) => request.headers.authorization)).toEqual([
          'Bearer fake-access-1',
        ]);
        expect(await accountState(gateway, 'provider_b', 'default')).toBe('ready');
        // The line says the endpoint failed and what to check, not "log in again".
        expect(gateway.logs.records('provider_b_auth_refresh_failed')).toEqual([
          expect.objectContaining({
            status: failure.status,
            fix: expect.stringMatching(
              new RegExp(
                `^the token endpoint \\(PROVIDER_B_TOKEN_URL\\) answered HTTP ${failure.status} without a token, not a refusal of the login: .*HTTPS_PROXY`,
              ),
            ),
          }),
        ]);
        expect(gateway.logs.lines.join('\n')).not.toMatch(/UPSTREAM-SECRET|fake-refresh-token/);
      } finally {
        await gateway.close();
      }
    },
  );

  it('answers 502 upstream_error, not 403, when the endpoint keeps failing, and the next turn refreshes again', async () => {
    const fake = harness.fake();
    const unavailable = { status: 503, body: { error: 'backend_error' } };
    fake.enqueue('token', unavailable, unavailable, unavailable);
    const gateway = await startGateway({
      ...providerBSettings(fake, harness.home(), { project: 'p', creds: { expiryDateMs: Date.now() - 1000 } }),
      GATEWAY_PROVIDERS: 'provider_b',
    });
    try {
      const failed = await postChat(gateway, { stream: true });
      expect(failed.status).toBe(502);
      expect(((await failed.json()) as any).error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
      expect(fake.requests('token')).toHaveLength(3);
      expect(await accountState(gateway, 'provider_b', 'default')).toBe('ready');
      const next = await postChat(gateway, { stream: true });
      expect(next.status).toBe(200);
      await next.text();
      expect(fake.requests('token')).toHaveLength(4);
    } finally {
      await gateway.close();
    }
  });
});
