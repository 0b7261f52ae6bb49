import fc from 'fast-check';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../core/gateway.error';
import { KeepAliveSweep } from '../common/sse/keep-alive-sweep';
import { SseWriter } from '../common/sse/sse-writer';
import type { ChatEvent } from '../core/chat-event';
import type { StreamOutcome } from './chat-completion.renderer';
import { aggregateCompletion, ChunkFactory, writeChatStream } from './chat-completion.renderer';
import { ToolCallCollector } from './chat-completion.renderer';
import { OutputValidator } from '../common/json-schema/output-validator';
import { normalizeTools } from './chat-tools';
import { StrictTools } from './strict-tools';
import { sseChunks } from '../../test/support/chat-sse';

/**
 * Serves one scripted turn through the real writer on a loopback socket and returns the SSE data
 * lines. A failure the renderer throws is answered as the exception filter would: its status and
 * a JSON body. `keepAlive`: a sweep whose rounds the events run (`sweepOnlyWhenCalled`).
 */
async function serve(
  events: ChatEvent[] | (() => AsyncIterable<ChatEvent>),
  options: {
    includeUsage?: boolean;
    wire?: 'function' | 'custom';
    signal?: AbortSignal;
    keepAlive?: KeepAliveSweep;
  } = {},
) {
  let outcome: StreamOutcome | undefined;
  let thrown: GatewayError | undefined;
  const keepAlive = options.keepAlive ?? new KeepAliveSweep();
  const server = http.createServer((_request, response) => {
    async function* listed(list: ChatEvent[]) {
      for (const event of list) yield event;
    }
    const source = typeof events === 'function' ? events : () => listed(events);
    const collector = new ToolCallCollector('req-1', options.wire ?? 'function');
    writeChatStream(new SseWriter(response, keepAlive), source(), new ChunkFactory('gpt-5.6-sol'), collector, {
      includeUsage: options.includeUsage ?? false,
      signal: options.signal ?? new AbortController().signal,
    }).then(
      (result) => (outcome = result),
      (error: GatewayError) => {
        thrown = error;
        response.writeHead(error.spec.status, { 'content-type': 'application/json' }).end('{}');
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/`);
    const { data, chunks } = sseChunks(await response.text());
    return { response, data, chunks, outcome: outcome!, thrown };
  } finally {
    server.close();
    keepAlive.onModuleDestroy();
  }
}

/**
 * A writer whose client answers each write as scripted (`true` taken, a promise of `false` when the
 * client left while the write waited), then takes every write; it records what it was given.
 */
function scriptedWriter(replies: (boolean | Promise<boolean>)[], state: { closed?: boolean } = {}) {
  const written: string[] = [];
  const take = (text: string) => {
    written.push(text);
    return replies.shift() ?? true;
  };
  const writer = {
    get isClosed() {
      return state.closed === true;
    },
    committed: false,
    hold: () => undefined,
    stopKeepAlive: () => undefined,
    open: (first: unknown) => take(JSON.stringify(first)),
    sendJson: (value: unknown) => take(JSON.stringify(value)),
    sendJsonText: take,
    sendDone: () => take('[DONE]'),
    end: () => undefined,
  };
  return { writer: writer as unknown as SseWriter, written };
}

/** An upstream that counts the events it was asked for: what the renderer read of the turn. */
function countedUpstream(events: ChatEvent[]) {
  const counter = { read: 0 };
  async function* source(): AsyncIterable<ChatEvent> {
    for (const event of events) {
      counter.read++;
      yield event;
    }
  }
  return { source: source(), counter };
}

const streamOf = (writer: SseWriter, events: AsyncIterable<ChatEvent>, signal = new AbortController().signal) =>
  writeChatStream(writer, events, new ChunkFactory('m'), new ToolCallCollector('r', 'function'), {
    includeUsage: false,
    signal,
  });

describe(writeChatStream.name, () => {
  it('writes role, content, tool frames after the content, the finish chunk and [DONE], with one id/created/model', async () => {
    const { response, data, chunks, outcome } = await serve([
      { type: 'text-delta', text: 'Let me look.' },
      { type: 'tool-call', call: { id: 'call_1', name: 'read_file', kind: 'function', arguments: '{"path":"a.ts"}' } },
      { type: 'tool-call', call: { id: 'call_2', name: 'ls', kind: 'function', arguments: '' } },
      { type: 'usage', usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('cache-control')).toContain('no-transform');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant' },
      { content: 'Let me look.' },
      {
        tool_calls: [
          { index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
        ],
      },
      { tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
      {},
    ]);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.slice(0, -1).every((chunk) => chunk.choices[0].finish_reason === null)).toBe(true);
    expect(new Set(chunks.map((chunk) => `${chunk.id}|${chunk.created}|${chunk.model}|${chunk.object}`)).size).toBe(1);
    expect(chunks[0].id).toMatch(/^chatcmpl-/);
    expect(data.at(-1)).toBe('[DONE]');
    // The first call's id is the chat's identity from its next turn on.
    expect(outcome).toMatchObject({ finishReason: 'tool_calls', clientGone: false, toolCalls: 2 });
    expect(outcome.firstToolCallId).toBe('call_1');
  });

  it('writes no chunk for an empty text delta', async () => {
    const { chunks } = await serve([
      { type: 'text-delta', text: '' },
      { type: 'text-delta', text: 'a' },
      { type: 'reasoning-delta', text: '' },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([{ role: 'assistant' }, { content: 'a' }, {}]);
  });

  it('reads no more of the upstream when the client left while the role chunk waited', async () => {
    const { writer, written } = scriptedWriter([Promise.resolve(false)]);
    const { source, counter } = countedUpstream([
      { type: 'text-delta', text: 'a' },
      { type: 'text-delta', text: 'b' },
      { type: 'finish', reason: 'stop' },
    ]);
    const outcome = await streamOf(writer, source);
    expect(outcome).toEqual({ clientGone: true, toolCalls: 0 });
    expect(counter.read).toBe(1);
    expect(written).toHaveLength(1);
    expect((JSON.parse(written[0]) as { choices: { delta: unknown }[] }).choices[0].delta).toEqual({
      role: 'assistant',
    });
  });

  it('stops reading the upstream when the client left while a delta waited for the socket', async () => {
    const { writer, written } = scriptedWriter([true, Promise.resolve(false)]);
    const { source, counter } = countedUpstream([
      { type: 'text-delta', text: 'a' },
      { type: 'text-delta', text: 'b' },
      { type: 'finish', reason: 'stop' },
    ]);
    const outcome = await streamOf(writer, source);
    expect(outcome).toMatchObject({ clientGone: true });
    expect(counter.read).toBe(1);
    expect(written).toHaveLength(2);
  });

  it('writes nothing more, and reports the client gone rather than the failure, when the response closed during the turn', async () => {
    const state = { closed: false };
    const { writer, written } = scriptedWriter([], state);
    async function* closedThenFailed(): AsyncIterable<ChatEvent> {
      state.closed = true;
      yield { type: 'error', error: new GatewayError('upstream') };
    }
    const outcome = await streamOf(writer, closedThenFailed());
    expect(outcome).toEqual({ clientGone: true, toolCalls: 0 });
    expect(written).toHaveLength(0);
  });

  it('throws a failure that comes before any text or reasoning, having written nothing (the front end answers its status)', async () => {
    const { response, data, thrown, outcome } = await serve([
      { type: 'usage', usage: { promptTokens: 3, completionTokens: 0, totalTokens: 3 } },
      { type: 'tool-call', call: { id: 'c', name: 'ls', kind: 'function', arguments: '{}' } },
      { type: 'error', error: new GatewayError('context_window') },
    ]);
    expect(thrown?.code).toBe('context_window');
    expect(outcome).toBeUndefined();
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(data).toEqual([]);
  });

  it('opens with the role chunk at the end of an answer of tool calls only', async () => {
    const { chunks, thrown } = await serve([
      { type: 'tool-call', call: { id: 'c', name: 'ls', kind: 'function', arguments: '{}' } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(thrown).toBeUndefined();
    expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant' },
      { tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
      {},
    ]);
  });

  it('writes a failure in-band, role chunk first, once a keep-alive comment committed the headers of a silent answer', async () => {
    const keepAlive = new KeepAliveSweep();
    keepAlive.sweepOnlyWhenCalled();
    async function* silentThenFailed(): AsyncIterable<ChatEvent> {
      yield { type: 'usage', usage: { promptTokens: 3, completionTokens: 0, totalTokens: 3 } };
      // The first round only clears the flag the hold raised; the second finds a whole round silent.
      keepAlive.sweep();
      keepAlive.sweep();
      yield { type: 'error', error: new GatewayError('context_window') };
    }
    const { response, chunks, data, thrown, outcome } = await serve(silentThenFailed, { keepAlive });
    expect(thrown).toBeUndefined();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant' },
      { content: '[error: context window exceeded]' },
    ]);
    expect(data.at(-1)).toBe('[DONE]');
    expect(outcome).toMatchObject({ failure: { code: 'context_window' }, clientGone: false });
  });

  it('reports cached and reasoning token counts of 0 when the upstream reported them as 0', async () => {
    const { chunks } = await serve(
      [
        {
          type: 'usage',
          usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5, cachedPromptTokens: 0, reasoningTokens: 0 },
        },
        { type: 'finish', reason: 'stop' },
      ],
      { includeUsage: true },
    );
    expect(chunks.at(-1)!.usage).toEqual({
      prompt_tokens: 3,
      completion_tokens: 2,
      total_tokens: 5,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('adds a usage chunk with choices [] before [DONE] when include_usage is set', async () => {
    const { chunks, data } = await serve(
      [
        { type: 'text-delta', text: 'hi' },
        {
          type: 'usage',
          usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17, cachedPromptTokens: 2, reasoningTokens: 1 },
        },
        { type: 'finish', reason: 'stop' },
      ],
      { includeUsage: true },
    );
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 12,
        completion_tokens: 5,
        total_tokens: 17,
        prompt_tokens_details: { cached_tokens: 2 },
        completion_tokens_details: { reasoning_tokens: 1 },
      },
    });
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('stop');
    expect(data.at(-1)).toBe('[DONE]');
  });

  it('streams reasoning as reasoning_content and keeps the adapter finish reason without tool calls', async () => {
    const { chunks } = await serve([
      { type: 'reasoning-delta', text: 'thinking' },
      { type: 'text-delta', text: 'answer' },
      { type: 'finish', reason: 'length' },
    ]);
    expect(chunks[1].choices[0].delta).toEqual({ reasoning_content: 'thinking' });
    expect(chunks[2].choices[0].delta).toEqual({ content: 'answer' });
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('length');
  });

  it('turns a mid-stream error into the [error: …] chunk with finish stop, then [DONE], dropping kept calls', async () => {
    const { chunks, data, response } = await serve([
      { type: 'text-delta', text: 'partial' },
      { type: 'tool-call', call: { id: 'c', name: 'ls', kind: 'function', arguments: '{}' } },
      { type: 'error', error: new GatewayError('upstream') },
    ]);
    expect(response.status).toBe(200);
    expect(chunks.at(-1)!.choices[0]).toMatchObject({
      delta: { content: '[error: upstream error]' },
      finish_reason: 'stop',
    });
    expect(chunks.some((chunk) => chunk.choices[0]?.delta?.tool_calls)).toBe(false);
    expect(data.at(-1)).toBe('[DONE]');
  });

  it("writes the gateway's own abort reason (the drain deadline's) as the error chunk and [DONE], not as a client that left", async () => {
    const client = new AbortController();
    const reason = new GatewayError('draining');
    async function* endedByTheGateway(): AsyncIterable<ChatEvent> {
      yield { type: 'text-delta', text: 'partial' };
      client.abort(reason);
      throw reason;
    }
    const { chunks, data, outcome } = await serve(endedByTheGateway, { signal: client.signal });
    expect(chunks.at(-1)!.choices[0]).toMatchObject({
      delta: { content: '[error: service unavailable]' },
      finish_reason: 'stop',
    });
    expect(data.at(-1)).toBe('[DONE]');
    expect(outcome).toMatchObject({ failure: reason, clientGone: false });
  });

  it("writes the gateway's abort reason, not the upstream read's own error, when the gateway ended the turn", async () => {
    const client = new AbortController();
    const reason = new GatewayError('draining');
    async function* cutByTheGateway(): AsyncIterable<ChatEvent> {
      yield { type: 'text-delta', text: 'partial' };
      client.abort(reason);
      // The upstream read fails with its own error once the gateway aborted it.
      throw new Error('socket hang up');
    }
    const { chunks, outcome } = await serve(cutByTheGateway, { signal: client.signal });
    expect(chunks.at(-1)!.choices[0].delta.content).toBe('[error: service unavailable]');
    expect(outcome).toMatchObject({ failure: reason, clientGone: false });
  });

  it('ends with the invalid-tool-call error chunk when every call was invalid', async () => {
    const { chunks, outcome } = await serve([
      { type: 'tool-call', call: { id: 'c', name: 'ls', kind: 'function', arguments: '{"broken"' } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(chunks.at(-1)!.choices[0]).toMatchObject({
      delta: { content: '[error: invalid upstream tool call]' },
      finish_reason: 'stop',
    });
    expect(outcome.failure?.code).toBe('invalid_tool_call');
  });

  it('ends with the invalid-tool-call error chunk, and no call frame, when one call of several was invalid', async () => {
    const { chunks, data, outcome } = await serve([
      { type: 'text-delta', text: 'Reading both.' },
      { type: 'tool-call', call: { id: 'good', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' } },
      { type: 'tool-call', call: { id: 'bad', name: 'ls', kind: 'function', arguments: '[1,2]' } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant' },
      { content: 'Reading both.' },
      { content: '[error: invalid upstream tool call]' },
    ]);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(data.at(-1)).toBe('[DONE]');
    expect(outcome).toMatchObject({ failure: { code: 'invalid_tool_call' }, toolCalls: 0 });
    expect(outcome.finishReason).toBeUndefined();
  });

  it('treats a stream that ends without finish or error as an upstream error', async () => {
    const { chunks } = await serve([{ type: 'text-delta', text: 'cut' }]);
    expect(chunks.at(-1)!.choices[0].delta.content).toBe('[error: upstream error]');
  });

  it('writes custom calls as custom frames on the custom wire', async () => {
    const { chunks } = await serve(
      [
        { type: 'tool-call', call: { id: 'p1', name: 'apply_patch', kind: 'custom', input: '*** Begin Patch' } },
        { type: 'finish', reason: 'stop' },
      ],
      { wire: 'custom' },
    );
    expect(chunks[1].choices[0].delta.tool_calls[0]).toEqual({
      index: 0,
      id: 'p1',
      type: 'custom',
      custom: { name: 'apply_patch', input: '*** Begin Patch' },
    });
  });
});

async function* from(events: ChatEvent[]) {
  for (const event of events) yield event;
}

const run = (events: ChatEvent[]) =>
  aggregateCompletion(
    from(events),
    new ChunkFactory('gpt-5.6-sol'),
    'gpt-5.6-sol',
    new ToolCallCollector('r', 'function'),
  );

describe(aggregateCompletion.name, () => {
  it('builds a chat.completion with text, reasoning, usage and the finish reason', async () => {
    const { body } = await run([
      { type: 'reasoning-delta', text: 'think' },
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'usage', usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-5.6-sol',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello', reasoning_content: 'think' },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    });
    expect((body.choices as { message: object }[])[0].message).not.toHaveProperty('tool_calls');
  });

  it('keeps text next to tool calls, each call once, finish tool_calls, and null content when only calls', async () => {
    const withText = await run([
      { type: 'text-delta', text: 'Checking.' },
      { type: 'tool-call', call: { id: 'call_1', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' } },
      { type: 'tool-call', call: { id: 'call_1', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' } },
      { type: 'finish', reason: 'stop' },
    ]);
    const message = (withText.body.choices as { message: Record<string, unknown>; finish_reason: string }[])[0];
    expect(message.message.content).toBe('Checking.');
    expect(message.message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } },
    ]);
    expect(message.finish_reason).toBe('tool_calls');

    const twoCalls = await run([
      { type: 'tool-call', call: { id: 'call_a', name: 'ls', kind: 'function', arguments: '{}' } },
      { type: 'tool-call', call: { id: 'call_b', name: 'ls', kind: 'function', arguments: '{}' } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(twoCalls).toMatchObject({ finishReason: 'tool_calls', toolCalls: 2, firstToolCallId: 'call_a' });

    const onlyCalls = await run([
      { type: 'tool-call', call: { id: 'c', name: 'ls', kind: 'function', arguments: '{}' } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect((onlyCalls.body.choices as { message: Record<string, unknown> }[])[0].message.content).toBeNull();
  });

  it('reports zero usage when the upstream gave none', async () => {
    const { body } = await run([{ type: 'finish', reason: 'stop' }]);
    expect(body.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('keeps cached and reasoning token counts the upstream reported as 0', async () => {
    const { body } = await run([
      { type: 'usage', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cachedPromptTokens: 0 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(body.usage).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it('throws the error event, and invalid_tool_call when every call was invalid', async () => {
    await expect(
      run([{ type: 'error', error: new GatewayError('rate_limited', { retryAfterSeconds: 3 }) }]),
    ).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(
      run([
        { type: 'tool-call', call: { id: 'c', name: 'ls', kind: 'function', arguments: 'nope' } },
        { type: 'finish', reason: 'stop' },
      ]),
    ).rejects.toMatchObject({ code: 'invalid_tool_call' });
  });

  it('throws invalid_tool_call naming the invalid call by index and name, never its arguments, when a valid call came with it', async () => {
    const thrown = await run([
      { type: 'tool-call', call: { id: 'a', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' } },
      { type: 'tool-call', call: { id: 'b', name: 'ls', kind: 'function', arguments: '{"dir": SECRET-ARGS' } },
      { type: 'finish', reason: 'stop' },
    ]).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(GatewayError);
    const failure = thrown as GatewayError;
    expect(failure.code).toBe('invalid_tool_call');
    expect(failure.publicMessage).toBe(
      'the upstream produced an invalid tool call: the tool call at index 1 ("ls") has arguments that are not valid JSON, so none of the answer\'s tool calls was returned; send the request again, as the model may write a valid call on another try',
    );
    expect(failure.detail).toBe('tool call at index 1: invalid_json_arguments');
    expect(`${failure.publicMessage} ${failure.detail}`).not.toContain('SECRET-ARGS');
  });
});

describe(ToolCallCollector.name, () => {
  it('renders function calls with indices in arrival order and keeps upstream ids', () => {
    const collector = new ToolCallCollector('req-1', 'function');
    collector.add({ id: 'call_b', name: 'read_file', kind: 'function', arguments: '{"path":"a.ts"}' });
    collector.add({ id: 'call_a', name: 'ls', kind: 'function', arguments: '{}' });
    expect(collector.valid).toEqual([
      { index: 0, id: 'call_b', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
      { index: 1, id: 'call_a', type: 'function', function: { name: 'ls', arguments: '{}' } },
    ]);
  });

  it('synthesizes call_<sanitized request id>_<n> for a missing id and turns blank arguments into {}', () => {
    const collector = new ToolCallCollector('req:1/ab', 'function');
    collector.add({ name: 'ls', kind: 'function', arguments: '  ' });
    expect(collector.valid[0]).toMatchObject({ id: 'call_req1ab_0', function: { name: 'ls', arguments: '{}' } });
  });

  it('gives each call without an id its own synthesized id, so none is taken for a repeat', () => {
    const collector = new ToolCallCollector('req-1', 'function');
    collector.add({ name: 'ls', kind: 'function', arguments: '{}' });
    collector.add({ id: '', name: 'read_file', kind: 'function', arguments: '{"path":"a.ts"}' });
    expect(collector.valid).toEqual([
      { index: 0, id: 'call_req-1_0', type: 'function', function: { name: 'ls', arguments: '{}' } },
      { index: 1, id: 'call_req-1_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
    ]);
  });

  it('fails the turn on a call with unparsable JSON next to a valid one, naming the first invalid call', () => {
    const invalid: unknown[] = [];
    const collector = new ToolCallCollector('r', 'function', {
      logger: { info: (fields) => invalid.push([fields.event, fields.index, fields.reason]) },
    });
    expect(collector.failure).toBeUndefined();
    collector.add({ id: 'y', name: 'good', kind: 'function', arguments: '{"a":1}' });
    expect(collector.failure).toBeUndefined();
    collector.add({ id: 'x', name: 'bad', kind: 'function', arguments: '{"a":' });
    collector.add({ id: 'z', name: '  ', kind: 'function', arguments: '{"a":2}' });
    expect(collector.failure).toMatchObject({
      code: 'invalid_tool_call',
      detail: 'tool call at index 1: invalid_json_arguments',
    });
    expect(invalid).toEqual([
      ['tool_call_invalid', 1, 'invalid_json_arguments'],
      ['tool_call_invalid', 2, 'empty_name'],
    ]);

    const onlyBad = new ToolCallCollector('r', 'function');
    onlyBad.add({ id: 'x', name: 'bad', kind: 'function', arguments: 'nope' });
    expect(onlyBad.failure?.code).toBe('invalid_tool_call');
  });

  it.each(['[1,2]', '5', '"x"', 'null', 'true', ' [] '])(
    'fails the turn on function arguments that are JSON but not an object: %s',
    (text) => {
      const collector = new ToolCallCollector('r', 'function');
      collector.add({ id: 'g', name: 'ls', kind: 'function', arguments: '{}' });
      collector.add({ id: 'n', name: 'read_file', kind: 'function', arguments: text });
      expect(collector.failure).toMatchObject({
        code: 'invalid_tool_call',
        detail: 'tool call at index 1: non_object_arguments',
        publicMessage: expect.stringContaining(
          'the tool call at index 1 ("read_file") has arguments that are JSON but not an object',
        ),
      });
    },
  );

  it("fails the turn on a strict tool's call whose arguments its schema refuses, and passes the calls it accepts", () => {
    const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const strict = StrictTools.of(
      normalizeTools([{ type: 'function', function: { name: 'read_file', parameters: schema, strict: true } }]),
      new OutputValidator(),
    );
    const lines: unknown[] = [];
    const collector = new ToolCallCollector('r', 'function', {
      strict,
      logger: { info: (fields) => lines.push([fields.event, fields.index, fields.reason]) },
    });
    collector.add({ id: 'a', name: 'read_file', kind: 'function', arguments: '{"path":"a.ts"}' });
    collector.add({ id: 'b', name: 'ls', kind: 'function', arguments: '{"any":1}' });
    expect(collector.failure).toBeUndefined();
    collector.add({ id: 'c', name: 'read_file', kind: 'function', arguments: '{"file":"secret.ts"}' });
    expect(collector.failure).toMatchObject({
      code: 'invalid_tool_call',
      detail: 'tool call at index 2: off_schema_arguments',
      publicMessage: expect.stringContaining(
        `the tool call at index 2 ("read_file") has arguments that its strict tool's parameters schema refuses`,
      ),
    });
    expect(collector.failure?.publicMessage).not.toContain('secret');
    expect(lines).toEqual([['tool_call_invalid', 2, 'off_schema_arguments']]);
  });

  it('takes blank function arguments as {}, and any custom input on both wires (only function tools need a JSON object)', () => {
    for (const wire of ['function', 'custom'] as const) {
      const collector = new ToolCallCollector('r', wire);
      collector.add({ id: 'b', name: 'ls', kind: 'function', arguments: ' ' });
      collector.add({ id: 'u', name: 'ls', kind: 'function' });
      for (const [index, input] of ['[1,2]', '5', 'null', '*** Begin Patch', ''].entries())
        collector.add({ id: `c${index}`, name: 'apply_patch', kind: 'custom', input });
      expect(collector.failure).toBeUndefined();
      expect(collector.valid).toHaveLength(7);
      expect(collector.valid[0].function?.arguments).toBe('{}');
      expect(collector.valid[1].function?.arguments).toBe('{}');
    }
  });

  it('with parallel_tool_calls false checks only the first call, the one passed on', () => {
    const firstOnly = new ToolCallCollector('r', 'function', { firstCallOnly: true });
    firstOnly.add({ id: 'a', name: 'ls', kind: 'function', arguments: '{}' });
    firstOnly.add({ id: 'b', name: 'ls', kind: 'function', arguments: '[1]' });
    expect(firstOnly.failure).toBeUndefined();
    expect(firstOnly.valid).toHaveLength(1);

    // The calls after an invalid first one are neither checked nor logged.
    const lines: unknown[] = [];
    const badFirst = new ToolCallCollector('r', 'function', {
      firstCallOnly: true,
      logger: { info: (fields) => lines.push([fields.event, fields.index]) },
    });
    badFirst.add({ id: 'a', name: 'ls', kind: 'function', arguments: '[1]' });
    badFirst.add({ id: 'c', name: 'ls', kind: 'function', arguments: 'nope' });
    badFirst.add({ name: '', kind: 'function' });
    badFirst.add({ id: 'b', name: 'ls', kind: 'function', arguments: '{}' });
    expect(badFirst.failure?.code).toBe('invalid_tool_call');
    expect(lines).toEqual([['tool_call_invalid', 0]]);
  });

  it('ignores a repeated id', () => {
    const collector = new ToolCallCollector('r', 'function');
    collector.add({ id: 'b', name: 'ls', kind: 'function', arguments: '{}' });
    collector.add({ id: 'b', name: 'ls', kind: 'function', arguments: '{}' });
    expect(collector.valid).toHaveLength(1);
    expect(collector.failure).toBeUndefined();
  });

  it('drops an empty call (no name, no arguments) next to a valid one: one call at index 0, the turn finishes tool_calls', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = { info: (fields: Record<string, unknown>) => lines.push(fields) };
    const collector = new ToolCallCollector('r', 'function', { logger, provider: 'provider_b' });
    collector.add({ id: 'e0', name: '', kind: 'function', arguments: '{}' });
    collector.add({ id: 'g', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' });
    collector.add({ id: 'e1', name: ' ', kind: 'function', arguments: ' { } ' });
    collector.add({ name: '', kind: 'function' });
    collector.add({ id: 'e3', name: '', kind: 'function', arguments: '' });
    collector.add({ id: 'e4', name: '', kind: 'custom', input: '' });
    expect(collector.failure).toBeUndefined();
    expect(collector.valid).toEqual([
      { index: 0, id: 'g', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } },
    ]);
    // One line per dropped call: its place among the calls the upstream sent, the family, nothing of its content.
    expect(lines).toEqual(
      [0, 2, 3, 4, 5].map((index) => ({ event: 'tool_call_empty', provider: 'provider_b', index })),
    );

    const { data, chunks } = await serve([
      { type: 'tool-call', call: { id: 'g', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' } },
      { type: 'tool-call', call: { id: 'e', name: '', kind: 'function', arguments: '{}' } },
      { type: 'tool-call', call: { id: 'h', name: 'ls', kind: 'function', arguments: '{}' } },
      { type: 'finish', reason: 'stop' },
    ]);
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    expect(calls.map((call: { index: number; id: string }) => [call.index, call.id])).toEqual([
      [0, 'g'],
      [1, 'h'],
    ]);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(data.at(-1)).toBe('[DONE]');
  });

  it('ends a turn whose only calls were empty as the upstream ended it: an empty answer that stops', async () => {
    const events: ChatEvent[] = [
      { type: 'tool-call', call: { name: '', kind: 'function', arguments: '{}' } },
      { type: 'finish', reason: 'stop' },
    ];
    const { chunks, outcome } = await serve(events);
    expect(chunks.map((chunk) => chunk.choices[0])).toEqual([
      { index: 0, delta: { role: 'assistant' }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: 'stop' },
    ]);
    expect(outcome).toMatchObject({ finishReason: 'stop', toolCalls: 0 });
    const { body } = await run(events);
    expect(body.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop', logprobs: null },
    ]);
  });

  it('still fails the turn on a call with arguments but no name', () => {
    const collector = new ToolCallCollector('r', 'function');
    collector.add({ id: 'g', name: 'ls', kind: 'function', arguments: '{}' });
    collector.add({ id: 'a', name: ' ', kind: 'function', arguments: '{"path":"a"}' });
    expect(collector.valid).toHaveLength(1);
    expect(collector.failure).toMatchObject({
      code: 'invalid_tool_call',
      detail: 'tool call at index 1: empty_name',
      publicMessage: expect.stringContaining('the tool call at index 1 has no tool name'),
    });
    const custom = new ToolCallCollector('r', 'function');
    custom.add({ id: 'c', name: '', kind: 'custom', input: '*** Begin Patch' });
    expect(custom.failure?.detail).toBe('tool call at index 0: empty_name');
  });

  it('renders custom calls as function calls on the default wire and as custom on the custom wire', () => {
    const patch = '*** Begin Patch\n*** End Patch';
    const functionWire = new ToolCallCollector('r', 'function');
    functionWire.add({ id: 'c1', name: 'apply_patch', kind: 'custom', input: patch });
    expect(functionWire.valid[0]).toEqual({
      index: 0,
      id: 'c1',
      type: 'function',
      function: { name: 'apply_patch', arguments: patch },
    });

    const customWire = new ToolCallCollector('r', 'custom');
    customWire.add({ id: 'c1', name: 'apply_patch', kind: 'custom', input: patch });
    expect(customWire.valid[0]).toEqual({
      index: 0,
      id: 'c1',
      type: 'custom',
      custom: { name: 'apply_patch', input: patch },
    });
  });

  it('carries a thought signature as extra_content.google.thought_signature', () => {
    const collector = new ToolCallCollector('r', 'function');
    collector.add({ id: 'g1', name: 'ls', kind: 'function', arguments: '{}', thoughtSignature: 'sig-1' });
    expect(collector.valid[0].extra_content).toEqual({ google: { thought_signature: 'sig-1' } });
  });
});

