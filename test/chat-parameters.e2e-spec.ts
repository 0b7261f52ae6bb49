import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { OutputValidator } from '../src/common/json-schema/output-validator';
import {
  contents,
  finishReason,
  postChatBody,
  readRest,
  readUntil,
  sseChunks,
  streamChat,
  toolFrames,
} from './support/chat-sse';
import type { FakeUpstream } from './support/client-scenarios';
import { fakeUpstream } from './support/client-scenarios';
import type { TestGateway } from './support/create-test-app';
import type { FakeStreamReply } from './support/fake-anthropic-api';
import {
  API_ERRORS,
  FakeAnthropicApi,
  textReply as claudeTextReply,
  thinkingOnlyReply,
} from './support/fake-anthropic-api';
import { FakeProviderA } from './support/fake-provider-a';
import { FakeCodeAssist } from './support/fake-provider-b';
import { completed, created, functionCallItem, providerASettings, textDelta } from './support/provider-a-fixtures';
import { finishFrame, providerBSettings, textFrame } from './support/provider-b-fixtures';
import { eventually } from './support/poll';
import { scrapeMetrics, sampleValue } from './support/prometheus-text';
import { fenceText } from './support/provider-c-fixtures';
import { realClaudeGatewaySettings } from './support/real-claude';
import { KeepAliveSweep } from '../src/common/sse/keep-alive-sweep';

/*
 * The request-parameter table end to end (docs/chat.md): the `openai` SDK's structured-output helpers against every family, the
 * gateway's refusals in the OpenAI error shape, and stop sequences split across upstream deltas.
 * The fakes answer JSON only when the upstream request asked for it in the family's own wire
 * format, so a parsed object proves the format reached the upstream; prose otherwise.
 */

const City = z.object({ city: z.string(), population: z.number().int() });
const CITY_FORMAT = zodResponseFormat(City, 'city');
const CITY_JSON = ['{"city":"Pa', 'ris","population":', '2100000}'];
const PROSE = ['Sure! The largest city ', 'is Paris.'];
const ASK = [{ role: 'user' as const, content: 'Name the largest city of France and its population.' }];

const READ_FILE = {
  type: 'function',
  function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
};

type BadRequest = InstanceType<typeof OpenAI.BadRequestError>;

/** The 422 of a held answer that every attempt's stop cut left without the whole JSON object. */
const STOP_CUT_REFUSAL = {
  message:
    "the model's answer did not satisfy response_format in 3 attempts; the last one was cut short at a stop sequence: send stop sequences that cannot occur inside the JSON object, or none",
  type: 'upstream_error',
  code: 'output_validation_failed',
  param: 'stop',
};

/** The content a chat answer carries: joined from the chunks of a stream, or the one message's. */
function answerText(stream: boolean, raw: string): string {
  if (!stream) return (JSON.parse(raw) as { choices: { message: { content: string } }[] }).choices[0].message.content;
  return sseChunks(raw)
    .chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '')
    .join('');
}

/**
 * A tool-choice turn whose text held the stop sequence before the call ("Reading END now"): the
 * text is cut before the match, the call after it still reaches the client, streamed and not.
 */
async function expectCutTextKeptCall(streamed: Awaited<ReturnType<typeof streamChat>>, plain: Response) {
  expect(streamed.status).toBe(200);
  expect(contents(streamed).join('')).toBe('Reading ');
  expect(streamed.raw).not.toContain('now');
  expect(toolFrames(streamed)).toEqual([
    expect.objectContaining({ function: { name: 'read_file', arguments: '{"path":"a.txt"}' } }),
  ]);
  expect(finishReason(streamed)).toBe('tool_calls');
  expect(streamed.done).toBe(true);
  expect(plain.status).toBe(200);
  const body = (await plain.json()) as { choices: { message: any; finish_reason: string }[] };
  expect(body.choices[0].message).toMatchObject({
    content: 'Reading ',
    tool_calls: [{ type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } }],
  });
  expect(body.choices[0].finish_reason).toBe('tool_calls');
}

/** The family's `gateway_chat_api_tokens_total` counters now, by kind. */
async function tokenCounters(gateway: TestGateway, provider: string): Promise<Record<string, number>> {
  const text = await scrapeMetrics(gateway);
  const kinds = ['prompt', 'completion', 'cached'] as const;
  return Object.fromEntries(
    kinds.map((kind) => [kind, sampleValue(text, 'gateway_chat_api_tokens_total', { provider, kind }) ?? 0]),
  );
}

/** What the counters rose by since `before`. */
async function tokensSince(gateway: TestGateway, provider: string, before: Record<string, number>) {
  const now = await tokenCounters(gateway, provider);
  return Object.fromEntries(Object.entries(now).map(([kind, value]) => [kind, value - (before[kind] ?? 0)]));
}

/** The SDK's error for a call that must be refused (fails the test when the call succeeds). */
async function refusal(call: Promise<unknown>): Promise<BadRequest> {
  const outcome = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(outcome).toBeInstanceOf(OpenAI.BadRequestError);
  return outcome as BadRequest;
}

const client = (gateway: TestGateway) =>
  new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'test', maxRetries: 0, timeout: 20_000 });

