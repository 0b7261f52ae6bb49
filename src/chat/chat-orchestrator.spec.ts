import { OutputValidator } from '../common/json-schema/output-validator';
import type { EventLogger } from '../core/event-logger';
import { loadConfig } from '../config/app-config';
import type { ChatEvent, PolledEvents } from '../core/chat-event';
import { GatewayError } from '../core/gateway.error';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { ModelCatalog } from '../models/model-catalog';
import type { CallContext, ChatRequest, ProviderAdapter } from '../providers/shared/provider-adapter';
import { ProviderRegistry } from '../providers/provider-registry';
import { AgentQueueService } from '../queue/agent-queue.service';
import { queueKey } from '../queue/chat-identity';
import type { ChatCommand, HeldAnswerKeepAlive, TurnRenderer } from './chat-orchestrator';
import { ChatOrchestrator } from './chat-orchestrator';
import { parseChatBody } from './chat-request.parser';
import { conversationIdOf } from '../queue/chat-identity';
import { ConversationAliases } from '../queue/conversation-aliases';
import { ToolChoiceRule } from './tool-choice-rule';

/** A scripted provider_a: records what it was asked and whether its events were closed. */
class FakeAdapter implements ProviderAdapter {
  id: ProviderAdapter['id'] = 'provider_a';
  readonly requests: ChatRequest[] = [];
  readonly contexts: CallContext[] = [];
  closed = 0;
  pulled = 0;

  /**
   * `attempts`: the events of each call in turn (the last one repeats); else `events` every time.
   * `polled`: the events are at hand at once, handed over by `poll()` too, as the turn runner's are.
   */
  constructor(
    private readonly script: {
      events?: ChatEvent[];
      attempts?: ChatEvent[][];
      reject?: GatewayError;
      acceptAfter?: Promise<void>;
      polled?: boolean;
    } = {},
  ) {}

  async stream(request: ChatRequest, context: CallContext): Promise<PolledEvents> {
    this.requests.push(request);
    this.contexts.push(context);
    await this.script.acceptAfter;
    if (this.script.reject) throw this.script.reject;
    const attempts = this.script.attempts;
    const events = [
      ...(attempts ? attempts[Math.min(this.requests.length, attempts.length) - 1] : (this.script.events ?? [])),
    ];
    // A hand-made iterator: unlike an unstarted generator, it notices return() before any next().
    const iterator: PolledEvents = {
      [Symbol.asyncIterator]: () => iterator,
      next: async () => {
        this.pulled++;
        const value = events.shift();
        return value ? { value, done: false } : { value: undefined, done: true };
      },
      return: async () => {
        this.closed++;
        return { value: undefined, done: true };
      },
    };
    if (this.script.polled)
      iterator.poll = () => {
        this.pulled++;
        return events.shift();
      };
    return iterator;
  }

  /** Calls made for a turn answered as one JSON body (`complete`), the rest being streams. */
  completes = 0;

  complete(request: ChatRequest, context: CallContext): Promise<PolledEvents> {
    this.completes++;
    return this.stream(request, context);
  }
}

function setup(adapter: FakeAdapter, env: Record<string, string> = {}) {
  const config = loadConfig({ HOME: '/nonexistent', GATEWAY_PROVIDERS: 'provider_a', ...env });
  const records: Record<string, unknown>[] = [];
  const at = (level: string) => (fields: Record<string, unknown>) => records.push({ level, ...fields });
  const logger = { info: at('info'), warn: at('warn'), debug: at('debug'), error: at('error') } as EventLogger;
  const counted: string[] = [];
  const metrics = {
    chatRequest: (fields: { status: number }) => counted.push(`request:${fields.status}`),
    firstToken: () => counted.push('first_token'),
    tokensUsed: (_provider: string, kind: string, count: number) =>
      count > 0 && counted.push(`tokens:${kind}:${count}`),
    upstreamError: (_provider: string, code: string) => counted.push(`upstream_error:${code}`),
    upstreamRetry: (_provider: string, code: string) => counted.push(`upstream_retry:${code}`),
    fastTierRequest: () => counted.push('fast_tier'),
    queueWaited: () => undefined,
    queueDepthChanged: () => undefined,
  } as unknown as GatewayMetrics;
  const registry = new ProviderRegistry([adapter], ModelCatalog.load(undefined, config.enabledProviders));
  const orchestrator = new ChatOrchestrator(
    config,
    registry,
    new AgentQueueService(config, metrics),
    metrics,
    new OutputValidator(),
    new ConversationAliases(),
  );
  const command = (body: Record<string, unknown>, client = new AbortController()): ChatCommand => {
    const conversation = conversationIdOf({ body, headers: {}, scope: undefined });
    return {
      request: parseChatBody(body, 'gpt-5.6-sol'),
      caller: 'anonymous',
      conversation,
      queueKey: queueKey(config.agentQueue.keyMode, { body, headers: {}, caller: 'anonymous', conversation }),
      requestId: 'req-1',
      logger,
      client,
      arrivedAt: Date.now(),
    };
  };
  const completions = () => records.filter((record) => record.event === 'chat_completion');
  return { orchestrator, command, records, counted, completions, logger };
}

/** A streamed front end's keep-alive of a held answer: what it was asked, and whether it committed. */
class FakeKeepAlive implements HeldAnswerKeepAlive {
  holds = 0;
  stops = 0;

  constructor(public committed = false) {}

  hold(): void {
    this.holds++;
  }

  stopKeepAlive(): void {
    this.stops++;
  }

  /** How many holds there were when the renderer was called (`readAll`), once `render` ran. */
  holdsBeforeRender?: number;

  /** `readAll`, noting the holds so far when it is called. */
  readonly render: TurnRenderer<ChatEvent[]> = (events) => {
    this.holdsBeforeRender = this.holds;
    return readAll(events);
  };
}

/** Reads every event, as the SSE writer and the aggregator do. */
const readAll = async (events: AsyncIterable<ChatEvent>): ReturnType<TurnRenderer<ChatEvent[]>> => {
  const seen: ChatEvent[] = [];
  for await (const event of events) seen.push(event);
  return { outcome: { clientGone: false, finishReason: 'stop', toolCalls: 0 }, result: seen };
};