describe(ChunkFactory.name, () => {
  it('stamps created in whole Unix seconds', () => {
    const before = Math.floor(Date.now() / 1000);
    const { created } = new ChunkFactory('m');
    const after = Math.ceil(Date.now() / 1000);
    expect(Number.isInteger(created)).toBe(true);
    expect(created).toBeGreaterThanOrEqual(before);
    expect(created).toBeLessThanOrEqual(after);
  });

  it("writes a text delta's chunk as the same JSON as the whole chunk object, for any text and model", () => {
    // Full Unicode, lone surrogates and control characters included: what JSON.stringify escapes.
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(
      fc.property(text, text, fc.constantFrom('content', 'reasoning'), (model, delta, channel) => {
        const factory = new ChunkFactory(model);
        const field = channel === 'content' ? 'content' : 'reasoning_content';
        const chunk = {
          id: factory.id,
          object: 'chat.completion.chunk',
          created: factory.created,
          model,
          choices: [{ index: 0, delta: { [field]: delta }, finish_reason: null }],
        };
        expect(factory.deltaJson(channel, delta)).toBe(JSON.stringify(chunk));
        // The head made with the first delta serves the next ones.
        expect(factory.deltaJson(channel, `${delta}"`)).toBe(
          JSON.stringify({ ...chunk, choices: [{ index: 0, delta: { [field]: `${delta}"` }, finish_reason: null }] }),
        );
      }),
    );
  });
});