/** Every SDK way to ask for the City object: parse(), a streamed create() and the stream helper. */
function describeStructuredOutput(model: string, gateway: () => TestGateway, upstreamFormats: () => unknown[]): void {
  it('chat.completions.parse() with a Zod schema returns the parsed object', async () => {
    const completion = await client(gateway()).chat.completions.parse({
      model,
      messages: ASK,
      response_format: CITY_FORMAT,
      temperature: 0.2,
      max_tokens: 200,
    });
    expect(completion.choices[0].message.parsed).toEqual({ city: 'Paris', population: 2_100_000 });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(upstreamFormats()).toHaveLength(1);
  });

  it('chat.completions.stream() with a Zod schema: finalChatCompletion() carries the parsed object', async () => {
    const stream = client(gateway()).chat.completions.stream({
      model,
      messages: ASK,
      response_format: CITY_FORMAT,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    stream.on('content.delta', ({ delta }) => deltas.push(delta));
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0].message.parsed).toEqual({ city: 'Paris', population: 2_100_000 });
    expect(deltas.join('')).toBe(CITY_JSON.join(''));
  });

  it('json_object mode, streamed with create(), gives JSON content', async () => {
    const stream = await client(gateway()).chat.completions.create({
      model,
      messages: ASK,
      response_format: { type: 'json_object' },
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(JSON.parse(text)).toEqual({ city: 'Paris', population: 2_100_000 });
  });
}

/** A one-pixel PNG, inline. */
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** The refusals no family can serve, answered before any upstream call; `family` is the model's. */
function describeRefusals(
  model: string,
  family: string,
  gateway: () => TestGateway,
  upstreamCalls: () => number,
): void {
  it('a refused field is a 400 whose message names the field and the fix, before any upstream call', async () => {
    const before = upstreamCalls();
    const cases: [Record<string, unknown>, string, string][] = [
      [
        { modalities: ['text', 'audio'] },
        'modalities',
        'modalities asks for output other than text, which is not supported: answers are text only; send ["text"] or leave modalities out',
      ],
      [
        { audio: { voice: 'alloy', format: 'mp3' } },
        'audio',
        'audio output is not supported: no family produces audio; leave audio out',
      ],
      [
        { web_search_options: {} },
        'web_search_options',
        'web search is not supported: no family searches the web for the client; leave web_search_options out',
      ],
      [
        { top_logprobs: 3 },
        'top_logprobs',
        'top_logprobs above 0 is not supported: no upstream family returns token log probabilities; send 0 or leave top_logprobs out',
      ],
      [
        { logprobs: true },
        'logprobs',
        'logprobs: true is not supported: no upstream family returns token log probabilities; send false or leave logprobs out',
      ],
    ];
    for (const [fields, param, message] of cases) {
      const response = await postChatBody(gateway(), { model, messages: ASK, ...fields });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: unknown }).error).toEqual({
        message,
        type: 'invalid_request_error',
        code: 'unsupported_parameter',
        param,
      });
    }
    expect(upstreamCalls()).toBe(before);
  });

  it('a content part no family takes is a 400 naming the part and the fix, before any upstream call', async () => {
    const before = upstreamCalls();
    const cases: [unknown, string, string][] = [
      [
        { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
        'messages[0].content[1]: part type "input_audio" is not supported by',
        '; send its transcript as a text part (no family takes audio)',
      ],
      [
        { type: 'file', file: { file_id: 'file-abc' } },
        'messages[0].content[1]: part type "file" is not supported by',
        "; send the file's text as a text part, or an image as an image_url part (no family takes files)",
      ],
    ];
    for (const [part, start, end] of cases) {
      const response = await postChatBody(gateway(), {
        model,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, part] }],
      });
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as { error: { message: string } };
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'messages' });
      expect(error.message.startsWith(`${start} ${family}`)).toBe(true);
      expect(error.message.endsWith(end)).toBe(true);
    }
    expect(upstreamCalls()).toBe(before);
  });

  it('an image in a system or assistant message is a 400 naming the role and the fix, before any upstream call', async () => {
    const before = upstreamCalls();
    const image = { type: 'image_url', image_url: { url: PNG } };
    for (const [messages, where, role] of [
      [[{ role: 'system', content: [image] }, ...ASK], 'messages[0].content[0]', 'a system'],
      [
        [...ASK, { role: 'assistant', content: [{ type: 'text', text: 'a dot' }, image] }, ...ASK],
        'messages[1].content[1]',
        'an assistant',
      ],
    ] as const) {
      const response = await postChatBody(gateway(), { model, messages });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: unknown }).error).toEqual({
        message:
          family === 'provider_c'
            ? `${where}: part type "image_url" is not supported by provider_c (Claude Code takes the conversation as text); describe the image in a text part, or choose a model of a family that takes images (provider_a, provider_b)`
            : `${where}: an image in ${role} message is not supported by ${family}; move the image to a user message`,
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'messages',
      });
    }
    expect(upstreamCalls()).toBe(before);
  });

  it('n: 2 is a 400 in the OpenAI shape with param "n", before any upstream call', async () => {
    const before = upstreamCalls();
    const error = await refusal(client(gateway()).chat.completions.create({ model, messages: ASK, n: 2 }));
    expect(error.error).toEqual({
      message: expect.stringContaining('n must be 1'),
      type: 'invalid_request_error',
      code: 'unsupported_parameter',
      param: 'n',
    });
    const badType = await refusal(
      client(gateway()).chat.completions.create({ model, messages: ASK, temperature: 'hot' as unknown as number }),
    );
    expect(badType.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_request',
      param: 'temperature',
    });
    expect(upstreamCalls()).toBe(before);
  });

  it('a body no family could read as sent is a 400 naming the field, never a silent drop', async () => {
    const before = upstreamCalls();
    const read = { type: 'function', function: { name: 'read', parameters: { type: 'object' } } };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ messages: [ASK] }, 'messages', 'messages.0 must be a message object'],
      [
        { messages: [...ASK, { role: 'tool', content: 'output' }] },
        'messages',
        'messages.1.tool_call_id is required on a tool message',
      ],
      [{ tool_choice: 'required' }, 'tool_choice', 'tool_choice asks for a tool call, but the request has no tools'],
      [
        { tools: [read], tool_choice: { type: 'function', function: { name: 'write' } } },
        'tool_choice',
        'tool_choice names a tool that is not in tools',
      ],
      [{ tools: [read], tool_choice: 'bogus' }, 'tool_choice', 'tool_choice must be "auto", "none", "required"'],
      // Names are exact: " read " is not the tool read (provider_a would force a tool it never declared).
      [
        { tools: [read], tool_choice: { type: 'function', function: { name: ' read ' } } },
        'tool_choice',
        'tool_choice names a tool that is not in tools',
      ],
      [{ tools: [{ type: 'function', function: { description: 'd' } }] }, 'tools', 'tools.0.function.name'],
      // Two tools of one name: Gemini refuses the request, the others would let the model call either.
      [
        { tools: [read, { type: 'function', function: { name: 'read', description: 'again' } }] },
        'tools',
        'tools.1.function.name "read" repeats tools.0.function.name: a call names its tool by name alone, so tool names must be unique, function and custom tools alike: rename or remove one of them',
      ],
      [
        { tools: [{ type: 'function', name: 'patch' }, read, { type: 'custom', custom: { name: 'patch' } }] },
        'tools',
        'tools.2.custom.name "patch" repeats tools.0.name: a call names its tool by name alone, so tool names must be unique, function and custom tools alike: rename or remove one of them',
      ],
      // A hosted tool the vendor would run: no current model of any family takes one.
      [{ tools: [read, { type: 'web_search' }] }, 'tools', 'tools.1 is the hosted tool "web_search", which '],
      [{ stream: true, stream_options: { include_usage: 'yes' } }, 'stream_options', 'stream_options must be'],
      [{ user: 5 }, 'user', 'user must be a string'],
      [{ store: 'yes' }, 'store', 'store must be a boolean'],
      // An audio answer replayed by id: no family can send it back, and without text the message would vanish.
      [
        { messages: [...ASK, { role: 'assistant', content: null, audio: { id: 'audio_123' } }, ASK[0]] },
        'messages',
        'messages.1.audio is not supported (no family can replay an audio answer): send its transcript as content',
      ],
      // Sent on, provider_a's backend would answer a vague 400; the others would drop it unnoticed.
      [{ verbosity: 'loud' }, 'verbosity', 'verbosity must be one of low, medium, high'],
      // A tier OpenAI does not define: every family would drop it unnoticed.
      [
        { service_tier: 'bogus' },
        'service_tier',
        'service_tier must be one of auto, default, flex, scale, priority, fast',
      ],
      [
        { messages: [...ASK, { role: 'function', name: 'read', content: 'output' }] },
        'messages',
        'messages.1.role must be one of system, developer, user, assistant, tool (a "function" message is the deprecated form of a tool result: send a tool message with the tool_call_id of its call)',
      ],
      // Only an assistant message carries calls: every family would drop them from any other.
      [
        {
          messages: [
            {
              role: 'user',
              content: 'hi',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } }],
            },
          ],
        },
        'messages',
        'messages.0.tool_calls is taken only on an assistant message (the calls the model made): move the calls to the assistant message that made them, or leave tool_calls out',
      ],
      // provider_a's backend would refuse it, provider_b would drop it, provider_c takes no image at all.
      [
        {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'hi' },
                { type: 'image_url', image_url: { url: PNG, detail: 'ultra' } },
              ],
            },
          ],
        },
        'messages',
        'messages.0.content.1.image_url.detail must be one of auto, low, high, original, or left out',
      ],
      [
        {
          messages: [{ role: 'user', content: [{ type: 'input_image', image_url: PNG, detail: 5 }] }],
        },
        'messages',
        'messages.0.content.0.detail must be one of auto, low, high, original, or left out',
      ],
    ];
    for (const [fields, param, message] of cases) {
      const response = await postChatBody(gateway(), { model, messages: ASK, ...fields });
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as { error: Record<string, unknown> };
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param });
      expect(error.message).toContain(message);
    }
    expect(upstreamCalls()).toBe(before);
  });

  it('a history tool call no upstream could carry as sent is a 400 naming its field, before any upstream call', async () => {
    const before = upstreamCalls();
    const cases: [Record<string, unknown>, string][] = [
      [
        { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: { path: 'a.txt' } } },
        'messages.1.tool_calls.0.function.arguments must be a string',
      ],
      [
        { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: 7 } },
        'messages.1.tool_calls.0.function.arguments must be a string',
      ],
      [{ id: 'call_1', type: 'function', function: null }, 'messages.1.tool_calls.0.function must be an object'],
      [
        { id: 'call_1', type: 'function', function: { arguments: '{}' } },
        'messages.1.tool_calls.0.function.name must be a non-empty string',
      ],
      [
        { type: 'function', function: { name: 'read_file', arguments: '{}' } },
        'messages.1.tool_calls.0.id must be a non-empty string',
      ],
      [
        { id: 'call_1', type: 'web_search', function: { name: 'read_file', arguments: '{}' } },
        'messages.1.tool_calls.0.type must be "function" or "custom"',
      ],
      [
        { id: 'call_1', type: 'custom', function: { name: 'apply_patch', arguments: 'x' } },
        'messages.1.tool_calls.0.custom must be an object',
      ],
      [
        { id: 'call_1', type: 'custom', custom: { name: 'apply_patch', input: ['x'] } },
        'messages.1.tool_calls.0.custom.input must be a string',
      ],
    ];
    for (const [call, message] of cases) {
      const response = await postChatBody(gateway(), {
        model,
        tools: HISTORY_TOOLS,
        messages: [
          ...ASK,
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: 'call_1', content: 'FILE-CONTENTS' },
        ],
      });
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as { error: Record<string, unknown> };
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'messages' });
      expect(error.message).toContain(message);
    }
    expect(upstreamCalls()).toBe(before);
  });
}

