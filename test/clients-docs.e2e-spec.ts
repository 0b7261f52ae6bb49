import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { AIMessageChunk, BaseMessage } from '@langchain/core/messages';
import { ChatOpenAI, ChatOpenAICompletions } from '@langchain/openai';
import { jsonSchema, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { bundledTierModel } from './support/bundled-tiers';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorSpec } from '../src/core/error-codes';
import { REPO_ROOT } from './support/child-gateway';
import { rawRequest } from './support/raw-http';
import { fakeUpstream, READ_FILE_PARAMETERS } from './support/client-scenarios';
import { FakeProviderA } from './support/fake-provider-a';
import {
  completed,
  created,
  DEFAULT_USAGE,
  errorEvent,
  functionCallItem,
  providerASettings,
  textDelta,
} from './support/provider-a-fixtures';

/**
 * What docs/clients.md's SDK sections rely on, checked in detail: the SDKs that can run offline
 * (`openai` 7, the AI SDK 7, LangChain.js's `@langchain/openai` 1.x) configured as the page shows,
 * with the prefix-free alias `sol` (and, for LangChain.js, the `gpt-5.6-sol` id its `ChatOpenAI`
 * sends to the Responses API), against the gateway and a scripted fake provider_a. The alias must
 * reach the upstream as the sol tier model with the catalog's effort, and be counted under its own
 * name. The live model list is off, so the tiers are the bundled catalog's. The page's code blocks
 * themselves are taken out of the Markdown and run as written by
 * test/docs-run.e2e-spec.ts.
 */
const ALIAS = 'alias-check';

const upstream = fakeUpstream({
  homePrefix: 'clients-docs-',
  startFake: () => FakeProviderA.start(),
  settings: (fake, home) => ({
    ...providerASettings(fake, home, { transport: 'sse' }),
    GATEWAY_PROVIDERS: 'provider_a',
    PROVIDER_A_TIMEOUT: '8s',
    PROVIDER_A_MODELS_REFRESH: '0',
  }),
});
let baseURL = '';
const offLoopback: string[] = [];
const realFetch = globalThis.fetch;

/**
 * Records any fetch that leaves loopback and answers it at once with a 404, never reaching the
 * internet. A 404 because LangChain.js does not retry one: a refused connection would make its
 * tiktoken download (docs/clients.md, LangChain "Quirk") retry for about a minute and a half.
 */
function loopbackOnlyFetch(input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.hostname !== '127.0.0.1') {
    offLoopback.push(url.origin);
    return Promise.resolve(new Response('blocked: tests stay on loopback', { status: 404 }));
  }
  return realFetch(input, init);
}
let callCount = 0;

function scriptText(pieces: readonly string[]): void {
  upstream.fake.enqueue({ frames: [created(), ...pieces.map((piece) => textDelta(piece)), completed()] });
}

function scriptReadFileCall(path: string): string {
  const id = `call_docs_${++callCount}`;
  upstream.fake.enqueue({
    frames: [created(), ...functionCallItem(id, 'read_file', JSON.stringify({ path }), { fragments: 3 }), completed()],
  });
  return id;
}

/** What the fake received last: the model and effort the alias resolved to. */
function lastUpstreamModel(): { model: unknown; effort: unknown } {
  const body = upstream.fake.lastBody() as { model?: unknown; reasoning?: { effort?: unknown } } | undefined;
  return { model: body?.model, effort: body?.reasoning?.effort };
}

beforeAll(async () => {
  globalThis.fetch = loopbackOnlyFetch;
  const gateway = await upstream.start();
  baseURL = `${gateway.url}/v1`;
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  await upstream.stop();
});
beforeEach(() => upstream.fake.reset());

describe('docs/clients.md "Model ids"', () => {
  it('lists the tier aliases beside the ids of the tier models in /v1/models', async () => {
    const client = new OpenAI({ baseURL, apiKey: ALIAS, maxRetries: 0 });
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    for (const tier of ['sol', 'terra', 'luna'] as const) {
      const model = bundledTierModel(tier).model;
      expect(ids).toEqual(expect.arrayContaining([tier, `${tier}-high`, `${tier}-fast-xhigh`, model, `${model}-high`]));
    }
  });
});

