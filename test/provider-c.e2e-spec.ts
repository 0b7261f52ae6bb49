import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startGateway, TestGateway } from './support/create-test-app';
import {
  answerRun,
  FakeClaudeRun,
  FakeClaudeStdoutItem,
  fenceText,
  hangingRun,
  initLine,
  isAlive,
  messageDelta,
  providerCSettings,
  readRuns,
  resultLine,
  textDelta,
  thinkingDelta,
  waitFor,
} from './support/provider-c-fixtures';

const TICKS = '```';
const READ_FILE = { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };
const LS = { type: 'function', function: { name: 'ls', parameters: { type: 'object', properties: {} } } };
const APPLY_PATCH = { type: 'custom', custom: { name: 'apply_patch', description: 'Apply a patch' } };

interface SseEvent {
  readonly data: string;
  /** ms since the request was sent. */
  readonly at: number;
}

interface StreamResult {
  readonly status: number;
  readonly headers: Headers;
  readonly events: SseEvent[];
  readonly chunks: Record<string, any>[];
  readonly done: boolean;
  /** JSON body when the answer was not SSE. */
  readonly body?: any;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A gateway with only provider_c enabled, running the fake with the given runs. */
async function gatewayWith(runs: FakeClaudeRun[], settings: Record<string, string> = {}): Promise<{ gateway: TestGateway; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-e2e-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const gateway = await startGateway({ ...providerCSettings(dir, runs), GATEWAY_PROVIDERS: 'provider_c', ...settings });
  cleanups.push(() => gateway.close());
  return { gateway, dir };
}

const run = (...stdout: FakeClaudeStdoutItem[]): FakeClaudeRun => ({ stdout: [{ line: initLine() }, ...stdout, { line: resultLine() }] });
const deltas = (...texts: string[]): FakeClaudeStdoutItem[] => texts.map((text) => ({ line: textDelta(text) }));

async function postChat(gateway: TestGateway, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-fable-5', messages: [{ role: 'user', content: 'Hi' }], ...body }),
    signal,
  });
}

/** Reads an SSE answer event by event, noting when each arrived. */
async function streamChat(gateway: TestGateway, body: Record<string, unknown>): Promise<StreamResult> {
  const sent = Date.now();
  const response = await postChat(gateway, { stream: true, ...body });
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { status: response.status, headers: response.headers, events: [], chunks: [], done: false, body: await response.json() };
  }
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (data !== '') events.push({ data, at: Date.now() - sent });
    }
  }
  const done = events.length > 0 && events[events.length - 1].data === '[DONE]';
  const chunks = events.filter((event) => event.data !== '[DONE]').map((event) => JSON.parse(event.data) as Record<string, any>);
  return { status: response.status, headers: response.headers, events, chunks, done };
}

const contents = (result: StreamResult) => result.chunks.map((chunk) => chunk.choices?.[0]?.delta?.content).filter((text) => typeof text === 'string') as string[];
const reasonings = (result: StreamResult) => result.chunks.map((chunk) => chunk.choices?.[0]?.delta?.reasoning_content).filter((text) => typeof text === 'string') as string[];
const toolFrames = (result: StreamResult) => result.chunks.flatMap((chunk) => (chunk.choices?.[0]?.delta?.tool_calls ?? []) as Record<string, any>[]);
const finishReason = (result: StreamResult) => result.chunks.map((chunk) => chunk.choices?.[0]?.finish_reason).find((reason) => reason);

/** Every run's child is gone and its working directory removed. */
async function expectAllChildrenReaped(dir: string): Promise<void> {
  await waitFor(() => readRuns(dir).every((record) => !isAlive(record.pid) && !fs.existsSync(record.cwd)), 3000);
}

