import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { jsonSchema, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestGateway } from './create-test-app';
import { startGateway } from './create-test-app';

/**
 * Real-client e2e scenarios (docs/design/decisions.md §10): the `openai` SDK and the Vercel AI SDK drive the
 * gateway over HTTP, and nothing here parses SSE by hand — if a client library rejects a field
 * shape, these tests fail. Each scenario is written once and run per upstream family through a
 * `ClientFamily` harness that knows how to script that family's fake and read what it received.
 */

/** The arguments of a scripted `read_file` call. */
export type ReadFileArgs = { readonly path: string };

/** OpenAI usage numbers the gateway must derive from the usage a family's fake reports. */
export interface ExpectedUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** Whether the gateway will call the upstream in streaming or non-streaming form. */
export type TurnMode = 'stream' | 'non-stream';

/** One upstream family wired to its fake, as the scenarios need it. */
export interface ClientFamily {
  /** `provider_a`, `provider_b` or `provider_c` (the test titles). */
  readonly family: string;
  /** A public model id of the family. */
  readonly model: string;
  /** What `usage` every scripted turn must produce in the chat response. */
  readonly usage: ExpectedUsage;
  /** Starts the fake and a gateway wired to it with `GATEWAY_PROVIDERS` = this family only. */
  start(): Promise<TestGateway>;
  /** Stops the gateway and the fake and removes temp files. */
  stop(): Promise<void>;
  /** Forgets recordings and pending scripts (before each test). */
  reset(): void;
  /** Scripts the next upstream turn to answer with `pieces` (one upstream text delta each). */
  scriptText(pieces: readonly string[], mode: TurnMode): void;
  /**
   * Scripts the next upstream turn to call `read_file` with `args`. Returns the call id the client
   * must see when the upstream fixes it, `undefined` when the gateway mints the id.
   */
  scriptReadFileCall(args: ReadFileArgs, mode: TurnMode): string | undefined;
  /**
   * Asserts that the latest upstream request carries the continuation in the family's wire
   * format: the `read_file` call with `args` and the result `output`, paired by `callId`.
   */
  expectContinuation(callId: string, args: ReadFileArgs, output: string): Promise<void>;
  /**
   * Scripts the next `turns` upstream turns to fail with the family's usage limit: the login's plan
   * (or its quota for the model) is spent, and its reset is unknown or hours away.
   */
  scriptUsageLimit(turns: number): void;
  /** How many chat turns reached the upstream since `reset()`. */
  upstreamTurns(): number;
}

/** The start/stop half of a `ClientFamily` whose fake is an upstream server. */
export interface FakeUpstream<F> {
  /** The running fake (after `start`). */
  readonly fake: F;
  start(): Promise<TestGateway>;
  stop(): Promise<void>;
}

/**
 * Starts the fake, a private home (`homePrefix` + random, under the OS temp dir) and a gateway
 * with `settings(fake, home)`; `stop` tears down whatever of the three was started.
 */