/** A function and a custom tool, and a history that called each of them (both call forms the gateway writes). */
const HISTORY_TOOLS = [
  {
    type: 'function',
    function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  },
  { type: 'custom', custom: { name: 'apply_patch', description: 'Applies a patch' } },
];
const TOOL_HISTORY = [
  ...ASK,
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'call_read', type: 'function', function: { name: 'read_file', arguments: '{"path":"census.txt"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_read', content: 'CENSUS-FILE-CONTENTS' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_patch', type: 'custom', custom: { name: 'apply_patch', input: 'PATCH-INPUT-TEXT' } }],
  },
  { role: 'tool', tool_call_id: 'call_patch', content: 'PATCH-APPLIED' },
];

/** History shapes and field values every family carries to its upstream or takes, rather than dropping or refusing them. */
function describeHistory(model: string, gateway: () => TestGateway, sentBodies: () => unknown[], arm = () => {}): void {
  it('takes the values OpenAI defines: every service_tier word, and modalities ["text"] or an empty list (text, the default)', async () => {
    for (const fields of [
      { modalities: [], service_tier: 'flex' },
      { modalities: ['text'], service_tier: 'fast' },
    ]) {
      arm();
      const before = sentBodies().length;
      const response = await postChatBody(gateway(), { model, messages: ASK, ...fields });
      expect(response.status).toBe(200);
      expect(sentBodies().length - before).toBe(1);
    }
  });

  it("an assistant message's refusal content part reaches the upstream as that message's text", async () => {
    arm();
    const before = sentBodies().length;
    const response = await postChatBody(gateway(), {
      model,
      messages: [
        ...ASK,
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I will not name that city.' }] },
        { role: 'user', content: 'Why not?' },
      ],
    });
    expect(response.status).toBe(200);
    const sent = sentBodies().slice(before);
    expect(sent).toHaveLength(1);
    const body = JSON.stringify(sent[0]);
    expect(body).toContain('I will not name that city.');
    expect(body.indexOf('I will not name that city.')).toBeLessThan(body.indexOf('Why not?'));
  });

  it('takes tool names exactly as sent: "read_file" and "read_file " are two tools, not one declared twice', async () => {
    arm();
    const before = sentBodies().length;
    const spaced = { type: 'function', function: { name: 'read_file ', parameters: { type: 'object' } } };
    const response = await postChatBody(gateway(), { model, tools: [HISTORY_TOOLS[0], spaced], messages: ASK });
    expect(response.status).toBe(200);
    expect(sentBodies().length - before).toBe(1);
  });

  it('a history with function and custom tool calls reaches the upstream with every call and result', async () => {
    arm();
    const before = sentBodies().length;
    const response = await postChatBody(gateway(), { model, tools: HISTORY_TOOLS, messages: TOOL_HISTORY });
    expect(response.status).toBe(200);
    const sent = sentBodies().slice(before);
    expect(sent).toHaveLength(1);
    const body = JSON.stringify(sent[0]);
    for (const text of ['census.txt', 'CENSUS-FILE-CONTENTS', 'PATCH-INPUT-TEXT', 'PATCH-APPLIED'])
      expect(body).toContain(text);
    expect(body.indexOf('census.txt')).toBeLessThan(body.indexOf('CENSUS-FILE-CONTENTS'));
    expect(body.indexOf('PATCH-INPUT-TEXT')).toBeLessThan(body.indexOf('PATCH-APPLIED'));
  });
}

/** Starts the fake and its gateway for the enclosing describe; before each test resets the fake and arms its responder. */
function useGateway<F extends { reset(): void; close(): Promise<void> }>(
  upstream: FakeUpstream<F>,
  arm: (fake: F) => void,
): () => TestGateway {
  let gateway: TestGateway | undefined;
  beforeAll(async () => {
    gateway = await upstream.start();
  });
  afterAll(() => upstream.stop());
  beforeEach(() => {
    upstream.fake.reset();
    arm(upstream.fake);
  });
  return () => gateway!;
}

describe('provider_a: response_format, refusals and stop sequences', () => {
  const upstream = fakeUpstream({
    homePrefix: 'chat-parameters-a-',
    startFake: () => FakeProviderA.start(),
    settings: (fake, home) => ({
      ...providerASettings(fake, home, { transport: 'ws' }),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_TIMEOUT: '8s',
    }),
  });
  // JSON only when the Responses body carries text.format (the real backend then holds the model to it).
  const gateway = useGateway(upstream, (fake) =>
    fake.respondWith((body) => {
      const asked = (body.text as { format?: unknown } | undefined)?.format !== undefined;
      return [created(), ...(asked ? CITY_JSON : PROSE).map((piece) => textDelta(piece)), completed()];
    }),
  );
  const formats = () =>
    upstream.fake
      .requests()
      .map((request) => (request.body?.text as { format?: unknown } | undefined)?.format)
      .filter((format) => format !== undefined);

  describeStructuredOutput('gpt-5.6-sol', gateway, formats);
  describeRefusals('gpt-5.6-sol', 'provider_a', gateway, () => upstream.fake.requests().length);
  describeHistory('gpt-5.6-sol', gateway, () => upstream.fake.requests().map((request) => request.body));

  it('sends the schema as text.format the way codex exec --output-schema does, and never a sampling field or output cap', async () => {
    await client(gateway()).chat.completions.parse({
      model: 'gpt-5.6-sol',
      messages: ASK,
      response_format: CITY_FORMAT,
      temperature: 0,
      top_p: 0.5,
      max_completion_tokens: 99,
      seed: 1,
    });
    const [request] = upstream.fake.requests();
    // The fake refuses max_output_tokens, temperature and top_p as the backend does; it saw none.
    expect(request.violation).toBeUndefined();
    expect(request.body?.text).toEqual({
      verbosity: 'low',
      format: { type: 'json_schema', strict: true, schema: CITY_FORMAT.json_schema.schema, name: 'city' },
    });
    for (const field of ['temperature', 'top_p', 'max_output_tokens', 'seed', 'stop'])
      expect(request.body).not.toHaveProperty(field);
  });

  it('a stop sequence split across two upstream deltas never reaches the client (stream and not)', async () => {
    upstream.fake.respondWith(() => [
      created(),
      textDelta('Hello wor'),
      textDelta('ld<EN'),
      textDelta('D> and more'),
      completed(),
    ]);
    const streamed = await streamChat(gateway(), { model: 'gpt-5.6-sol', messages: ASK, stop: ['<END>', 'zzz'] });
    expect(contents(streamed).join('')).toBe('Hello world');
    expect(streamed.raw).not.toContain('<EN');
    expect(finishReason(streamed)).toBe('stop');
    expect(streamed.done).toBe(true);
    const completion = await client(gateway()).chat.completions.create({
      model: 'gpt-5.6-sol',
      messages: ASK,
      stop: '<END>',
    });
    expect(completion.choices[0].message.content).toBe('Hello world');
    expect(completion.choices[0].finish_reason).toBe('stop');
  });

  it('tool_choice "required" with a stop sequence in the text before the call: the text is cut, the call still comes (stream and not)', async () => {
    upstream.fake.respondWith(() => [
      created(),
      textDelta('Reading EN'),
      textDelta('D now'),
      ...functionCallItem('call_1', 'read_file', '{"path":"a.txt"}'),
      completed(),
    ]);
    const body = { model: 'gpt-5.6-sol', messages: ASK, tools: [READ_FILE], tool_choice: 'required', stop: 'END' };
    await expectCutTextKeptCall(await streamChat(gateway(), body), await postChatBody(gateway(), body));
  });

  it('a JSON answer a stop sequence would cut is never written: asked again, the whole object written (stream and not)', async () => {
    let answers = 0;
    // Every other answer carries the stop sequence inside the object.
    upstream.fake.respondWith(() => [
      created(),
      ...(answers++ % 2 === 0 ? ['{"city":"STOP', 'X","population":1}'] : CITY_JSON).map((piece) => textDelta(piece)),
      completed(),
    ]);
    for (const stream of [true, false]) {
      const before = upstream.fake.requests().length;
      const response = await postChatBody(gateway(), {
        model: 'gpt-5.6-sol',
        messages: ASK,
        response_format: CITY_FORMAT,
        stop: 'STOPX',
        stream,
      });
      expect(response.status).toBe(200);
      expect(JSON.parse(answerText(stream, await response.text()))).toEqual({ city: 'Paris', population: 2_100_000 });
      expect(upstream.fake.requests().length - before).toBe(2);
    }
  });

  it('three JSON answers a stop sequence would cut end in 422 naming stop, nothing of them written (stream and not)', async () => {
    upstream.fake.respondWith(() => [created(), textDelta('{"city":"STOPX","population":1}'), completed()]);
    for (const stream of [true, false]) {
      const response = await postChatBody(gateway(), {
        model: 'gpt-5.6-sol',
        messages: ASK,
        response_format: { type: 'json_object' },
        stop: ['STOPX'],
        stream,
      });
      expect(response.status).toBe(422);
      expect(((await response.json()) as { error: unknown }).error).toEqual(STOP_CUT_REFUSAL);
    }
    expect(upstream.fake.requests()).toHaveLength(6);
  });
});

