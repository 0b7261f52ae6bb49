import * as fs from 'node:fs';
import * as path from 'node:path';
import { createGatewayApp } from '../src/app.factory';
import { loadConfig } from '../src/config/app-config';
import { BUILT_IN_CATALOG_PATH } from '../src/models/model-catalog';
import { postChatBody, readUntil, sseChunks } from './support/chat-sse';
import type { TestGateway } from './support/create-test-app';
import { startGateway, useGateway } from './support/create-test-app';
import type { FakeScript } from './support/fake-provider-a';
import { LogCapture } from './support/log-capture';
import type { AuthFileOptions } from './support/provider-a-fixtures';
import {
  completed,
  created,
  errorEvent,
  failed,
  functionCallItem,
  incomplete,
  makeJwt,
  providerASettings,
  reasoningDelta,
  textDelta,
  textReply,
  usageLimitEvent,
  writeAuthFile,
} from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { tokensCounted } from './support/prometheus-text';

type Json = Record<string, any>;

const now = () => Math.floor(Date.now() / 1000);

function post(
  gateway: TestGateway,
  body: Json,
  signal?: AbortSignal,
  headers: Record<string, string> = {},
): Promise<Response> {
  return postChatBody(gateway, body, { headers, signal });
}

const chatBody = (extra: Json = {}): Json => ({
  model: 'gpt-5.6-sol',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

/** Reads a whole SSE response: the JSON chunks and whether `[DONE]` ended it. */
async function readSse(response: Response): Promise<{ chunks: Json[]; done: boolean }> {
  return sseChunks(await response.text());
}

/** The chunks without the per-response `id` and `created`. */
const comparable = (chunks: Json[]) => chunks.map(({ id: _id, created: _created, ...rest }) => rest);

describe('POST /v1/chat/completions through provider_a (fake upstream)', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-e2e-' });

  describe.each(['ws', 'sse'] as const)('over %s', (transport) => {
    const gateway = useGateway(() => ({
      ...providerASettings(fake(), path.join(home(), transport), { transport }),
      GATEWAY_PROVIDERS: 'provider_a',
      GATEWAY_STREAM_IDLE_TIMEOUT: '1s',
    }));

    it('streams content as it arrives: the first chunk is out before a delayed second frame is sent (docs/upstream/provider-a.md §12.25)', async () => {
      fake().enqueue({ frames: [created(), textDelta('A'), textDelta('B', 'msg_1', 700), completed()] });
      const response = await post(gateway, chatBody({ stream: true }));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = await readUntil(reader, '"content":"A"');
      // The second frame leaves the fake 700 ms later (under this suite's 1 s idle timeout): the
      // first chunk is here while B is not, an order of events rather than a duration.
      expect(text).not.toContain('"content":"B"');
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
        text += decoder.decode(chunk.value);
      expect(text).toContain('"content":"B"');
      expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    });

    it('writes text, reasoning, one tool-call frame, finish and usage (docs/upstream/provider-a.md §12.29, §12.30, §12.32)', async () => {
      const frames = [
        created(),
        reasoningDelta('Thinking.'),
        textDelta('Let me read.'),
        ...functionCallItem('call_1', 'read_file', '{"path":"a.ts"}', { fragments: 3 }),
        completed(),
      ];
      fake().enqueue({ frames }, { frames });
      const tools = [
        {
          type: 'function',
          function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
        },
      ];
      const { chunks, done } = await readSse(
        await post(gateway, chatBody({ stream: true, tools, stream_options: { include_usage: true } })),
      );
      expect(done).toBe(true);
      const deltas = chunks.filter((chunk) => chunk.choices.length > 0).map((chunk) => chunk.choices[0].delta);
      expect(deltas).toEqual([
        { role: 'assistant' },
        { reasoning_content: 'Thinking.' },
        { content: 'Let me read.' },
        {
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
          ],
        },
        {},
      ]);
      expect(chunks.at(-2)!.choices[0].finish_reason).toBe('tool_calls');
      expect(chunks.at(-1)).toMatchObject({
        choices: [],
        usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
      });

      const completion = (await (await post(gateway, chatBody({ tools }))).json()) as Json;
      expect(completion.choices[0].message).toMatchObject({
        content: 'Let me read.',
        reasoning_content: 'Thinking.',
        tool_calls: [{ id: 'call_1' }],
      });
      expect(completion.choices[0].message.tool_calls).toHaveLength(1);
      expect(completion.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    });

    it('ends response.incomplete with finish_reason length and [DONE] (docs/upstream/provider-a.md §12.31)', async () => {
      fake().enqueue({ frames: [created(), textDelta('cut'), incomplete()], holdOpen: true });
      const { chunks, done } = await readSse(await post(gateway, chatBody({ stream: true })));
      expect(chunks.at(-1)!.choices[0].finish_reason).toBe('length');
      expect(done).toBe(true);
    });

    it('answers a failure before the first event as plain JSON 502, and after text as an error chunk (docs/upstream/provider-a.md §12.33)', async () => {
      fake().enqueue(...Array.from({ length: 3 }, (): FakeScript => ({ frames: [failed('server_error')] })));
      const before = await post(gateway, chatBody({ stream: true }));
      expect(before.status).toBe(502);
      expect(before.headers.get('content-type')).toMatch(/application\/json/);
      expect(((await before.json()) as Json).error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
      expect(fake().requests()).toHaveLength(3);

      // Accepted, then failed before any text: still nothing written, so still the JSON 502.
      fake().reset();
      fake().enqueue(...Array.from({ length: 3 }, (): FakeScript => ({ frames: [created(), failed('server_error')] })));
      const accepted = await post(gateway, chatBody({ stream: true }));
      expect(accepted.status).toBe(502);
      expect(accepted.headers.get('content-type')).toMatch(/application\/json/);
      expect(((await accepted.json()) as Json).error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
      expect(fake().requests()).toHaveLength(3);

      fake().reset();
      fake().enqueue({ frames: [created(), textDelta('some text'), failed('server_error')] });
      const after = await post(gateway, chatBody({ stream: true }));
      expect(after.status).toBe(200);
      const { chunks, done } = await readSse(after);
      expect(chunks.at(-1)!.choices[0]).toMatchObject({
        delta: { content: '[error: upstream error]' },
        finish_reason: 'stop',
      });
      expect(done).toBe(true);
      expect(fake().requests()).toHaveLength(1);
      // A failure after output is an error of the request, not a success: one error line, saying
      // what the upstream reported, though the client's status was 200.
      await gateway.logs.failureLine(after.headers.get('x-request-id')!, 50, {
        status: 200,
        error_code: 'upstream',
        upstream_code: 'server_error',
      });
      // The turn's own line says it too, at info, as for a turn that failed before acceptance.
      expect(
        gateway.logs.records('upstream_turn_failed').filter((line) => line.reqId === after.headers.get('x-request-id')),
      ).toEqual([expect.objectContaining({ level: 30, error_code: 'upstream', upstream_code: 'server_error' })]);
    });

    it('counts the usage a response.failed reports in the token counters, after text and before it (docs/chat.md "Non-streaming response")', async () => {
      const spent = {
        input_tokens: 30,
        output_tokens: 7,
        total_tokens: 37,
        input_tokens_details: { cached_tokens: 8 },
      };
      fake().enqueue({ frames: [created(), textDelta('some text'), failed('server_error', 'boom', 'resp_t2', spent)] });
      expect(
        await tokensCounted(gateway, 'provider_a', async () => {
          const { chunks } = await readSse(await post(gateway, chatBody({ stream: true })));
          expect(chunks.at(-1)!.choices[0].delta.content).toBe('[error: upstream error]');
        }),
      ).toEqual({ prompt: 30, completion: 7, cached: 8, reasoning: 0 });

      // A failure before output is sent again: the failed attempt and the answer are both counted.
      fake().enqueue({ frames: [failed('server_error', 'boom', 'resp_t2', spent)] }, textReply('second try'));
      expect(
        await tokensCounted(gateway, 'provider_a', async () => {
          const response = await post(gateway, chatBody());
          expect(((await response.json()) as Json).usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5 });
        }),
      ).toEqual({ prompt: 42, completion: 12, cached: 8, reasoning: 0 });
    });

    it('answers a usage limit with 429 and Retry-After 30 after one connection (docs/upstream/provider-a.md §12.34)', async () => {
      fake().enqueue({ frames: [usageLimitEvent(30)] }, textReply('never'));
      const response = await post(gateway, chatBody({ stream: true }));
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('30');
      expect(((await response.json()) as Json).error).toMatchObject({
        type: 'rate_limit_error',
        code: 'usage_limit_reached',
      });
      expect(fake().requests()).toHaveLength(1);
    });

    it('answers context_length_exceeded with 400 invalid_request_error (docs/upstream/provider-a.md §12.35)', async () => {
      fake().enqueue({ frames: [errorEvent({ code: 'context_length_exceeded', message: 'too long' })] });
      const response = await post(gateway, chatBody());
      expect(response.status).toBe(400);
      expect(((await response.json()) as Json).error).toMatchObject({
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
        // What the user can do, and where a larger window is listed; never the upstream's words.
        message:
          'the conversation exceeds the context window of the model; shorten the conversation or start a new one, or choose a model with a larger context window (GET /v1/models lists `context_window` where the upstream reports it)',
      });
    });

    it('answers a stream refused after response.created with the 400 too, before any SSE byte (docs/chat.md "When the headers go out")', async () => {
      // The backend's way: the turn is created, then failed; an agent reads the 400 to compact.
      fake().enqueue({ frames: [created(), failed('context_length_exceeded', 'too long')] }, textReply('never'));
      const response = await post(gateway, chatBody({ stream: true }));
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/application\/json/);
      expect(((await response.json()) as Json).error).toMatchObject({
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
      });
      expect(fake().requests()).toHaveLength(1);

      // Reasoning is output: a failure after it is the stream's error chunk.
      fake().reset();
      fake().enqueue({
        frames: [created(), reasoningDelta('Thinking.'), failed('context_length_exceeded', 'too long')],
      });
      const after = await post(gateway, chatBody({ stream: true }));
      expect(after.status).toBe(200);
      const { chunks, done } = await readSse(after);
      expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
        { role: 'assistant' },
        { reasoning_content: 'Thinking.' },
        { content: '[error: context window exceeded]' },
      ]);
      expect(done).toBe(true);
    });

    it('recovers from one 503 and gives 502 after three, counting connections (docs/upstream/provider-a.md §12.36)', async () => {
      fake().enqueue({ reject: { status: 503 }, frames: [] }, textReply('recovered'));
      const recovered = await post(gateway, chatBody());
      const ok = (await recovered.json()) as Json;
      expect(ok.choices[0].message.content).toBe('recovered');
      expect(fake().requests()).toHaveLength(2);
      // A retried attempt that then succeeded is no warning.
      expect(await gateway.logs.warnings(recovered.headers.get('x-request-id')!)).toEqual([]);

      fake().reset();
      fake().enqueue(
        ...Array.from({ length: 3 }, (): FakeScript => ({ reject: { status: 503 }, frames: [] })),
        textReply('never'),
      );
      const response = await post(gateway, chatBody());
      expect(response.status).toBe(502);
      expect(fake().requests()).toHaveLength(3);
      // Three attempts, two retries, one failed turn: one error line for the request, with the
      // upstream's answer; the attempts are told at info.
      const requestId = response.headers.get('x-request-id')!;
      await gateway.logs.failureLine(requestId, 50, { status: 502, error_code: 'upstream', upstream_status: 503 });
      expect(
        gateway.logs
          .records()
          .filter((line) => line.reqId === requestId && String(line.event).startsWith('upstream_'))
          .map((line) => [line.event, line.level]),
      ).toEqual([
        ['upstream_attempt_failed', 30],
        ['upstream_retry', 30],
        ['upstream_attempt_failed', 30],
        ['upstream_retry', 30],
        ['upstream_attempt_failed', 30],
        ['upstream_turn_failed', 30],
      ]);
    });

    it('does not retry a socket dropped after text: error chunk, [DONE], one connection (docs/upstream/provider-a.md §12.37)', async () => {
      fake().enqueue({ frames: [created(), textDelta('partial'), { disconnect: true }] }, textReply('never'));
      const response = await post(gateway, chatBody({ stream: true }));
      const { chunks, done } = await readSse(response);
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content).filter(Boolean)).toEqual([
        'partial',
        '[error: upstream error]',
      ]);
      expect(done).toBe(true);
      expect(fake().requests()).toHaveLength(1);
      await gateway.logs.failureLine(response.headers.get('x-request-id')!, 50, {
        status: 200,
        error_code: 'upstream',
        detail: expect.any(String),
        // Over SSE the body's read failed: its error's code is named.
        ...(transport === 'sse' ? { detail: 'stream closed before completion', upstream_errno: 'UND_ERR_SOCKET' } : {}),
      });
    });

    it('closes the upstream connection within 1 s when the client disconnects (docs/upstream/provider-a.md §12.38)', async () => {
      fake().enqueue({ frames: [created(), textDelta('first')], holdOpen: true });
      const controller = new AbortController();
      const response = await post(gateway, chatBody({ stream: true }), controller.signal);
      await readUntil(response.body!.getReader(), 'first');
      controller.abort();
      const [recorded] = fake().requests();
      await recorded.closedByClient;
    });

    it('ends a silent upstream with a timeout error chunk after the 1 s idle timeout (docs/upstream/provider-a.md §12.39)', async () => {
      fake().enqueue({ frames: [created(), textDelta('then silence')], holdOpen: true });
      const response = await post(gateway, chatBody({ stream: true }));
      const { chunks, done } = await readSse(response);
      expect(chunks.at(-1)!.choices[0].delta.content).toBe('[error: timeout]');
      expect(done).toBe(true);
      // The operator's one line tells the idle bound from the turn's deadline, and names the setting to raise.
      const requestId = response.headers.get('x-request-id')!;
      await gateway.logs.failureLine(requestId, 50, {
        status: 200,
        error_code: 'timeout',
        detail: 'provider_a: no upstream event for 1000 ms (GATEWAY_STREAM_IDLE_TIMEOUT)',
        fix: expect.stringContaining('raise GATEWAY_STREAM_IDLE_TIMEOUT'),
      });
      expect(gateway.logs.records('upstream_attempt_failed').filter((line) => line.reqId === requestId)).toEqual([
        expect.objectContaining({
          level: 30,
          error_code: 'timeout',
          detail: 'provider_a: no upstream event for 1000 ms (GATEWAY_STREAM_IDLE_TIMEOUT)',
        }),
      ]);
      // The turn had been accepted: its end is told as any failed turn's, the setting named.
      expect(gateway.logs.records('upstream_turn_failed').filter((line) => line.reqId === requestId)).toEqual([
        expect.objectContaining({
          level: 30,
          error_code: 'timeout',
          detail: 'provider_a: no upstream event for 1000 ms (GATEWAY_STREAM_IDLE_TIMEOUT)',
          fix: expect.stringContaining('GATEWAY_STREAM_IDLE_TIMEOUT'),
        }),
      ]);
    });

    it('sends one prompt_cache_key and session header per x-conversation-id, different across chats (docs/upstream/provider-a.md §12.15)', async () => {
      fake().enqueue(textReply('1'), textReply('2'), textReply('3'));
      for (const conversation of ['conv-42', 'conv-42', 'conv-43']) {
        expect((await post(gateway, chatBody(), undefined, { 'x-conversation-id': conversation })).status).toBe(200);
      }
      const sessionHeader = 'session-id';
      const [first, second, third] = fake().requests();
      expect(first.body!.prompt_cache_key).toBe('47b61fd1-c0eb-3d05-2adc-5c4396baffee');
      expect(first.headers[sessionHeader]).toBe('47b61fd1-c0eb-3d05-2adc-5c4396baffee');
      expect(second.body!.prompt_cache_key).toBe(first.body!.prompt_cache_key);
      expect(second.headers[sessionHeader]).toBe(first.headers[sessionHeader]);
      expect(third.body!.prompt_cache_key).not.toBe(first.body!.prompt_cache_key);
      expect(third.headers[sessionHeader]).not.toBe(first.headers[sessionHeader]);
    });

    it('keeps secrets from upstream error text out of the client body and the logs (docs/upstream/provider-a.md §12.40)', async () => {
      const secret = 'sk-LEAKED-0123456789';
      fake().enqueue({ reject: { status: 400, body: { error: { message: `bad key ${secret}` } } }, frames: [] });
      const response = await post(gateway, chatBody());
      expect(response.status).toBe(400);
      expect(await response.text()).not.toContain('LEAKED');
      fake().enqueue({ frames: [created(), textDelta('x'), errorEvent({ code: 'server_error', message: secret })] });
      expect(await (await post(gateway, chatBody({ stream: true }))).text()).not.toContain('LEAKED');
      expect(gateway.logs.text).not.toContain('LEAKED');
    });
  });

  it('gives the same client output over WebSocket and SSE apart from id and created (docs/upstream/provider-a.md §12.13)', async () => {
    const outputs: Json[][] = [];
    for (const transport of ['ws', 'sse'] as const) {
      const gateway = await startGateway({
        ...providerASettings(fake(), path.join(home(), `same-${transport}`), { transport }),
        GATEWAY_PROVIDERS: 'provider_a',
      });
      try {
        fake().reset();
        fake().enqueue({
          frames: [
            created(),
            reasoningDelta('R'),
            textDelta('Hel'),
            textDelta('lo'),
            ...functionCallItem('call_9', 'f', '{"a":1}'),
            completed(),
          ],
        });
        const { chunks } = await readSse(
          await post(gateway, chatBody({ stream: true, stream_options: { include_usage: true } })),
        );
        outputs.push(comparable(chunks));
      } finally {
        await gateway.close();
      }
    }
    expect(outputs[0].length).toBeGreaterThan(4);
    expect(outputs[1]).toEqual(outputs[0]);
  });

  it("over SSE, reads a completed turn's answer to its end: sequential turns reuse one connection", async () => {
    const gateway = await startGateway({
      ...providerASettings(fake(), path.join(home(), 'keep-alive'), { transport: 'sse' }),
      GATEWAY_PROVIDERS: 'provider_a',
    });
    try {
      for (const turn of [1, 2, 3, 4]) {
        // The answer's body ends after the client has its [DONE], so after the gateway ended the turn.
        let endAnswer!: () => void;
        const ended = new Promise<void>((resolve) => (endAnswer = resolve));
        fake().enqueue({ frames: [...textReply(`turn ${turn}`).frames, { after: ended, ping: () => undefined }] });
        const { chunks, done } = await readSse(await post(gateway, chatBody({ stream: true })));
        expect(done).toBe(true);
        expect(chunks.map((chunk) => chunk.choices[0]?.delta.content).filter(Boolean)).toEqual([`turn ${turn}`]);
        endAnswer();
        await fake().requests()[turn - 1].answered;
        // undici takes a connection back one event-loop turn after reading its answer's end: the
        // next turn starts after the loop went round twice (a poll phase read the end by then).
        for (const _round of [1, 2]) await new Promise((resolve) => setImmediate(resolve));
      }
      const posts = fake().requests();
      expect(posts).toHaveLength(4);
      expect(new Set(posts.map((request) => request.remotePort)).size).toBe(1);
    } finally {
      await gateway.close();
    }
  });

  it('fails startup with a ConfigError naming PRIMARY_FAITHFUL_PROFILE when the profile is missing', async () => {
    const settings = {
      ...providerASettings(fake(), path.join(home(), 'bad-profile')),
      HOME: home(),
      GATEWAY_PROVIDERS: 'provider_a',
      PRIMARY_FAITHFUL_PROFILE: path.join(home(), 'missing.json'),
    };
    // createGatewayApp directly (not startGateway) so a failed boot leaves no temp HOME behind. The
    // profile is read in a lifecycle hook, so the app builds and its start (init, as listen runs it) fails.
    const app = await createGatewayApp(loadConfig(settings), { logStream: new LogCapture() });
    try {
      await expect(app.init()).rejects.toThrow(/PRIMARY_FAITHFUL_PROFILE/);
    } finally {
      await app.close().catch(() => undefined);
    }
  });

  it("serves a body without model with the catalog's default_model (GATEWAY_MODEL_CATALOG)", async () => {
    const catalog = JSON.parse(fs.readFileSync(BUILT_IN_CATALOG_PATH, 'utf8')) as Json;
    const catalogFile = path.join(home(), 'team-catalog.json');
    fs.writeFileSync(catalogFile, JSON.stringify({ ...catalog, default_model: 'gpt-5.6-terra' }));
    const gateway = await startGateway({
      ...providerASettings(fake(), path.join(home(), 'default-model')),
      GATEWAY_PROVIDERS: 'provider_a',
      GATEWAY_MODEL_CATALOG: catalogFile,
    });
    try {
      fake().enqueue(textReply('from terra'));
      const completion = (await (await post(gateway, { messages: [{ role: 'user', content: 'hi' }] })).json()) as Json;
      expect(completion.model).toBe('gpt-5.6-terra');
      expect(fake().requests()[0].body!.model).toBe('gpt-5.6-terra');
    } finally {
      await gateway.close();
    }
  });

  describe('login flows', () => {
    let gateway: TestGateway | undefined;
    const boot = async (auth: AuthFileOptions, name: string) => {
      gateway = await startGateway({
        ...providerASettings(fake(), path.join(home(), name), { auth }),
        GATEWAY_PROVIDERS: 'provider_a',
      });
      return gateway;
    };
    afterEach(async () => {
      await gateway?.close();
      gateway = undefined;
    });

    it('refreshes after an upstream 401 and answers normally (docs/upstream/provider-a.md §12.9)', async () => {
      const gw = await boot({}, 'login-401');
      fake().enqueue({ reject: { status: 401 }, frames: [] }, textReply('fine'));
      const response = await post(gw, chatBody());
      expect(response.status).toBe(200);
      expect(((await response.json()) as Json).choices[0].message.content).toBe('fine');
      expect(fake().tokenRequests()).toHaveLength(1);
      expect(fake().requests()).toHaveLength(2);
    });

    it('answers 403 after a 401 on both attempts: two connections, one refresh (docs/upstream/provider-a.md §12.10)', async () => {
      const gw = await boot({}, 'login-401-twice');
      fake().enqueue({ reject: { status: 401 }, frames: [] }, { reject: { status: 401 }, frames: [] });
      const response = await post(gw, chatBody({ stream: true }));
      expect(response.status).toBe(403);
      expect(((await response.json()) as Json).error).toMatchObject({
        type: 'permission_error',
        code: 'upstream_login_required',
      });
      expect(fake().requests()).toHaveLength(2);
      expect(fake().tokenRequests()).toHaveLength(1);
    });

    it('answers 403 without any upstream or token call when expired with no refresh token (docs/upstream/provider-a.md §12.7)', async () => {
      const gw = await boot({ exp: now() - 60, refreshToken: null }, 'login-expired');
      const response = await post(gw, chatBody());
      expect(response.status).toBe(403);
      expect(fake().requests()).toHaveLength(0);
      expect(fake().tokenRequests()).toHaveLength(0);
    });

    it('answers 403 on invalid_grant with no token text in the body or logs (docs/upstream/provider-a.md §12.8)', async () => {
      const access = makeJwt({ exp: now() - 60, jti: 'e2e-secret-access' });
      const gw = await boot({ accessToken: access, refreshToken: 'rt-e2e-secret' }, 'login-invalid-grant');
      fake().enqueueToken({ status: 400, body: { error: 'invalid_grant', error_description: 'rt-e2e-secret reused' } });
      const response = await post(gw, chatBody());
      expect(response.status).toBe(403);
      const body = await response.text();
      for (const secret of [access, 'rt-e2e-secret', 'reused']) {
        expect(body).not.toContain(secret);
        expect(gw.logs.text).not.toContain(secret);
      }
      expect(gw.logs.text).toContain('invalid_grant');
    });

    it('answers a 403 challenge page as a 502 upstream error: no refresh, no retry, no "log in" advice', async () => {
      const gw = await boot({}, 'login-403');
      fake().enqueue(
        { reject: { status: 403, headers: { 'content-type': 'text/html' } }, frames: [] },
        textReply('never'),
      );
      const response = await post(gw, chatBody());
      expect(response.status).toBe(502);
      const error = ((await response.json()) as Json).error;
      expect(error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
      expect(error.message).not.toMatch(/log in|login/i);
      expect(fake().requests()).toHaveLength(1);
      expect(fake().tokenRequests()).toHaveLength(0);
    });

    it('answers a 403 whose body says the token is invalid with 403, without a refresh', async () => {
      const gw = await boot({}, 'login-403-token');
      fake().enqueue({
        reject: {
          status: 403,
          body: { error: { code: 'token_invalidated', message: 'Your authentication token has been invalidated.' } },
        },
        frames: [],
      });
      const response = await post(gw, chatBody());
      expect(response.status).toBe(403);
      expect(fake().tokenRequests()).toHaveLength(0);
      expect(fake().requests()).toHaveLength(1);
    });

    it.each(['refresh_token_expired', 'refresh_token_reused', 'refresh_token_invalidated'])(
      'remembers a permanent refresh failure (%s) until the login file changes: later requests fail fast with no refresh',
      async (code) => {
        const gw = await boot({ exp: now() - 60, refreshToken: 'rt-dead' }, `login-dead-${code}`);
        fake().enqueueToken({ status: 401, body: { error: { code, message: 'dead' } } });
        expect((await post(gw, chatBody())).status).toBe(403);
        expect((await post(gw, chatBody())).status).toBe(403);
        expect((await post(gw, chatBody({ stream: true }))).status).toBe(403);
        expect(fake().tokenRequests()).toHaveLength(1);
        expect(fake().requests()).toHaveLength(0);
        // `codex login` writes a new file: the gateway uses it at once.
        writeAuthFile(path.join(home(), `login-dead-${code}`, '.codex'), { refreshToken: 'rt-fresh' });
        fake().enqueue(textReply('back'));
        expect((await post(gw, chatBody())).status).toBe(200);
      },
    );

    it('refreshes again on the next request after a refusal that is not permanent (invalid_grant)', async () => {
      const gw = await boot({ exp: now() - 60, refreshToken: 'rt-flaky' }, 'login-transient');
      fake().enqueueToken({ status: 400, body: { error: 'invalid_grant' } });
      expect((await post(gw, chatBody())).status).toBe(403);
      fake().enqueue(textReply('ok'));
      expect((await post(gw, chatBody())).status).toBe(200);
      expect(fake().tokenRequests()).toHaveLength(2);
    });

    /** The login's entry in GET /v1/accounts. */
    const accountEntry = async (gw: TestGateway): Promise<Json> => {
      const response = await fetch(`${gw.url}/v1/accounts`);
      const { data } = (await response.json()) as { data: Json[] };
      return data.find((entry) => entry.provider === 'provider_a' && entry.account === 'default')!;
    };

    it.each([
      [
        'a server error',
        { status: 503, body: { error: 'temporarily_unavailable', error_description: 'rt-e2e-secret' } },
      ],
      ['a rate limit', { status: 429, body: { error: { code: 'rate_limit_exceeded' } } }],
      ['a 500 without an error code', { status: 500, body: {} }],
      ['a 200 without a token', { status: 200, body: { token_type: 'Bearer' } }],
      // The fake writes no body at all: an answer that is not JSON.
      ['an empty 200', { status: 200, body: undefined }],
    ])(
      'retries a refresh the token endpoint answers with %s, answers the turn and keeps the login ready',
      async (_name, failure) => {
        const gw = await boot({ exp: now() - 60, refreshToken: 'rt-e2e-secret' }, 'login-endpoint-blip');
        fake().enqueueToken(failure);
        fake().enqueue(textReply('after the blip'));
        const response = await post(gw, chatBody());
        expect(response.status).toBe(200);
        expect(((await response.json()) as Json).choices[0].message.content).toBe('after the blip');
        // Retried before output like an endpoint that gave no answer: the second refresh serves the turn.
        expect(fake().tokenRequests()).toHaveLength(2);
        expect(fake().requests()).toHaveLength(1);
        expect((await accountEntry(gw)).state).toBe('ready');
        // The line says the endpoint failed and what to check, never "log in again".
        const [line] = gw.logs.records('provider_a_token_refresh_failed');
        expect(line).toMatchObject({
          level: 30,
          account: 'default',
          upstream_status: failure.status,
          fix: `the token endpoint (PROVIDER_A_TOKEN_URL) answered HTTP ${failure.status} without a token, not a refusal of the login: nothing to do if it passes, else check the endpoint, the network and HTTPS_PROXY / NO_PROXY; the next request refreshes again`,
        });
        expect(gw.logs.records('provider_a_token_refresh_failed')).toHaveLength(1);
        expect(gw.logs.text).not.toMatch(/codex login|rt-e2e-secret/);
      },
    );

    it('answers 502 upstream_error, not 403, when the token endpoint fails every attempt; the next request refreshes again', async () => {
      const gw = await boot({ exp: now() - 60, refreshToken: 'rt-e2e' }, 'login-endpoint-down');
      const unavailable = { status: 503, body: { error: 'temporarily_unavailable' } };
      for (const stream of [false, true]) {
        const before = fake().tokenRequests().length;
        fake().enqueueToken(unavailable, unavailable, unavailable);
        const failed = await post(gw, chatBody({ stream }));
        expect(failed.status).toBe(502);
        const error = ((await failed.json()) as Json).error;
        expect(error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
        expect(error.message).not.toMatch(/log in|login/i);
        // Each attempt refreshed once: the retries before output, as for any upstream connect error.
        expect(fake().tokenRequests()).toHaveLength(before + 3);
        expect(fake().requests()).toHaveLength(0);
        expect((await accountEntry(gw)).state).toBe('ready');
      }
      const [turnFailed] = gw.logs.records('upstream_turn_failed');
      expect(turnFailed).toMatchObject({
        error_code: 'upstream',
        fix: expect.stringMatching(/^the token endpoint \(PROVIDER_A_TOKEN_URL\) answered HTTP 503/),
      });
      fake().enqueue(textReply('back'));
      expect((await post(gw, chatBody())).status).toBe(200);
      expect(fake().tokenRequests()).toHaveLength(7);
    });

    it('refreshes an expiring token once and sends the new bearer (docs/upstream/provider-a.md §12.3)', async () => {
      const gw = await boot({ exp: now() + 30, refreshToken: 'rt-e2e' }, 'login-refresh');
      fake().enqueue(textReply('ok'));
      expect((await post(gw, chatBody())).status).toBe(200);
      expect(fake().tokenRequests()).toEqual([
        expect.objectContaining({ grant_type: 'refresh_token', refresh_token: 'rt-e2e' }),
      ]);
      expect(
        JSON.parse(Buffer.from(fake().requests()[0].headers.authorization.split('.')[1], 'base64url').toString()).jti,
      ).toBe('at-1');
    });
  });
});
