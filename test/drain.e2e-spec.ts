import * as http from 'node:http';
import * as net from 'node:net';
import type { ChildGateway } from './support/child-gateway';
import { spawnGateway } from './support/child-gateway';
import type { ProviderASettingsOptions } from './support/provider-a-fixtures';
import { completed, created, providerASettings, textDelta } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { postChatBody, sseData } from './support/chat-sse';
import { DrainService } from '../src/common/lifecycle/drain.service';
import { endRequestsInFlight } from '../src/common/http/http-middleware';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';
import {
  extractionReply,
  postStructured,
  startStructured,
  STRUCTURED_PATH,
  structuredBody,
} from './support/structured-client';
import { eventually } from './support/poll';
import { beginRequest, postHalfABody, tryConnect } from './support/raw-http';

const PLAIN_TURN = { model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hi' }] };

/** A turn with tools: it takes the agent queue, which runs one turn of a chat at a time. */
const TOOL_TURN = {
  ...PLAIN_TURN,
  messages: [{ role: 'user', content: 'list the files' }],
  tools: [{ type: 'function', function: { name: 'list_files', parameters: { type: 'object', properties: {} } } }],
};

/**
 * Draining (docs/design/decisions.md §6) with a REAL child process and a REAL signal: readiness turns 503 at
 * once, in-flight chat streams finish, and the process exits when idle or at
 * GATEWAY_DRAIN_TIMEOUT. The slow in-flight request is a streamed chat against the provider_a fake.
 */
describe('draining on SIGTERM / SIGINT / SIGHUP (child process)', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'gateway-drain-login-' });
  const children: ChildGateway[] = [];

  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => child.close()));
  });

  async function start(
    settings: Record<string, string> = {},
    providerA: ProviderASettingsOptions = {},
  ): Promise<ChildGateway> {
    const child = await spawnGateway({
      ...providerASettings(fake(), home(), providerA),
      GATEWAY_PROVIDERS: 'provider_a',
      ...settings,
    });
    children.push(child);
    return child;
  }

  /** Starts a streamed chat; resolves once the first SSE bytes arrived, with a reader for the rest. */
  async function openStream(gateway: ChildGateway, body: Record<string, unknown> = PLAIN_TURN) {
    const response = await postChatBody(gateway, body);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const first = await reader.read();
    text += decoder.decode(first.value);
    let ended = false;
    const rest = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
        }
      } catch {
        // The gateway cut the connection (drain timeout): `text` keeps what arrived.
      }
      ended = true;
      return text;
    })();
    return { rest, isEnded: () => ended, textSoFar: () => text };
  }

  async function readiness(gateway: ChildGateway): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${gateway.url}/health/ready`);
    return { status: response.status, body: await response.json() };
  }

  /**
   * Polls readiness until it answers 503 (the signal is delivered asynchronously). No time limit of
   * its own: on a busy machine delivery can take a while, and Jest's timeout catches a hang.
   */
  async function waitForDraining(gateway: ChildGateway): Promise<void> {
    for (;;) {
      const ready = await readiness(gateway);
      if (ready.status === 503) {
        expect(ready.body).toEqual({ status: 'draining' });
        return;
      }
    }
  }

  // The drain timeouts below are a minute: "exited when idle" then means "long before the drain
  // timeout", a difference no busy machine blurs (the bounds are half of it).
  const LONG_DRAIN = '60s';
  const WELL_BEFORE_LONG_DRAIN_MS = 30_000;

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    'exits at once with status 0 on %s when nothing is in flight',
    async (signal) => {
      const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: LONG_DRAIN });
      expect((await readiness(gateway)).body).toEqual({ status: 'ready' });
      const sentAt = Date.now();
      gateway.process.kill(signal);
      const status = await gateway.exited;
      expect(status).toEqual({ code: 0, signal: null });
      expect(Date.now() - sentAt).toBeLessThan(WELL_BEFORE_LONG_DRAIN_MS);
      expect(gateway.records.find((record) => record.event === 'drain_start')).toMatchObject({ signal, in_flight: 0 });
      expect(gateway.records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: true });
    },
  );

  it('turns readiness 503 at once, finishes the in-flight stream, then exits when idle', async () => {
    // The second delta comes 8 s later: readiness turns 503 long before the stream ends.
    fake().enqueue({ frames: [created(), textDelta('first '), textDelta('second', 'msg_1', 8000), completed()] });
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: LONG_DRAIN, STRUCTURED_INFERENCE_ENABLED: 'true' });
    const stream = await openStream(gateway);

    gateway.process.kill('SIGTERM');
    const signalledAt = Date.now();
    await waitForDraining(gateway);
    // Still draining, not gone: the stream is open, liveness and chat-side routes still answer.
    expect(stream.isEnded()).toBe(false);
    expect((await fetch(`${gateway.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${gateway.url}/v1/models`)).status).toBe(200);
    // A new structured request is refused: expected operation, so its lines are info, not errors.
    const refused = await fetch(`${gateway.url}${STRUCTURED_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(structuredBody({ request_id: 'r-refused' })),
    });
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, '5']);
    const refusedId = refused.headers.get('x-request-id');
    expect(gateway.process.exitCode).toBeNull();

    const text = await stream.rest;
    expect(text).toContain('"content":"second"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const status = await gateway.exited;
    expect(status).toEqual({ code: 0, signal: null });
    // It waited for the stream (about 8 s), not for the minute of the drain timeout.
    expect(Date.now() - signalledAt).toBeLessThan(WELL_BEFORE_LONG_DRAIN_MS);
    expect(gateway.records.find((record) => record.event === 'drain_start')).toMatchObject({ in_flight: 1 });
    expect(gateway.records.find((record) => record.event === 'drain_end')).toMatchObject({
      idle: true,
      cut: 0,
      in_flight: 0,
    });
    expect(gateway.records.find((record) => record.event === 'structured_failure')).toMatchObject({
      request_id: 'r-refused',
      code: 'unavailable',
      status: 503,
      level: 30,
    });
    expect(
      gateway.records.find((record) => record.reqId === refusedId && record.msg === 'request completed'),
    ).toMatchObject({
      level: 30,
      res: { statusCode: 503 },
    });
    expect(gateway.records.filter((record) => (record.level as number) >= 50)).toEqual([]);
  });

  it("answers a keep-alive client's next request sent the moment its stream ended, with Connection: close", async () => {
    // The first stream's end waits for the test: the drain starts with it in flight.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake().enqueue(
      { frames: [created(), textDelta('first '), { ...textDelta('turn'), after: released }, completed()] },
      { frames: [created(), textDelta('next turn'), completed()] },
    );
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: LONG_DRAIN });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const turn = (name: string) =>
      new Promise<{ status: number; connection?: string; reused: boolean; text: string }>((resolve, reject) => {
        const body = JSON.stringify({
          model: 'gpt-5.6-sol',
          stream: true,
          messages: [{ role: 'user', content: name }],
        });
        const request = http.request(
          `${gateway.url}/v1/chat/completions`,
          { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () =>
              resolve({
                status: response.statusCode!,
                connection: response.headers.connection,
                reused: request.reusedSocket,
                text,
              }),
            );
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    try {
      const first = turn('first');
      await eventually(() => fake().requests().length === 1);
      gateway.process.kill('SIGTERM');
      await waitForDraining(gateway);
      // The next turn goes out on the same connection as soon as the first one's answer ended.
      const answers = first.then(async (answer) => [answer, await turn('second')] as const);
      release();
      const [firstAnswer, nextAnswer] = await answers;
      expect(firstAnswer).toMatchObject({ status: 200, connection: 'keep-alive' });
      expect(nextAnswer).toMatchObject({ status: 200, connection: 'close', reused: true });
      expect(nextAnswer.text).toContain('"content":"next turn"');
      expect(await gateway.exited).toEqual({ code: 0, signal: null });
      expect(gateway.records.find((record) => record.event === 'drain_start')).toMatchObject({ in_flight: 1 });
      expect(gateway.records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: true });
    } finally {
      agent.destroy();
    }
  });

  it('exits within the grace after the drain ends, whatever connection arrived or still sends its headers', async () => {
    fake().enqueue({ frames: [created(), textDelta('late')], holdOpen: true });
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: '1s' });
    // A client that has sent half its headers is no request in flight yet.
    const late = net.connect(Number(new URL(gateway.url).port), '127.0.0.1');
    late.on('error', () => undefined);
    late.write('POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n');
    await new Promise((resolve) => late.once('ready', resolve));
    const signalledAt = Date.now();
    gateway.process.kill('SIGTERM');
    await eventually(() => gateway.records.some((record) => record.event === 'drain_end'));
    const body = JSON.stringify({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    late.write(`Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const status = await gateway.exited;
    late.destroy();
    expect(status).toEqual({ code: 0, signal: null });
    expect(gateway.records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: true });
    // The drain ended at once (nothing in flight); the held stream did not keep the process up.
    expect(Date.now() - signalledAt).toBeLessThan(WELL_BEFORE_LONG_DRAIN_MS);
  });

  it('at GATEWAY_DRAIN_TIMEOUT ends what is still in flight with the draining error, records it as such, then exits', async () => {
    // A stream, a non-streamed chat and a structured call, each held by its upstream past the drain timeout.
    fake().enqueue(
      { frames: [created(), textDelta('partial')], holdOpen: true },
      { frames: [created(), textDelta('partial')], holdOpen: true },
      extractionReply(undefined, { delayMs: 60_000 }),
    );
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: '1s', STRUCTURED_INFERENCE_ENABLED: 'true' });
    const stream = await openStream(gateway);
    await fake().waitForRequests(1);
    const chat = postChatBody(gateway, { model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'hi' }] });
    await fake().waitForRequests(2);
    const structured = fetch(`${gateway.url}${STRUCTURED_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // With an idempotency key: the call is shared by whoever sends that key, and ends for the
      // drain when its last waiter is ended by the drain.
      body: JSON.stringify(structuredBody({ request_id: 'r-cut', idempotency_key: 'drain-cut' })),
    });
    const upstreams = await fake().waitForRequests(3);

    const signalledAt = Date.now();
    gateway.process.kill('SIGTERM');
    const status = await gateway.exited;
    expect(status).toEqual({ code: 0, signal: null });
    // Not before the drain timeout; that it ends at all is what Jest's timeout guards.
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(900);

    // The stream: its partial output, then the error chunk and [DONE], as for any error after output began.
    const text = await stream.rest;
    const chunks = sseData(text);
    expect(chunks.at(-1)).toBe('[DONE]');
    const errorChunk = JSON.parse(chunks.at(-2)!) as {
      choices: { delta: { content?: string }; finish_reason: string }[];
    };
    expect(errorChunk.choices[0]).toMatchObject({
      delta: { content: '[error: service unavailable]' },
      finish_reason: 'stop',
    });
    expect(text).toContain('"content":"partial"');
    // The non-streamed chat and the structured call: the draining 503 with Retry-After, not a hang-up.
    const chatAnswer = await chat;
    expect(chatAnswer.status).toBe(503);
    expect(chatAnswer.headers.get('retry-after')).toBe('5');
    expect(chatAnswer.headers.get('connection')).toBe('close');
    const chatError = ((await chatAnswer.json()) as { error: { code: string; message: string } }).error;
    expect(chatError.code).toBe('service_unavailable');
    expect(chatError.message).toMatch(/drain timeout/);
    expect(chatError.message).toMatch(/retry/);
    const structuredAnswer = await structured;
    expect(structuredAnswer.status).toBe(503);
    expect(structuredAnswer.headers.get('retry-after')).toBe('5');
    expect(await structuredAnswer.json()).toMatchObject({ error: { code: 'unavailable' }, request_id: 'r-cut' });
    // The gateway closed every upstream turn it ended.
    await Promise.all(upstreams.map((upstream) => upstream.closedByClient));

    // Recorded as draining, at info: no client cancel (499), no error line.
    const { records } = gateway;
    const chatLines = records.filter((record) => record.event === 'chat_completion');
    expect(chatLines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ stream: true, status: 200, error_code: 'draining', level: 30 }),
        expect.objectContaining({ stream: false, status: 503, error_code: 'draining', level: 30 }),
      ]),
    );
    expect(chatLines).toHaveLength(2);
    const structuredLines = records.filter((record) => String(record.event).startsWith('structured_') && record.status);
    expect(structuredLines).toEqual([
      expect.objectContaining({
        event: 'structured_failure',
        request_id: 'r-cut',
        code: 'unavailable',
        status: 503,
        level: 30,
      }),
    ]);
    expect(records.filter((record) => (record.level as number) >= 50)).toEqual([]);
    expect(records.filter((record) => record.status === 499)).toEqual([]);
    expect(records.filter((record) => record.event === 'upstream_canceled').map((record) => record.error_code)).toEqual(
      ['draining', 'draining', 'draining'],
    );
    // One warn line names the fix; drain_end says how many requests the deadline ended.
    const timeouts = records.filter((record) => record.event === 'drain_timeout');
    expect(timeouts).toEqual([expect.objectContaining({ level: 40, cut: 3 })]);
    expect(timeouts[0].fix).toMatch(/GATEWAY_DRAIN_TIMEOUT/);
    expect(timeouts[0].fix).toMatch(/terminationGracePeriodSeconds/);
    expect(records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: false, cut: 3, in_flight: 0 });
  });

  it('at GATEWAY_DRAIN_TIMEOUT answers a turn still waiting in the agent queue with the draining 503, not as a cancel', async () => {
    // Two turns of one chat (the same first user message: one queue key). The first holds its
    // upstream past the deadline; the second waits behind it for the chat's one slot.
    fake().enqueue({ frames: [created(), textDelta('partial')], holdOpen: true });
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: '1s' });
    const first = await openStream(gateway, TOOL_TURN);
    await fake().waitForRequests(1);
    const queued = postChatBody(gateway, { ...TOOL_TURN, stream: false });
    await eventually(() => gateway.records.some((record) => record.event === 'queue_wait'));

    gateway.process.kill('SIGTERM');
    expect(await gateway.exited).toEqual({ code: 0, signal: null });

    expect(sseData(await first.rest).at(-1)).toBe('[DONE]');
    const answer = await queued;
    expect([answer.status, answer.headers.get('retry-after'), answer.headers.get('connection')]).toEqual([
      503,
      '5',
      'close',
    ]);
    const { error } = (await answer.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('service_unavailable');
    expect(error.message).toMatch(/drain timeout/);
    // The queued turn never reached the upstream.
    expect(fake().requests()).toHaveLength(1);

    const { records } = gateway;
    const queuedId = answer.headers.get('x-request-id');
    expect(records.find((record) => record.event === 'chat_completion' && record.reqId === queuedId)).toMatchObject({
      stream: false,
      status: 503,
      error_code: 'draining',
      level: 30,
    });
    expect(records.filter((record) => record.event === 'chat_completion').map((record) => record.error_code)).toEqual([
      'draining',
      'draining',
    ]);
    // The queue's own line says the drain ended its wait, not that its client left.
    expect(records.filter((record) => String(record.event).startsWith('queue_') && record.reqId === queuedId)).toEqual([
      expect.objectContaining({ event: 'queue_wait' }),
      expect.objectContaining({ event: 'queue_draining', level: 30 }),
    ]);
    expect(records.filter((record) => record.status === 499 || record.event === 'queue_canceled')).toEqual([]);
    expect(records.filter((record) => (record.level as number) >= 50)).toEqual([]);
    expect(records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: false, cut: 2, in_flight: 0 });
  });

  it('at GATEWAY_DRAIN_TIMEOUT answers the requests that have no turn yet with the draining 503 too', async () => {
    // The login's token has expired: a chat turn first waits for its refresh, which the token
    // endpoint holds past the deadline.
    fake().enqueueToken({ status: 200, body: {}, after: new Promise(() => undefined) });
    const gateway = await start(
      { GATEWAY_DRAIN_TIMEOUT: '1s', STRUCTURED_INFERENCE_ENABLED: 'true' },
      { auth: { exp: Math.floor(Date.now() / 1000) - 3600 } },
    );
    const refreshing = postChatBody(gateway, { ...PLAIN_TURN, stream: false });
    await eventually(() => fake().tokenRequests().length === 1);
    // Two requests whose bodies are still arriving: no route has them yet.
    const port = Number(new URL(gateway.url).port);
    const chatBody = await postHalfABody(port, '/v1/chat/completions', JSON.stringify(PLAIN_TURN));
    const structuredHalf = await postHalfABody(
      port,
      STRUCTURED_PATH,
      JSON.stringify(structuredBody({ request_id: 'r-half' })),
    );

    gateway.process.kill('SIGTERM');
    expect(await gateway.exited).toEqual({ code: 0, signal: null });

    const refreshed = await refreshing;
    expect([refreshed.status, refreshed.headers.get('retry-after'), refreshed.headers.get('connection')]).toEqual([
      503,
      '5',
      'close',
    ]);
    expect(((await refreshed.json()) as { error: { message: string } }).error.message).toMatch(/drain timeout/);
    const chat = await chatBody.answer;
    expect([chat.status, chat.headers['retry-after'], chat.headers.connection]).toEqual([503, '5', 'close']);
    expect(JSON.parse(chat.body)).toMatchObject({
      error: { code: 'service_unavailable', message: expect.stringMatching(/drain timeout/) },
    });
    const structured = await structuredHalf.answer;
    expect([structured.status, structured.headers['retry-after'], structured.headers.connection]).toEqual([
      503,
      '5',
      'close',
    ]);
    expect(JSON.parse(structured.body)).toMatchObject({
      error: { code: 'unavailable', message: expect.stringMatching(/drain timeout/) },
    });
    // None of them reached the upstream.
    expect(fake().requests()).toEqual([]);

    // Each recorded as its route records a failure: draining, at info.
    const { records } = gateway;
    expect(records.filter((record) => record.event === 'chat_completion')).toEqual([
      expect.objectContaining({ status: 503, error_code: 'draining', level: 30 }),
      expect.objectContaining({ status: 503, error_code: 'draining', level: 30 }),
    ]);
    expect(records.filter((record) => String(record.event).startsWith('structured_') && record.status)).toEqual([
      expect.objectContaining({ event: 'structured_failure', code: 'unavailable', status: 503, level: 30 }),
    ]);
    expect(records.filter((record) => record.msg === 'request completed').map((record) => record.res)).toEqual([
      { statusCode: 503 },
      { statusCode: 503 },
      { statusCode: 503 },
    ]);
    expect(records.filter((record) => (record.level as number) >= 50)).toEqual([]);
    expect(records.find((record) => record.event === 'drain_timeout')).toMatchObject({ level: 40, cut: 3 });
    expect(records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: false, cut: 3, in_flight: 0 });
  });

  it('from GATEWAY_DRAIN_TIMEOUT on takes no connection and refuses a new request at once, and records what it ended before it exits', async () => {
    // A stream whose client stopped reading: more than the sockets buffer, its upstream held open.
    fake().enqueue({
      frames: [created(), ...Array.from({ length: 300 }, () => textDelta('x'.repeat(64 * 1024)))],
      holdOpen: true,
    });
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: '1s' });
    const port = Number(new URL(gateway.url).port);
    const streamBody = JSON.stringify(PLAIN_TURN);
    const stalled = net.connect(port, '127.0.0.1');
    stalled.on('error', () => undefined);
    stalled.write(
      'POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${streamBody.length}\r\n\r\n${streamBody}`,
    );
    stalled.pause();
    await fake().waitForRequests(1);
    // Connections open before the deadline whose requests arrive after it: a chat and a GET.
    const lateChat = await beginRequest(port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n');
    const lateModels = await beginRequest(port, 'GET /v1/models HTTP/1.1\r\nHost: gateway\r\n');

    gateway.process.kill('SIGTERM');
    await eventually(() => gateway.records.some((record) => record.event === 'drain_timeout'));
    // The stalled stream holds the answer grace open: the late requests come within it.
    const chatBody = JSON.stringify({ ...PLAIN_TURN, stream: false });
    const late = await Promise.all([
      lateChat.finish(`Content-Type: application/json\r\nContent-Length: ${chatBody.length}\r\n\r\n${chatBody}`),
      lateModels.finish('\r\n'),
    ]);
    expect(await tryConnect(port)).toBe('ECONNREFUSED');
    expect(await gateway.exited).toEqual({ code: 0, signal: null });
    stalled.destroy();

    for (const answer of late) {
      expect([answer.status, answer.headers['retry-after'], answer.headers.connection]).toEqual([503, '5', 'close']);
      expect(JSON.parse(answer.body)).toEqual({
        error: expect.objectContaining({
          code: 'service_unavailable',
          message: 'the gateway is shutting down; retry on another instance',
        }),
      });
    }
    // The late chat started no upstream turn.
    expect(fake().requests()).toHaveLength(1);
    // Both chats recorded as draining before the exit: the stalled stream as the in-band error it
    // was ended with (its connection closed before that went out), not as a client cancel.
    const { records } = gateway;
    expect(records.filter((record) => record.event === 'chat_completion')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ stream: true, status: 200, error_code: 'draining', level: 30 }),
        expect.objectContaining({ stream: false, status: 503, error_code: 'draining', level: 30 }),
      ]),
    );
    expect(records.filter((record) => record.event === 'chat_completion')).toHaveLength(2);
    expect(records.filter((record) => record.status === 499)).toEqual([]);
    expect(records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: false, cut: 1 });
  });

  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
    ['SIGHUP', 129],
  ] as const)('exits at once on a second %s, with status 128 + its number (%i)', async (signal, code) => {
    fake().enqueue({ frames: [created(), textDelta('partial')], holdOpen: true });
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: LONG_DRAIN });
    await openStream(gateway);
    gateway.process.kill(signal);
    await eventually(() => gateway.records.some((record) => record.event === 'drain_start'));
    gateway.process.kill(signal);
    expect(await gateway.exited).toEqual({ code, signal: null });
    expect(gateway.records.some((record) => record.event === 'drain_end')).toBe(false);
  });
});