/** Reads every event as the chat renderer does: what `poll()` has at hand first, `next()` only when it has none. */
const readPolled = async (events: AsyncIterable<ChatEvent>): ReturnType<TurnRenderer<ChatEvent[]>> => {
  const iterator = events[Symbol.asyncIterator]() as PolledEvents;
  const seen: ChatEvent[] = [];
  for (;;) {
    const event = iterator.poll?.() ?? (await iterator.next()).value;
    if (event === undefined) break;
    seen.push(event);
  }
  return { outcome: { clientGone: false, finishReason: 'stop', toolCalls: 0 }, result: seen };
};

const reply: ChatEvent[] = [
  { type: 'text-delta', text: 'hi' },
  { type: 'usage', usage: { promptTokens: 3, completionTokens: 1, totalTokens: 4 } },
  { type: 'finish', reason: 'stop' },
];
const toolTurn = {
  model: 'gpt-5.6-sol',
  stream: true,
  tools: [{ type: 'function', function: { name: 'ls' } }],
  messages: [{ role: 'user', content: 'list' }],
};

describe(ChatOrchestrator.name, () => {
  it('runs an accepted turn through the renderer and records it once: status, first token, tokens', async () => {
    const adapter = new FakeAdapter({ events: reply });
    const { orchestrator, command, counted, completions } = setup(adapter);
    const seen = await orchestrator.run(
      command({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hello' }] }),
      readAll,
    );
    expect(seen).toEqual(reply);
    expect(counted).toEqual(['first_token', 'tokens:prompt:3', 'tokens:completion:1', 'request:200']);
    expect(completions()).toEqual([
      expect.objectContaining({ status: 200, provider: 'provider_a', stream: true, finish_reason: 'stop' }),
    ]);
  });

  it('records a client that left during the turn as 499 canceled, even when the renderer did not notice', async () => {
    const adapter = new FakeAdapter({ events: reply });
    const { orchestrator, command, counted, completions } = setup(adapter);
    const client = new AbortController();
    await orchestrator.run(
      command({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hello' }] }, client),
      async (events) => {
        const result = await readAll(events);
        client.abort(new Error('socket closed'));
        return result;
      },
    );
    expect(counted).toContain('request:499');
    expect(completions()).toEqual([expect.objectContaining({ status: 499, error_code: 'canceled' })]);
  });

  it('records the first token at the first reasoning text, which a streamed client is given as reasoning_content', async () => {
    const adapter = new FakeAdapter({
      events: [
        { type: 'reasoning-delta', text: 'thinking' },
        { type: 'finish', reason: 'stop' },
      ],
    });
    const { orchestrator, command, counted } = setup(adapter);
    await orchestrator.run(
      command({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hello' }] }),
      readAll,
    );
    expect(counted).toContain('first_token');
  });

  it('records no first token at an empty tool call, which the client is never given', async () => {
    const emptyCall: ChatEvent = { type: 'tool-call', call: { id: 'c1', name: '', kind: 'function', arguments: '{}' } };
    const adapter = new FakeAdapter({ events: [emptyCall, { type: 'finish', reason: 'stop' }] });
    const { orchestrator, command, counted } = setup(adapter);
    await orchestrator.run(command({ ...toolTurn, messages: [{ role: 'user', content: 'list' }] }), readAll);
    expect(counted).not.toContain('first_token');
  });

  it('counts a stream that ended in an error chunk as an upstream error only when the code is an upstream one', async () => {
    const endedIn =
      (code: 'timeout' | 'internal'): TurnRenderer<ChatEvent[]> =>
      async (events) => ({
        outcome: { clientGone: false, toolCalls: 0, failure: new GatewayError(code) },
        result: await readAll(events).then((r) => r.result),
      });
    for (const code of ['timeout', 'internal'] as const) {
      const { orchestrator, command, counted } = setup(new FakeAdapter({ events: reply }));
      await orchestrator.run(
        command({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: code }] }),
        endedIn(code),
      );
      expect(counted.filter((entry) => entry.startsWith('upstream_error'))).toEqual(
        code === 'timeout' ? ['upstream_error:timeout'] : [],
      );
    }
  });

  it('logs a bug as the one error line of its request: chat_completion with error_code internal and the error itself', async () => {
    const { orchestrator, command, records } = setup(new FakeAdapter({ events: reply }));
    const bug = new TypeError('cannot read x of undefined');
    const failure = await orchestrator
      .run(command({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'hi' }] }), async () => {
        throw bug;
      })
      .catch((thrown: unknown) => thrown);
    expect((failure as GatewayError).code).toBe('internal');
    expect(records.filter((record) => record.level === 'warn' || record.level === 'error')).toEqual([
      expect.objectContaining({
        level: 'error',
        event: 'chat_completion',
        status: 500,
        error_code: 'internal',
        err: bug,
      }),
    ]);
  });

  it('logs a stream that failed after its headers at the level of the failure, not of the 200 the client got', async () => {
    for (const [code, level] of [
      ['timeout', 'error'],
      ['usage_limit', 'warn'],
    ] as const) {
      const { orchestrator, command, completions } = setup(new FakeAdapter({ events: reply }));
      await orchestrator.run(
        command({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: code }] }),
        async (events) => ({
          outcome: { clientGone: false, toolCalls: 0, failure: new GatewayError(code, { fix: `the fix of ${code}` }) },
          result: await readAll(events).then((r) => r.result),
        }),
      );
      expect(completions()).toEqual([
        expect.objectContaining({ level, status: 200, error_code: code, fix: `the fix of ${code}` }),
      ]);
    }
  });

  it('gives the adapter the neutral conversation id and nothing of the queue key or the client wire', async () => {
    const adapter = new FakeAdapter({ events: reply });
    const { orchestrator, command } = setup(adapter, {
      PRIMARY_AGENT_QUEUE_KEY_MODE: 'global',
      PRIMARY_CUSTOM_TOOL_WIRE: 'custom',
    });
    await orchestrator.run(command({ ...toolTurn, conversation_id: 'conv-7' }), readAll);
    const [request] = adapter.requests;
    expect(request.conversationId).toBe('chat:body:conversation_id=conv-7');
    expect(Object.keys(request).sort()).toEqual([
      'conversationId',
      'faithful',
      'messages',
      'model',
      'normalizedTools',
      'parallelToolCalls',
      'responseFormat',
      'sampling',
      'toolChoice',
      'tools',
    ]);
  });

  it('closes the adapter events when the renderer never read them (the client left before the first chunk)', async () => {
    const adapter = new FakeAdapter({ events: reply });
    const { orchestrator, command, completions } = setup(adapter);
    const client = new AbortController();
    const leaves: TurnRenderer<undefined> = async () => {
      client.abort(new Error('client disconnected'));
      return { outcome: { clientGone: true, toolCalls: 0 }, result: undefined };
    };
    await orchestrator.run(
      command({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hello' }] }, client),
      leaves,
    );
    expect(adapter.pulled).toBe(0);
    expect(adapter.closed).toBe(1);
    expect(completions()).toEqual([expect.objectContaining({ status: 499, error_code: 'canceled' })]);
  });

  it('closes the adapter events and releases the slot when the renderer fails, and rethrows for the front end', async () => {
    const adapter = new FakeAdapter({ events: reply });
    const { orchestrator, command, records, completions } = setup(adapter);
    const failing: TurnRenderer<never> = async () => {
      throw new GatewayError('invalid_tool_call');
    };
    await expect(orchestrator.run(command(toolTurn), failing)).rejects.toMatchObject({ code: 'invalid_tool_call' });
    expect(adapter.closed).toBe(1);
    expect(records.map((record) => record.event).filter((event) => String(event).startsWith('queue_'))).toEqual([
      'queue_acquire',
      'queue_release',
    ]);
    expect(completions()).toEqual([expect.objectContaining({ status: 502, error_code: 'invalid_tool_call' })]);
  });

  it('throws a refusal before acceptance with its real status, counted as an upstream error, and frees the slot', async () => {
    const adapter = new FakeAdapter({ reject: new GatewayError('rate_limited', { retryAfterSeconds: 7 }) });
    const { orchestrator, command, counted, records } = setup(adapter);
    await expect(orchestrator.run(command(toolTurn), readAll)).rejects.toMatchObject({
      code: 'rate_limited',
      retryAfterSeconds: 7,
    });
    expect(counted).toEqual(['upstream_error:rate_limited', 'request:429']);
    expect(records.filter((record) => record.event === 'queue_release')).toHaveLength(1);
  });

  it('answers an unknown model before admission and never calls an adapter', async () => {
    const adapter = new FakeAdapter({ events: reply });
    const { orchestrator, command, completions, records } = setup(adapter);
    await expect(orchestrator.run(command({ ...toolTurn, model: 'no-such-model' }), readAll)).rejects.toMatchObject({
      code: 'model_not_found',
    });
    expect(adapter.requests).toHaveLength(0);
    expect(records.some((record) => record.event === 'queue_acquire')).toBe(false);
    expect(completions()).toEqual([expect.objectContaining({ status: 404, provider: 'none' })]);
  });

  it('serializes tool turns of one conversation: the second waits in the queue until the first is closed', async () => {
    let accept!: () => void;
    const adapter = new FakeAdapter({ events: reply, acceptAfter: new Promise<void>((resolve) => (accept = resolve)) });
    const { orchestrator, command, records } = setup(adapter);
    const first = orchestrator.run(command(toolTurn), readAll);
    const second = orchestrator.run(command(toolTurn), readAll);
    await new Promise((resolve) => setImmediate(resolve));
    expect(records.map((record) => record.event).filter((event) => String(event).startsWith('queue_'))).toEqual([
      'queue_acquire',
      'queue_wait',
    ]);
    accept();
    await Promise.all([first, second]);
    expect(adapter.requests).toHaveLength(2);
  });

  it('records a client that leaves while queued as 499 and passes its abort reason through', async () => {
    let accept!: () => void;
    const adapter = new FakeAdapter({ events: reply, acceptAfter: new Promise<void>((resolve) => (accept = resolve)) });
    const { orchestrator, command, completions } = setup(adapter);
    const first = orchestrator.run(command(toolTurn), readAll);
    const client = new AbortController();
    const reason = new Error('client disconnected');
    const second = orchestrator.run(command(toolTurn, client), readAll);
    client.abort(reason);
    await expect(second).rejects.toBe(reason);
    accept();
    await first;
    expect(adapter.requests).toHaveLength(1);
    expect(completions().map((record) => record.status)).toEqual([499, 200]);
  });

  it('records a turn the gateway ends while queued (the drain deadline) as its error, not as 499, and throws that', async () => {
    let accept!: () => void;
    const adapter = new FakeAdapter({ events: reply, acceptAfter: new Promise<void>((resolve) => (accept = resolve)) });
    const { orchestrator, command, completions, counted } = setup(adapter);
    const first = orchestrator.run(command(toolTurn), readAll);
    const client = new AbortController();
    const reason = new GatewayError('draining');
    const second = orchestrator.run(command(toolTurn, client), readAll);
    client.abort(reason);
    await expect(second).rejects.toBe(reason);
    accept();
    await first;
    expect(completions().map((record) => [record.status, record.error_code])).toEqual([
      [503, 'draining'],
      [200, undefined],
    ]);
    expect(counted).toContain('request:503');
  });

  it('writes on the chat_completion line the tool calls the client got and the time to its first output', async () => {
    const { orchestrator, command, completions } = setup(new FakeAdapter({ events: reply }));
    await orchestrator.run(command(toolTurn), async (events) => ({
      outcome: { clientGone: false, finishReason: 'tool_calls', toolCalls: 2, firstToolCallId: 'call_1' },
      result: (await readAll(events)).result,
    }));
    expect(completions()).toEqual([
      expect.objectContaining({
        status: 200,
        finish_reason: 'tool_calls',
        tool_calls: 2,
        ttft_ms: expect.any(Number),
        duration_ms: expect.any(Number),
      }),
    ]);
  });

  it('counts a turn of a fast-tier model on the fast-tier counter, and no other turn', async () => {
    const fast = setup(new FakeAdapter({ events: reply }));
    await fast.orchestrator.run(
      fast.command({ model: 'gpt-5.6-sol-fast', messages: [{ role: 'user', content: 'hello' }] }),
      readAll,
    );
    expect(fast.counted).toContain('fast_tier');
    const plain = setup(new FakeAdapter({ events: reply }));
    await plain.orchestrator.run(
      plain.command({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'hello' }] }),
      readAll,
    );
    expect(plain.counted).not.toContain('fast_tier');
  });

  it('records a stream the drain deadline ended as its error, also when the connection closed before the error chunk', async () => {
    const { orchestrator, command, completions, counted } = setup(new FakeAdapter({ events: reply }));
    const client = new AbortController();
    await orchestrator.run(
      command({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hello' }] }, client),
      async (events) => {
        const { result } = await readAll(events);
        client.abort(new GatewayError('draining'));
        return { outcome: { clientGone: true, toolCalls: 0 }, result };
      },
    );
    expect(completions()).toEqual([expect.objectContaining({ status: 200, error_code: 'draining' })]);
    expect(counted).toContain('request:200');
  });

  it('gives the upstream the identity a chat started with on the turn after its first tool call', async () => {
    const adapter = new FakeAdapter({ events: reply });
    const { orchestrator, command } = setup(adapter);
    const first = { ...toolTurn, messages: [{ role: 'user', content: 'list the files' }] };
    await orchestrator.run(command(first), async (events) => ({
      outcome: { clientGone: false, finishReason: 'tool_calls', toolCalls: 1, firstToolCallId: 'call_ls_1' },
      result: (await readAll(events)).result,
    }));
    const next = {
      ...first,
      messages: [
        ...first.messages,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_ls_1', type: 'function', function: { name: 'ls', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_ls_1', content: 'a.txt' },
      ],
    };
    const second = command(next);
    await orchestrator.run(second, readAll);
    expect(second.conversation.value).not.toBe(adapter.requests[0].conversationId);
    expect(adapter.requests[1].conversationId).toBe(adapter.requests[0].conversationId);
  });

  it('manages the context of a request with tools only: one without tools reaches the adapter as sent', async () => {
    const long = 'x'.repeat(200);
    const history = [
      { role: 'user', content: 'list' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: long },
      { role: 'user', content: 'sum it up' },
    ];
    const env = { PRIMARY_CONTEXT_MANAGEMENT_TOOL_OUTPUT_MAX_BYTES: '64' };
    const plain = new FakeAdapter({ events: reply });
    const withoutTools = setup(plain, env);
    await withoutTools.orchestrator.run(withoutTools.command({ model: 'gpt-5.6-sol', messages: history }), readAll);
    expect(plain.requests[0].messages).toEqual(history);
    expect(withoutTools.records.filter((record) => record.event === 'context_manage')).toEqual([]);
    const tooled = new FakeAdapter({ events: reply });
    const withTools = setup(tooled, env);
    await withTools.orchestrator.run(withTools.command({ ...toolTurn, messages: history }), readAll);
    expect(String(tooled.requests[0].messages[2].content).length).toBeLessThan(long.length);
    expect(withTools.records.filter((record) => record.event === 'context_manage')).toHaveLength(1);
  });

  it('resolves the model with the reasoning_effort and verbosity the request sent', async () => {
    const adapter = new FakeAdapter({ events: reply });
    const { orchestrator, command } = setup(adapter);
    await orchestrator.run(
      command({
        model: 'gpt-5.6-sol',
        reasoning_effort: 'high',
        verbosity: 'medium',
        messages: [{ role: 'user', content: 'hello' }],
      }),
      readAll,
    );
    expect(adapter.requests[0].model).toMatchObject({ reasoningEffort: 'high', verbosity: 'medium' });
  });

  it('times a request from its arrival, before its body was read, not from the start of the turn', async () => {
    const { orchestrator, command, completions } = setup(new FakeAdapter({ events: reply }));
    const request = command({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'hello' }] });
    await orchestrator.run({ ...request, arrivedAt: Date.now() - 60_000 }, readAll);
    const [line] = completions();
    expect(line.duration_ms).toBeGreaterThanOrEqual(60_000);
    expect(line.ttft_ms).toBeGreaterThanOrEqual(60_000);
  });

  it('records a request refused before it became a command', () => {
    const { orchestrator, completions, logger } = setup(new FakeAdapter());
    const error = orchestrator.rejected(new GatewayError('invalid_request'), logger, Date.now());
    expect(error).toMatchObject({ code: 'invalid_request' });
    expect(completions()).toEqual([
      expect.objectContaining({ status: 400, provider: 'none', error_code: 'invalid_request' }),
    ]);
  });

  it("says on a refused request's line the model and stream it asked for, the field and message the client got, and no tool calls", () => {
    const { orchestrator, completions, logger } = setup(new FakeAdapter());
    const refusal = new GatewayError('invalid_request', {
      publicMessage: 'temperature must be a number',
      param: 'temperature',
    });
    orchestrator.rejected(refusal, logger, Date.now(), { model: 'gpt-5.6-sol', stream: true });
    expect(completions()).toEqual([
      expect.objectContaining({
        status: 400,
        model: 'gpt-5.6-sol',
        stream: true,
        param: 'temperature',
        error_message: 'temperature must be a number',
        tool_calls: 0,
      }),
    ]);
  });

  describe('request parameters (the table in chat-parameters.ts)', () => {
    const plain = { model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hello' }] };

    it('hands provider_a only what it honours: response_format yes; temperature, max_tokens and stop no', async () => {
      const adapter = new FakeAdapter({ events: reply });
      const { orchestrator, command } = setup(adapter);
      const schema = { type: 'object', properties: {}, additionalProperties: false };
      await orchestrator.run(
        command({
          ...plain,
          temperature: 0.2,
          max_tokens: 5,
          seed: 3,
          stop: ['x'],
          response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
        }),
        readAll,
      );
      const [request] = adapter.requests;
      expect(request.sampling).toEqual({
        responseFormat: { type: 'json_schema', name: 'answer', schema, strict: true },
      });
      expect(request.responseFormat).toEqual({ type: 'json_schema', name: 'answer', schema, strict: true });
    });

    describe('response_format held by the gateway (provider_c)', () => {
      const schema = {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      };
      const body = {
        model: 'claude-fable-5',
        stream: true,
        messages: [{ role: 'user', content: 'city?' }],
        response_format: { type: 'json_schema', json_schema: { name: 'city', schema } },
      };
      const answer = (...pieces: string[]): ChatEvent[] => [
        ...pieces.map((text): ChatEvent => ({ type: 'text-delta', text })),
        { type: 'finish', reason: 'stop' },
      ];
      const providerC = (attempts: ChatEvent[][]) =>
        Object.assign(new FakeAdapter({ attempts }), { id: 'provider_c' as const });

      it('asks again after prose and a schema miss, writes nothing of them, and gives the renderer only the object', async () => {
        const adapter = providerC([
          answer('Sure! Paris.'),
          answer('{"town":"Paris"}'),
          answer('```json\n{"city":', '"Paris"}\n```'),
        ]);
        const { orchestrator, command, records, counted } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(command(body), readAll);
        expect(seen).toEqual([
          { type: 'text-delta', text: '{"city":"Paris"}' },
          { type: 'finish', reason: 'stop' },
        ]);
        expect(adapter.requests).toHaveLength(3);
        expect(adapter.closed).toBeGreaterThanOrEqual(3);
        // The format reached the model as a last system message; the adapter got no responseFormat.
        const last = adapter.requests[0].messages.at(-1)!;
        expect(last.role).toBe('system');
        expect(String(last.content)).toContain(JSON.stringify(schema));
        expect(adapter.requests[0].responseFormat).toBeUndefined();
        expect(
          records.filter((record) => record.event === 'chat_json_invalid').map((record) => record.attempt),
        ).toEqual([1, 2]);
        expect(counted.filter((entry) => entry.startsWith('upstream_retry:'))).toEqual([
          'upstream_retry:output_validation_failed',
          'upstream_retry:output_validation_failed',
        ]);
        expect(counted.filter((entry) => entry.startsWith('request:'))).toEqual(['request:200']);
      });

      it('counts the tokens of every attempt, cached and reasoning ones included, and calls complete for a turn answered as one JSON body', async () => {
        const usage: ChatEvent = {
          type: 'usage',
          usage: { promptTokens: 3, completionTokens: 1, totalTokens: 4, cachedPromptTokens: 2, reasoningTokens: 1 },
        };
        const adapter = providerC([
          [{ type: 'text-delta', text: 'Paris.' }, usage, { type: 'finish', reason: 'stop' }],
          [{ type: 'text-delta', text: '{"city":"Paris"}' }, usage, { type: 'finish', reason: 'stop' }],
        ]);
        const { orchestrator, command, counted } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        await orchestrator.run(command({ ...body, stream: false }), readAll);
        expect(counted.filter((entry) => entry.startsWith('tokens:'))).toEqual([
          'tokens:prompt:6',
          'tokens:completion:2',
          'tokens:cached:4',
          'tokens:reasoning:2',
        ]);
        expect([adapter.requests.length, adapter.completes]).toEqual([2, 2]);
      });

      it('keeps the connection alive from the first attempt on, also when that attempt is the answer', async () => {
        const adapter = providerC([answer('{"city":"Paris"}')]);
        const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const keepAlive = new FakeKeepAlive();
        expect(await orchestrator.run(command(body), keepAlive.render, keepAlive)).toEqual(answer('{"city":"Paris"}'));
        expect([keepAlive.holdsBeforeRender, keepAlive.stops]).toEqual([1, 0]);
      });

      it('answers 422 output_validation_failed after three unusable answers, before any output', async () => {
        const adapter = providerC([answer('no JSON here')]);
        const { orchestrator, command, counted } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        let rendered = false;
        const render: TurnRenderer<undefined> = async () => {
          rendered = true;
          return { outcome: { clientGone: false, toolCalls: 0 }, result: undefined };
        };
        await expect(orchestrator.run(command(body), render)).rejects.toMatchObject({
          code: 'output_validation_failed',
        });
        expect(rendered).toBe(false);
        expect(adapter.requests).toHaveLength(3);
        // The client got no output, so the request has no first token.
        expect(counted).not.toContain('first_token');
      });

      it('asks again for an answer whose strict tool call its schema refuses; the third such answer is rendered as it came', async () => {
        const strictTool = {
          type: 'function',
          function: { name: 'read_file', strict: true, parameters: { ...schema, required: ['city'] } },
        };
        const call = (args: string): ChatEvent => ({
          type: 'tool-call',
          call: { id: 'c1', name: 'read_file', kind: 'function', arguments: args },
        });
        const offSchema = [call('{"town":"Paris"}'), { type: 'finish', reason: 'stop' } as ChatEvent];
        const accepted = [call('{"city":"Paris"}'), { type: 'finish', reason: 'stop' } as ChatEvent];
        const strictBody = { ...body, tools: [strictTool] };
        const asked = providerC([offSchema, accepted]);
        const first = setup(asked, { GATEWAY_PROVIDERS: 'provider_c' });
        expect(await first.orchestrator.run(first.command(strictBody), readAll)).toEqual(accepted);
        expect(asked.requests).toHaveLength(2);
        expect(
          first.records.filter((record) => record.event === 'chat_strict_call_refused').map((record) => record.attempt),
        ).toEqual([1]);
        expect(first.counted.filter((entry) => entry.startsWith('upstream_retry:'))).toEqual([
          'upstream_retry:output_validation_failed',
        ]);

        const never = providerC([offSchema]);
        const last = setup(never, { GATEWAY_PROVIDERS: 'provider_c' });
        expect(await last.orchestrator.run(last.command(strictBody), readAll)).toEqual(offSchema);
        expect(never.requests).toHaveLength(3);
      });

      it('refuses a schema Ajv cannot compile with a 400 naming response_format, before any upstream call', async () => {
        const adapter = providerC([answer('{}')]);
        const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const broken = {
          ...body,
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'x', schema: { type: 'object', required: 'city' } },
          },
        };
        await expect(orchestrator.run(command(broken), readAll)).rejects.toMatchObject({
          code: 'invalid_request',
          param: 'response_format',
        });
        expect(adapter.requests).toHaveLength(0);
      });
    });

    describe('strict tools held by the gateway (provider_c), streamed', () => {
      const strictTool = {
        type: 'function',
        function: {
          name: 'read_file',
          strict: true,
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
      };
      const body = {
        model: 'claude-fable-5',
        stream: true,
        messages: [{ role: 'user', content: 'read it' }],
        tools: [strictTool],
      };
      const call = (args: string): ChatEvent => ({
        type: 'tool-call',
        call: { id: 'c1', name: 'read_file', kind: 'function', arguments: args },
      });
      const text = (value: string): ChatEvent => ({ type: 'text-delta', text: value });
      const finish: ChatEvent = { type: 'finish', reason: 'stop' };
      const usage: ChatEvent = { type: 'usage', usage: { promptTokens: 2, completionTokens: 1, totalTokens: 3 } };
      const providerC = (attempts: ChatEvent[][]) =>
        Object.assign(new FakeAdapter({ attempts }), { id: 'provider_c' as const });

      it('asks again for an answer that wrote nothing before its refused call; the client gets only the next answer', async () => {
        const adapter = providerC([
          [call('{"file":"a"}'), usage, finish],
          [text('Reading. '), call('{"path":"a"}'), usage, finish],
        ]);
        const { orchestrator, command, records, counted } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        expect(await orchestrator.run(command(body), readAll)).toEqual([
          text('Reading. '),
          call('{"path":"a"}'),
          usage,
          finish,
        ]);
        expect(adapter.requests).toHaveLength(2);
        expect(adapter.closed).toBeGreaterThanOrEqual(2);
        expect(
          records.filter((record) => record.event === 'chat_strict_call_refused').map((record) => record.attempt),
        ).toEqual([1]);
        // The dropped attempt's tokens were billed too.
        expect(counted.filter((entry) => entry.startsWith('tokens:'))).toEqual([
          'tokens:prompt:4',
          'tokens:completion:2',
        ]);
      });

      it('passes an answer on as it came once text went out, and on the third attempt', async () => {
        const afterText = providerC([[text('Reading. '), call('{"file":"a"}'), finish]]);
        const first = setup(afterText, { GATEWAY_PROVIDERS: 'provider_c' });
        expect(await first.orchestrator.run(first.command(body), readAll)).toEqual([
          text('Reading. '),
          call('{"file":"a"}'),
          finish,
        ]);
        expect(afterText.requests).toHaveLength(1);

        const never = providerC([[call('{"file":"a"}'), finish]]);
        const last = setup(never, { GATEWAY_PROVIDERS: 'provider_c' });
        expect(await last.orchestrator.run(last.command(body), readAll)).toEqual([call('{"file":"a"}'), finish]);
        expect(never.requests).toHaveLength(3);
      });

      it('ends the open stream with an error event when the attempt asked again fails', async () => {
        const adapter = providerC([[call('{"file":"a"}'), finish]]);
        const stream = adapter.stream.bind(adapter);
        adapter.stream = (request, context) =>
          adapter.requests.length === 0
            ? stream(request, context)
            : Promise.reject(new GatewayError('rate_limited', { detail: 'test' }));
        const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        expect(await orchestrator.run(command(body), readAll)).toEqual([
          { type: 'error', error: expect.objectContaining({ code: 'rate_limited' }) },
        ]);
      });
    });

    describe('tool_choice held by the gateway (provider_c)', () => {
      const tools = [
        { type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'list_dir', parameters: { type: 'object' } } },
      ];
      const body = (toolChoice: unknown, extra: Record<string, unknown> = {}) => ({
        model: 'claude-fable-5',
        stream: true,
        messages: [{ role: 'user', content: 'read a.txt' }],
        tools,
        tool_choice: toolChoice,
        ...extra,
      });
      const forced = { type: 'function', function: { name: 'read_file' } };
      const text = (value: string): ChatEvent => ({ type: 'text-delta', text: value });
      const called = (name: string, args = '{}'): ChatEvent => ({
        type: 'tool-call',
        call: { id: `call_${name}`, name, kind: 'function', arguments: args },
      });
      const finish: ChatEvent = { type: 'finish', reason: 'stop' };
      const providerC = (attempts: ChatEvent[][], polled = false) =>
        Object.assign(new FakeAdapter({ attempts, polled }), { id: 'provider_c' as const });
      const events = (records: Record<string, unknown>[], name: string) =>
        records.filter((record) => record.event === name);

      it('tool_choice none with a stop sequence: the turn ends at the match and the upstream is not read on', async () => {
        const adapter = providerC([
          [
            text('one STOP two'),
            text(' three'),
            { type: 'tool-call', call: { id: 'c', name: 'read_file', kind: 'function', arguments: '{}' } },
            finish,
          ],
        ]);
        const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(command(body('none', { stop: ['STOP'] })), readAll);
        expect(seen).toEqual([text('one '), finish]);
        expect(adapter.pulled).toBe(1);
      });

      it('required: asks again after an answer without a call, writes nothing of it, then the whole turn with the call', async () => {
        const adapter = providerC([
          [text('The file says hello.'), finish],
          [text('Reading it.'), called('read_file'), text(' Done.'), finish],
        ]);
        const { orchestrator, command, records, counted } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(command(body('required')), readAll);
        expect(seen).toEqual([text('Reading it.'), called('read_file'), text(' Done.'), finish]);
        expect(adapter.requests).toHaveLength(2);
        expect(adapter.closed).toBeGreaterThanOrEqual(2);
        expect(events(records, 'chat_tool_choice_unmet').map((record) => record.attempt)).toEqual([1]);
        expect(counted).toContain('upstream_retry:output_validation_failed');
      });

      it('a forced tool: calls of other tools never reach the renderer, and an answer with only those is asked again', async () => {
        const adapter = providerC([
          [called('list_dir'), finish],
          [called('list_dir'), called('read_file'), called('list_dir'), finish],
        ]);
        const { orchestrator, command, records } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(command(body(forced)), readAll);
        expect(seen).toEqual([called('read_file'), finish]);
        expect(adapter.requests).toHaveLength(2);
        expect(events(records, 'tool_call_unchosen')).toHaveLength(3);
      });

      it('a forced tool: a call of another tool after the chosen one is left out when the renderer polls for it too', async () => {
        const adapter = providerC([[called('read_file'), called('list_dir'), finish]], true);
        const { orchestrator, command, records } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(command(body(forced)), readPolled);
        expect(seen).toEqual([called('read_file'), finish]);
        // A warning, without the dropped call's name or arguments.
        expect(events(records, 'tool_call_unchosen')).toEqual([{ level: 'warn', event: 'tool_call_unchosen' }]);
      });

      it('a forced tool: only a call of exactly that name meets it, not one whose name differs by white space', async () => {
        const adapter = providerC([
          [called(' read_file'), finish],
          [called('read_file'), finish],
        ]);
        const { orchestrator, command, records } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(command(body(forced)), readAll);
        expect(seen).toEqual([called('read_file'), finish]);
        expect(adapter.requests).toHaveLength(2);
        expect(events(records, 'tool_call_unchosen')).toHaveLength(1);
      });

      it('answers a refusal (content_filter) before any call as it came, without asking again', async () => {
        const refusal: ChatEvent = { type: 'finish', reason: 'content_filter' };
        const adapter = providerC([[text('I cannot help with that.'), refusal]]);
        const { orchestrator, command, records } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(command(body('required')), readAll);
        expect(seen).toEqual([text('I cannot help with that.'), refusal]);
        expect(adapter.requests).toHaveLength(1);
        expect(events(records, 'chat_tool_choice_unmet')).toHaveLength(0);
      });

      it('a forced tool: an empty call (no name, no arguments) does not meet it, and is passed on for the collector to drop, never as unchosen', async () => {
        const empty: ChatEvent = {
          type: 'tool-call',
          call: { id: 'call_e', name: '', kind: 'function', arguments: '{}' },
        };
        const adapter = providerC([
          [empty, finish],
          [empty, called('read_file'), finish],
        ]);
        const { orchestrator, command, records } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(command(body(forced)), readAll);
        expect(seen).toEqual([empty, called('read_file'), finish]);
        expect(adapter.requests).toHaveLength(2);
        expect(events(records, 'tool_call_unchosen')).toHaveLength(0);
      });

      it('answers 422 output_validation_failed naming tool_choice after three answers without the call, before any output; its log line quotes no tool name', async () => {
        for (const [choice, attempts, message] of [
          [
            'required',
            [[text('No tool needed.'), finish]],
            'the model answered without a tool call in 3 attempts, though tool_choice "required" asks for one; send the request again, or send tool_choice "auto" to take the model\'s answer as it comes',
          ],
          [
            forced,
            // A call whose arguments are not JSON is invalid: it does not meet the choice either.
            [
              [called('list_dir'), finish],
              [called('read_file', '{"path":'), finish],
              [text('Done.'), finish],
            ],
            'the model did not call the tool "read_file" that tool_choice forces in 3 attempts; send the request again, or send tool_choice "auto" to take the model\'s answer as it comes',
          ],
        ] as const) {
          const adapter = providerC(attempts as unknown as ChatEvent[][]);
          const { orchestrator, command, counted, completions } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
          let rendered = false;
          const render: TurnRenderer<undefined> = async () => {
            rendered = true;
            return { outcome: { clientGone: false, toolCalls: 0 }, result: undefined };
          };
          await expect(orchestrator.run(command(body(choice)), render)).rejects.toMatchObject({
            code: 'output_validation_failed',
            param: 'tool_choice',
            publicMessage: message,
          });
          expect(rendered).toBe(false);
          expect(adapter.requests).toHaveLength(3);
          expect(adapter.closed).toBeGreaterThanOrEqual(3);
          expect(counted).not.toContain('first_token');
          // A forced choice's message names the client's tool, which the log line leaves out.
          const [line] = completions();
          expect(line).toMatchObject({ status: 422, error_code: 'output_validation_failed', param: 'tool_choice' });
          expect(line.error_message).toBe(choice === 'required' ? message : undefined);
        }
      });

      it('throws a failure before the call with its own status, without asking again', async () => {
        const failure = new GatewayError('upstream', { detail: 'test' });
        const adapter = providerC([[text('Reading'), { type: 'error', error: failure }]]);
        const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        await expect(orchestrator.run(command(body('required')), readAll)).rejects.toBe(failure);
        expect(adapter.requests).toHaveLength(1);
      });

      it('throws a turn that ended without a finish event as an upstream failure, without asking again', async () => {
        const adapter = providerC([[text('Reading')]]);
        const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        await expect(orchestrator.run(command(body('required')), readAll)).rejects.toMatchObject({
          code: 'upstream',
          detail: 'turn ended without a finish event',
        });
        expect(adapter.requests).toHaveLength(1);
      });

      it('with response_format held too: an answer without the call is asked again, one with it is the answer', async () => {
        const adapter = providerC([
          [text('{"city":"Paris"}'), finish],
          [called('read_file'), finish],
        ]);
        const { orchestrator, command, records } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(
          command(body('required', { response_format: { type: 'json_object' } })),
          readAll,
        );
        expect(seen).toEqual([called('read_file'), finish]);
        expect(events(records, 'chat_tool_choice_unmet').map((record) => record.attempt)).toEqual([1]);
      });

      it('with response_format held too and a forced tool: other tools are left out, and a later call that does not meet the choice does not undo the one that did', async () => {
        const invalid = called('read_file', '{"path":');
        const adapter = providerC([[called('list_dir'), called('read_file'), invalid, finish]]);
        const { orchestrator, command, records } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(
          command(body(forced, { response_format: { type: 'json_object' } })),
          readAll,
        );
        // The invalid call goes on to the renderer, which answers it as every invalid call.
        expect(seen).toEqual([called('read_file'), invalid, finish]);
        expect(adapter.requests).toHaveLength(1);
        expect(events(records, 'tool_call_unchosen')).toHaveLength(1);
      });

      it('names a forced tool of up to 64 characters whole in the refusal', () => {
        const name = `read_${'x'.repeat(59)}`;
        expect(ToolChoiceRule.of({ type: 'function', function: { name } })!.unmet(3).publicMessage).toBe(
          `the model did not call the tool "${name}" that tool_choice forces in 3 attempts; send the request again, or send tool_choice "auto" to take the model's answer as it comes`,
        );
      });

      it('takes a refusal as the answer when response_format is held too, rather than asking again for the call', async () => {
        const refusal: ChatEvent = { type: 'finish', reason: 'content_filter' };
        const adapter = providerC([[text('I cannot help with that.'), refusal]]);
        const { orchestrator, command, records } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const seen = await orchestrator.run(
          command(body('required', { response_format: { type: 'json_object' } })),
          readAll,
        );
        expect(seen).toEqual([text('I cannot help with that.'), refusal]);
        expect(adapter.requests).toHaveLength(1);
        expect(events(records, 'chat_tool_choice_unmet')).toEqual([]);
      });

      it('keeps the connection alive from the first acceptance until the answer, across attempts, and not for a plain turn', async () => {
        const adapter = providerC([
          [text('The file says hello.'), finish],
          [text('Reading it.'), called('read_file'), finish],
        ]);
        const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const keepAlive = new FakeKeepAlive();
        expect(await orchestrator.run(command(body('required')), keepAlive.render, keepAlive)).toEqual([
          text('Reading it.'),
          called('read_file'),
          finish,
        ]);
        expect([keepAlive.holdsBeforeRender, keepAlive.stops]).toEqual([1, 0]);
        const atOnce = new FakeKeepAlive();
        const answered = providerC([[called('read_file'), finish]]);
        await setup(answered, { GATEWAY_PROVIDERS: 'provider_c' }).orchestrator.run(
          command(body('required')),
          atOnce.render,
          atOnce,
        );
        expect(atOnce.holdsBeforeRender).toBe(1);
        const plain = new FakeKeepAlive();
        await orchestrator.run(command(body('auto')), readAll, plain);
        expect(plain.holds).toBe(0);
      });

      it('a refusal once a keep-alive comment committed the stream is rendered in-band and recorded as the 200 it went out as', async () => {
        const adapter = providerC([[text('No tool needed.'), finish]]);
        const { orchestrator, command, completions, counted } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const keepAlive = new FakeKeepAlive(true);
        const render: TurnRenderer<ChatEvent[]> = async (events) => {
          const { result } = await readAll(events);
          const failure = result[0]?.type === 'error' ? result[0].error : undefined;
          return { outcome: { clientGone: false, failure, toolCalls: 0 }, result };
        };
        const seen = await orchestrator.run(command(body('required')), render, keepAlive);
        expect(seen).toEqual([
          { type: 'error', error: expect.objectContaining({ code: 'output_validation_failed', param: 'tool_choice' }) },
        ]);
        expect(adapter.requests).toHaveLength(3);
        expect([keepAlive.holds, keepAlive.stops]).toEqual([1, 0]);
        expect(completions()).toEqual([
          expect.objectContaining({ status: 200, error_code: 'output_validation_failed', level: 'warn' }),
        ]);
        expect(counted.filter((entry) => entry.startsWith('request:'))).toEqual(['request:200']);
      });

      it("a streamed refusal while nothing went out is the renderer's one error event, for it to answer as any stream's failure", async () => {
        const adapter = providerC([[text('No tool needed.'), finish]]);
        const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const keepAlive = new FakeKeepAlive(false);
        const seen = await orchestrator.run(command(body('required')), readAll, keepAlive);
        expect(seen).toEqual([
          { type: 'error', error: expect.objectContaining({ code: 'output_validation_failed', param: 'tool_choice' }) },
        ]);
        // The renderer answers it with its status and stops the keep-alive (writeChatStream).
        expect([keepAlive.holds, keepAlive.stops]).toEqual([1, 0]);
      });

      it('a held refusal of a JSON body is thrown with its status, nothing rendered', async () => {
        const adapter = providerC([[text('No tool needed.'), finish]]);
        const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        let rendered = false;
        const render: TurnRenderer<undefined> = async () => {
          rendered = true;
          return { outcome: { clientGone: false, toolCalls: 0 }, result: undefined };
        };
        await expect(orchestrator.run(command(body('required')), render)).rejects.toMatchObject({
          code: 'output_validation_failed',
          param: 'tool_choice',
        });
        expect(rendered).toBe(false);
      });

      it('keeps a held response_format answer alive too, and renders its refusal in-band once committed', async () => {
        const adapter = providerC([[text('Paris, I think.'), finish]]);
        const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
        const keepAlive = new FakeKeepAlive(true);
        const seen = await orchestrator.run(
          command({ ...body('auto'), response_format: { type: 'json_object' } }),
          readAll,
          keepAlive,
        );
        expect(seen).toEqual([{ type: 'error', error: expect.objectContaining({ code: 'output_validation_failed' }) }]);
        expect([keepAlive.holds, keepAlive.stops]).toEqual([1, 0]);
      });

      it('holds nothing for auto, none, or a family whose upstream takes tool_choice (provider_a)', async () => {
        for (const choice of ['auto', 'none']) {
          const adapter = providerC([[text('No tool needed.'), finish]]);
          const { orchestrator, command } = setup(adapter, { GATEWAY_PROVIDERS: 'provider_c' });
          expect(await orchestrator.run(command(body(choice)), readAll)).toEqual([text('No tool needed.'), finish]);
          expect(adapter.requests).toHaveLength(1);
        }
        const adapter = new FakeAdapter({ events: [text('No tool needed.'), finish] });
        const { orchestrator, command } = setup(adapter);
        const seen = await orchestrator.run(command({ ...body('required'), model: 'gpt-5.6-sol' }), readAll);
        expect(seen).toEqual([text('No tool needed.'), finish]);
        expect(adapter.requests).toHaveLength(1);
      });
    });

    it('cuts provider_a text at a stop sequence split across deltas, ends with stop and closes the upstream turn', async () => {
      const adapter = new FakeAdapter({
        events: [
          { type: 'text-delta', text: 'one two EN' },
          { type: 'text-delta', text: 'D three' },
          { type: 'usage', usage: { promptTokens: 3, completionTokens: 1, totalTokens: 4 } },
          { type: 'finish', reason: 'stop' },
        ],
      });
      const { orchestrator, command } = setup(adapter);
      const seen = await orchestrator.run(command({ ...plain, stop: 'END' }), readAll);
      expect(seen).toEqual([
        { type: 'text-delta', text: 'one two ' },
        { type: 'finish', reason: 'stop' },
      ]);
      expect(adapter.pulled).toBe(2);
      expect(adapter.closed).toBeGreaterThanOrEqual(1);
    });

    it('cuts a faithful provider_a turn at a stop sequence and reads on for the calls of its profile tools', async () => {
      const call: ChatEvent = {
        type: 'tool-call',
        call: { id: 'call_1', name: 'shell', kind: 'function', arguments: '{}' },
      };
      const adapter = new FakeAdapter({
        events: [{ type: 'text-delta', text: 'one END two' }, call, { type: 'finish', reason: 'stop' }],
      });
      const { orchestrator, command } = setup(adapter);
      const seen = await orchestrator.run(command({ ...plain, faithful: true, stop: 'END' }), readAll);
      expect(seen).toEqual([{ type: 'text-delta', text: 'one ' }, call, { type: 'finish', reason: 'stop' }]);
    });

    it('holds a provider_a JSON answer its stop cut could break: an object cut short is asked again, then 422 naming stop', async () => {
      const adapter = new FakeAdapter({
        events: [
          { type: 'text-delta', text: '{"a":1,"b":2}' },
          { type: 'finish', reason: 'stop' },
        ],
      });
      const { orchestrator, command } = setup(adapter);
      let rendered = false;
      const render: TurnRenderer<undefined> = async () => {
        rendered = true;
        return { outcome: { clientGone: false, toolCalls: 0 }, result: undefined };
      };
      const refusal = await orchestrator
        .run(command({ ...plain, stop: ',', response_format: { type: 'json_object' } }), render)
        .catch((thrown: unknown) => thrown);
      expect(refusal).toMatchObject({ code: 'output_validation_failed', param: 'stop' });
      expect((refusal as GatewayError).publicMessage).toBe(
        "the model's answer did not satisfy response_format in 3 attempts; the last one was cut short at a stop sequence: send stop sequences that cannot occur inside the JSON object, or none",
      );
      expect(rendered).toBe(false);
      expect(adapter.requests).toHaveLength(3);
    });
  });
});