describe('provider_b: response_format and sampling upstream', () => {
  const upstream = fakeUpstream({
    homePrefix: 'chat-parameters-b-',
    startFake: () => FakeCodeAssist.start(),
    settings: (fake, home) => ({
      ...providerBSettings(fake, home, { project: 'fake-project' }),
      GATEWAY_PROVIDERS: 'provider_b',
      PROVIDER_B_TIMEOUT: '8s',
    }),
  });
  // JSON only when generationConfig asks for it the way Gemini CLI's generateJson does.
  const gateway = useGateway(upstream, (fake) =>
    fake.respondWith((body) => {
      const asked = body?.request?.generationConfig?.responseMimeType === 'application/json';
      return [
        ...(asked ? CITY_JSON : PROSE).map((piece) => textFrame(piece)),
        finishFrame('STOP', { prompt: 5, candidates: 3, total: 8 }),
      ];
    }),
  );
  const generateRequests = () => [
    ...upstream.fake.requests('streamGenerateContent'),
    ...upstream.fake.requests('generateContent'),
  ];
  const formats = () =>
    generateRequests()
      .map((request) => request.body.request.generationConfig?.responseJsonSchema)
      .filter((schema) => schema !== undefined);

  describeStructuredOutput('gemini-2.5-pro', gateway, formats);
  describeRefusals('gemini-2.5-pro', 'provider_b', gateway, () => generateRequests().length);
  describeHistory('gemini-2.5-pro', gateway, () => generateRequests().map((request) => request.body));

  it('sends responseMimeType + responseJsonSchema and the sampling fields Code Assist takes, never a penalty', async () => {
    await client(gateway()).chat.completions.parse({
      model: 'gemini-2.5-pro',
      messages: ASK,
      response_format: CITY_FORMAT,
      temperature: 0.2,
      top_p: 0.5,
      max_completion_tokens: 99,
      seed: 7,
      stop: ['END'],
      // Gemini 2.5 and later refuse penalties; clients send them by default.
      presence_penalty: 0.5,
      frequency_penalty: 0.4,
    });
    const [request] = generateRequests();
    expect(request.body.request.generationConfig).toEqual({
      thinkingConfig: { includeThoughts: true },
      temperature: 0.2,
      topP: 0.5,
      maxOutputTokens: 99,
      stopSequences: ['END'],
      seed: 7,
      responseMimeType: 'application/json',
      responseJsonSchema: CITY_FORMAT.json_schema.schema,
    });
  });

  it('reasoning_effort: none turns thoughts off, an effort word reaches no wire field, any other value is a 400', async () => {
    const configOf = async (model: string, effort: string) => {
      const before = generateRequests().length;
      const response = await postChatBody(gateway(), { model, messages: ASK, reasoning_effort: effort });
      expect(response.status).toBe(200);
      const sent = generateRequests().slice(before);
      expect(sent).toHaveLength(1);
      return sent[0].body.request.generationConfig;
    };
    // The Gemini CLI sends no effort to Gemini 2.5 and its fixed thinking level to Gemini 3.
    for (const effort of ['minimal', 'low', 'high', 'xhigh'])
      expect(await configOf('gemini-2.5-pro', effort)).toEqual({ thinkingConfig: { includeThoughts: true } });
    expect(await configOf('gemini-3-pro-preview', 'low')).toEqual({
      thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' },
    });
    expect(await configOf('gemini-2.5-pro', 'none')).toBeUndefined();
    const before = generateRequests().length;
    for (const model of ['gemini-2.5-pro', 'provider_b/gemini-9-pro']) {
      const response = await postChatBody(gateway(), { model, messages: ASK, reasoning_effort: 'loud' });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: unknown }).error).toEqual({
        message: `reasoning_effort must be one of none, minimal, low, medium, high, xhigh for model ${model}`,
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'reasoning_effort',
      });
    }
    expect(generateRequests()).toHaveLength(before);
  });

  it('a history call whose arguments are not a JSON object is a 400 naming them, before any upstream call, never sent as {}', async () => {
    /** A turn whose history holds two answered calls, as `[name, arguments]`. */
    const withHistoryCalls = (...calls: [string, string][]) =>
      postChatBody(gateway(), {
        model: 'gemini-2.5-pro',
        tools: HISTORY_TOOLS,
        messages: [
          ...ASK,
          {
            role: 'assistant',
            content: null,
            tool_calls: calls.map(([name, args], index) => ({
              id: `call_${index + 1}`,
              type: 'function',
              function: { name, arguments: args },
            })),
          },
          ...calls.map((_, index) => ({ role: 'tool', tool_call_id: `call_${index + 1}`, content: 'AB'[index] })),
        ],
      });
    const before = generateRequests().length;
    for (const text of ['not json', '[1,2]', '"a.txt"', '7', 'null']) {
      const response = await withHistoryCalls(['read_file', '{"path":"a.txt"}'], ['read_file', text]);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: unknown }).error).toEqual({
        message:
          'messages.1.tool_calls.1.function.arguments: text that is not a JSON object is not supported by provider_b (Gemini takes a call\'s arguments only as an object: send the JSON text of the object the call was made with, or "" for none)',
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'messages',
      });
    }
    expect(generateRequests()).toHaveLength(before);
    // Blank arguments are none ({}), and a function-form call of a custom tool carries raw input text.
    const response = await withHistoryCalls(['read_file', ' '], ['apply_patch', 'RAW PATCH']);
    expect(response.status).toBe(200);
    const [sent] = generateRequests().slice(before);
    expect(sent.body.request.contents[1].parts.map((part: { functionCall: unknown }) => part.functionCall)).toEqual([
      { id: 'call_1', name: 'read_file', args: {} },
      { id: 'call_2', name: 'apply_patch', args: { input: 'RAW PATCH' } },
    ]);
  });

  it('GET /v1/models claims no reasoning_effort for a Gemini model: none is on the wire', async () => {
    const { data } = (await (await fetch(`${gateway().url}/v1/models`)).json()) as {
      data: Record<string, unknown>[];
    };
    const gemini = data.filter((entry) => entry.owned_by === 'provider_b');
    expect(gemini.length).toBeGreaterThan(0);
    for (const entry of gemini) {
      expect(entry).not.toHaveProperty('reasoning_effort');
      expect(entry).not.toHaveProperty('supported_reasoning_efforts');
    }
  });
});