/**
 * What the drain deadline does to the requests in flight (endRequestsInFlight, which main.ts calls
 * at GATEWAY_DRAIN_TIMEOUT), in process: the metrics a child's exit would take with it.
 */
describe('ending the requests in flight at the drain deadline (in process)', () => {
  it('answers each with the draining error, whatever its stage, and counts it as that, not as a client cancel', async () => {
    const { gateway, fake, close } = await startStructured();
    try {
      fake.enqueue(
        { frames: [created(), textDelta('partial')], holdOpen: true },
        { frames: [created(), textDelta('partial')], holdOpen: true },
        extractionReply(undefined, { delayMs: 60_000 }),
      );
      // A tool turn holds its chat's one slot of the agent queue.
      const stream = await postChatBody(gateway, TOOL_TURN);
      await fake.waitForRequests(1);
      const chat = postChatBody(gateway, { model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'hi' }] });
      await fake.waitForRequests(2);
      const structured = postStructured(gateway, structuredBody({ request_id: 'r-cut' }));
      await fake.waitForRequests(3);
      // The same chat's next turn waits for that slot; another request's body is still arriving.
      const queued = postChatBody(gateway, { ...TOOL_TURN, stream: false });
      await eventually(() => gateway.logs.records('queue_wait').length === 1);
      const halfBody = await postHalfABody(
        Number(new URL(gateway.url).port),
        '/v1/chat/completions',
        JSON.stringify(PLAIN_TURN),
      );

      const drain = gateway.app.get(DrainService);
      drain.startDraining();
      expect(endRequestsInFlight(drain)).toBe(5);
      expect(sseData(await stream.text()).slice(-2)).toEqual([
        expect.stringContaining('"content":"[error: service unavailable]"'),
        '[DONE]',
      ]);
      expect((await chat).status).toBe(503);
      expect([(await structured).status, (await structured).error?.code]).toEqual([503, 'unavailable']);
      expect((await queued).status).toBe(503);
      expect((await halfBody.answer).status).toBe(503);
      await eventually(() => drain.inFlightCount === 0);

      const metrics = await scrapeMetrics(gateway);
      const requests = (status: string, provider = 'provider_a') =>
        sampleValue(metrics, 'gateway_chat_api_requests_total', { provider, status }) ?? 0;
      // The stream's error went out in-band (status 200, as any error after output began); the
      // non-streamed chat and the queued turn got their 503, and so did the body that never came
      // in full (no model read yet). None is a client cancel (499).
      expect([requests('200'), requests('503'), requests('503', 'none'), requests('499')]).toEqual([1, 2, 1, 0]);
      const waits = (result: string) =>
        sampleValue(metrics, 'gateway_chat_api_queue_wait_seconds_count', { provider: 'provider_a', result }) ?? 0;
      expect([waits('draining'), waits('canceled')]).toEqual([1, 0]);
      expect(sampleValue(metrics, 'gateway_chat_api_structured_failures_total', { code: 'unavailable' })).toBe(1);
      expect(gateway.logs.records('chat_completion').map((record) => record.error_code)).toEqual([
        'draining',
        'draining',
        'draining',
        'draining',
      ]);

      // From the deadline on, a new request is refused at once, its body never read, through its
      // route's own answer, which records it; the probes still answer.
      const late = await Promise.all([
        postChatBody(gateway, PLAIN_TURN),
        postStructured(gateway, structuredBody({ request_id: 'r-late' })),
        fetch(`${gateway.url}/v1/models`),
      ]);
      expect(late.map((answer) => answer.status)).toEqual([503, 503, 503]);
      expect(late.map((answer) => answer.headers.get('connection'))).toEqual(['close', 'close', 'close']);
      // Whatever the path: a POST no route takes (an unknown path, a path served only to GET, a
      // sub-path of chat) gets the same draining answer, not the 404 it gets while serving.
      const posted = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' };
      for (const route of ['/v1/unknown', '/v1/models', '/v1/chat/completions/x']) {
        const answer = await fetch(`${gateway.url}${route}`, posted);
        expect([route, answer.status, answer.headers.get('retry-after'), answer.headers.get('connection')]).toEqual([
          route,
          503,
          '5',
          'close',
        ]);
        expect(((await answer.json()) as { error: { code: string; message: string } }).error).toMatchObject({
          code: 'service_unavailable',
          message: 'the gateway is shutting down; retry on another instance',
        });
      }
      expect((await fetch(`${gateway.url}/health/live`)).status).toBe(200);
      expect(fake.requests()).toHaveLength(3);
      const chatLines = gateway.logs.records('chat_completion');
      expect([chatLines.length, chatLines.at(-1)]).toEqual([
        5,
        expect.objectContaining({ status: 503, error_code: 'draining' }),
      ]);
      const structuredLines = gateway.logs.records('structured_failure');
      expect([structuredLines.length, structuredLines.at(-1)]).toEqual([
        2,
        expect.objectContaining({ code: 'unavailable', status: 503, level: 30 }),
      ]);
    } finally {
      await close();
    }
  });
});
