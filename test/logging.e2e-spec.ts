import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { postHalfABody, rawRequest, rawSocketExchange } from './support/raw-http';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import {
  created,
  errorEvent,
  functionCallItem,
  completed,
  providerASettings,
  textDelta,
} from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { providerBSettings } from './support/provider-b-fixtures';
import { useFakeProviderB } from './support/provider-b-harness';
import { initLine, providerCSettings, resultLine } from './support/provider-c-fixtures';
import { STRUCTURED_PATH, structuredBody } from './support/structured-client';

/**
 * docs/endpoints.md "Logs", docs/design/decisions.md §8, docs/design/behaviours.md §9 and §10 item 59: one JSON line
 * per real event, the request id on each, caller-controlled identifiers sanitized so they
 * cannot forge a record, and never Authorization, prompts or bodies.
 */
const HOSTILE = 'gpt\n{"level":60,"event":"forged"}\r\u2028x\u0085y\tz\u0000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('log records', () => {
  // provider_a answers from the loopback fake, so prompt-handling code really runs (and could log).
  const { fake, home } = useFakeProviderA({ homePrefix: 'logging-e2e-' });
  let gateway: TestGateway;
  let sentinels = 0;

  beforeAll(async () => {
    gateway = await startGateway({
      GATEWAY_BEARER_SECRET: 'log-secret-4411-long',
      LOG_LEVEL: 'debug',
      STRUCTURED_INFERENCE_ENABLED: 'true',
      ...providerASettings(fake(), path.join(home(), 'pa')),
    });
  });

  afterAll(() => gateway.close());

  /**
   * Runs `action` and returns the records it produced (the capture is shared by the file). Lines
   * are written in order, so once a sentinel request sent after the action has its own access
   * line, every line of the action is in: an empty result means "nothing was logged", never
   * "not logged yet".
   */
  async function recordsOf(action: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
    const start = gateway.logs.lines.length;
    await action();
    const sentinel = `/log-sentinel-${++sentinels}`;
    await rawRequest(`${gateway.url}${sentinel}`);
    const end = await gateway.logs.waitForLine((line) => line.includes(`"path":"${sentinel}"`));
    return gateway.logs.lines.slice(start, end).map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  const chat = (model: string, extraHeaders: Record<string, string> = {}) =>
    rawRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer log-secret-4411-long', 'content-type': 'application/json', ...extraHeaders },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'SECRET-PROMPT-TEXT please' }] }),
    });

  it('writes every line as one JSON object', async () => {
    // Start-up may log nothing (e.g. when the provider CLIs are all found on PATH), so make a line.
    await recordsOf(() => chat('no-such-model'));
    expect(gateway.logs.lines.length).toBeGreaterThan(0);
    for (const line of gateway.logs.lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('logs a hostile model id as one sanitized value: same records as a clean request, none forged (docs/design/behaviours.md §10 item 59)', async () => {
    const clean = await recordsOf(() => chat('plain-unknown-model'));
    const poisoned = await recordsOf(() => chat(HOSTILE));
    expect(poisoned.map((record) => record.event ?? record.msg)).toEqual(
      clean.map((record) => record.event ?? record.msg),
    );
    expect(poisoned.some((record) => record.event === 'forged')).toBe(false);
    const completion = poisoned.find((record) => record.event === 'chat_completion');
    expect(completion?.model).toBe('gpt {"level":60,"event":"forged"}  x y z ');
    for (const record of poisoned) expect(JSON.stringify(record)).not.toMatch(/\\n|\\r|\\t|\\u0000|\\u2028|\\u0085/);
  });

  /** A chat body with `fields` beside a model and a prompt. */
  const chatWith = (fields: Record<string, unknown>) =>
    rawRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer log-secret-4411-long', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-5.6-sol',
        messages: [{ role: 'user', content: 'SECRET-PROMPT-TEXT' }],
        ...fields,
      }),
    });

  it('says on the chat_completion line why a client error was refused: the field and the message the client got', async () => {
    let response!: Awaited<ReturnType<typeof rawRequest>>;
    const records = await recordsOf(async () => {
      response = await chatWith({ temperature: 'SECRET-VALUE-hot' });
    });
    const { error } = JSON.parse(response.body.toString()) as { error: { message: string; param: string } };
    expect(error.param).toBe('temperature');
    const completion = records.find((record) => record.event === 'chat_completion');
    expect(completion).toMatchObject({
      status: 400,
      error_code: 'invalid_request',
      param: 'temperature',
      error_message: error.message,
    });
    expect(String(completion?.error_message)).toMatch(/^temperature /);
    for (const record of records) expect(JSON.stringify(record)).not.toMatch(/SECRET-VALUE|SECRET-PROMPT/);
  });

  it("names on a refused body's chat_completion line the model and stream it asked for, a key-like model redacted", async () => {
    const records = await recordsOf(async () => {
      await chatWith({ stream: true, temperature: 'hot' });
      await chatWith({ model: 'sk-proj-SECRETMODELKEY1234', temperature: 'hot' });
    });
    const lines = records.filter((record) => record.event === 'chat_completion');
    expect(lines).toEqual([
      expect.objectContaining({ status: 400, param: 'temperature', model: 'gpt-5.6-sol', stream: true }),
      expect.objectContaining({ status: 400, param: 'temperature', model: '[redacted]', stream: false }),
    ]);
    for (const record of records) expect(JSON.stringify(record)).not.toContain('SECRETMODELKEY');
  });

  it("names on a refused body's chat_completion line the default model when the body named none, or null", async () => {
    const records = await recordsOf(async () => {
      await chatWith({ model: undefined, temperature: 'hot' });
      await chatWith({ model: null, temperature: 'hot' });
    });
    const lines = records.filter((record) => record.event === 'chat_completion');
    expect(lines).toEqual([
      expect.objectContaining({ status: 400, param: 'temperature', model: 'sol', stream: false }),
      expect.objectContaining({ status: 400, param: 'temperature', model: 'sol', stream: false }),
    ]);
  });

  it("keeps only the field when the client's message quotes the request (a schema validator's words)", async () => {
    let response!: Awaited<ReturnType<typeof rawRequest>>;
    const records = await recordsOf(async () => {
      response = await chatWith({
        // provider_c's answers are held to the schema by the gateway, which compiles it first.
        model: 'claude-fable-5',
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'x',
            schema: { type: 'object', properties: { a: { type: 'string', pattern: '(SECRET-SCHEMA-PATTERN' } } },
          },
        },
      });
    });
    expect(response.status).toBe(400);
    const completion = records.find((record) => record.event === 'chat_completion');
    expect(completion).toMatchObject({ status: 400, param: 'response_format' });
    expect(completion).not.toHaveProperty('error_message');
    for (const record of records) expect(JSON.stringify(record)).not.toContain('SECRET-SCHEMA');
  });

  it("keeps the message out when it quotes the caller's Content-Type charset", async () => {
    const records = await recordsOf(() =>
      rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer log-secret-4411-long',
          'content-type': 'application/json; charset="SECRET-CHARSET"',
        },
        body: JSON.stringify({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'hi' }] }),
      }),
    );
    const completion = records.find((record) => record.event === 'chat_completion');
    expect(completion).toMatchObject({ status: 400, error_code: 'invalid_request' });
    expect(completion).not.toHaveProperty('error_message');
    for (const record of records) expect(JSON.stringify(record)).not.toContain('SECRET-CHARSET');
  });

  it('says on the structured_failure line why a structured request was refused', async () => {
    const records = await recordsOf(() =>
      rawRequest(`${gateway.url}${STRUCTURED_PATH}`, {
        method: 'POST',
        headers: { authorization: 'Bearer log-secret-4411-long', 'content-type': 'application/json' },
        body: JSON.stringify(structuredBody({ schema: 'SECRET-NOT-AN-OBJECT' })),
      }),
    );
    const failure = records.find((record) => record.event === 'structured_failure');
    expect(failure).toMatchObject({
      status: 400,
      code: 'invalid_schema',
      error_message: 'schema must be a JSON object',
    });
    for (const record of records) expect(JSON.stringify(record)).not.toContain('SECRET-NOT');
  });

  /** The lines of `records` at warn or above (pino level 40+). */
  const warningsIn = (records: Record<string, unknown>[]) => records.filter((record) => Number(record.level) >= 40);

  describe('a failure no route line records: its access line is the one line, with the code and the message', () => {
    const get = (target: string, bearer = 'log-secret-4411-long') =>
      rawRequest(`${gateway.url}${target}`, { headers: { authorization: `Bearer ${bearer}` } });

    it.each([
      ['an unknown model id', '/v1/models/no-such-model', 404, 'model_not_found', /GET \/v1\/models lists/],
      ['a path that is not percent-encoding', '/v1/models/%E0%A4', 400, 'invalid_request', /percent-encoding/],
    ])('GET /v1/models/{id} with %s', async (_case, target, status, code, message) => {
      let response!: Awaited<ReturnType<typeof rawRequest>>;
      const records = await recordsOf(async () => {
        response = await get(target);
      });
      expect(response.status).toBe(status);
      const { error } = JSON.parse(response.body.toString()) as { error: { message: string } };
      expect(error.message).toMatch(message);
      expect(warningsIn(records)).toEqual([
        expect.objectContaining({
          msg: 'request completed',
          level: 40,
          status,
          error_code: code,
          error_message: error.message,
          res: { statusCode: status },
        }),
      ]);
    });

    it('GET /v1/models/{id} with a key pasted as the id: neither the path nor the message logs it', async () => {
      const key = 'sk-proj-PATHKEY0a1b2c3d4e5f6g7h8i9j0k1l2m3';
      let response!: Awaited<ReturnType<typeof rawRequest>>;
      const records = await recordsOf(async () => {
        response = await get(`/v1/models/${key}`);
      });
      expect(response.status).toBe(404);
      expect(warningsIn(records)).toEqual([
        expect.objectContaining({
          msg: 'request completed',
          status: 404,
          error_code: 'model_not_found',
          req: expect.objectContaining({ path: '/v1/models/[redacted]' }),
        }),
      ]);
      for (const record of records) expect(JSON.stringify(record)).not.toContain('PATHKEY');
    });

    it('GET /metrics with a refused bearer', async () => {
      let response!: Awaited<ReturnType<typeof rawRequest>>;
      const records = await recordsOf(async () => {
        response = await get('/metrics', 'SECRET-WRONG-BEARER');
      });
      expect(response.status).toBe(401);
      const { error } = JSON.parse(response.body.toString()) as { error: { message: string } };
      expect(warningsIn(records)).toEqual([
        expect.objectContaining({
          msg: 'request completed',
          level: 40,
          status: 401,
          error_code: 'invalid_api_key',
          error_message: error.message,
        }),
      ]);
      for (const record of records) expect(JSON.stringify(record)).not.toContain('SECRET-WRONG');
    });

    it('leaves a failed chat request its one chat_completion line: the access line stays info, without the error', async () => {
      const records = await recordsOf(() => chat('no-such-model'));
      expect(warningsIn(records)).toEqual([
        expect.objectContaining({ event: 'chat_completion', level: 40, status: 404, error_code: 'model_not_found' }),
      ]);
      const access = records.find((record) => record.msg === 'request completed' && record.reqId !== undefined);
      expect(access).toMatchObject({ level: 30, res: { statusCode: 404 } });
      expect(access).not.toHaveProperty('error_code');
      expect(access).not.toHaveProperty('error_message');
    });
  });

  describe('a key pasted into model is logged redacted, on every line of the request', () => {
    const KEYS = [
      ['an API key', 'sk-proj-PASTEDKEY0a1b2c3d4e5f6g7h8i9j0', 'PASTEDKEY'],
      ['a JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJQQVNURURKV1QiOjF9.PASTEDJWTsig_x', 'PASTEDJWT'],
    ] as const;
    const structured = (model: string) =>
      rawRequest(`${gateway.url}${STRUCTURED_PATH}`, {
        method: 'POST',
        headers: { authorization: 'Bearer log-secret-4411-long', 'content-type': 'application/json' },
        body: JSON.stringify(structuredBody({ model })),
      });

    it.each(KEYS)('%s, through chat and structured', async (_case, key, marker) => {
      let statuses: number[] = [];
      const records = await recordsOf(async () => {
        statuses = [(await chat(key)).status, (await structured(key)).status];
      });
      expect(statuses).toEqual([404, 404]);
      // Positive control: both routes wrote their line, naming the model field.
      expect(records.find((record) => record.event === 'chat_completion')?.model).toBe('[redacted]');
      expect(records.find((record) => record.event === 'structured_failure')?.model).toBe('[redacted]');
      for (const record of records) expect(JSON.stringify(record)).not.toContain(marker);
      expect(JSON.stringify(records)).not.toContain(key.slice(0, 12));
    });

    it("in a passthrough id, which the backend refuses by name: the family prefix and the message's words stay", async () => {
      fake().enqueue({ frames: [], reject: { status: 404, body: { detail: 'Model not found' } } });
      let answer!: Awaited<ReturnType<typeof rawRequest>>;
      const records = await recordsOf(async () => {
        answer = await chat(`provider_a/${KEYS[0][1]}`);
      });
      // The client is told which model was refused, in its own words.
      expect(answer.status).toBe(404);
      expect(answer.body.toString()).toContain(KEYS[0][1]);
      expect(records.find((record) => record.event === 'chat_completion')).toMatchObject({
        model: 'provider_a/[redacted]',
        error_message: expect.stringMatching(/^model "\[redacted\]": the upstream does not know this model/),
      });
      expect(JSON.stringify(records)).not.toContain('PASTEDKEY');
    });

    it('leaves a served id as sent', async () => {
      fake().enqueue({ frames: [created(), textDelta('ok'), completed()] });
      const records = await recordsOf(() => chat('gpt-5.6-sol'));
      expect(records.find((record) => record.event === 'chat_completion')?.model).toBe('gpt-5.6-sol');
    });
  });

  it('cuts a 10 000-character identifier to its first 128 characters', async () => {
    // Dotted: an unbroken run of 40 letters or digits is redacted as a key would be.
    const records = await recordsOf(() => chat('m.'.repeat(5_000)));
    expect(records.find((record) => record.event === 'chat_completion')?.model).toBe('m.'.repeat(64));
  });

  it('cannot be forged through the request path', async () => {
    const port = Number(new URL(gateway.url).port);
    // Raw NEL, U+2028 bytes or controls in a path are refused by Node's HTTP parser (400) before
    // any route runs, so the only record is the refusal, naming Node's reason code, never the path…
    const raw = Buffer.concat([
      Buffer.from('GET /nope'),
      Buffer.from([0x85, 0xe2, 0x80, 0xa8]),
      Buffer.from('{"level":60,"event":"forged"} HTTP/1.1\r\nHost: x'),
    ]);
    let answer = '';
    const refused = await recordsOf(async () => {
      answer = await rawSocketExchange(port, raw);
    });
    expect(answer.startsWith('HTTP/1.1 400')).toBe(true);
    expect(refused).toEqual([
      expect.objectContaining({ event: 'http_request_rejected', reason: 'HPE_INVALID_URL', status: 400 }),
    ]);
    expect(JSON.stringify(refused)).not.toContain('nope');

    // …and a percent-encoded line break stays encoded text inside one access record.
    const encoded = await recordsOf(() =>
      rawRequest(`${gateway.url}/nope%0A%7B%22level%22%3A60%2C%22event%22%3A%22forged%22%7D%E2%80%A8`),
    );
    expect(encoded).toHaveLength(1);
    expect(encoded.some((record) => record.event === 'forged')).toBe(false);
    expect((encoded[0].req as { path: string }).path).toBe(
      '/nope%0A%7B%22level%22%3A60%2C%22event%22%3A%22forged%22%7D%E2%80%A8',
    );
  });

  it('caps a logged path at 128 characters', async () => {
    const records = await recordsOf(() => rawRequest(`${gateway.url}/${'p/'.repeat(2500)}`));
    expect(records).toHaveLength(1);
    expect((records[0].req as { path: string }).path).toBe(`/${'p/'.repeat(63)}p`);
  });

  it("adopts a caller's X-Request-Id: echoed, and on every line of the request", async () => {
    let response!: Awaited<ReturnType<typeof rawRequest>>;
    const records = await recordsOf(async () => {
      response = await chat('unknown-model-for-id', { 'x-request-id': 'abc-123' });
    });
    expect(response.headers['x-request-id']).toBe('abc-123');
    expect(records.length).toBeGreaterThan(1);
    for (const record of records) expect(record.reqId).toBe('abc-123');
    expect(records).toContainEqual(
      expect.objectContaining({ event: 'chat_completion', reqId: 'abc-123', status: 404 }),
    );
  });

  it('ignores a caller-supplied x-request-id that could forge log fields: the id on every line is our own UUID', async () => {
    let response!: Awaited<ReturnType<typeof rawRequest>>;
    const records = await recordsOf(async () => {
      response = await chat('unknown-model-for-id', { 'x-request-id': 'evil-id\t{"level":60}' });
    });
    const id = response.headers['x-request-id'] as string;
    expect(id).toMatch(UUID);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      expect(record.reqId).toBe(id);
      expect(JSON.stringify(record)).not.toContain('evil-id');
    }
  });

  it('times a chat from its arrival: duration_ms and ttft_ms include a slow upload of its body', async () => {
    fake().enqueue({ frames: [created(), textDelta('slow upload answered'), completed()] });
    const gapMs = 400;
    const records = await recordsOf(async () => {
      const half = await postHalfABody(
        Number(new URL(gateway.url).port),
        '/v1/chat/completions',
        JSON.stringify({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'slow body' }] }),
        { authorization: 'Bearer log-secret-4411-long' },
      );
      // The gateway invited the body, so the request had arrived; the rest goes out only after the
      // gap, so the turn's own times cannot be shorter than it (a timer never fires early).
      await new Promise((resolve) => setTimeout(resolve, gapMs));
      half.rest();
      expect((await half.answer).status).toBe(200);
    });
    const completion = records.find((record) => record.event === 'chat_completion');
    expect(completion).toMatchObject({ status: 200 });
    expect(completion?.duration_ms).toBeGreaterThanOrEqual(gapMs);
    expect(completion?.ttft_ms).toBeGreaterThanOrEqual(gapMs);
  });

  it('never logs Authorization, the bearer, prompt text, tool arguments or output, through a successful and a failing turn', async () => {
    const tools = [
      {
        type: 'function',
        function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      },
    ];
    fake().enqueue(
      {
        frames: [
          created(),
          textDelta('SECRET-OUTPUT-TEXT'),
          ...functionCallItem('call_1', 'read_file', '{"path":"SECRET-TOOL-ARGUMENT"}'),
          completed(),
        ],
      },
      { frames: [created(), errorEvent({ code: 'server_error', message: 'SECRET-UPSTREAM-TEXT' })] },
    );
    const records = await recordsOf(async () => {
      await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer log-secret-4411-long', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'gpt-5.6-sol',
          stream: true,
          tools,
          messages: [{ role: 'user', content: 'SECRET-PROMPT-TEXT please' }],
        }),
      });
      await chat('gpt-5.6-sol');
      await rawRequest(`${gateway.url}/v1/models`, { headers: { authorization: 'Bearer wrong-bearer-8812' } });
    });
    // Positive control: the prompt reached the upstream, and both turns were logged.
    expect(
      JSON.stringify(
        fake()
          .requests()
          .map((request) => request.body),
      ),
    ).toContain('SECRET-PROMPT-TEXT');
    const completions = records.filter((record) => record.event === 'chat_completion');
    expect(completions.map((record) => [record.status, record.tool_calls])).toEqual([
      [200, 1],
      [502, 0],
    ]);
    const text = gateway.logs.text;
    for (const forbidden of [
      'log-secret-4411-long',
      'wrong-bearer-8812',
      'SECRET-PROMPT-TEXT',
      'SECRET-TOOL-ARGUMENT',
      'SECRET-OUTPUT-TEXT',
    ]) {
      expect(text).not.toContain(forbidden);
    }
    // No header is logged, under any spelling. The refused caller's line may name the header in
    // the words the client got ("send `Authorization: Bearer <the gateway's key>`"), never its value.
    expect(text).not.toMatch(/"authorization"\s*:/i);
    expect(text.replaceAll("`Authorization: Bearer <the gateway's key>`", '')).not.toMatch(/authorization/i);
    // The upstream's own words travel only as the upstream_* lines' sanitized `upstream_message`.
    const withoutCause = gateway.logs.records().map(({ upstream_message: _message, ...rest }) => rest);
    expect(JSON.stringify(withoutCause)).not.toContain('SECRET-UPSTREAM-TEXT');
    expect(gateway.logs.records('upstream_attempt_failed')).toContainEqual(
      expect.objectContaining({
        provider: 'provider_a',
        error_code: 'upstream',
        upstream_code: 'server_error',
        upstream_message: 'SECRET-UPSTREAM-TEXT',
      }),
    );
    expect(text).not.toContain('"stack"');
  });

  const BEARER = { authorization: 'Bearer log-secret-4411-long' };
  const JSON_POST = { method: 'POST', headers: { ...BEARER, 'content-type': 'application/json' } };
  it.each([
    ['GET', '/health', {}, 200],
    ['GET', '/health/ready', {}, 200],
    ['GET', '/health/live', {}, 200],
    ['GET', '/v1/models', { headers: BEARER }, 200],
    [
      'POST',
      '/v1/chat/completions',
      { ...JSON_POST, body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }) },
      404,
    ],
    ['POST', STRUCTURED_PATH, { ...JSON_POST, body: JSON.stringify(structuredBody({ model: 'no-such-model' })) }, 404],
    ['GET', '/metrics', { headers: BEARER }, 200],
    ['GET', '/no/such/route', {}, 404],
  ] as const)(
    'logs %s %s with the path the client sent, query left out (docs/endpoints.md)',
    async (method, route, init, status) => {
      const records = await recordsOf(() => rawRequest(`${gateway.url}${route}?q=1`, { method, ...init }));
      const access = records.filter((record) => String(record.msg).startsWith('request '));
      expect(access).toEqual([
        expect.objectContaining({ req: expect.objectContaining({ method, path: route }), res: { statusCode: status } }),
      ]);
    },
  );

  it('logs health probes only at debug level (load balancers poll them every few seconds)', async () => {
    const records = await recordsOf(async () => {
      await rawRequest(`${gateway.url}/health`);
      await rawRequest(`${gateway.url}/health/ready`);
    });
    expect(records.map((record) => [record.level, (record.req as { path: string }).path])).toEqual([
      [20, '/health'],
      [20, '/health/ready'],
    ]);
  });
});