describe('the openai SDK as configured in docs/clients.md', () => {
  it('streams a tool call for `sol`, reports usage, and sends the sol tier model upstream with its catalog effort', async () => {
    const client = new OpenAI({ baseURL, apiKey: ALIAS, maxRetries: 0, timeout: 8000 });
    const callId = scriptReadFileCall('README.md');
    const completion = await client.chat.completions
      .stream({
        model: 'sol',
        messages: [{ role: 'user', content: 'What is in README.md?' }],
        tools: [{ type: 'function', function: { name: 'read_file', parameters: READ_FILE_PARAMETERS } }],
        stream_options: { include_usage: true },
      })
      .finalChatCompletion();
    expect(completion.model).toBe('sol');
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(completion.choices[0].message.tool_calls).toEqual([
      { id: callId, type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } },
    ]);
    expect(completion.usage).toMatchObject({
      prompt_tokens: DEFAULT_USAGE.input_tokens,
      completion_tokens: DEFAULT_USAGE.output_tokens,
    });
    expect(lastUpstreamModel()).toEqual(bundledTierModel('sol'));
  });

  it('counts the alias under its own name in gateway_chat_api_requests_total', async () => {
    scriptText(['ok']);
    const client = new OpenAI({ baseURL, apiKey: ALIAS, maxRetries: 0, timeout: 8000 });
    await client.chat.completions.create({ model: 'terra-high', messages: [{ role: 'user', content: 'hi' }] });
    expect(lastUpstreamModel()).toEqual({ model: bundledTierModel('terra').model, effort: 'high' });
    const metrics = await rawRequest(`${baseURL.replace(/\/v1$/, '')}/metrics`, {
      headers: { authorization: `Bearer ${ALIAS}` },
    });
    expect(metrics.body.toString()).toMatch(
      /^gateway_chat_api_requests_total\{provider="provider_a",model="terra-high",status="200"\} [1-9]/m,
    );
  });
});

describe('the AI SDK as configured in docs/clients.md', () => {
  it('runs the two-step tool loop on `sol` with includeUsage', async () => {
    scriptReadFileCall('package.json');
    scriptText(['It is ', 'a manifest.']);
    const gateway = createOpenAICompatible({ name: 'gateway', baseURL, apiKey: ALIAS, includeUsage: true });
    const result = streamText({
      model: gateway.chatModel('sol'),
      prompt: 'What is package.json?',
      maxRetries: 0,
      stopWhen: stepCountIs(2),
      tools: {
        read_file: tool({
          description: 'Read a file.',
          inputSchema: jsonSchema<{ path: string }>(READ_FILE_PARAMETERS),
          execute: async () => '{"name":"demo"}',
        }),
      },
    });
    expect(await result.text).toBe('It is a manifest.');
    expect((await result.steps).map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    expect((await result.totalUsage).inputTokens).toBe(2 * DEFAULT_USAGE.input_tokens);
  });
});

describe('LangChain.js @langchain/openai 1.x as configured in docs/clients.md', () => {
  const model = () =>
    new ChatOpenAICompletions({
      model: 'gpt-5.6-sol',
      apiKey: ALIAS,
      configuration: { baseURL },
      streaming: true,
      maxRetries: 0,
      timeout: 8000,
    }).bindTools([
      {
        type: 'function',
        function: { name: 'read_file', description: 'Read a file.', parameters: READ_FILE_PARAMETERS },
      },
    ]);

  /** `.stream()` and concatenated chunks, as docs/clients.md recommends (no tiktoken download). */
  async function streamed(messages: BaseMessage[]): Promise<AIMessageChunk> {
    let message: AIMessageChunk | undefined;
    for await (const chunk of await model().stream(messages)) message = message ? message.concat(chunk) : chunk;
    return message!;
  }

  it('gets a complete tool call for gpt-5.6-sol with ChatOpenAICompletions, then answers the ToolMessage continuation, with usage_metadata on both turns', async () => {
    const callId = scriptReadFileCall('src/main.ts');
    const question = new HumanMessage('What is in src/main.ts?');
    const first = await streamed([question]);
    expect(first.tool_calls).toEqual([
      expect.objectContaining({ id: callId, name: 'read_file', args: { path: 'src/main.ts' } }),
    ]);
    expect(first.usage_metadata).toMatchObject({
      input_tokens: DEFAULT_USAGE.input_tokens,
      output_tokens: DEFAULT_USAGE.output_tokens,
    });
    expect(lastUpstreamModel()).toEqual({ model: 'gpt-5.6-sol', effort: 'low' });

    scriptText(['It boots ', 'the app.']);
    const second = await streamed([
      question,
      new AIMessage({ content: '', tool_calls: first.tool_calls }),
      new ToolMessage({ tool_call_id: callId, content: 'bootstrap();' }),
    ]);
    expect(second.content).toBe('It boots the app.');
    expect(second.tool_calls).toEqual([]);
    expect(second.usage_metadata?.input_tokens).toBe(DEFAULT_USAGE.input_tokens);
    // The continuation reached the upstream as the call and its output, paired by call id.
    const input = (upstream.fake.lastBody()?.input ?? []) as Array<Record<string, unknown>>;
    expect(input).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'function_call', call_id: callId, name: 'read_file' }),
        { type: 'function_call_output', call_id: callId, output: 'bootstrap();' },
      ]),
    );
  });
});

