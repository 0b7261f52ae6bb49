import { created, errorEvent, textDelta, usageLimitEvent } from './support/provider-a-fixtures';
import type { StructuredHarness } from './support/structured-client';
import { metricValue } from './support/prometheus-text';
import { eventually } from './support/poll';
import {
  extractionReply,
  postStructured,
  SCHEMA,
  startStructured,
  STRUCTURED_PATH,
  structuredBody,
} from './support/structured-client';
import { postChatBody } from './support/chat-sse';
import { postHalfABody } from './support/raw-http';
import { FIRING_BOUND_MS } from './support/timer-bounds';

/**
 * Deadlines, the structured queue, upstream failures and output validation over HTTP
 * (docs/design/behaviours.md §4.3, §6.7–§6.9, §10 items 52–54), against the provider_a fake.
 */

jest.setTimeout(20_000);

/** Accepted at once, then silent until the client leaves. */
const HANGING = { frames: [created('resp_hang')], holdOpen: true };

describe('structured deadline, upstream failures and output', () => {
  let harness: StructuredHarness;

  beforeAll(async () => {
    harness = await startStructured({ STRUCTURED_MAX_DEADLINE: '2s' });
  });
  afterAll(async () => harness?.close());
  beforeEach(() => harness.fake.reset());

  it('caps deadline_ms at STRUCTURED_MAX_DEADLINE and ends with 504 timeout (item 52)', async () => {
    harness.fake.enqueue(HANGING);
    const startedAt = Date.now();
    const answer = await postStructured(
      harness.gateway,
      structuredBody({ request_id: 'r-cap', deadline_ms: 600_000, idempotency_key: 'k-cap' }),
    );
    const elapsed = Date.now() - startedAt;
    expect(answer.status).toBe(504);
    expect(answer.body).toEqual({
      error: { code: 'timeout', message: 'deadline elapsed before the model responded' },
      request_id: 'r-cap',
      contract_version: '2.0.0',
    });
    // The 2 s cap, not the 600 s asked for (the bound is a tenth of those 600 s).
    expect(elapsed).toBeGreaterThanOrEqual(1900);
    expect(elapsed).toBeLessThan(60_000);
    await harness.fake.requests()[0].closedByClient;
    // Nothing was stored: the retry calls the upstream again.
    harness.fake.enqueue(extractionReply());
    const retry = await postStructured(harness.gateway, structuredBody({ idempotency_key: 'k-cap' }));
    expect([retry.status, retry.body.idempotent_replay]).toEqual([200, false]);
  });

  it('ends a 40 ms deadline with 504 and closes the upstream connection (item 53)', async () => {
    // Its own gateway with a one-minute cap: "ended by the 40 ms deadline, not by the cap" is then
    // a difference of a minute, which no busy machine blurs (the bound is half of it).
    const own = await startStructured({ STRUCTURED_MAX_DEADLINE: '60s' });
    try {
      own.fake.enqueue(HANGING);
      const startedAt = Date.now();
      const answer = await postStructured(own.gateway, structuredBody({ deadline_ms: 40 }));
      expect([answer.status, answer.error?.code]).toEqual([504, 'timeout']);
      expect(Date.now() - startedAt).toBeLessThan(30_000);
      const [upstream] = await own.fake.waitForRequests(1, 1000).catch(() => [undefined]);
      // The deadline may end before the connection was even opened; if it was, it is closed.
      if (upstream) await upstream.closedByClient;
      expect(
        await metricValue(own.gateway, 'gateway_chat_api_structured_failures_total', { code: 'timeout' }),
      ).toBeGreaterThanOrEqual(1);
    } finally {
      await own.close();
    }
  });

  it('closes the upstream connection of a slower upstream when the deadline ends mid-call (item 53)', async () => {
    harness.fake.enqueue({
      frames: [created('resp_slow'), { ...textDelta('{"headline":'), delayMs: 10 }],
      holdOpen: true,
    });
    const answer = await postStructured(harness.gateway, structuredBody({ deadline_ms: FIRING_BOUND_MS }));
    expect([answer.status, answer.error?.code]).toEqual([504, 'timeout']);
    await harness.fake.requests()[0].closedByClient;
  });

  it('counts deadline_ms from arrival: a deadline that passed while the body arrived ends at admission, with no upstream call', async () => {
    harness.fake.enqueue(HANGING);
    const deadlineMs = 1000;
    const half = await postHalfABody(
      Number(new URL(harness.gateway.url).port),
      STRUCTURED_PATH,
      JSON.stringify(structuredBody({ request_id: 'r-slow-body', deadline_ms: deadlineMs })),
    );
    // The gateway invited the body, so the request had arrived: once deadline_ms more has passed
    // (a timer never fires early; the margin covers clock rounding), its deadline is over however
    // slowly this machine runs, and only then does the rest of the body go out.
    await new Promise((resolve) => setTimeout(resolve, deadlineMs + 50));
    half.rest();
    const answer = await half.answer;
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'timeout', message: 'deadline elapsed while waiting for admission' },
      request_id: 'r-slow-body',
      contract_version: '2.0.0',
    });
    // Refused before its queue slot: no upstream call was paid for.
    expect(harness.fake.requests()).toHaveLength(0);
    // latency_ms counts from arrival too: the deadline had passed by then (a bound by construction).
    const logs = harness.gateway.logs;
    const index = await logs.waitForLine(
      (line) => line.includes('"event":"structured_failure"') && line.includes('"request_id":"r-slow-body"'),
    );
    const audit = JSON.parse(logs.lines[index]) as Record<string, unknown>;
    expect(audit).toMatchObject({ code: 'timeout', status: 504 });
    expect(audit.latency_ms).toBeGreaterThanOrEqual(deadlineMs);
  });

  it.each([
    ['prose', 'The quarter went well.', 'unparsable'],
    ['a JSON array', '[{"headline":"h","growth_percent":1}]', 'unparsable'],
    ['a wrong property type', '{"headline":"h","growth_percent":"12"}', 'invalid'],
    ['an extra property', '{"headline":"h","growth_percent":12,"secret":"SECRET-OUT"}', 'invalid'],
    ['a missing property', '{"headline":"h"}', 'invalid'],
    // JSON.parse reads 1e400 as Infinity, which JSON.stringify would write as null.
    ['a number too large for a double', '{"headline":"h","growth_percent":1e400}', 'invalid'],
  ])('answers 422 output_validation_failed for %s (item 54)', async (_name, text, result) => {
    const before = await metricValue(harness.gateway, 'gateway_chat_api_structured_validation_total', { result });
    harness.fake.enqueue(extractionReply(text));
    const answer = await postStructured(
      harness.gateway,
      structuredBody({ idempotency_key: `k-422-${result}-${text.length}` }),
    );
    expect([answer.status, answer.error?.code]).toEqual([422, 'output_validation_failed']);
    expect(answer.error?.message).toMatch(/retry with a fresh idempotency_key$/);
    expect(Array.isArray(answer.error?.details)).toBe(true);
    expect(JSON.stringify(answer.body)).not.toMatch(/SECRET-OUT|"12"|The quarter/);
    expect(await metricValue(harness.gateway, 'gateway_chat_api_structured_validation_total', { result })).toBe(
      before + 1,
    );
  });

  it('reports non-conforming output by path and keyword', async () => {
    harness.fake.enqueue(extractionReply('{"headline":7,"growth_percent":12,"extra":true}'));
    const answer = await postStructured(harness.gateway, structuredBody());
    expect(answer.error?.details).toEqual([
      '$: additional properties are not allowed',
      '/headline: must be of type "string"',
    ]);
  });

  it('accepts output wrapped in a json code fence (item 54)', async () => {
    harness.fake.enqueue(extractionReply('```json\n{"headline":"fenced","growth_percent":3}\n```'));
    const answer = await postStructured(harness.gateway, structuredBody());
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ headline: 'fenced', growth_percent: 3 });
  });

  it('maps an upstream login failure to auth_error 401', async () => {
    const reject = { reject: { status: 401, body: { error: { message: 'token expired SECRET-UP' } } }, frames: [] };
    harness.fake.enqueue(reject, reject);
    const answer = await postStructured(harness.gateway, structuredBody({ request_id: 'r-up-auth' }));
    expect(answer.status).toBe(401);
    // The contract's auth_error 401, with the message naming the family's CLI and the login command
    // of this login (not in the Codex CLI's default home: the spec's own CODEX_HOME).
    expect(answer.body).toEqual({
      error: { code: 'auth_error', message: expect.stringMatching(/run `CODEX_HOME=\S+ codex login`/) },
      request_id: 'r-up-auth',
      contract_version: '2.0.0',
    });
    // The request's one warning is its audit line: what the upstream said and the login's own command.
    await harness.gateway.logs.failureLine(answer.headers.get('x-request-id')!, 40, {
      event: 'structured_failure',
      code: 'auth_error',
      error_code: 'auth',
      upstream_status: 401,
      fix: expect.stringMatching(/^run `CODEX_HOME=\S+ codex login`/),
    });
    // The upstream's words may quote the schema or echo the input: no structured line carries them.
    expect(harness.gateway.logs.lines.join('\n')).not.toContain('SECRET-UP');
  });

  it('maps an upstream usage limit to rate_limited 429 with the reset hint', async () => {
    harness.fake.enqueue({ frames: [usageLimitEvent(30)] });
    const answer = await postStructured(harness.gateway, structuredBody());
    expect([answer.status, answer.error?.code]).toEqual([429, 'rate_limited']);
    expect(answer.headers.get('retry-after')).toBe('30');
    expect(answer.error?.message).toBe(
      'provider_a: this Codex CLI login reached its usage limit; retry in 30 s, or add another login',
    );
  });

  it('answers an overflowing number as 422 and stores nothing: data always satisfies the schema', async () => {
    harness.fake.enqueue(extractionReply('{"headline":"h","growth_percent":1e400}'), extractionReply());
    const body = structuredBody({ idempotency_key: 'k-infinity' });
    const answer = await postStructured(harness.gateway, body);
    expect([answer.status, answer.error?.details]).toEqual([422, ['/growth_percent: must be a finite number']]);
    expect(answer.headers.get('x-should-retry')).toBe('false');
    const retried = await postStructured(harness.gateway, body);
    expect([retried.status, retried.body.idempotent_replay, retried.body.data]).toEqual([
      200,
      false,
      { headline: 'Q3 revenue up 12%', growth_percent: 12 },
    ]);
    expect(harness.fake.requests()).toHaveLength(2);
    // Every node has a type here, so no answer field is left unchecked: an untyped one is refused first.
    const untyped = { ...SCHEMA, properties: { ...SCHEMA.properties, growth_percent: {} } };
    const refused = await postStructured(harness.gateway, structuredBody({ schema: untyped }));
    expect([refused.status, refused.error?.details]).toEqual([400, ['$.growth_percent: "type" is required']]);
    expect(harness.fake.requests()).toHaveLength(2);
  });

  it('maps other upstream failures to upstream_error 502 without upstream text', async () => {
    const failed = {
      frames: [created(), errorEvent({ status: 500, code: 'server_error', message: 'SECRET-UP broke' })],
    };
    harness.fake.enqueue(failed, failed, failed);
    const answer = await postStructured(harness.gateway, structuredBody());
    expect([answer.status, answer.error]).toEqual([502, { code: 'upstream_error', message: 'upstream error' }]);
    expect(answer.headers.get('x-should-retry')).toBeNull();
  });

  describe('an upstream refusal of the request is told as such, and not retried by SDKs', () => {
    const SECRET_INPUT = 'SECRET-INPUT-4711 revenue grew';
    /** The upstream_* lines and the answer of one request. */
    const run = async (overrides: Record<string, unknown>) => {
      const before = harness.gateway.logs.lines.length;
      const answer = await postStructured(harness.gateway, structuredBody({ input: SECRET_INPUT, ...overrides }));
      const lines = harness.gateway.logs.lines.slice(before);
      const upstream = lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((record) => String(record.event).startsWith('upstream_'));
      return { answer, lines, upstream };
    };

    it('a schema the strict mode refuses is invalid_schema with its sanitized reason, sent once, x-should-retry false', async () => {
      // The walker takes an enum value of another type than its node; the backend's strict mode does not.
      const schema = { ...SCHEMA, properties: { ...SCHEMA.properties, headline: { type: 'string', enum: [7] } } };
      // What the fake would answer, had the backend taken the schema.
      harness.fake.enqueue(extractionReply());
      const { answer, lines, upstream } = await run({ request_id: 'r-refused', schema, schema_name: 'quarter' });
      expect(answer.status).toBe(400);
      expect(answer.headers.get('x-should-retry')).toBe('false');
      expect(answer.body).toEqual({
        error: {
          code: 'invalid_schema',
          message: "the upstream's strict mode refused the schema; simplify it where details say",
          details: [
            'upstream: Invalid schema for response_format [quoted]: In context=([quoted], [quoted]), enum value 7 does not validate against {[quoted]: [quoted]}.',
          ],
        },
        request_id: 'r-refused',
        contract_version: '2.0.0',
      });
      expect(harness.fake.requests()).toHaveLength(1);
      // The status and the upstream's code are logged; its words, which quote the schema, are not.
      expect(upstream.find((record) => record.event === 'upstream_turn_failed')).toMatchObject({
        error_code: 'bad_request',
        upstream_status: 400,
        upstream_code: 'invalid_json_schema',
      });
      for (const record of upstream) expect(record).not.toHaveProperty('upstream_message');
      expect(lines.join('\n')).not.toMatch(/SECRET-INPUT|validate against/);
    });

    it('an input over the context window is upstream_error with x-should-retry false, and so is any other refusal, naming its code, never its words', async () => {
      harness.fake.enqueue({
        frames: [
          created(),
          errorEvent({ status: 400, code: 'context_length_exceeded', message: 'SECRET-UP too long' }),
        ],
      });
      const context = await run({});
      expect([context.answer.status, context.answer.error]).toEqual([
        502,
        {
          code: 'upstream_error',
          message: "input exceeds the model's context window; shorten input, or choose a model with a larger one",
        },
      ]);
      expect(context.answer.headers.get('x-should-retry')).toBe('false');
      // An upstream that echoes the input unquoted: its words reach neither the answer nor the log.
      harness.fake.enqueue({
        reject: {
          status: 400,
          body: {
            error: { type: 'invalid_request_error', code: 'invalid_value', message: `Invalid input ${SECRET_INPUT}` },
          },
        },
        frames: [],
      });
      const other = await run({});
      expect([other.answer.status, other.answer.error]).toEqual([
        502,
        {
          code: 'upstream_error',
          message:
            'the upstream refused the request (invalid_value); the same request fails the same way: change the input or the schema',
        },
      ]);
      expect(other.answer.headers.get('x-should-retry')).toBe('false');
      expect(harness.fake.requests()).toHaveLength(2);
      for (const record of [...context.upstream, ...other.upstream])
        expect(record).not.toHaveProperty('upstream_message');
      expect(other.upstream.find((record) => record.event === 'upstream_turn_failed')).toMatchObject({
        upstream_status: 400,
        upstream_code: 'invalid_value',
      });
      expect([...context.lines, ...other.lines].join('\n')).not.toMatch(/SECRET/);
    });
  });

  it('sends the request effort, verbosity, tier and schema name upstream', async () => {
    harness.fake.enqueue(extractionReply());
    const answer = await postStructured(
      harness.gateway,
      structuredBody({
        model: 'gpt-6-luna-fast',
        reasoning_effort: 'xhigh',
        operation: 'weird op/name',
        schema_name: undefined,
      }),
    );
    expect(answer.status).toBe(200);
    const body = harness.fake.lastBody()!;
    expect(body).toMatchObject({ model: 'gpt-6-luna', service_tier: 'priority', reasoning: { effort: 'xhigh' } });
    expect((body.text as { format: { name: string } }).format.name).toBe('weird_op_name');
    expect(body.prompt_cache_key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('passes a requested verbosity through to the upstream', async () => {
    harness.fake.enqueue(extractionReply());
    expect((await postStructured(harness.gateway, structuredBody({ verbosity: 'high' }))).status).toBe(200);
    expect((harness.fake.lastBody()!.text as { verbosity: string }).verbosity).toBe('high');
  });

  it('cancels the upstream call when a key-less client disconnects', async () => {
    harness.fake.enqueue(HANGING);
    const controller = new AbortController();
    const pending = postStructured(harness.gateway, structuredBody({ request_id: 'r-leave' }), {
      signal: controller.signal,
    }).catch((error: unknown) => error);
    const [upstream] = await harness.fake.waitForRequests(1);
    controller.abort();
    await pending;
    await upstream.closedByClient;
  });
});

describe('structured queue (docs/design/behaviours.md §4.3)', () => {
  it('answers rate_limited 429 when the structured queue is full, and timeout 504 when the deadline ends in the queue', async () => {
    const harness = await startStructured({
      STRUCTURED_MAX_ACTIVE: '1',
      STRUCTURED_QUEUE_LIMIT: '1',
      STRUCTURED_QUEUE_TIMEOUT: '5s',
    });
    try {
      // The holder keeps the only slot until the test releases its reply's last frame.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const [first, delta, done] = extractionReply().frames;
      harness.fake.enqueue({ frames: [first, delta, { ...done, after: released }] });
      const holder = postStructured(harness.gateway, structuredBody({ request_id: 'holder' }));
      await harness.fake.waitForRequests(1);
      const fullBefore = await metricValue(harness.gateway, 'gateway_chat_api_queue_wait_seconds_count', {
        provider: 'structured',
        result: 'full',
      });
      // A waiter that waits until its client leaves: the next request is refused while it waits,
      // however slow the machine.
      const patient = new AbortController();
      const waiter = postStructured(harness.gateway, structuredBody({ request_id: 'waiter' }), {
        signal: patient.signal,
      }).catch((error: unknown) => error);
      await eventually(
        () => harness.gateway.logs.records('queue_wait').some((record) => record.request_id === 'waiter'),
        10_000,
        'the waiter queued',
      );
      const rejected = await postStructured(harness.gateway, structuredBody({ request_id: 'rejected' }));
      expect([rejected.status, rejected.error?.code, rejected.headers.get('retry-after')]).toEqual([
        429,
        'rate_limited',
        '5',
      ]);
      expect(rejected.error?.message).toBe(
        'the waiting list is full (STRUCTURED_QUEUE_LIMIT=1): all structured slots are busy ' +
          '(STRUCTURED_MAX_ACTIVE=1); retry in 5 s, or raise STRUCTURED_MAX_ACTIVE or STRUCTURED_QUEUE_LIMIT',
      );
      expect(
        await metricValue(harness.gateway, 'gateway_chat_api_queue_wait_seconds_count', {
          provider: 'structured',
          result: 'full',
        }),
      ).toBe(fullBefore + 1);
      // Its client leaves; a waiter whose deadline ends in the queue (the holder still holds) gets 504.
      patient.abort();
      await waiter;
      await eventually(
        () => harness.gateway.logs.records('queue_canceled').some((record) => record.request_id === 'waiter'),
        10_000,
        'the waiter left the queue',
      );
      const waited = await postStructured(harness.gateway, structuredBody({ request_id: 'short', deadline_ms: 200 }));
      expect([waited.status, waited.error?.message]).toEqual([504, 'deadline elapsed while waiting for admission']);
      release();
      expect((await holder).status).toBe(200);
      expect(harness.fake.requests()).toHaveLength(1);
      const logged = harness.gateway.logs.records('queue_full').at(-1);
      expect(logged).toMatchObject({
        provider: 'structured',
        key_mode: 'caller',
        request_id: 'rejected',
        blocked_by: 'queue_limit',
        setting: 'STRUCTURED_QUEUE_LIMIT',
      });
      expect(logged?.key_hash).toMatch(/^[0-9a-f]{16}$/);
    } finally {
      await harness.close();
    }
  });

  it('is not delayed by a saturated chat queue (item 29)', async () => {
    const harness = await startStructured({ PRIMARY_AGENT_MAX_ACTIVE: '1', PRIMARY_AGENT_QUEUE_LIMIT: '0' });
    try {
      harness.fake.enqueue(HANGING, extractionReply());
      const chat = new AbortController();
      const toolTurn = {
        model: 'gpt-6.1-terra',
        stream: true,
        tools: [
          {
            type: 'function',
            function: { name: 'read_file', description: 'read', parameters: { type: 'object', properties: {} } },
          },
        ],
        messages: [{ role: 'user', content: 'list files' }],
      };
      const chatPost = (signal?: AbortSignal) => postChatBody(harness.gateway, toolTurn, { signal });
      const held = await chatPost(chat.signal);
      expect(held.status).toBe(200);
      expect((await chatPost()).status).toBe(429);
      const answer = await postStructured(harness.gateway, structuredBody());
      expect(answer.status).toBe(200);
      chat.abort();
    } finally {
      await harness.close();
    }
  });

  it('answers rate_limited 429 after STRUCTURED_QUEUE_TIMEOUT, and keys the queue by caller', async () => {
    const harness = await startStructured({
      STRUCTURED_MAX_ACTIVE: '2',
      STRUCTURED_MAX_ACTIVE_PER_KEY: '1',
      STRUCTURED_QUEUE_TIMEOUT: '100ms',
    });
    try {
      harness.fake.enqueue(extractionReply(undefined, { delayMs: 700 }), extractionReply());
      const holder = postStructured(harness.gateway, structuredBody(), {
        headers: { authorization: 'Bearer caller-a' },
      });
      await harness.fake.waitForRequests(1);
      // Had it waited for caller-a's slot instead of timing out in the queue, it would be a 200.
      const sameCaller = await postStructured(harness.gateway, structuredBody(), {
        headers: { authorization: 'Bearer caller-a' },
      });
      expect([sameCaller.status, sameCaller.error?.code]).toEqual([429, 'rate_limited']);
      expect(sameCaller.error?.message).toBe(
        'waited 100ms (STRUCTURED_QUEUE_TIMEOUT) for a slot: another request of the same caller is still running ' +
          '(STRUCTURED_MAX_ACTIVE_PER_KEY=1); retry once it has ended, or raise STRUCTURED_QUEUE_TIMEOUT to wait ' +
          'for it, or STRUCTURED_MAX_ACTIVE_PER_KEY to run them side by side',
      );
      expect(harness.gateway.logs.records('queue_timeout').at(-1)).toMatchObject({
        provider: 'structured',
        blocked_by: 'key',
        setting: 'STRUCTURED_MAX_ACTIVE_PER_KEY',
      });
      const otherCaller = await postStructured(harness.gateway, structuredBody(), {
        headers: { authorization: 'Bearer caller-b' },
      });
      expect(otherCaller.status).toBe(200);
      expect((await holder).status).toBe(200);
    } finally {
      await harness.close();
    }
  });
});