describe('upstream error messages that quote the request', () => {
  // Each family's fake answers with an error quoting the prompt back, as the real upstreams do
  // (Google's `Invalid value at '…' (TYPE_STRING), "…"`, OpenAI's `Invalid '…': …`, the
  // Claude Code CLI's `API Error: 400 …`): the quote must stay out of every line, trace included.
  const PROMPT = 'QUOTED-PROMPT-TEXT';
  let gateway: TestGateway;
  let providerCDir: string;
  afterAll(async () => {
    await gateway?.close();
    fs.rmSync(providerCDir, { recursive: true, force: true });
  });
  const providerA = useFakeProviderA({ homePrefix: 'logging-quoted-a-' });
  const providerB = useFakeProviderB({ homePrefix: 'logging-quoted-b-', home: 'suite' });

  beforeAll(async () => {
    providerCDir = fs.mkdtempSync(path.join(os.tmpdir(), 'logging-quoted-c-'));
    gateway = await startGateway({
      GATEWAY_BEARER_SECRET: 'log-secret-4411-long',
      LOG_LEVEL: 'trace',
      ...providerASettings(providerA.fake(), providerA.home()),
      ...providerBSettings(providerB.fake(), providerB.home(), { project: 'logging-project' }),
      CLAUDE_CODE_OAUTH_TOKEN: 'logging-oauth-token',
      ...providerCSettings(providerCDir, [
        {
          stdout: [
            { line: initLine() },
            {
              line: resultLine({ isError: true, text: `API Error: 400 messages.0: invalid value '${PROMPT} please'` }),
            },
          ],
          exitCode: 1,
        },
        { stdout: [{ line: initLine() }], stderr: `Error: could not send "${PROMPT} please"\n`, exitCode: 1 },
      ]),
    });
  });

  const chat = (model: string) =>
    rawRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer log-secret-4411-long', 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: `${PROMPT} please` }] }),
    });

  it("keeps the upstream's words and replaces what it quoted, on every upstream_* line of every family", async () => {
    providerA.fake().enqueue(
      { frames: [created(), errorEvent({ code: 'server_error', message: `Could not process '${PROMPT} please'` })] },
      {
        reject: {
          status: 400,
          body: { error: { message: `Invalid 'input[0].content': '${PROMPT} please'`, code: 'invalid_value' } },
        },
        frames: [],
      },
    );
    providerB.fake().enqueue(
      'streamGenerateContent',
      {
        status: 500,
        body: { error: { code: 500, message: `Internal error on "${PROMPT} please"`, status: 'INTERNAL' } },
      },
      {
        status: 400,
        body: {
          error: {
            code: 400,
            message: `Invalid value at 'contents[0].parts[0].text' (TYPE_STRING), "${PROMPT} please"`,
            status: 'INVALID_ARGUMENT',
          },
        },
      },
    );
    for (const model of ['gpt-5.6-sol', 'gemini-2.5-pro', 'sonnet', 'sonnet']) await chat(model);

    // Positive control: every family logged its failures, with the upstream's own words.
    const logged = (provider: string) =>
      gateway.logs
        .records('upstream_attempt_failed')
        .filter((record) => record.provider === provider)
        .map((record) => record.upstream_message);
    expect(logged('provider_a')).toEqual(['Could not process [quoted]', 'Invalid [quoted]: [quoted]']);
    expect(logged('provider_b')).toEqual([
      'Internal error on [quoted]',
      'Invalid value at [quoted] (TYPE_STRING), [quoted]',
    ]);
    expect(new Set(logged('provider_c'))).toEqual(
      new Set(['API Error: 400 messages.0: invalid value [quoted]', 'Error: could not send [quoted]']),
    );
    expect(gateway.logs.records('upstream_retry').map((record) => record.upstream_message)).toEqual(
      expect.arrayContaining(['Could not process [quoted]', 'Internal error on [quoted]']),
    );
    expect(gateway.logs.records('upstream_turn_failed').map((record) => record.upstream_message)).toContain(
      'Error: could not send [quoted]',
    );
    expect(gateway.logs.text).not.toContain(PROMPT);
  });
});