describe('provider_c: response_format and stop enforced by the gateway', () => {
  const upstream = fakeUpstream({
    homePrefix: 'chat-parameters-c-',
    startFake: () => FakeAnthropicApi.start(),
    settings: (fake, home) => realClaudeGatewaySettings(fake.baseUrl, home),
  });
  let api: FakeAnthropicApi;
  let gateway: TestGateway;
  let sweep: KeepAliveSweep;
  beforeAll(async () => {
    gateway = await upstream.start();
    api = upstream.fake;
    // Keep-alive rounds run only when a test runs them: a held answer's head goes out only with a
    // comment a round writes, so the 422 of a refusal does not depend on the machine's speed.
    sweep = gateway.app.get(KeepAliveSweep, { strict: false });
    sweep.sweepOnlyWhenCalled();
  });
  afterAll(() => upstream.stop());

  describeRefusals(
    'claude-fable-5',
    'provider_c',
    () => gateway,
    () => api.messages().length,
  );
  describeHistory(
    'claude-fable-5',
    () => gateway,
    () => api.messages().map((message) => message.body),
    () => api.enqueue(claudeTextReply(PROSE, { input_tokens: 3, output_tokens: 4 })),
  );

  it('reasoning_effort outside the CLI levels and the words that send none is a 400 before any claude runs', async () => {
    const before = api.messages().length;
    for (const model of ['claude-fable-5', 'provider_c/claude-fable-9']) {
      const response = await postChatBody(gateway, { model, messages: ASK, reasoning_effort: 'loud' });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: unknown }).error).toEqual({
        message: `reasoning_effort must be one of none, minimal, low, medium, high, xhigh, max for model ${model}`,
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'reasoning_effort',
      });
    }
    expect(api.messages()).toHaveLength(before);
  });

  it('reasoning_effort none turns thinking off where the model can, minimal asks the least thinking: the API request the real CLI sends', async () => {
    /** What the CLI asked the API for on one request: its thinking and effort. */
    const thinkingOf = async (model: string, reasoning_effort?: string) => {
      api.enqueue(claudeTextReply('ok', usage));
      const response = await postChatBody(gateway, { model, messages: ASK, reasoning_effort });
      expect(response.status).toBe(200);
      const body = api.messages().at(-1)?.body as { thinking?: unknown; output_config?: unknown };
      return { thinking: body.thinking, output_config: body.output_config };
    };
    const adaptive = { type: 'adaptive', display: 'updates' };
    // Without an effort the CLI's default: adaptive thinking at the model's default effort.
    expect(await thinkingOf('claude-fable-5')).toEqual({ thinking: adaptive, output_config: { effort: 'high' } });
    // A model that can answer without thinking gets none, at the lowest effort.
    expect(await thinkingOf('claude-opus-4-8', 'none')).toEqual({
      thinking: { type: 'disabled' },
      output_config: { effort: 'low' },
    });
    expect((await thinkingOf('claude-haiku-4-5-20251001', 'none')).thinking).toEqual({ type: 'disabled' });
    // One that always thinks (the CLI keeps it adaptive) thinks at the lowest effort.
    expect(await thinkingOf('claude-fable-5', 'none')).toEqual({
      thinking: adaptive,
      output_config: { effort: 'low' },
    });
    expect(await thinkingOf('claude-fable-5', 'minimal')).toEqual({
      thinking: adaptive,
      output_config: { effort: 'low' },
    });
    expect(await thinkingOf('claude-opus-4-8', 'minimal')).toEqual({
      thinking: adaptive,
      output_config: { effort: 'low' },
    });
    // A model that thinks on a budget (no effort levels) gets the smallest budget the API takes.
    expect((await thinkingOf('claude-haiku-4-5-20251001', 'minimal')).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 1024,
      display: 'updates',
    });
  });

  const usage = { input_tokens: 3, output_tokens: 4 };
  const fencedCity = ['```json\n{"city":"Pa', 'ris","population":', '2100000}\n```'];

  it('parse() with a Zod schema returns the parsed object: the schema went into the prompt, only the object comes back', async () => {
    api.enqueue(claudeTextReply(fencedCity, usage));
    const completion = await client(gateway).chat.completions.parse({
      model: 'claude-fable-5',
      messages: ASK,
      response_format: CITY_FORMAT,
    });
    expect(completion.choices[0].message.parsed).toEqual({ city: 'Paris', population: 2_100_000 });
    expect(completion.choices[0].message.content).toBe('{"city":"Paris","population":2100000}');
    expect(JSON.stringify(api.messages().at(-1)?.body)).toContain(
      JSON.stringify(JSON.stringify(CITY_FORMAT.json_schema.schema)).slice(1, -1),
    );
  });

  it('stream() with a Zod schema asks again after prose and streams only the valid object', async () => {
    api.enqueue(claudeTextReply(PROSE, usage), claudeTextReply(fencedCity, usage));
    const before = api.messages().length;
    const stream = client(gateway).chat.completions.stream({
      model: 'claude-fable-5',
      messages: ASK,
      response_format: CITY_FORMAT,
    });
    const deltas: string[] = [];
    stream.on('content.delta', ({ delta }) => deltas.push(delta));
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0].message.parsed).toEqual({ city: 'Paris', population: 2_100_000 });
    expect(deltas.join('')).not.toContain('Sure');
    expect(api.messages().length - before).toBe(2);
  });

  it('an answer whose only tool call is empty is judged by its text: prose is asked again, not let through', async () => {
    api.enqueue(
      claudeTextReply(['Sure! The largest city is Paris.\n', '```agent_tool_call\n```'], usage),
      claudeTextReply(fencedCity, usage),
    );
    const before = api.messages().length;
    const response = await postChatBody(gateway, {
      model: 'claude-fable-5',
      messages: ASK,
      tools: [READ_FILE],
      response_format: CITY_FORMAT,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { message: { content: string }; finish_reason: string }[] };
    expect(body.choices[0]).toMatchObject({
      message: { content: '{"city":"Paris","population":2100000}' },
      finish_reason: 'stop',
    });
    expect(api.messages().length - before).toBe(2);
  });

  it("an answer asked again: the client is told the delivered attempt's usage, the token counters count every attempt", async () => {
    api.enqueue(
      claudeTextReply(PROSE, { input_tokens: 100, output_tokens: 10 }),
      claudeTextReply(CITY_JSON, { input_tokens: 1000, output_tokens: 7 }),
    );
    const before = await tokenCounters(gateway, 'provider_c');
    const response = await postChatBody(gateway, {
      model: 'claude-fable-5',
      messages: ASK,
      response_format: { type: 'json_object' },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { usage: unknown }).usage).toEqual({
      prompt_tokens: 1000,
      completion_tokens: 7,
      total_tokens: 1007,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    expect(await tokensSince(gateway, 'provider_c', before)).toEqual({ prompt: 1100, completion: 17, cached: 0 });
  });

  it('tool_choice required asked again: the token counters count the attempt without a call too', async () => {
    api.enqueue(
      claudeTextReply(PROSE, { input_tokens: 100, output_tokens: 10 }),
      claudeTextReply(['Reading it.\n', fenceText('read_file', { path: 'a.txt' })], {
        input_tokens: 1000,
        output_tokens: 7,
      }),
    );
    const before = await tokenCounters(gateway, 'provider_c');
    const response = await postChatBody(gateway, {
      model: 'claude-fable-5',
      messages: ASK,
      tools: [READ_FILE],
      tool_choice: 'required',
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { finish_reason: string }[]; usage: unknown };
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(body.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 7 });
    expect(await tokensSince(gateway, 'provider_c', before)).toEqual({ prompt: 1100, completion: 17, cached: 0 });
  });

  /**
   * A streamed answer held and asked again once: the rejected attempt's text reaches the gateway at
   * once, the accepted attempt's first word only when the test releases it. Returns what
   * `gateway_chat_api_time_to_first_token_seconds` and the token counters rose by, the client's
   * content, and a time the first token cannot have come sooner than: from a moment the request had
   * surely arrived (its first claude run asked the API) to the release.
   */
  async function heldFirstToken(ask: Record<string, unknown>, accepted: readonly string[]) {
    let release!: () => void;
    const thinking = new Promise<void>((resolve) => (release = resolve));
    api.enqueue(claudeTextReply(PROSE, { input_tokens: 100, output_tokens: 10 }), {
      ...claudeTextReply(accepted, { input_tokens: 1000, output_tokens: 7 }),
      thinkUntil: thinking,
    });
    const firstToken = async () => {
      const text = await scrapeMetrics(gateway);
      const labels = { provider: 'provider_c' };
      return {
        sum: sampleValue(text, 'gateway_chat_api_time_to_first_token_seconds_sum', labels) ?? 0,
        count: sampleValue(text, 'gateway_chat_api_time_to_first_token_seconds_count', labels) ?? 0,
      };
    };
    const before = { firstToken: await firstToken(), tokens: await tokenCounters(gateway, 'provider_c') };
    const calls = api.messages().length;
    let arrivedBy: number;
    let releasedAt: number;
    let sent: Promise<Response>;
    try {
      const sentAt = performance.now();
      sent = postChatBody(gateway, { model: 'claude-fable-5', messages: ASK, stream: true, ...ask });
      await eventually(() => api.messages().length > calls, 30_000, 'the first attempt at the API');
      arrivedBy = performance.now();
      // The second call comes after the rejected attempt was read whole, its text included.
      await eventually(() => api.messages().length - calls === 2, 30_000, 'the second attempt at the API');
      // Released at least as long after the second call as the request took to reach the API: a
      // first token counted at the rejected text, before that call, would fall short of `notBefore`.
      await new Promise((resolve) => setTimeout(resolve, arrivedBy - sentAt));
      releasedAt = performance.now();
    } finally {
      // Also when the test failed before: the held reply never outlives it.
      release();
    }
    const response = await sent;
    expect(response.status).toBe(200);
    const streamed = sseChunks(await response.text());
    const after = await firstToken();
    return {
      content: streamed.chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join(''),
      firstToken: { sum: after.sum - before.firstToken.sum, count: after.count - before.firstToken.count },
      notBefore: (releasedAt - arrivedBy) / 1000,
      tokens: await tokensSince(gateway, 'provider_c', before.tokens),
    };
  }

  // Both clocks round to the millisecond: the arrival is an epoch millisecond.
  const CLOCK_ROUNDING_SECONDS = 0.005;

  it("time to first token of a held response_format answer asked again counts to the accepted object the client got, not the rejected attempt's text", async () => {
    const held = await heldFirstToken({ response_format: CITY_FORMAT }, fencedCity);
    expect(held.content).toBe('{"city":"Paris","population":2100000}');
    expect(held.firstToken.count).toBe(1);
    expect(held.firstToken.sum).toBeGreaterThanOrEqual(held.notBefore - CLOCK_ROUNDING_SECONDS);
    // The rejected attempt still counts, as a held answer's usage always did.
    expect(held.tokens).toEqual({ prompt: 1100, completion: 17, cached: 0 });
  });

  it("time to first token of a tool_choice required answer asked again counts to the held turn's release, not the rejected attempt's text", async () => {
    const held = await heldFirstToken({ tools: [READ_FILE], tool_choice: 'required' }, [
      'Reading it.\n',
      fenceText('read_file', { path: 'a.txt' }),
    ]);
    expect(held.content).toBe('Reading it.\n');
    expect(held.firstToken.count).toBe(1);
    expect(held.firstToken.sum).toBeGreaterThanOrEqual(held.notBefore - CLOCK_ROUNDING_SECONDS);
    expect(held.tokens).toEqual({ prompt: 1100, completion: 17, cached: 0 });
  });

  it('asks again after a number too large for a double, which would go out as null', async () => {
    api.enqueue(claudeTextReply(['{"city":"Paris","population":1e400}'], usage), claudeTextReply(CITY_JSON, usage));
    const before = api.messages().length;
    // A plain `number`, unbounded (Zod's int() would add safe-integer bounds that Infinity breaks anyway).
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, population: { type: 'number' } },
      required: ['city', 'population'],
    };
    const completion = await client(gateway).chat.completions.create({
      model: 'claude-fable-5',
      messages: ASK,
      response_format: { type: 'json_schema', json_schema: { name: 'city', schema } },
    });
    expect(completion.choices[0].message.content).toBe('{"city":"Paris","population":2100000}');
    expect(api.messages().length - before).toBe(2);
  });

  it('asks again after a number too large for a double where no type is checked: an untyped field, json_object', async () => {
    const formats = [
      {
        type: 'json_schema' as const,
        json_schema: { name: 'city', schema: { type: 'object', properties: { city: {}, population: {} } } },
      },
      { type: 'json_schema' as const, json_schema: { name: 'anything', schema: { description: 'anything' } } },
      { type: 'json_object' as const },
    ];
    for (const response_format of formats) {
      // Parsed as Infinity, it would go out as null: a value the model never wrote.
      api.enqueue(
        claudeTextReply(['{"city":"Paris","population":[1,-2e400]}'], usage),
        claudeTextReply(CITY_JSON, usage),
      );
      const before = api.messages().length;
      const completion = await client(gateway).chat.completions.create({
        model: 'claude-fable-5',
        messages: ASK,
        response_format,
      });
      expect(completion.choices[0].message.content).toBe('{"city":"Paris","population":2100000}');
      expect(api.messages().length - before).toBe(2);
    }
    const overflowing = claudeTextReply(['{"city":"Paris","population":1' + '0'.repeat(309) + '}'], usage);
    api.enqueue(overflowing, overflowing, overflowing);
    const refused = await postChatBody(gateway, {
      model: 'claude-fable-5',
      messages: ASK,
      response_format: formats[0],
    });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('output_validation_failed');
  });

  it('a streamed answer held past a silent round: the head and a comment keep its connection, then only the object', async () => {
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    api.enqueue({ ...claudeTextReply(PROSE, usage), holdUntil: held }, claudeTextReply(fencedCity, usage));
    const sent = postChatBody(gateway, {
      model: 'claude-fable-5',
      messages: ASK,
      stream: true,
      response_format: CITY_FORMAT,
    });
    // Held once the first attempt was accepted; the first round finds it just held, the second silent.
    await eventually(() => sweep.size === 1, 30_000, 'the held answer in the keep-alive sweep');
    sweep.sweep();
    sweep.sweep();
    const response = await sent;
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect(await readUntil(reader, '\n\n')).toBe(': keep-alive\n\n');
    open();
    const { chunks, done } = sseChunks(await readRest(reader));
    expect(chunks.map((chunk) => chunk.choices[0])).toEqual([
      { index: 0, delta: { role: 'assistant' }, finish_reason: null },
      { index: 0, delta: { content: '{"city":"Paris","population":2100000}' }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: 'stop' },
    ]);
    expect(done).toBe(true);
  });

  it('three answers that are not the object end in 422 output_validation_failed, nothing streamed', async () => {
    api.enqueue(
      claudeTextReply(PROSE, usage),
      claudeTextReply(PROSE, usage),
      claudeTextReply(['{"city":"Paris"}'], usage),
    );
    const before = await tokenCounters(gateway, 'provider_c');
    const streamed = await streamChat(gateway, {
      model: 'claude-fable-5',
      messages: ASK,
      response_format: CITY_FORMAT,
    });
    expect(streamed.status).toBe(422);
    expect(streamed.body).toEqual({
      error: {
        message:
          'the model\'s answer did not satisfy response_format in 3 attempts; send the request again, make the schema simpler or say in the messages what to answer, or choose a model whose family holds answers to the schema upstream (docs/chat.md "Structured output")',
        type: 'upstream_error',
        code: 'output_validation_failed',
        param: 'response_format',
      },
    });
    // Every attempt was billed, though none was delivered.
    expect(await tokensSince(gateway, 'provider_c', before)).toEqual({ prompt: 9, completion: 12, cached: 0 });
  });

  it('a schema Ajv cannot compile is a 400 naming response_format and the reason, before any claude run', async () => {
    const before = api.messages().length;
    const schemaOf = (schema: Record<string, unknown>) => ({
      type: 'json_schema' as const,
      json_schema: { name: 'bad', schema },
    });
    const cases: [Record<string, unknown>, string][] = [
      [{ $ref: '#/$defs/nope' }, "can't resolve reference #/$defs/nope"],
      [{ $ref: 'http://127.0.0.1:9/s.json' }, "can't resolve reference http://127.0.0.1:9/s.json"],
      [{ type: 'string', pattern: '(' }, 'error parsing regexp'],
      [{ type: 'string', pattern: '(?<=a)b' }, 'invalid named capture'],
    ];
    for (const [schema, reason] of cases) {
      const error = await refusal(
        client(gateway).chat.completions.create({
          model: 'claude-fable-5',
          messages: ASK,
          response_format: schemaOf(schema),
        }),
      );
      expect(error.status).toBe(400);
      expect(error.param).toBe('response_format');
      expect(error.message).toContain('response_format.json_schema.schema is not a valid JSON Schema');
      expect(error.message).toContain(reason);
    }
    expect(api.messages().length).toBe(before);
  });

  it('a schema declaring or requiring a property named __proto__ is a 400 naming response_format and the places, before any claude run', async () => {
    const marker = 'PROTO-SCHEMA-MARKER';
    // Answers that meet the schema as written: the validator would refuse every one of them.
    const meets = () => claudeTextReply(['{"__proto__":"x","city":"Paris"}'], usage);
    api.scriptFor(marker, [meets(), meets(), meets()]);
    // Parsed from text: an object literal's `__proto__` key would set its prototype instead.
    const cases: [string, string][] = [
      [
        '{"type":"object","properties":{"__proto__":{"type":"string"},"city":{"type":"string"}},"required":["__proto__","city"],"additionalProperties":false}',
        '$',
      ],
      [
        '{"$defs":{"inner":{"type":"object","required":["__proto__"]}},"anyOf":[{"$ref":"#/$defs/inner"},{"properties":{"a":{"properties":{"__proto__":{}}}}}]}',
        '$/$defs.inner, $/anyOf[1].a',
      ],
    ];
    for (const [schema, places] of cases) {
      const response = await postChatBody(gateway, {
        model: 'claude-fable-5',
        messages: [{ role: 'user', content: `Name the largest city of France. ${marker}` }],
        response_format: { type: 'json_schema', json_schema: { name: 'proto', schema: JSON.parse(schema) as unknown } },
      });
      expect([response.status, ((await response.json()) as { error: unknown }).error]).toEqual([
        400,
        {
          message: `response_format.json_schema.schema declares or requires a property named "__proto__", which the gateway cannot check answers for (at ${places}); rename it (docs/chat.md "Structured output")`,
          type: 'invalid_request_error',
          code: 'invalid_request',
          param: 'response_format',
        },
      ]);
    }
    expect(api.messages(marker)).toHaveLength(0);
  });

  it('a schema over the size bounds is a 400 naming the field and the bound, before any compile or claude run', async () => {
    const before = api.messages().length;
    const validator = gateway.app.get(OutputValidator, { strict: false });
    const compiled = validator.compileCount;
    const names = Array.from({ length: 7_700 }, (_, index) => `field_${index}`);
    // About 250 KB, far inside the body cap: the gateway once compiled it on the event loop, holding
    // every other request for hundreds of milliseconds, before checking the answer against it.
    const wide = {
      type: 'object',
      properties: Object.fromEntries(names.map((name) => [name, { type: 'string' }])),
      required: names,
      additionalProperties: false,
    };
    expect(Buffer.byteLength(JSON.stringify(wide))).toBeGreaterThan(240_000);
    const nodes =
      '$: the schema has 7701 nodes (the root, each property\'s schema, each "items" schema and any other object); at most 1000 are allowed';
    const cases: [Record<string, unknown>, string][] = [
      [wide, nodes],
      // Ajv compiles whatever a `$ref` points at, under any key: every object counts.
      [{ $ref: '#/x-wide', 'x-wide': wide }, nodes.replace('7701', '7702')],
      [
        { type: 'string', enum: Array.from({ length: 1_001 }, (_, index) => `v${index}`) },
        '$: the schema has 1001 enum values in all; at most 1000 are allowed',
      ],
    ];
    for (const [schema, bound] of cases) {
      const response = await postChatBody(gateway, {
        model: 'claude-fable-5',
        messages: ASK,
        response_format: { type: 'json_schema', json_schema: { name: 'wide', schema } },
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: unknown }).error).toEqual({
        message: `response_format.json_schema.schema is too large for the gateway to check answers against (${bound}); make it smaller (docs/chat.md "Structured output")`,
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'response_format',
      });
    }
    expect(validator.compileCount).toBe(compiled);
    expect(api.messages()).toHaveLength(before);
  });

  it('a hosted tool is a 400 naming tools, before any claude run', async () => {
    const before = api.messages().length;
    const response = await postChatBody(gateway, {
      model: 'claude-fable-5',
      messages: ASK,
      tools: [{ type: 'web_search' }],
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: unknown }).error).toEqual({
      message:
        'tools.0 is the hosted tool "web_search", which provider_c cannot take: the claude CLI is given only the function and custom tools the client executes; drop the tool',
      type: 'invalid_request_error',
      code: 'invalid_request',
      param: 'tools',
    });
    expect(api.messages().length).toBe(before);
  });

  it("one request's schema $id is never another's: the same $id twice compiles, and a $ref to it resolves nowhere", async () => {
    api.enqueue(claudeTextReply(CITY_JSON, usage), claudeTextReply(['{"n":1}'], usage));
    const shared = 'https://schemas.example/shared';
    const first = await client(gateway).chat.completions.create({
      model: 'claude-fable-5',
      messages: ASK,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'city', schema: { ...CITY_FORMAT.json_schema.schema, $id: shared } },
      },
    });
    expect(JSON.parse(first.choices[0].message.content!)).toEqual({ city: 'Paris', population: 2_100_000 });
    const stolen = await refusal(
      client(gateway).chat.completions.create({
        model: 'claude-fable-5',
        messages: ASK,
        response_format: { type: 'json_schema', json_schema: { name: 'other', schema: { $ref: shared } } },
      }),
    );
    expect(stolen.message).toContain(`can't resolve reference ${shared}`);
    const again = await client(gateway).chat.completions.create({
      model: 'claude-fable-5',
      messages: ASK,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'again', schema: { $id: shared, type: 'object', properties: { n: { type: 'number' } } } },
      },
    });
    expect(again.choices[0].message.content).toBe('{"n":1}');
  });

  it('tool_choice "required" with a stop sequence in the text before the call: the text is cut, the held call still comes (stream and not)', async () => {
    const reply = () => claudeTextReply(['Reading EN', 'D now\n', fenceText('read_file', { path: 'a.txt' })], usage);
    api.enqueue(reply(), reply());
    const before = api.messages().length;
    const body = {
      model: 'claude-fable-5',
      messages: ASK,
      tools: [READ_FILE],
      tool_choice: 'required',
      stop: 'END',
    };
    await expectCutTextKeptCall(await streamChat(gateway, body), await postChatBody(gateway, body));
    // The call met the choice on the first attempt of each: nothing was asked again.
    expect(api.messages().length - before).toBe(2);
  });

  it('a JSON answer a stop sequence would cut is asked again before anything is written (stream and not)', async () => {
    for (const stream of [true, false]) {
      api.enqueue(claudeTextReply(['{"city":"STOP', 'X","population":1}'], usage), claudeTextReply(CITY_JSON, usage));
      const before = api.messages().length;
      const response = await postChatBody(gateway, {
        model: 'claude-fable-5',
        messages: ASK,
        response_format: { type: 'json_object' },
        stop: 'STOPX',
        stream,
      });
      expect(response.status).toBe(200);
      expect(answerText(stream, await response.text())).toBe('{"city":"Paris","population":2100000}');
      expect(api.messages().length - before).toBe(2);
    }
  });

  it('a stop sequence after the whole JSON object cuts nothing of it', async () => {
    api.enqueue(claudeTextReply(['{"city":"Paris","population":2100000}', '\nSTOPX and prose'], usage));
    const completion = await client(gateway).chat.completions.parse({
      model: 'claude-fable-5',
      messages: ASK,
      response_format: CITY_FORMAT,
      stop: 'STOPX',
    });
    expect(completion.choices[0].message.parsed).toEqual({ city: 'Paris', population: 2_100_000 });
  });

  it('three JSON answers a stop sequence cuts short end in 422 naming stop, nothing of them written (stream and not)', async () => {
    for (const stream of [true, false]) {
      const cut = claudeTextReply(['{"city":"STOPX","population":1}'], usage);
      api.enqueue(cut, cut, cut);
      const before = api.messages().length;
      const response = await postChatBody(gateway, {
        model: 'claude-fable-5',
        messages: ASK,
        response_format: CITY_FORMAT,
        stop: ['STOPX'],
        stream,
      });
      expect(response.status).toBe(422);
      expect(((await response.json()) as { error: unknown }).error).toEqual(STOP_CUT_REFUSAL);
      expect(api.messages().length - before).toBe(3);
    }
  });

  it('a stop sequence split across two deltas of the CLI never reaches the client', async () => {
    api.enqueue(claudeTextReply(['Counting: one two', ' thr', 'ee four'], { input_tokens: 3, output_tokens: 4 }));
    const streamed = await streamChat(gateway, { model: 'claude-fable-5', messages: ASK, stop: 'three' });
    expect(contents(streamed).join('')).toBe('Counting: one two ');
    expect(streamed.raw).not.toContain('thr');
    expect(finishReason(streamed)).toBe('stop');
    expect(streamed.done).toBe(true);
  });

  it("an answer the CLI asked again after a broken stream: the client is told the delivered message's usage, the token counters the run's sum (docs/upstream/provider-c.md §8.1)", async () => {
    const run = (): FakeStreamReply[] => [
      {
        ...claudeTextReply(['Hel'], { input_tokens: 100, output_tokens: 10 }),
        failMidway: { errorType: 'overloaded_error', message: 'Overloaded' },
      },
      claudeTextReply('Hello', { input_tokens: 1000, cache_read_input_tokens: 50, output_tokens: 7 }),
    ];
    const delivered = {
      prompt_tokens: 1050,
      completion_tokens: 7,
      total_tokens: 1057,
      prompt_tokens_details: { cached_tokens: 50 },
    };
    // The run's sum: the broken message's prompt and its first output token, and the answer's.
    const sum = { prompt: 1150, completion: 8, cached: 50 };
    api.enqueue(...run());
    let before = await tokenCounters(gateway, 'provider_c');
    const streamed = await streamChat(gateway, {
      model: 'claude-fable-5',
      messages: ASK,
      stream_options: { include_usage: true },
    });
    expect(contents(streamed).join('')).toBe('Hello');
    expect(streamed.chunks.at(-1)?.usage).toEqual(delivered);
    expect(await tokensSince(gateway, 'provider_c', before)).toEqual(sum);
    api.enqueue(...run());
    before = await tokenCounters(gateway, 'provider_c');
    const plain = await postChatBody(gateway, { model: 'claude-fable-5', messages: ASK });
    expect(plain.status).toBe(200);
    expect(((await plain.json()) as { usage: unknown }).usage).toEqual(delivered);
    expect(await tokensSince(gateway, 'provider_c', before)).toEqual(sum);
  });

  it("a run that failed before any text and was retried by the gateway: the client is told the retry's usage, the token counters both runs'", async () => {
    // The first run's message reports its prompt at message_start, then breaks before any text;
    // the CLI sends it again once, is refused, and the run fails, so the gateway retries it.
    api.enqueue(
      {
        type: 'stream',
        blocks: [{ kind: 'text', deltas: [] }],
        usage: { input_tokens: 1000, output_tokens: 1 },
        failMidway: { errorType: 'overloaded_error', message: 'Overloaded' },
      },
      API_ERRORS.overloaded(),
      claudeTextReply('Hello', { input_tokens: 7, output_tokens: 3 }),
    );
    const before = await tokenCounters(gateway, 'provider_c');
    const retriesBefore = gateway.logs.records('upstream_retry').length;
    const streamed = await streamChat(gateway, {
      model: 'claude-fable-5',
      messages: ASK,
      stream_options: { include_usage: true },
    });
    expect(contents(streamed).join('')).toBe('Hello');
    expect(streamed.chunks.at(-1)?.usage).toEqual({
      prompt_tokens: 7,
      completion_tokens: 3,
      total_tokens: 10,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    expect(gateway.logs.records('upstream_retry')).toHaveLength(retriesBefore + 1);
    // The broken message's prompt and the one output token message_start reports, and the answer's.
    expect(await tokensSince(gateway, 'provider_c', before)).toEqual({ prompt: 1007, completion: 4, cached: 0 });
  });

  it("an answer of thinking only the CLI asked again: the client is told the new answer's usage, the token counters both calls' (docs/upstream/provider-c.md §6.2)", async () => {
    const run = (): FakeStreamReply[] => [
      thinkingOnlyReply(['Pondering'], { input_tokens: 100, output_tokens: 10 }),
      {
        type: 'stream',
        blocks: [
          { kind: 'thinking', deltas: ['Pondering again'] },
          { kind: 'text', deltas: ['Hello'] },
        ],
        usage: { input_tokens: 1000, cache_read_input_tokens: 50, output_tokens: 7 },
      },
    ];
    const delivered = {
      prompt_tokens: 1050,
      completion_tokens: 7,
      total_tokens: 1057,
      prompt_tokens_details: { cached_tokens: 50 },
    };
    // Both API calls were billed: the answer without text and the one that replaced it.
    const sum = { prompt: 1150, completion: 17, cached: 50 };
    for (const stream of [true, false]) {
      api.enqueue(...run());
      const before = await tokenCounters(gateway, 'provider_c');
      const calls = api.messages().length;
      const response = await postChatBody(gateway, {
        model: 'claude-fable-5',
        messages: ASK,
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
      });
      expect(response.status).toBe(200);
      const raw = await response.text();
      expect(answerText(stream, raw)).toBe('Hello');
      const usage = stream ? sseChunks(raw).chunks.at(-1)?.usage : JSON.parse(raw).usage;
      expect(usage).toEqual(delivered);
      expect(await tokensSince(gateway, 'provider_c', before)).toEqual(sum);
      expect(api.messages().length - calls).toBe(2);
    }
  });

  it('a stop sequence cut before the run ends still reports the prompt the API read, to the client and the token counters', async () => {
    // The API's stop events wait until the test ends: the cut comes before any message_delta or result line.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    api.enqueue({
      ...claudeTextReply(['Hello ', 'STOP', ' more text'], {
        input_tokens: 1000,
        cache_read_input_tokens: 500,
        output_tokens: 30,
      }),
      holdUntil: held,
    });
    const before = await tokenCounters(gateway, 'provider_c');
    try {
      const streamed = await streamChat(gateway, {
        model: 'claude-fable-5',
        messages: ASK,
        stop: ['STOP'],
        stream_options: { include_usage: true },
      });
      expect(contents(streamed).join('')).toBe('Hello ');
      expect(finishReason(streamed)).toBe('stop');
      // message_start's usage: the prompt (input + cache read) and the one output token it counts.
      expect(streamed.chunks.at(-1)?.usage).toEqual({
        prompt_tokens: 1500,
        completion_tokens: 1,
        total_tokens: 1501,
        prompt_tokens_details: { cached_tokens: 500 },
      });
      expect(await tokensSince(gateway, 'provider_c', before)).toEqual({ prompt: 1500, completion: 1, cached: 500 });
    } finally {
      release();
    }
  });
});