describe('provider_c over POST /v1/chat/completions', () => {
  describe('streaming text and reasoning', () => {
    it('§11.9 streams Hel and lo as separate content chunks without waiting for the end', async () => {
      const { gateway, dir } = await gatewayWith([run({ line: textDelta('Hel') }, { line: textDelta('lo'), delayMs: 600 })]);
      const result = await streamChat(gateway, {});
      expect(result.status).toBe(200);
      expect(contents(result)).toEqual(['Hel', 'lo']);
      const at = (text: string) => result.events.find((event) => event.data.includes(`"content":"${text}"`))!.at;
      expect(at('lo') - at('Hel')).toBeGreaterThanOrEqual(400);
      expect(result.chunks[0].choices[0].delta).toEqual({ role: 'assistant' });
      expect(finishReason(result)).toBe('stop');
      expect(result.done).toBe(true);
      expect(new Set(result.chunks.map((chunk) => chunk.model))).toEqual(new Set(['claude-fable-5']));
      await expectAllChildrenReaped(dir);
    });

    it('§11.10 thinking deltas come out as delta.reasoning_content', async () => {
      const { gateway } = await gatewayWith([run({ line: thinkingDelta('Pondering') }, { line: textDelta('Answer') })]);
      const result = await streamChat(gateway, {});
      expect(reasonings(result)).toEqual(['Pondering']);
      expect(contents(result)).toEqual(['Answer']);
    });
  });

  describe('the agent_tool_call bridge', () => {
    it('§11.11 a fence split across three deltas yields one frame and no fence text anywhere', async () => {
      const fence = fenceText('read_file', { path: 'a' });
      const { gateway } = await gatewayWith([run(...deltas('Checking.\n' + fence.slice(0, 7), fence.slice(7, 30), fence.slice(30)))]);
      const result = await streamChat(gateway, { tools: [READ_FILE] });
      const frames = toolFrames(result);
      expect(frames).toHaveLength(1);
      expect(frames[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } });
      expect(frames[0].id).toMatch(/^call_[0-9a-f]{24}$/);
      for (const text of [...contents(result), ...reasonings(result)]) {
        expect(text).not.toContain('`');
        expect(text).not.toContain('agent_tool_call');
      }
      expect(contents(result).join('')).toBe('Checking.\n');
      expect(finishReason(result)).toBe('tool_calls');
    });

    it('§11.12 "here " streams at once while only the partial opener is held', async () => {
      const { gateway } = await gatewayWith([
        run(
          { line: textDelta(`here ${TICKS}agent_to`) },
          { line: textDelta('ol_call\n{"name":"ls","arguments":{}}'), delayMs: 600 },
          { line: textDelta(`\n${TICKS}\ndone`) },
        ),
      ]);
      const started = Date.now();
      const result = await streamChat(gateway, { tools: [LS] });
      const here = result.events.find((event) => event.data.includes('"content":"here "'))!;
      expect(Date.now() - started - here.at).toBeGreaterThanOrEqual(400);
      expect(contents(result)).toEqual(['here ', '\ndone']);
      expect(toolFrames(result).map((frame) => frame.function.name)).toEqual(['ls']);
    });

    it('§11.13 an ordinary python code fence is shown unchanged', async () => {
      const answer = `see ${TICKS}python\nprint(1)\n${TICKS}`;
      const { gateway } = await gatewayWith([run(...deltas('see ', `${TICKS}python\nprint(1)\n`, TICKS))]);
      const result = await streamChat(gateway, { tools: [LS] });
      expect(contents(result).join('')).toBe(answer);
      expect(toolFrames(result)).toEqual([]);
      expect(finishReason(result)).toBe('stop');
    });

    it('§11.14 arguments containing triple backticks are parsed whole and text after the fence continues', async () => {
      const code = `${TICKS}js\nx()\n${TICKS}`;
      const { gateway } = await gatewayWith([run(...deltas(fenceText('write', { text: code }), '\nAfter the fence.'))]);
      const result = await streamChat(gateway, { tools: [{ type: 'function', function: { name: 'write' } }] });
      expect(JSON.parse(toolFrames(result)[0].function.arguments)).toEqual({ text: code });
      expect(contents(result).join('')).toBe('\nAfter the fence.');
    });

    it('§11.15 a fence inside thinking becomes a tool call and is not shown as reasoning', async () => {
      const { gateway } = await gatewayWith([run({ line: thinkingDelta(`Let me list.\n${fenceText('ls', {})}`) })]);
      const result = await streamChat(gateway, { tools: [LS] });
      expect(reasonings(result).join('')).toBe('Let me list.\n');
      expect(toolFrames(result).map((frame) => frame.function.name)).toEqual(['ls']);
    });

    it('§11.16 the same call drafted in thinking and written in text yields one tool call', async () => {
      const { gateway } = await gatewayWith([run({ line: thinkingDelta(fenceText('read_file', { path: 'x' })) }, { line: textDelta(fenceText('read_file', { path: 'x' })) })]);
      const result = await streamChat(gateway, { tools: [READ_FILE] });
      expect(toolFrames(result)).toHaveLength(1);
    });

    it('§11.17 two fences → frames 0 and 1 with different call_ ids and finish tool_calls', async () => {
      const { gateway } = await gatewayWith([run(...deltas(fenceText('read_file', { path: 'a' }) + '\n' + fenceText('ls', {})))]);
      const result = await streamChat(gateway, { tools: [READ_FILE, LS] });
      const frames = toolFrames(result);
      expect(frames.map((frame) => frame.index)).toEqual([0, 1]);
      expect(frames.map((frame) => frame.function.name)).toEqual(['read_file', 'ls']);
      expect(frames[0].id).not.toBe(frames[1].id);
      expect(finishReason(result)).toBe('tool_calls');
      expect(result.done).toBe(true);
    });

    it('§11.18 a custom tool block is a function-typed call by default and a custom call with the custom wire', async () => {
      const patch = '*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n*** End Patch';
      const block = '```agent_tool_call\n' + JSON.stringify({ name: 'apply_patch', arguments: patch }) + '\n```';
      const defaultWire = await gatewayWith([run(...deltas(block))]);
      const asFunction = toolFrames(await streamChat(defaultWire.gateway, { tools: [APPLY_PATCH] }));
      expect(asFunction).toEqual([{ index: 0, id: expect.any(String), type: 'function', function: { name: 'apply_patch', arguments: patch } }]);
      const customWire = await gatewayWith([run(...deltas(block))], { PRIMARY_CUSTOM_TOOL_WIRE: 'custom' });
      const asCustom = toolFrames(await streamChat(customWire.gateway, { tools: [APPLY_PATCH] }));
      expect(asCustom).toEqual([{ index: 0, id: expect.any(String), type: 'custom', custom: { name: 'apply_patch', input: patch } }]);
    });

    it('§11.19 an unclosed fence is not shown and is logged; a complete object missing only the closing backticks still counts', async () => {
      const truncated = await gatewayWith([run(...deltas('Working. ', '```agent_tool_call\n{"name":"ls","argu'))]);
      const result = await streamChat(truncated.gateway, { tools: [LS] });
      expect(contents(result).join('')).not.toContain('agent_tool_call');
      expect(contents(result)[0]).toBe('Working. ');
      expect(truncated.gateway.logs.records('tool_fence_unclosed')).toEqual([expect.objectContaining({ accepted: false })]);

      const missingClose = await gatewayWith([run(...deltas('```agent_tool_call\n{"name":"ls","arguments":{}}\n'))]);
      const accepted = await streamChat(missingClose.gateway, { tools: [LS] });
      expect(toolFrames(accepted).map((frame) => frame.function.name)).toEqual(['ls']);
      expect(missingClose.gateway.logs.records('tool_fence_unclosed')).toEqual([expect.objectContaining({ accepted: true })]);
    });

    it('§11.20 a broken fence with no other call ends in the invalid-tool-call error chunk and [DONE]', async () => {
      const { gateway } = await gatewayWith([run(...deltas('```agent_tool_call\n{"name":"ls","arguments":{,}}\n```'))]);
      const result = await streamChat(gateway, { tools: [LS] });
      expect(result.status).toBe(200);
      expect(contents(result)).toEqual(['[error: invalid upstream tool call]']);
      expect(finishReason(result)).toBe('stop');
      expect(toolFrames(result)).toEqual([]);
      expect(result.done).toBe(true);
    });

    it('§11.21 unfenced JSON on its own line is shown as text', async () => {
      const { gateway } = await gatewayWith([run(...deltas('{"name":"ls","arguments":{}}\n'))]);
      const result = await streamChat(gateway, { tools: [LS] });
      expect(contents(result).join('')).toBe('{"name":"ls","arguments":{}}\n');
      expect(toolFrames(result)).toEqual([]);
    });

    it('non-streaming requests run the same bridge and aggregate content and tool calls', async () => {
      const { gateway } = await gatewayWith([run(...deltas('Looking.\n' + fenceText('ls', {})))]);
      const response = await postChat(gateway, { tools: [LS] });
      expect(response.status).toBe(200);
      const body = (await response.json()) as any;
      expect(body.choices[0].message.content).toBe('Looking.\n');
      expect(body.choices[0].message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'ls', arguments: '{}' } }]);
      expect(body.choices[0].finish_reason).toBe('tool_calls');
    });
  });

  describe('usage and errors', () => {
    it('§11.22 usage 3 in / 2 cache read / 2 out → prompt 5, completion 2, total 7', async () => {
      const usage = { input_tokens: 3, cache_read_input_tokens: 2, cache_creation_input_tokens: 0, output_tokens: 2 };
      const { gateway } = await gatewayWith([{ stdout: [{ line: initLine() }, { line: textDelta('x') }, { line: messageDelta('end_turn') }, { line: resultLine({ usage }) }] }]);
      const result = await streamChat(gateway, { stream_options: { include_usage: true } });
      const usageChunk = result.chunks.find((chunk) => chunk.usage);
      expect(usageChunk!.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 2 } });
      const body = (await (await postChat(gateway, {})).json()) as any;
      expect(body.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    });

    it('§11.24 exit 1 with a login message → 401 JSON error without the stderr text', async () => {
      const { gateway, dir } = await gatewayWith([{ stdout: [], stderr: 'Invalid API key · Please run /login', exitCode: 1 }]);
      const result = await streamChat(gateway, {});
      expect(result.status).toBe(401);
      expect(result.headers.get('content-type')).toContain('application/json');
      expect(result.body.error).toMatchObject({ type: 'authentication_error', code: 'upstream_auth_failed' });
      expect(JSON.stringify(result.body)).not.toMatch(/Invalid API key|\/login/);
      expect(gateway.logs.text).not.toContain('Invalid API key');
      expect(readRuns(dir)).toHaveLength(1);
    });

    it('§11.25 a usage-limit message → 429 with Retry-After after one run', async () => {
      const { gateway, dir } = await gatewayWith([{ stdout: [], stderr: 'usage limit reached', exitCode: 1 }]);
      const response = await postChat(gateway, { stream: true });
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('60');
      expect(((await response.json()) as any).error.type).toBe('rate_limit_error');
      expect(readRuns(dir)).toHaveLength(1);
    });

    it('§11.25 "Claude crashed" on every run → 502 after exactly three runs; a crash then a good run → an answer', async () => {
      const crash: FakeClaudeRun = { stdout: [], stderr: 'Claude crashed', exitCode: 1 };
      const failing = await gatewayWith([crash]);
      const response = await postChat(failing.gateway, { stream: true });
      expect(response.status).toBe(502);
      expect(JSON.stringify(await response.json())).not.toContain('crashed');
      expect(readRuns(failing.dir)).toHaveLength(3);

      const recovering = await gatewayWith([crash, answerRun('fine')]);
      const result = await streamChat(recovering.gateway, {});
      expect(contents(result)).toEqual(['fine']);
      expect(readRuns(recovering.dir)).toHaveLength(2);
    });

    it('a missing executable answers 502 before any SSE header', async () => {
      // The startup warning is asserted in provider-c-adapter.e2e-spec.ts: nestjs-pino sends
      // logs made outside a request to the first in-process gateway's capture.
      const { gateway } = await gatewayWith([], { PROVIDER_C_COMMAND: 'no-such-claude-binary' });
      const response = await postChat(gateway, { stream: true });
      expect(response.status).toBe(502);
      expect(response.headers.get('content-type')).toContain('application/json');
    });
  });

  describe('process lifecycle', () => {
    it('§11.26 a client disconnect terminates the child (SIGTERM within 1 s, gone within 3 s) and frees the slot', async () => {
      const { gateway, dir } = await gatewayWith([hangingRun(), answerRun('next')], { PROVIDER_C_MAX_PROCESSES: '1', PRIMARY_AGENT_QUEUE_TIMEOUT: '2s' });
      const client = new AbortController();
      const response = await postChat(gateway, { stream: true }, client.signal);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let seen = '';
      while (!seen.includes('partial')) seen += new TextDecoder().decode((await reader.read()).value);
      client.abort();
      const abortedAt = Date.now();
      await waitFor(() => readRuns(dir)[0]?.signal === 'SIGTERM', 1000);
      expect(Date.now() - abortedAt).toBeLessThan(1000);
      await waitFor(() => !isAlive(readRuns(dir)[0].pid), 3000);
      const next = await streamChat(gateway, {});
      expect(contents(next)).toEqual(['next']);
      await waitFor(() => gateway.logs.records().some((record) => record.event === 'provider_c_canceled'), 1000);
    });

    it('no child outlives its request: after answers, errors, timeouts and disconnects every child is gone', async () => {
      const hanging = hangingRun('...');
      const { gateway, dir } = await gatewayWith([answerRun('a'), { stdout: [], stderr: 'Invalid API key', exitCode: 1 }, hanging, hanging], { PROVIDER_C_TIMEOUT: '1s' });
      expect(contents(await streamChat(gateway, {}))).toEqual(['a']);
      await expectAllChildrenReaped(dir);
      expect((await postChat(gateway, {})).status).toBe(401);
      await expectAllChildrenReaped(dir);
      const timedOut = await streamChat(gateway, {});
      expect(contents(timedOut)).toContain('[error: timeout]');
      await expectAllChildrenReaped(dir);
      const client = new AbortController();
      const response = await postChat(gateway, { stream: true }, client.signal);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      client.abort();
      await expectAllChildrenReaped(dir);
      expect(readRuns(dir)).toHaveLength(4);
      expect(fs.readdirSync(os.tmpdir()).filter((name) => readRuns(dir).some((record) => record.cwd.endsWith(name)))).toEqual([]);
    });

    it('§11.30 with provider_c disabled: sonnet is not listed, chat is 404 model_not_found, nothing is spawned', async () => {
      const { gateway, dir } = await gatewayWith([answerRun('never')], { GATEWAY_PROVIDERS: 'provider_a' });
      const models = (await (await fetch(`${gateway.url}/v1/models`)).json()) as { data: { id: string }[] };
      expect(models.data.map((model) => model.id)).not.toContain('sonnet');
      const response = await postChat(gateway, { model: 'sonnet', stream: true, tools: [LS] });
      expect(response.status).toBe(404);
      expect(((await response.json()) as any).error.code).toBe('model_not_found');
      expect(readRuns(dir)).toEqual([]);
    });
  });
});
