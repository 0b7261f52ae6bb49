import * as net from 'node:net';
import * as path from 'node:path';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import type { FakeFrame, FakeScript } from './support/fake-provider-a';
import {
  completed,
  created,
  errorEvent,
  failed,
  functionCallItem,
  messageDone,
  providerASettings,
  rateLimitsEvent,
  textDelta,
  writeAuthFile,
} from './support/provider-a-fixtures';
import { ProviderRegistry } from '../src/providers/provider-registry';
import type { ProviderAAdapter } from '../src/providers/provider-a/provider-a.adapter';
import { useFakeProviderA } from './support/provider-a-harness';
import { eventually } from './support/poll';
import { postChatBody } from './support/chat-sse';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';

type Json = Record<string, unknown>;

/** A reply as the real backend streams it: created, text, the message item, completed, all with one response id. */
function reply(id: string, text: string, extra: FakeFrame[] = []): FakeScript {
  return { frames: [created(id), textDelta(text), messageDone(text), ...extra, completed(undefined, id)] };
}

/** A reply that calls one function tool. */
function toolCallReply(id: string, callId: string): FakeScript {
  return {
    frames: [created(id), ...functionCallItem(callId, 'read_file', '{"path":"a.ts"}'), completed(undefined, id)],
  };
}

const TOOLS = [
  {
    type: 'function',
    function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  },
];
/** Whether `promise` settles within `ms` (used only to show that something has NOT happened yet). */
function settles(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([promise.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

/** A chain error event as the backend sends it when a continuation cannot go on (`code`). */
function chainError(code: string): FakeFrame {
  return errorEvent({ status: 400, type: 'invalid_request_error', code, message: 'the chain cannot continue' });
}

/**
 * A TCP relay in front of the fake whose connections open so far can go silent at once: bytes in
 * either direction vanish and nothing closes, as when a NAT or load balancer forgot an idle
 * connection (no FIN, no RST). Connections opened after `silence()` relay as before.
 */
async function silenceableRelay(target: URL) {
  const pairs = new Set<{ silent: boolean; client: net.Socket; upstream: net.Socket }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    const pair = { silent: false, client, upstream };
    pairs.add(pair);
    client.on('data', (data) => pair.silent || upstream.write(data));
    upstream.on('data', (data) => pair.silent || client.write(data));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.on('close', () => (upstream.destroy(), pairs.delete(pair)));
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    silence: () => pairs.forEach((pair) => (pair.silent = true)),
    close: () => {
      pairs.forEach((pair) => pair.client.destroy());
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Upstream sessions per chat (provider_a WebSocket mode) over real HTTP against the fake in its
 * real-backend mode (connections stay open, chains kept per connection): reuse, continuation
 * with only the new items, fallback on a broken chain or a dead connection, no cross-chat
 * reuse, idle expiry, and a client disconnect closing the connection.
 */
describe('provider_a upstream sessions per chat', () => {
  const gateways: TestGateway[] = [];
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
  });
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-sessions-' });
  let gateway: TestGateway;
  let small: TestGateway;

  let started = 0;
  const start = async (settings: Record<string, string> = {}) => {
    // Item counts below are the classic shape's; lite chaining (two prefix items more) is covered by provider-a-every-model and the oracle.
    // A login file per gateway: each start writes its file anew (a new access token), and a gateway
    // already running takes up a new token in its file at its next sweep, whenever that falls. Its
    // kept connections, opened with the old bearer, are then not reused: with one shared file, a
    // test asserting reuse would pass or fail by timing.
    const running = await startGateway({
      GATEWAY_PROVIDERS: 'provider_a',
      ...providerASettings(fake(), path.join(home(), `gateway-${++started}`)),
      PROVIDER_A_WIRE: 'classic',
      ...settings,
    });
    gateways.push(running);
    return running;
  };
  beforeAll(async () => {
    gateway = await start();
    small = await start({ PROVIDER_A_SESSION_IDLE_TIMEOUT: '2s', PROVIDER_A_MAX_KEPT_SESSIONS: '1' });
  });
  beforeEach(() => fake().keepConnectionsOpen());
  afterEach(() => fake().dropConnections());

  const post = (target: TestGateway, body: Json, chat: string, signal?: AbortSignal) =>
    postChatBody(target, { model: 'gpt-5.6-sol', ...body }, { headers: { 'x-conversation-id': chat }, signal });
  const complete = async (target: TestGateway, messages: Json[], chat: string, extra: Json = {}) => {
    const response = await post(target, { messages, ...extra }, chat);
    expect(response.status).toBe(200);
    return ((await response.json()) as { choices: Array<{ message: Json }> }).choices[0].message;
  };
  const timings = (target: TestGateway) => target.logs.records('chat_completion');
  /** The `upstream_*` lines written since the log had `from` lines. */
  const upstreamLinesSince = (target: TestGateway, from: number) =>
    target.logs.lines
      .slice(from)
      .map((line) => JSON.parse(line) as Json)
      .filter((record) => String(record.event).startsWith('upstream_'));
  const RETRIES = 'gateway_chat_api_upstream_retries_total';
  const RETRY_LABELS = { provider: 'provider_a', code: 'upstream' };
  const TURNS = 'gateway_chat_api_upstream_session_turns_total';
  /** How far each `result` of the session-turn counter moved between two scrapes. */
  const turnCounts = (before: string, after: string) =>
    Object.fromEntries(
      ['reused', 'incremental', 'fallback'].map((result) => [
        result,
        (sampleValue(after, TURNS, { result }) ?? 0) - (sampleValue(before, TURNS, { result }) ?? 0),
      ]),
    );
  /**
   * The session-turn counter moved by `expected` since `before` for the gateway's last turn, just
   * as that turn's `chat_completion` line says (each `true` field adds one to its `result`).
   */
  const expectCountedAsLogged = async (target: TestGateway, before: string, expected: Record<string, number>) => {
    const line = timings(target).at(-1)!;
    const counts = turnCounts(before, await scrapeMetrics(target));
    expect(counts).toEqual(expected);
    expect(counts).toEqual({
      reused: Number(line.session_reused),
      incremental: Number(line.incremental),
      fallback: Number(line.chain_fallback),
    });
  };

  it('keeps the connection of a completed turn and continues the chain with only the new items', async () => {
    fake().enqueue(reply('resp_1', 'Hello there.'), reply('resp_2', 'Fine.'));
    const first = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ];
    const answer = await complete(gateway, first, 'chat-reuse');
    const second = [
      ...first,
      { role: 'assistant', content: answer.content },
      { role: 'user', content: 'How are you?' },
    ];
    const before = await scrapeMetrics(gateway);
    expect((await complete(gateway, second, 'chat-reuse')).content).toBe('Fine.');

    const [one, two] = fake().requests();
    expect(two.connection).toBe(one.connection);
    expect(two.body!.previous_response_id).toBe('resp_1');
    expect(two.body!.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'How are you?' }] },
    ]);
    // The server resolves the chain to exactly the conversation the client sent.
    expect(two.resolvedInput).toEqual([
      ...(one.body!.input as unknown[]),
      expect.objectContaining({ type: 'message', role: 'assistant' }),
      ...(two.body!.input as unknown[]),
    ]);
    expect(two.body!.instructions).toBe(one.body!.instructions);
    expect(two.headers['session-id']).toBe(one.headers['session-id']);

    expect(timings(gateway).slice(-2)).toEqual([
      expect.objectContaining({ session_reused: false, incremental: false, input_items: 1, input_items_sent: 1 }),
      expect.objectContaining({
        session_reused: true,
        incremental: true,
        chain_fallback: false,
        input_items: 3,
        input_items_sent: 1,
      }),
    ]);
    expect(sampleValue(await scrapeMetrics(gateway), 'gateway_chat_api_upstream_sessions_kept')).toBe(1);
    await expectCountedAsLogged(gateway, before, { reused: 1, incremental: 1, fallback: 0 });
  });

  it('sends only the tool result after a tool call, and the full input on the same connection when history was edited', async () => {
    fake().enqueue(toolCallReply('resp_t1', 'call_1'), reply('resp_t2', 'Done.'), reply('resp_t3', 'Again.'));
    const first = [{ role: 'user', content: 'Read a.ts' }];
    const call = await complete(gateway, first, 'chat-tools', { tools: TOOLS });
    const toolTurn = [
      ...first,
      { role: 'assistant', content: null, tool_calls: call.tool_calls },
      { role: 'tool', tool_call_id: 'call_1', content: 'export {}' },
    ];
    await complete(gateway, toolTurn, 'chat-tools', { tools: TOOLS });
    // The client rewrote an earlier message: the chain no longer matches, so everything is sent.
    const edited = [
      { role: 'user', content: 'Read b.ts instead' },
      ...toolTurn.slice(1),
      { role: 'assistant', content: 'Done.' },
      { role: 'user', content: 'More' },
    ];
    await complete(gateway, edited, 'chat-tools', { tools: TOOLS });

    const [one, two, three] = fake().requests();
    expect(new Set([one.connection, two.connection, three.connection]).size).toBe(1);
    expect(two.body!.previous_response_id).toBe('resp_t1');
    expect(two.body!.input).toEqual([{ type: 'function_call_output', call_id: 'call_1', output: 'export {}' }]);
    expect(three.body).not.toHaveProperty('previous_response_id');
    expect(three.body!.input).toHaveLength(5);
    expect(timings(gateway).at(-1)).toEqual(
      expect.objectContaining({ session_reused: true, incremental: false, input_items: 5, input_items_sent: 5 }),
    );
  });

  it('keeps a chat without an id on its connection and cache key past its first tool call, though its queue key changes', async () => {
    fake().enqueue(toolCallReply('resp_n1', 'call_n1'), reply('resp_n2', 'Done.'));
    const first = [{ role: 'user', content: 'Read a.ts, no chat id' }];
    const anonymous = (messages: Json[]) => postChatBody(gateway, { model: 'gpt-5.6-sol', messages, tools: TOOLS });
    const call = (await (await anonymous(first)).json()) as { choices: Array<{ message: Json }> };
    const toolTurn = [
      ...first,
      { role: 'assistant', content: null, tool_calls: call.choices[0].message.tool_calls },
      { role: 'tool', tool_call_id: 'call_n1', content: 'export {}' },
    ];
    expect((await anonymous(toolTurn)).status).toBe(200);

    const [one, two] = fake().requests().slice(-2);
    expect(two.connection).toBe(one.connection);
    expect(two.headers['session-id']).toBe(one.headers['session-id']);
    expect(two.body!.prompt_cache_key).toBe(one.body!.prompt_cache_key);
    expect(two.body!.previous_response_id).toBe('resp_n1');
    expect(two.body!.input).toEqual([{ type: 'function_call_output', call_id: 'call_n1', output: 'export {}' }]);
    // The queue still keys the second turn by its earliest tool call, as the cascade says.
    expect(gateway.logs.records('queue_acquire').slice(-2)).toEqual([
      expect.objectContaining({ key_mode: 'chat:first_user' }),
      expect.objectContaining({ key_mode: 'chat:earliest_tool' }),
    ]);
  });

  it('keeps two callers apart whose chats start with the same message: own cache key, connection and chain, past the first tool call', async () => {
    fake().enqueue(
      toolCallReply('resp_alice1', 'call_alice'),
      toolCallReply('resp_bob1', 'call_bob'),
      reply('resp_alice2', 'Alice done.'),
      reply('resp_bob2', 'Bob done.'),
    );
    const first = [{ role: 'user', content: 'Read a.ts, as two people' }];
    const as = (bearer: string, messages: Json[]) =>
      postChatBody(
        gateway,
        { model: 'gpt-5.6-sol', messages, tools: TOOLS },
        { headers: { authorization: `Bearer ${bearer}` } },
      );
    const toolTurn = async (bearer: string, callId: string) => {
      const call = (await (await as(bearer, first)).json()) as { choices: Array<{ message: Json }> };
      return [
        ...first,
        { role: 'assistant', content: null, tool_calls: call.choices[0].message.tool_calls },
        { role: 'tool', tool_call_id: callId, content: 'export {}' },
      ];
    };
    const aliceNext = await toolTurn('alice', 'call_alice');
    const bobNext = await toolTurn('bob', 'call_bob');
    expect((await as('alice', aliceNext)).status).toBe(200);
    expect((await as('bob', bobNext)).status).toBe(200);

    const [alice1, bob1, alice2, bob2] = fake().requests().slice(-4);
    expect(bob1.body!.prompt_cache_key).not.toBe(alice1.body!.prompt_cache_key);
    expect(bob1.headers['session-id']).not.toBe(alice1.headers['session-id']);
    expect(bob1.connection).not.toBe(alice1.connection);
    // Each caller's chat goes on under the identity it started with, on its own kept connection.
    for (const [one, two, previous] of [
      [alice1, alice2, 'resp_alice1'],
      [bob1, bob2, 'resp_bob1'],
    ] as const) {
      expect(two.body!.prompt_cache_key).toBe(one.body!.prompt_cache_key);
      expect(two.headers['session-id']).toBe(one.headers['session-id']);
      expect(two.connection).toBe(one.connection);
      expect(two.body!.previous_response_id).toBe(previous);
    }
  });

  it("opens a fresh connection for a chat's turn under another login, with that login's token and account", async () => {
    const switching = await start();
    const loginDir = path.join(home(), `gateway-${started}`, '.codex');
    fake().enqueue(reply('resp_l1', 'One.'), reply('resp_l2', 'Two.'));
    const first = [{ role: 'user', content: 'Before the new login' }];
    await complete(switching, first, 'chat-login');
    // `codex login` with another account over the gateway's login file, taken up at its next sweep.
    const fresh = writeAuthFile(loginDir, { accountId: 'acct-other', refreshToken: 'rt-other' });
    await eventually(() => switching.logs.records('account_login_changed').length > 0, undefined, 'the new login');
    const second = [...first, { role: 'assistant', content: 'One.' }, { role: 'user', content: 'After it' }];
    expect((await complete(switching, second, 'chat-login')).content).toBe('Two.');

    const [one, two] = fake().requests();
    expect(one.headers['chatgpt-account-id']).toBe('acct-test-1');
    // The kept connection was opened as the old login: the turn never runs on it.
    expect(two.connection).not.toBe(one.connection);
    expect(two.headers['chatgpt-account-id']).toBe('acct-other');
    expect(two.headers.authorization).toBe(`Bearer ${fresh.accessToken}`);
    expect(two.body).not.toHaveProperty('previous_response_id');
    expect(two.body!.input).toHaveLength(3);
    expect(timings(switching).at(-1)).toEqual(expect.objectContaining({ session_reused: false, incremental: false }));
  });

  it("opens a fresh connection for a chat's turn in another mode, with that mode's handshake", async () => {
    fake().enqueue(reply('resp_m1', 'One.'), reply('resp_m2', 'Two.'));
    const first = [{ role: 'user', content: 'Minimal, then faithful' }];
    await complete(gateway, first, 'chat-modes');
    const second = [...first, { role: 'assistant', content: 'One.' }, { role: 'user', content: 'Now faithful' }];
    expect((await complete(gateway, second, 'chat-modes', { faithful: true })).content).toBe('Two.');

    const [one, two] = fake().requests();
    expect(two.connection).not.toBe(one.connection);
    // Faithful mode claims a Codex thread in its handshake; minimal mode does not.
    expect(one.headers['x-codex-window-id']).toBeUndefined();
    expect(two.headers['x-codex-window-id']).toBeDefined();
    expect(timings(gateway).at(-1)).toEqual(expect.objectContaining({ session_reused: false }));
  });

  it('continues the chain of a compacted agent history on the turns its compaction boundary stays put', async () => {
    const compacting = await start({
      PRIMARY_CONTEXT_MANAGEMENT_MAX_MESSAGES: '4',
      PRIMARY_CONTEXT_MANAGEMENT_RECENT_MESSAGES: '8',
      PRIMARY_CONTEXT_MANAGEMENT_COMPACTED_TOOL_OUTPUT_BYTES: '100',
    });
    const messages: Json[] = [{ role: 'user', content: 'Read every file' }];
    for (let turn = 0; turn < 10; turn++) {
      fake().enqueue(toolCallReply(`resp_c${turn}`, `call_c${turn}`));
      const answer = await complete(compacting, messages, 'chat-compacted', { tools: TOOLS });
      messages.push(
        { role: 'assistant', content: null, tool_calls: answer.tool_calls },
        { role: 'tool', tool_call_id: `call_c${turn}`, content: `file ${turn} `.repeat(100) },
      );
    }
    // The boundary stays at least 8 messages from the end and moves in steps of 4 (two turns): it
    // first cuts a result on the seventh turn, then on every other turn. Each turn that leaves it
    // where it was continues the chain with only the new result.
    expect(timings(compacting).map((line) => line.incremental)).toEqual([
      false,
      true,
      true,
      true,
      true,
      true,
      false,
      true,
      false,
      true,
    ]);
    expect(compacting.logs.records('context_manage').map((line) => line.compacted)).toEqual([1, 1, 3, 3]);
  });

  it('falls back once to a full send on a fresh connection when the server lost the chain: one failed attempt, opened again at once by the runner', async () => {
    fake().enqueue(reply('resp_b1', 'One.'), reply('resp_b2', 'Two.'));
    const first = [{ role: 'user', content: 'Count' }];
    await complete(gateway, first, 'chat-broken');
    fake().forgetChains();
    const before = await scrapeMetrics(gateway);
    const second = [...first, { role: 'assistant', content: 'One.' }, { role: 'user', content: 'Next' }];
    const from = gateway.logs.lines.length;
    const response = await post(gateway, { messages: second, stream: true }, 'chat-broken');
    const text = await response.text();
    expect(text).toContain('"content":"Two."');
    expect(text).not.toContain('error');

    const [one, chained, full] = fake().requests();
    expect(chained.connection).toBe(one.connection);
    expect(chained.body!.previous_response_id).toBe('resp_b1');
    expect(chained.resolvedInput).toBeUndefined();
    expect(full.connection).not.toBe(one.connection);
    expect(full.body).not.toHaveProperty('previous_response_id');
    expect(full.body!.input).toHaveLength(3);
    expect(fake().misses()).toEqual([]);
    expect(timings(gateway).at(-1)).toEqual(
      expect.objectContaining({ session_reused: false, incremental: false, chain_fallback: true, input_items_sent: 3 }),
    );
    // The turn ran on the fresh connection, not on the stale kept one it was first sent on.
    await expectCountedAsLogged(gateway, before, { reused: 0, incremental: 0, fallback: 1 });
    const after = await scrapeMetrics(gateway);
    // The stale connection is one attempt of the turn, logged once with the server's code; the
    // fresh one is attempt 2, at once and outside the retry budget (docs/architecture.md "The family contract").
    expect(upstreamLinesSince(gateway, from)).toEqual([
      expect.objectContaining({
        event: 'upstream_attempt_failed',
        provider: 'provider_a',
        attempt: 1,
        error_code: 'upstream',
        retryable: true,
        upstream_code: 'previous_response_not_found',
      }),
    ]);
    expect(sampleValue(after, RETRIES, RETRY_LABELS) ?? 0).toBe(sampleValue(before, RETRIES, RETRY_LABELS) ?? 0);
  });

  const CONTINUATION = 'a continuation';
  const FULL_ON_KEPT = 'a full request on a kept connection';
  it.each([
    [
      CONTINUATION,
      'a chain error after telemetry events',
      [rateLimitsEvent(10, 4_000_000_000), chainError('previous_response_not_found')],
    ],
    [CONTINUATION, 'a close after telemetry events', [rateLimitsEvent(10, 4_000_000_000), { disconnect: true }]],
    [
      CONTINUATION,
      'websocket_connection_limit_reached after the response began, before any output',
      [created('resp_e2'), chainError('websocket_connection_limit_reached')],
    ],
    [
      FULL_ON_KEPT,
      'websocket_connection_limit_reached after the response began, before any output',
      [created('resp_e2'), chainError('websocket_connection_limit_reached')],
    ],
    [
      FULL_ON_KEPT,
      'a chain error after a codex.* event other than rate limits',
      [{ event: { type: 'codex.turn_metadata', turn: 1 } }, chainError('previous_response_not_found')],
    ],
  ] as Array<[string, string, FakeFrame[]]>)(
    'sends the turn again at once, in full on a fresh connection, when %s gets %s',
    async (what, when, frames) => {
      const chat = `chat-late-${what}-${when}`;
      fake().enqueue(reply('resp_e1', 'One.'), { frames }, reply('resp_e3', 'Three.'));
      const first = [{ role: 'user', content: `Count (${chat})` }];
      await complete(gateway, first, chat);
      // An edited first message: the kept connection carries the whole history, continuing no chain.
      const history = what === CONTINUATION ? first : [{ role: 'user', content: `Recount (${chat})` }];
      const second = [...history, { role: 'assistant', content: 'One.' }, { role: 'user', content: 'Next' }];
      const from = gateway.logs.lines.length;
      const before = await scrapeMetrics(gateway);
      expect((await complete(gateway, second, chat)).content).toBe('Three.');

      const [one, sent, full] = fake().requests();
      expect(sent.connection).toBe(one.connection);
      expect(sent.body!.previous_response_id).toBe(what === CONTINUATION ? 'resp_e1' : undefined);
      expect(full.connection).not.toBe(one.connection);
      expect(full.body).not.toHaveProperty('previous_response_id');
      expect(full.body!.input).toHaveLength(3);
      expect(timings(gateway).at(-1)).toEqual(
        expect.objectContaining({
          session_reused: false,
          incremental: false,
          chain_fallback: true,
          input_items_sent: 3,
        }),
      );
      // A fallback, neither a reuse nor a continuation, though the kept connection took it first.
      await expectCountedAsLogged(gateway, before, { reused: 0, incremental: 0, fallback: 1 });
      // One failed attempt, opened again at once: no retry.
      expect(upstreamLinesSince(gateway, from)).toEqual([
        expect.objectContaining({ event: 'upstream_attempt_failed', attempt: 1 }),
      ]);
    },
  );

  it('surfaces a chain error on a turn that continued no chain as the upstream error, sent once', async () => {
    fake().enqueue({ frames: [created('resp_n1'), chainError('previous_response_not_found')] });
    const response = await post(gateway, { messages: [{ role: 'user', content: 'No chain here' }] }, 'chat-no-chain');
    // A fresh connection and a full send: nothing the gateway kept can be to blame.
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: Json }).error.code).toBe('upstream_rejected_request');
    expect(fake().requests()).toHaveLength(1);
    expect(fake().misses()).toEqual([]);
  });

  it('closes a kept connection the server sends an event on between turns, and opens a fresh one for the next turn', async () => {
    let sendStray!: () => void;
    const strayHeld = new Promise<void>((resolve) => (sendStray = resolve));
    const answered = reply('resp_s1', 'One.');
    fake().enqueue(
      // An event after response.completed, sent once the turn is over and its connection kept.
      { frames: [...answered.frames, { ...textDelta('stray'), after: strayHeld }], holdOpen: true },
      reply('resp_s2', 'Two.'),
    );
    const first = [{ role: 'user', content: 'Stray' }];
    const lines = timings(gateway).length;
    await complete(gateway, first, 'chat-stray');
    await eventually(() => timings(gateway).length > lines, undefined, 'the turn to be over');
    sendStray();
    const [one] = fake().requests();
    // Closed by the gateway; no bound of our own on when (Jest's timeout catches never).
    await one.closedByClient;
    const second = [...first, { role: 'assistant', content: 'One.' }, { role: 'user', content: 'On' }];
    expect((await complete(gateway, second, 'chat-stray')).content).toBe('Two.');
    const two = fake().requests()[1];
    expect(two.connection).not.toBe(one.connection);
    expect(two.body).not.toHaveProperty('previous_response_id');
  });

  it('counts a turn retried on a fresh connection after its attempt on the kept one failed as neither a reuse nor a fallback', async () => {
    fake().enqueue(
      reply('resp_r1', 'One.'),
      { frames: [failed('server_error', 'boom', 'resp_r2')] },
      reply('resp_r3', 'Three.'),
    );
    const first = [{ role: 'user', content: 'Count, then retry' }];
    await complete(gateway, first, 'chat-retried');
    const second = [...first, { role: 'assistant', content: 'One.' }, { role: 'user', content: 'Next' }];
    const before = await scrapeMetrics(gateway);
    expect((await complete(gateway, second, 'chat-retried')).content).toBe('Three.');

    const [one, chained, retried] = fake().requests();
    expect(chained.connection).toBe(one.connection);
    expect(chained.body!.previous_response_id).toBe('resp_r1');
    // The retry rule's attempt, not the lease's fallback: a fresh connection with the full input.
    expect(retried.connection).not.toBe(one.connection);
    expect(retried.body!.input).toHaveLength(3);
    expect(sampleValue(await scrapeMetrics(gateway), RETRIES, RETRY_LABELS)).toBe(
      (sampleValue(before, RETRIES, RETRY_LABELS) ?? 0) + 1,
    );
    expect(timings(gateway).at(-1)).toEqual(
      expect.objectContaining({
        session_reused: false,
        incremental: false,
        chain_fallback: false,
        input_items_sent: 3,
      }),
    );
    await expectCountedAsLogged(gateway, before, { reused: 0, incremental: 0, fallback: 0 });
  });

  it('checks a kept connection idle past the threshold with a ping, and replaces one that went silent without closing', async () => {
    const relay = await silenceableRelay(new URL(fake().wsUrl));
    try {
      const relayed = await start({ PROVIDER_A_URL: relay.url, GATEWAY_STREAM_IDLE_TIMEOUT: '5s' });
      // Every reuse counts as idle here: the spec waits for no real idle time. The pong is waited
      // for with no bound of our own (Jest's timeout catches never), so an answered ping counts as
      // answered however slow the machine.
      const adapter = relayed.app.get(ProviderRegistry, { strict: false }).adapter('provider_a') as ProviderAAdapter;
      const { check } = adapter.sessions!;
      Object.assign(check, { pingAfterIdleMs: 0, pongTimeoutMs: Infinity });
      // The fresh connection's first attempt fails and is retried: still the turn's fallback.
      fake().enqueue(
        reply('resp_h1', 'One.'),
        reply('resp_h2', 'Two.'),
        { frames: [failed('server_error', 'boom', 'resp_h3')] },
        reply('resp_h3', 'Three.'),
      );
      const first = [{ role: 'user', content: 'Go' }];
      await complete(relayed, first, 'chat-silent');
      // Answered ping: the kept connection carries the continuation.
      const second = [...first, { role: 'assistant', content: 'One.' }, { role: 'user', content: 'On' }];
      expect((await complete(relayed, second, 'chat-silent')).content).toBe('Two.');
      relay.silence();
      // No pong can come through now: it is given up on soon.
      check.pongTimeoutMs = 200;
      const third = [...second, { role: 'assistant', content: 'Two.' }, { role: 'user', content: 'And on' }];
      const before = await scrapeMetrics(relayed);
      expect((await complete(relayed, third, 'chat-silent')).content).toBe('Three.');

      const [one, two, three, retried] = fake().requests();
      expect(two.connection).toBe(one.connection);
      expect(two.body!.previous_response_id).toBe('resp_h1');
      expect(three.connection).not.toBe(one.connection);
      expect(three.body).not.toHaveProperty('previous_response_id');
      expect(three.body!.input).toHaveLength(5);
      expect(retried.connection).not.toBe(three.connection);
      expect(timings(relayed).slice(-2)).toEqual([
        expect.objectContaining({ session_reused: true, incremental: true, chain_fallback: false }),
        expect.objectContaining({ session_reused: false, chain_fallback: true, input_items_sent: 5 }),
      ]);
      await expectCountedAsLogged(relayed, before, { reused: 0, incremental: 0, fallback: 1 });
      // The silent connection is not left behind: the gateway closed it, and the relay passed its
      // end on. No bound of our own on when (Jest's timeout catches never).
      await one.closedByClient;
    } finally {
      await relay.close();
    }
  });

  it('opens a fresh connection when the kept one was closed, or dies before the first event', async () => {
    fake().enqueue(
      reply('resp_d1', 'One.'),
      reply('resp_d2', 'Two.'),
      { frames: [{ disconnect: true }] },
      reply('resp_d3', 'Three.'),
    );
    const first = [{ role: 'user', content: 'Go' }];
    await complete(gateway, first, 'chat-dead');
    fake().dropConnections();
    await eventually(() => fake().openConnections() === 0, undefined, 'the drop');
    const second = [...first, { role: 'assistant', content: 'One.' }, { role: 'user', content: 'On' }];
    expect((await complete(gateway, second, 'chat-dead')).content).toBe('Two.');
    // This kept connection dies after taking the request: the turn is sent again in full elsewhere.
    const from = gateway.logs.lines.length;
    const third = [...second, { role: 'assistant', content: 'Two.' }, { role: 'user', content: 'And on' }];
    const before = await scrapeMetrics(gateway);
    expect((await complete(gateway, third, 'chat-dead')).content).toBe('Three.');
    expect(upstreamLinesSince(gateway, from)).toEqual([
      expect.objectContaining({
        event: 'upstream_attempt_failed',
        attempt: 1,
        error_code: 'upstream',
        retryable: true,
      }),
    ]);
    expect(timings(gateway).at(-1)).toEqual(
      expect.objectContaining({ session_reused: false, chain_fallback: true, input_items_sent: 5 }),
    );
    await expectCountedAsLogged(gateway, before, { reused: 0, incremental: 0, fallback: 1 });

    const connections = fake()
      .requests()
      .map((request) => request.connection);
    expect(connections[1]).not.toBe(connections[0]);
    expect(connections[2]).toBe(connections[1]);
    expect(connections[3]).not.toBe(connections[2]);
    expect(fake().requests()[3].body!.input).toHaveLength(5);
  });

  it('never shares a connection between chats or between two turns of one chat at once, and keeps each', async () => {
    fake().enqueue(reply('resp_a1', 'A.'), reply('resp_c1', 'C.'), reply('resp_a2', 'A2.'), reply('resp_c2', 'C2.'));
    const a = [{ role: 'user', content: 'same words' }];
    const c = [{ role: 'user', content: 'same words' }];
    await complete(gateway, a, 'chat-a');
    await complete(gateway, c, 'chat-c');
    await complete(gateway, [...a, { role: 'assistant', content: 'A.' }, { role: 'user', content: 'more' }], 'chat-a');
    await complete(gateway, [...c, { role: 'assistant', content: 'C.' }, { role: 'user', content: 'more' }], 'chat-c');
    const [a1, c1, a2, c2] = fake().requests();
    expect(c1.connection).not.toBe(a1.connection);
    expect(a2.connection).toBe(a1.connection);
    expect(c2.connection).toBe(c1.connection);
    expect(a2.headers['session-id']).not.toBe(c2.headers['session-id']);

    fake().reset();
    fake().keepConnectionsOpen();
    // The turn sent on chat-p's kept connection (continuing resp_p1) gets the slow reply, held
    // until the other turn's answer is back, whichever of the two reaches the fake first.
    let releaseSlow!: () => void;
    const slowHeld = new Promise<void>((resolve) => (releaseSlow = resolve));
    const slow: FakeScript = {
      frames: [
        created('resp_q1'),
        { ...textDelta('slow'), after: slowHeld },
        messageDone('slow'),
        completed(undefined, 'resp_q1'),
      ],
    };
    fake().answerBy((_headers, body) => (body?.previous_response_id === 'resp_p1' ? slow : undefined));
    fake().enqueue(reply('resp_p1', 'P.'), reply('resp_p2', 'P2.'));
    await complete(gateway, [{ role: 'user', content: 'parallel' }], 'chat-p');
    const next = [
      { role: 'user', content: 'parallel' },
      { role: 'assistant', content: 'P.' },
      { role: 'user', content: 'x' },
    ];
    const both = [complete(gateway, next, 'chat-p'), complete(gateway, next, 'chat-p')];
    expect((await Promise.race(both)).content).toBe('P2.');
    releaseSlow();
    expect((await Promise.all(both)).map((message) => message.content).sort()).toEqual(['P2.', 'slow']);
    const [p1, first, second] = fake().requests();
    // The turn that took the kept connection continued resp_p1 (the slow one); the other opened its own.
    const [q, p2] = first.connection === p1.connection ? [first, second] : [second, first];
    expect(new Set([p1.connection, q.connection, p2.connection]).size).toBe(2);
    expect(q.body!.previous_response_id).toBe('resp_p1');
    // Both connections were kept, the slow one last. Each next turn goes to the connection whose
    // chain it continues, though another was kept after it.
    fake().enqueue(reply('resp_p3', 'P3.'), reply('resp_q2', 'Q2.'));
    await complete(gateway, [...next, { role: 'assistant', content: 'P2.' }, { role: 'user', content: 'y' }], 'chat-p');
    await complete(
      gateway,
      [...next, { role: 'assistant', content: 'slow' }, { role: 'user', content: 'z' }],
      'chat-p',
    );
    const [afterP2, afterQ] = fake().requests().slice(3);
    expect(afterP2.connection).toBe(p2.connection);
    expect(afterP2.body!.previous_response_id).toBe('resp_p2');
    expect(afterQ.connection).toBe(q.connection);
    expect(afterQ.body!.previous_response_id).toBe('resp_q1');
  });

  it('closes a kept connection after the idle timeout, and the least recently used one beyond the maximum', async () => {
    fake().enqueue(reply('resp_i1', 'One.'), reply('resp_i2', 'Two.'), reply('resp_i3', 'Three.'));
    await complete(small, [{ role: 'user', content: 'idle' }], 'chat-idle');
    const [kept] = fake().requests();
    // Kept, not closed with the turn: the idle timeout (2 s) leaves a busy machine ample room here.
    expect(await settles(kept.closedByClient, 100)).toBe(false);
    // Closed by the idle timeout; no bound of our own on when (Jest's timeout catches never).
    await kept.closedByClient;
    expect(sampleValue(await scrapeMetrics(small), 'gateway_chat_api_upstream_sessions_kept')).toBe(0);
    await complete(
      small,
      [
        { role: 'user', content: 'idle' },
        { role: 'assistant', content: 'One.' },
        { role: 'user', content: 'again' },
      ],
      'chat-idle',
    );
    expect(fake().requests()[1].connection).not.toBe(kept.connection);
    expect(fake().requests()[1].body).not.toHaveProperty('previous_response_id');
    // Max 1: another chat's connection pushes this one out.
    await complete(small, [{ role: 'user', content: 'other' }], 'chat-other');
    await fake().requests()[1].closedByClient;
  });

  it('closes the connection at once when the client disconnects, and keeps nothing for the chat', async () => {
    fake().enqueue(
      reply('resp_x1', 'One.'),
      { frames: [created('resp_x2'), textDelta('partial')], holdOpen: true },
      reply('resp_x3', 'Three.'),
    );
    const first = [{ role: 'user', content: 'cancel me' }];
    await complete(gateway, first, 'chat-cancel');
    const abort = new AbortController();
    const second = [...first, { role: 'assistant', content: 'One.' }, { role: 'user', content: 'long one' }];
    const response = await post(gateway, { messages: second, stream: true }, 'chat-cancel', abort.signal);
    await response.body!.getReader().read();
    await fake().waitForRequests(2);
    abort.abort();
    const [one, two] = fake().requests();
    expect(two.connection).toBe(one.connection);
    await two.closedByClient;
    await complete(gateway, second, 'chat-cancel');
    const three = fake().requests()[2];
    expect(three.connection).not.toBe(one.connection);
    expect(three.body).not.toHaveProperty('previous_response_id');
  });

  it('closes the connection when the client leaves after the upstream completed but before it read the answer, and keeps nothing', async () => {
    // More answer than the loopback socket buffers between the gateway and a client that reads
    // nothing can hold: the gateway is still writing it when the client leaves.
    const part = 'x'.repeat(512 * 1024);
    let completedRead!: () => void;
    const upstreamDone = new Promise<void>((resolve) => (completedRead = resolve));
    fake().enqueue(
      reply('resp_y1', 'One.'),
      {
        frames: [
          created('resp_y2'),
          ...Array.from({ length: 24 }, () => textDelta(part)),
          messageDone(part.repeat(24)),
          completed(undefined, 'resp_y2'),
          // Answered once the gateway has read every frame above, response.completed included.
          { ping: completedRead },
        ],
      },
      reply('resp_y3', 'Three.'),
    );
    const first = [{ role: 'user', content: 'leave before reading' }];
    await complete(gateway, first, 'chat-unread');
    const second = [...first, { role: 'assistant', content: 'One.' }, { role: 'user', content: 'a long one' }];
    const body = JSON.stringify({ model: 'gpt-5.6-sol', stream: true, messages: second });
    const from = gateway.logs.lines.length;
    const client = net.connect(Number(new URL(gateway.url).port), '127.0.0.1');
    client.on('error', () => undefined);
    // No 'data' listener: the client reads nothing of the answer.
    client.write(
      'POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n' +
        `X-Conversation-Id: chat-unread\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await upstreamDone;
    client.destroy();
    // The turn ends canceled (the client never got the whole answer); its line is written once
    // its attempt closed, keeping or closing the connection.
    const linesSince = () => gateway.logs.lines.slice(from).map((line) => JSON.parse(line) as Json);
    await eventually(
      () => linesSince().some((line) => line.event === 'upstream_canceled'),
      undefined,
      'the turn to end canceled',
    );
    await eventually(
      () => linesSince().some((line) => line.event === 'chat_completion' && line.status === 499),
      undefined,
      'the 499 line',
    );

    expect((await complete(gateway, second, 'chat-unread')).content).toBe('Three.');
    const [one, two, three] = fake().requests();
    expect(two.connection).toBe(one.connection);
    expect(three.connection).not.toBe(one.connection);
    expect(three.body).not.toHaveProperty('previous_response_id');
    expect(three.body!.input).toHaveLength(3);
    expect(timings(gateway).at(-1)).toEqual(
      expect.objectContaining({ session_reused: false, incremental: false, input_items_sent: 3 }),
    );
    // Closed, not left open unkept; no bound of our own on when (Jest's timeout catches never).
    await two.closedByClient;
  });
});