describe('LangChain.js with its default retries (docs/clients.md "Retries: usage limits and rate limits")', () => {
  // A hang guard only: a Retry-After that LangChain.js waits out (60 s or less, up to six times)
  // would hold the call far past it, while the expected answer is immediate.
  const HANG_GUARD_MS = 30_000;

  it(
    'stops at once on a usage limit with no reset known: one upstream request, the 429 with its code',
    async () => {
      const limit = { frames: [errorEvent({ status: 429, type: 'usage_limit_reached', message: 'limit' })] };
      // One script per attempt its default maxRetries (6) could make.
      upstream.fake.enqueue(...Array.from({ length: 7 }, () => limit));
      const model = new ChatOpenAICompletions({
        model: 'sol',
        apiKey: ALIAS,
        configuration: { baseURL },
        timeout: 8000,
      });
      const failure: Error & { status?: number; code?: string } = await model.invoke([new HumanMessage('hi')]).then(
        () => new Error('answered'),
        (error: unknown) => error as Error,
      );
      expect({ name: failure.name, status: failure.status, code: failure.code }).toEqual({
        name: 'RateLimitCapacityError',
        status: 429,
        code: 'usage_limit_reached',
      });
      expect(upstream.fake.requests()).toHaveLength(1);
    },
    HANG_GUARD_MS,
  );
});

describe('LangChain.js ChatOpenAI on a gpt-5.6 id (docs/clients.md: use ChatOpenAICompletions)', () => {
  it('calls /v1/responses even with useResponsesApi: false, and gets the 404 that says how to switch', async () => {
    const chatOpenAI = new ChatOpenAI({
      model: 'gpt-5.6-sol',
      apiKey: ALIAS,
      configuration: { baseURL },
      streaming: true,
      useResponsesApi: false,
      maxRetries: 0,
      timeout: 8000,
    });
    const failure: Error & { status?: number } = await (async () => {
      for await (const chunk of await chatOpenAI.stream([new HumanMessage('hi')])) void chunk;
    })().then(
      () => new Error('the stream ended without an error'),
      (error: unknown) => error as Error,
    );
    expect(failure.status).toBe(404);
    expect(failure.message).toContain(errorSpec('responses_api_not_served').message);
    expect(failure.message).toContain('ChatOpenAICompletions');
    expect(upstream.fake.lastBody()).toBeUndefined();
  });
});

describe('the Responses API paths (docs/endpoints.md)', () => {
  const root = () => baseURL.replace(/\/v1$/, '');
  const body = {
    error: {
      message: errorSpec('responses_api_not_served').message,
      type: 'invalid_request_error',
      code: 'not_found',
      param: null,
    },
  };

  it.each([
    ['POST', '/v1/responses'],
    ['GET', '/v1/responses/resp_1'],
    ['POST', '/v1/responses/resp_1/cancel'],
  ])(
    '%s %s answers 404 with the way back to Chat Completions, as docs/endpoints.md shows it',
    async (method, route) => {
      const answer = await rawRequest(`${root()}${route}`, {
        method,
        headers: { authorization: `Bearer ${ALIAS}`, 'content-type': 'application/json' },
        body: method === 'POST' ? JSON.stringify({ model: 'gpt-5.6-sol', input: 'hi' }) : undefined,
      });
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.body.toString())).toEqual(body);
      const endpointsDoc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'endpoints.md'), 'utf8');
      expect(endpointsDoc).toContain(JSON.stringify(body));
    },
  );

  it('leaves other unknown paths with the plain "no such route"', async () => {
    const answer = await rawRequest(`${root()}/v1/responsesx`, { headers: { authorization: `Bearer ${ALIAS}` } });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body.toString()).error.message).toBe('no such route');
  });
});

afterAll(() => {
  // Every request the clients made went to the loopback gateway (LangChain's invoke() would
  // otherwise try to download a tokenizer; the guard below refuses it and records it here).
  expect(offLoopback).toEqual([]);
});