export function fakeUpstream<F extends { close(): Promise<void> }>(options: {
  readonly homePrefix: string;
  readonly startFake: () => Promise<F>;
  readonly settings: (fake: F, home: string) => Record<string, string>;
}): FakeUpstream<F> {
  let fake: F | undefined;
  let home: string | undefined;
  let gateway: TestGateway | undefined;
  return {
    get fake(): F {
      if (!fake) throw new Error('the fake upstream is not started');
      return fake;
    },
    async start() {
      fake = await options.startFake();
      home = fs.mkdtempSync(path.join(os.tmpdir(), options.homePrefix));
      gateway = await startGateway(options.settings(fake, home));
      return gateway;
    },
    async stop() {
      await gateway?.close();
      await fake?.close();
      if (home) fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

export const READ_FILE_PARAMETERS = {
  type: 'object',
  properties: { path: { type: 'string', description: 'Workspace-relative file path.' } },
  // Mutable: the AI SDK's JSONSchema7 type (real once @types/json-schema is installed) wants string[].
  required: ['path'] as string[],
  additionalProperties: false,
} as const;

const READ_FILE_TOOL: ChatCompletionTool = {
  type: 'function',
  function: { name: 'read_file', description: 'Read a file from the workspace.', parameters: READ_FILE_PARAMETERS },
};

const FENCE = '```agent_tool_call';

/** A tool call as an SDK user rebuilds it from the stream, keyed by `index`. */
interface AccumulatedCall {
  id: string;
  type: string;
  name: string;
  arguments: string;
}

/** The result of one chat turn as the openai SDK delivered it. */
interface TurnResult {
  readonly content: string;
  readonly finishReason: string | null;
  readonly toolCalls: AccumulatedCall[];
  readonly usage: OpenAI.CompletionUsage | undefined;
}

/** Streams one turn with the openai SDK, accumulating deltas the way SDK users do. */
async function streamTurn(
  client: OpenAI,
  params: Omit<OpenAI.ChatCompletionCreateParamsStreaming, 'stream'>,
): Promise<TurnResult> {
  const stream = await client.chat.completions.create({
    ...params,
    stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  let finishReason: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  const calls = new Map<number, AccumulatedCall>();
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? '';
      if (choice.finish_reason) finishReason = choice.finish_reason;
      for (const delta of choice.delta.tool_calls ?? []) {
        const call = calls.get(delta.index) ?? { id: '', type: '', name: '', arguments: '' };
        if (delta.id) call.id = delta.id;
        if (delta.type) call.type = delta.type;
        call.name += delta.function?.name ?? '';
        call.arguments += delta.function?.arguments ?? '';
        calls.set(delta.index, call);
      }
    }
  }
  const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  return { content, finishReason, toolCalls, usage };
}

/** One non-streaming turn with the openai SDK. */
async function createTurn(
  client: OpenAI,
  params: Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, 'stream'>,
): Promise<TurnResult> {
  const completion = await client.chat.completions.create({ ...params, stream: false });
  const [choice] = completion.choices;
  const toolCalls = (choice.message.tool_calls ?? []).map((call) =>
    call.type === 'function'
      ? { id: call.id, type: call.type, name: call.function.name, arguments: call.function.arguments }
      : { id: call.id, type: call.type, name: call.custom.name, arguments: call.custom.input },
  );
  return {
    content: choice.message.content ?? '',
    finishReason: choice.finish_reason,
    toolCalls,
    usage: completion.usage,
  };
}

/**
 * Registers the real-client scenarios for one family: openai SDK non-streaming and streaming
 * text, a full tool-calling turn (streaming and not) with the continuation checked at the fake,
 * and an AI SDK `streamText` tool loop in which the SDK itself runs the tool and continues.
 */
export function describeClientScenarios(family: ClientFamily): void {
  describe(`real clients against ${family.family} (${family.model})`, () => {
    let gateway: TestGateway;
    let client: OpenAI;

    beforeAll(async () => {
      gateway = await family.start();
      // maxRetries 0: a gateway error must surface as the error it is, not as a retried success.
      client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'test', maxRetries: 0, timeout: 8000 });
    });
    afterAll(() => family.stop());
    beforeEach(() => family.reset());

    it('openai SDK: non-streaming completion has content, finish_reason stop and usage', async () => {
      family.scriptText(['Hello from ', family.family, '.'], 'non-stream');
      const completion = await client.chat.completions.create({
        model: family.model,
        messages: [{ role: 'user', content: 'Say hello.' }],
      });
      expect(completion.object).toBe('chat.completion');
      expect(completion.model).toBe(family.model);
      expect(completion.choices).toHaveLength(1);
      expect(completion.choices[0].message.role).toBe('assistant');
      expect(completion.choices[0].message.content).toBe(`Hello from ${family.family}.`);
      expect(completion.choices[0].finish_reason).toBe('stop');
      expect(completion.usage).toMatchObject(family.usage);
    });

    it('openai SDK: streamed deltas concatenate to the scripted text, usage arrives and the stream ends', async () => {
      const pieces = ['The quick ', 'brown fox ', 'jumps.'];
      family.scriptText(pieces, 'stream');
      const stream = await client.chat.completions.create({
        model: family.model,
        messages: [{ role: 'user', content: 'Tell me about the fox.' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const contents: string[] = [];
      const ids = new Set<string>();
      let finishReason: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined;
      let roleSeen = false;
      for await (const chunk of stream) {
        ids.add(chunk.id);
        expect(chunk.model).toBe(family.model);
        if (chunk.usage) usage = chunk.usage;
        for (const choice of chunk.choices) {
          if (choice.delta.role === 'assistant') roleSeen = true;
          if (choice.delta.content) contents.push(choice.delta.content);
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
      }
      // Reaching this line means the SDK saw the stream end (it stops at `[DONE]`).
      expect(roleSeen).toBe(true);
      expect(contents.join('')).toBe(pieces.join(''));
      expect(finishReason).toBe('stop');
      expect(usage).toMatchObject(family.usage);
      expect(ids.size).toBe(1);
    });

    describe.each<TurnMode>(['stream', 'non-stream'])('openai SDK tool-calling turn (%s)', (mode) => {
      it('yields a complete read_file call, then answers the continuation with finish_reason stop', async () => {
        const turn = (messages: ChatCompletionMessageParam[]) =>
          mode === 'stream'
            ? streamTurn(client, { model: family.model, messages, tools: [READ_FILE_TOOL] })
            : createTurn(client, { model: family.model, messages, tools: [READ_FILE_TOOL] });
        const args = { path: `src/${mode}.ts` };
        const upstreamId = family.scriptReadFileCall(args, mode);
        const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: `What is in src/${mode}.ts?` }];

        const first = await turn(messages);
        expect(first.finishReason).toBe('tool_calls');
        expect(first.toolCalls).toHaveLength(1);
        const [call] = first.toolCalls;
        expect(call.type).toBe('function');
        expect(call.name).toBe('read_file');
        expect(call.id).not.toBe('');
        if (upstreamId !== undefined) expect(call.id).toBe(upstreamId);
        expect(JSON.parse(call.arguments)).toEqual(args);
        expect(first.content).not.toContain(FENCE);

        // The client "runs" the tool and continues with the call and its result.
        const output = `export const mode = '${mode}';`;
        family.scriptText(['The file exports ', 'a constant.'], mode);
        const second = await turn([
          ...messages,
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }],
          },
          { role: 'tool', tool_call_id: call.id, content: output },
        ]);
        expect(second.finishReason).toBe('stop');
        expect(second.toolCalls).toEqual([]);
        expect(second.content).toBe('The file exports a constant.');
        expect(second.usage).toMatchObject(family.usage);
        await family.expectContinuation(call.id, args, output);
      });
    });

    it('openai SDK with its default retries: a usage limit arrives as one 429 that the SDK does not retry', async () => {
      // One script per attempt the SDK's default (maxRetries 2) could make: a retry reaches the fake.
      family.scriptUsageLimit(3);
      // The SDK waits out a Retry-After of up to 60 s before a retry: the call is aborted as soon as
      // the SDK says it will retry, so a retry shows at once instead of as a test timeout.
      const retrying = new AbortController();
      const retries: string[] = [];
      const ignore = () => undefined;
      const defaults = new OpenAI({
        baseURL: `${gateway.url}/v1`,
        apiKey: 'test',
        timeout: 8000,
        logLevel: 'info',
        logger: {
          info: (message: string) => {
            if (!message.includes('retrying')) return;
            retries.push(message);
            retrying.abort();
          },
          debug: ignore,
          warn: ignore,
          error: ignore,
        },
      });
      const failure = await defaults.chat.completions
        .create(
          { model: family.model, messages: [{ role: 'user', content: 'Say hello.' }] },
          { signal: retrying.signal },
        )
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(retries).toEqual([]);
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      const error = failure as InstanceType<typeof OpenAI.APIError>;
      expect(error.status).toBe(429);
      expect(error.headers?.get('x-should-retry')).toBe('false');
      expect(family.upstreamTurns()).toBe(1);
    });

    it("openai SDK stream helper: finalChatCompletion() assembles the streamed tool call with the SDK's own accumulator", async () => {
      const args = { path: 'package.json' };
      const upstreamId = family.scriptReadFileCall(args, 'stream');
      const stream = client.chat.completions.stream({
        model: family.model,
        messages: [{ role: 'user', content: 'Read package.json.' }],
        tools: [READ_FILE_TOOL],
        stream_options: { include_usage: true },
      });
      const completion = await stream.finalChatCompletion();
      const [choice] = completion.choices;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.tool_calls).toHaveLength(1);
      const [call] = choice.message.tool_calls!;
      expect(call).toMatchObject({ type: 'function', function: { name: 'read_file' } });
      expect(call.id).not.toBe('');
      if (upstreamId !== undefined) expect(call.id).toBe(upstreamId);
      expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual(args);
      expect(completion.usage).toMatchObject(family.usage);
    });

    it('AI SDK: streamText runs the tool itself and finishes the two-step loop', async () => {
      const args = { path: 'README.md' };
      const output = '# Demo project';
      family.scriptReadFileCall(args, 'stream');
      family.scriptText(['The README is ', 'a heading.'], 'stream');
      const provider = createOpenAICompatible({
        name: 'gateway',
        baseURL: `${gateway.url}/v1`,
        apiKey: 'test',
        includeUsage: true,
      });
      const executed: Array<{ input: unknown; toolCallId: string }> = [];
      const result = streamText({
        model: provider.chatModel(family.model),
        prompt: 'What is in README.md?',
        maxRetries: 0,
        stopWhen: stepCountIs(2),
        tools: {
          read_file: tool({
            description: 'Read a file from the workspace.',
            inputSchema: jsonSchema<ReadFileArgs>(READ_FILE_PARAMETERS),
            execute: async (input, { toolCallId }) => {
              executed.push({ input, toolCallId });
              return output;
            },
          }),
        },
      });
      const text = await result.text;
      const steps = await result.steps;
      expect(executed).toHaveLength(1);
      expect(executed[0].input).toEqual(args);
      expect(steps).toHaveLength(2);
      expect(steps[0].finishReason).toBe('tool-calls');
      expect(steps[0].toolCalls.map((call) => call.toolCallId)).toEqual([executed[0].toolCallId]);
      expect(await result.finishReason).toBe('stop');
      expect(text).toBe('The README is a heading.');
      expect(text).not.toContain(FENCE);
      expect((await result.totalUsage).inputTokens).toBe(2 * family.usage.prompt_tokens);
      await family.expectContinuation(executed[0].toolCallId, args, output);
    });
  });
}
