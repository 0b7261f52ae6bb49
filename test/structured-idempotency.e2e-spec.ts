import OpenAI from 'openai';
import { created, errorEvent } from './support/provider-a-fixtures';
import type { StructuredAnswer, StructuredHarness } from './support/structured-client';
import { metricValue } from './support/prometheus-text';
import { eventually } from './support/poll';
import {
  advanceIdempotencyClock,
  extractionReply,
  postStructured,
  SCHEMA,
  settlesWithin,
  startStructured,
  structuredBody,
} from './support/structured-client';

/**
 * The idempotency binding over HTTP (docs/design/behaviours.md §6.6, §10 items 13, 43–51 and 57),
 * against the provider_a fake.
 */

jest.setTimeout(20_000);

const IDEMPOTENCY = 'gateway_chat_api_structured_idempotency_total';
const keyed = (key: string, overrides: Record<string, unknown> = {}) =>
  structuredBody({ idempotency_key: key, ...overrides });

async function idempotencyCounts(harness: StructuredHarness): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const result of ['miss', 'local_hit', 'conflict', 'capacity'])
    counts[result] = await metricValue(harness.gateway, IDEMPOTENCY, { result });
  return counts;
}

async function deltas(harness: StructuredHarness, before: Record<string, number>): Promise<Record<string, number>> {
  const after = await idempotencyCounts(harness);
  return Object.fromEntries(Object.entries(after).map(([result, value]) => [result, value - before[result]]));
}

describe('structured idempotency', () => {
  let harness: StructuredHarness;

  beforeAll(async () => {
    harness = await startStructured({ GATEWAY_CALLER_HEADER: 'x-tenant' });
  });
  afterAll(async () => harness?.close());
  beforeEach(() => harness.fake.reset());

  it('replays an identical retry within the TTL with one upstream call (items 43, 57)', async () => {
    const before = await idempotencyCounts(harness);
    harness.fake.enqueue(extractionReply(undefined, { id: 'resp_replay' }));
    const first = await postStructured(harness.gateway, keyed('k-replay', { request_id: 'first' }));
    const second = await postStructured(
      harness.gateway,
      keyed('k-replay', { request_id: 'second', deadline_ms: 9000, schema_name: 'other_name' }),
    );
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.body.idempotent_replay).toBe(false);
    expect(second.body.idempotent_replay).toBe(true);
    expect(second.body.request_id).toBe('second');
    expect(second.body.upstream_response_id).toBe('resp_replay');
    const strip = ({ request_id: _r, latency_ms: _l, idempotent_replay: _i, ...rest }: Record<string, unknown>) => rest;
    expect(strip(second.body)).toEqual(strip(first.body));
    expect(harness.fake.requests()).toHaveLength(1);
    expect(await deltas(harness, before)).toEqual({ miss: 1, local_hit: 1, conflict: 0, capacity: 0 });
    expect(harness.gateway.logs.records('structured_replay').at(-1)).toMatchObject({
      request_id: 'second',
      status: 200,
    });
  });

  it('answers 409 for the same key with another model, effort, verbosity or schema; the original still replays (items 44, 57)', async () => {
    harness.fake.enqueue(extractionReply());
    expect((await postStructured(harness.gateway, keyed('k-conflict'))).status).toBe(200);
    const before = await idempotencyCounts(harness);
    const variants = [
      { model: 'gpt-6-luna' },
      { model: 'gpt-6.1-terra-low' },
      { reasoning_effort: 'high' },
      { verbosity: 'high' },
      {
        schema: {
          ...SCHEMA,
          properties: { ...SCHEMA.properties, headline: { type: 'string', description: 'changed' } },
        },
      },
    ];
    for (const variant of variants) {
      const answer = await postStructured(
        harness.gateway,
        keyed('k-conflict', { request_id: 'r-conflict', ...variant }),
      );
      expect(answer.status).toBe(409);
      // The openai SDK retries a 409 unless told not to.
      expect(answer.headers.get('x-should-retry')).toBe('false');
      expect(answer.body).toEqual({
        error: {
          code: 'idempotency_conflict',
          message: 'idempotency_key was already used with different inference parameters',
        },
        request_id: 'r-conflict',
        contract_version: '2.0.0',
      });
    }
    const original = await postStructured(harness.gateway, keyed('k-conflict'));
    expect([original.status, original.body.idempotent_replay]).toEqual([200, true]);
    expect(harness.fake.requests()).toHaveLength(1);
    expect(await deltas(harness, before)).toEqual({ miss: 0, local_hit: 1, conflict: 5, capacity: 0 });
    expect(harness.gateway.logs.records('structured_conflict').at(-1)).toMatchObject({
      request_id: 'r-conflict',
      code: 'idempotency_conflict',
      status: 409,
    });
  });

  it('is one conflict for one call of the openai SDK, which would otherwise send it three times', async () => {
    harness.fake.enqueue(extractionReply());
    const client = new OpenAI({ baseURL: `${harness.gateway.url}/v1`, apiKey: 'sdk-caller', maxRetries: 2 });
    const post = (body: Record<string, unknown>) => client.post('/structured/inference', { body });
    await post(keyed('k-sdk'));
    const before = harness.gateway.logs.records('structured_conflict').length;
    const refused = await post(keyed('k-sdk', { reasoning_effort: 'xhigh' })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.ConflictError);
    expect(harness.gateway.logs.records('structured_conflict').length - before).toBe(1);
    expect(harness.fake.requests()).toHaveLength(1);
  });

  it('answers 409 at once for another fingerprint while the binding is in flight', async () => {
    // "At once" means: while the leader is still in flight (its upstream answers 3 s later), not
    // after it; an order of events rather than a duration, so a busy machine cannot blur it.
    harness.fake.enqueue(extractionReply(undefined, { delayMs: 3000 }));
    const leader = postStructured(harness.gateway, keyed('k-inflight-conflict'));
    let leaderSettled = false;
    void leader.then(() => (leaderSettled = true));
    await harness.fake.waitForRequests(1);
    const conflict = await postStructured(harness.gateway, keyed('k-inflight-conflict', { reasoning_effort: 'xhigh' }));
    expect([conflict.status, conflict.error?.code]).toEqual([409, 'idempotency_conflict']);
    expect(leaderSettled).toBe(false);
    expect([(await leader).status, harness.fake.requests().length]).toEqual([200, 1]);
  });

  it('treats a re-indented schema with reordered keys as a replay (item 45)', async () => {
    harness.fake.enqueue(extractionReply());
    expect((await postStructured(harness.gateway, keyed('k-canonical'))).status).toBe(200);
    const reordered = `{"schema":{
        "properties": { "growth_percent": { "type": "integer" }, "headline": { "type": "string" } },
        "required": ["headline", "growth_percent"],
        "additionalProperties": false,
        "type": "object"
      },
      "input": "Revenue grew 12% in the third quarter.", "model": "gpt-6.1-terra", "idempotency_key": "k-canonical", "request_id": "again"}`;
    const replay = await postStructured(harness.gateway, reordered);
    expect([replay.status, replay.body.idempotent_replay]).toEqual([200, true]);
    expect(harness.fake.requests()).toHaveLength(1);
  });

  it('keys any JSON text: a lone surrogate in the key and the schema replays, another one re-runs', async () => {
    // JSON allows an unpaired UTF-16 escape; the identity must not refuse what the admission took.
    const schema = (unit: string) => ({ ...SCHEMA, description: `quarter ${unit} summary` });
    harness.fake.enqueue(extractionReply(), extractionReply());
    const first = await postStructured(harness.gateway, keyed('k-\ud800', { schema: schema('\udc00') }));
    expect(first.status).toBe(200);
    const replay = await postStructured(
      harness.gateway,
      keyed('k-\ud800', { request_id: 'again', schema: schema('\udc00') }),
    );
    expect([replay.status, replay.body.idempotent_replay]).toEqual([200, true]);
    const other = await postStructured(
      harness.gateway,
      keyed('k-\ud801', { request_id: 'third', schema: schema('\udc00') }),
    );
    expect([other.status, other.body.idempotent_replay]).toEqual([200, false]);
    expect(harness.fake.requests()).toHaveLength(2);
  });

  it('binds each input to its own checksum: inputs that differ only in an unpaired surrogate re-run, never replay', async () => {
    harness.fake.enqueue(extractionReply(), extractionReply(), extractionReply());
    const answers = [];
    for (const [index, input] of ['Revenue \ud800 grew', 'Revenue \udfff grew', 'Revenue \ufffd grew'].entries())
      answers.push(await postStructured(harness.gateway, keyed('k-surrogate', { request_id: `s-${index}`, input })));
    expect(answers.map((answer) => [answer.status, answer.body.idempotent_replay])).toEqual([
      [200, false],
      [200, false],
      [200, false],
    ]);
    expect(harness.fake.requests()).toHaveLength(3);
  });

  it('re-runs for another caller, operation, input or schema_version (items 13, 46)', async () => {
    harness.fake.enqueue(...Array.from({ length: 6 }, () => extractionReply()));
    const base = { request_id: 'r-46' };
    const answers = [
      await postStructured(harness.gateway, keyed('k-46', base), {
        headers: { 'x-tenant': 'alpha', authorization: 'Bearer shared' },
      }),
      await postStructured(harness.gateway, keyed('k-46', base), {
        headers: { 'x-tenant': 'beta', authorization: 'Bearer shared' },
      }),
      await postStructured(harness.gateway, keyed('k-46', { ...base, operation: 'other' }), {
        headers: { 'x-tenant': 'alpha' },
      }),
      await postStructured(
        harness.gateway,
        keyed('k-46', { ...base, input: 'Revenue grew 13% in the third quarter.' }),
        { headers: { 'x-tenant': 'alpha' } },
      ),
      await postStructured(harness.gateway, keyed('k-46', { ...base, schema_version: 'v2' }), {
        headers: { 'x-tenant': 'alpha' },
      }),
    ];
    expect(answers.map((answer) => [answer.status, answer.body.idempotent_replay])).toEqual(
      Array.from({ length: 5 }, () => [200, false]),
    );
    expect(harness.fake.requests()).toHaveLength(5);
    const again = await postStructured(harness.gateway, keyed('k-46', base), {
      headers: { 'x-tenant': 'beta', authorization: 'Bearer other' },
    });
    expect([again.status, again.body.idempotent_replay]).toEqual([200, true]);
    expect(harness.gateway.logs.text).not.toContain('alpha');
  });

  it('joins concurrent duplicates to one upstream call: 8 and then 50 (item 47)', async () => {
    for (const count of [8, 50]) {
      harness.fake.reset();
      harness.fake.enqueue(extractionReply(undefined, { delayMs: 300, id: `resp_${count}` }));
      const before = await idempotencyCounts(harness);
      const answers = await Promise.all(
        Array.from({ length: count }, (_, index) =>
          postStructured(harness.gateway, keyed(`k-concurrent-${count}`, { request_id: `c-${index}` })),
        ),
      );
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
      expect(answers.filter((answer) => answer.body.idempotent_replay === false)).toHaveLength(1);
      expect(answers.filter((answer) => answer.body.idempotent_replay === true)).toHaveLength(count - 1);
      expect(answers.map((answer) => answer.body.request_id)).toEqual(
        Array.from({ length: count }, (_, index) => `c-${index}`),
      );
      expect(new Set(answers.map((answer) => answer.body.upstream_response_id))).toEqual(new Set([`resp_${count}`]));
      expect(harness.fake.requests()).toHaveLength(1);
      expect(harness.fake.misses()).toHaveLength(0);
      expect(await deltas(harness, before)).toEqual({ miss: 1, local_hit: count - 1, conflict: 0, capacity: 0 });
    }
  });

  it('never stores a failure: joiners get it and a retry really retries (item 48)', async () => {
    // Accepted, then refused after a while, so all three are surely in flight together.
    harness.fake.enqueue({
      frames: [created('resp_fail'), { ...errorEvent({ status: 400, message: 'upstream says no' }), delayMs: 300 }],
    });
    const failures = await Promise.all(
      [0, 1, 2].map((index) => postStructured(harness.gateway, keyed('k-fail', { request_id: `f-${index}` }))),
    );
    // An upstream 400 about the request: the contract's upstream_error 502, not to be retried
    // unchanged, without the upstream's words (docs/structured.md "Errors").
    for (const failure of failures) {
      expect([failure.status, failure.headers.get('x-should-retry')]).toEqual([502, 'false']);
      expect(failure.error).toEqual({
        code: 'upstream_error',
        message:
          'the upstream refused the request; the same request fails the same way: change the input or the schema',
      });
    }
    expect(JSON.stringify(failures)).not.toContain('upstream says no');
    expect(harness.fake.requests()).toHaveLength(1);
    harness.fake.enqueue(extractionReply());
    const retry = await postStructured(harness.gateway, keyed('k-fail'));
    expect([retry.status, retry.body.idempotent_replay]).toEqual([200, false]);
    expect(harness.fake.requests()).toHaveLength(2);
  });

  it('without idempotency_key always calls the upstream and leaves the metric alone (item 51)', async () => {
    const before = await idempotencyCounts(harness);
    harness.fake.enqueue(extractionReply(), extractionReply());
    for (const key of [undefined, '']) {
      const answer = await postStructured(harness.gateway, structuredBody({ idempotency_key: key }));
      expect([answer.status, answer.body.idempotent_replay, answer.body.idempotency_key]).toEqual([
        200,
        false,
        key ?? '',
      ]);
    }
    expect(harness.fake.requests()).toHaveLength(2);
    expect(await deltas(harness, before)).toEqual({ miss: 0, local_hit: 0, conflict: 0, capacity: 0 });
  });

  it('aborts the upstream call and drops the binding when the only participant disconnects', async () => {
    harness.fake.enqueue({ frames: [extractionReply().frames[0]], holdOpen: true });
    const controller = new AbortController();
    const pending = postStructured(harness.gateway, keyed('k-gone'), { signal: controller.signal }).catch(
      (error: unknown) => error,
    );
    const [upstream] = await harness.fake.waitForRequests(1);
    controller.abort();
    await pending;
    await upstream.closedByClient;
    await eventually(() => harness.gateway.logs.records('structured_canceled').length > 0, 2000, 'structured_canceled');
    // The binding is gone: the same key leads a fresh call instead of joining a dead one.
    harness.fake.enqueue(extractionReply());
    const retry = await postStructured(harness.gateway, keyed('k-gone'));
    expect([retry.status, retry.body.idempotent_replay]).toEqual([200, false]);
    expect(harness.fake.requests()).toHaveLength(2);
  });

  it('keeps the call for the joiners when the leader disconnects; a joiner deadline ends only that joiner', async () => {
    // The reply's last frame waits for the test, so the short deadline ends before any answer.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const [first, delta, done] = extractionReply().frames;
    harness.fake.enqueue({ frames: [first, delta, { ...done, after: released }] });
    const before = await idempotencyCounts(harness);
    const controller = new AbortController();
    const leader = postStructured(harness.gateway, keyed('k-leader-gone', { request_id: 'lead' }), {
      signal: controller.signal,
    }).catch((error: unknown) => error);
    const [upstream] = await harness.fake.waitForRequests(1);
    const joiner = postStructured(harness.gateway, keyed('k-leader-gone', { request_id: 'join' }));
    const impatient = postStructured(
      harness.gateway,
      keyed('k-leader-gone', { request_id: 'short', deadline_ms: 100 }),
    );
    // Both have joined the call (a join counts as a local hit) before the leader leaves.
    await eventually(async () => (await deltas(harness, before)).local_hit === 2, 20_000, 'two joiners');
    controller.abort();
    await leader;
    const shortAnswer = await impatient;
    expect([shortAnswer.status, shortAnswer.error?.code, shortAnswer.error?.message]).toEqual([
      504,
      'timeout',
      'deadline elapsed before the model responded',
    ]);
    release();
    const joined: StructuredAnswer = await joiner;
    expect([joined.status, joined.body.idempotent_replay, joined.body.request_id]).toEqual([200, true, 'join']);
    expect(await settlesWithin(upstream.closedByClient, 100)).toBe(false);
    expect(harness.fake.requests()).toHaveLength(1);
  });

  it('takes the JSON media type in any letter case, as media types are case-insensitive', async () => {
    harness.fake.enqueue(extractionReply());
    const answer = await postStructured(harness.gateway, keyed('k-media-type'), {
      headers: { 'content-type': 'Application/JSON; charset=UTF-8' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.idempotent_replay).toBe(false);
  });

  it('counts a request in flight while it is answered and returns the gauge to zero', async () => {
    // Its own request, so the test does not depend on what earlier ones left behind.
    harness.fake.enqueue(extractionReply(undefined, { delayMs: 400 }));
    const pending = postStructured(harness.gateway, keyed('k-gauge'));
    await harness.fake.waitForRequests(harness.fake.requests().length + 1, 3000);
    expect(await metricValue(harness.gateway, 'gateway_chat_api_structured_inflight')).toBe(1);
    expect((await pending).status).toBe(200);
    await eventually(
      async () => (await metricValue(harness.gateway, 'gateway_chat_api_structured_inflight')) === 0,
      2000,
      'inflight 0',
    );
  });
});

describe('structured idempotency store limits', () => {
  it('answers 503 with Retry-After for a new key when full, evicting nothing (item 49)', async () => {
    const harness = await startStructured({ STRUCTURED_IDEMPOTENCY_CAPACITY: '1', STRUCTURED_IDEMPOTENCY_TTL: '90s' });
    try {
      harness.fake.enqueue(extractionReply());
      expect((await postStructured(harness.gateway, keyed('k-stored'))).status).toBe(200);
      const before = await idempotencyCounts(harness);
      const full = await postStructured(harness.gateway, keyed('k-new', { request_id: 'r-full' }));
      expect(full.status).toBe(503);
      expect(full.body).toEqual({
        error: { code: 'unavailable', message: 'the idempotency store is full of live bindings; retry later' },
        request_id: 'r-full',
        contract_version: '2.0.0',
      });
      const retryAfter = Number(full.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(88);
      expect(retryAfter).toBeLessThanOrEqual(90);
      const stored = await postStructured(harness.gateway, keyed('k-stored'));
      expect([stored.status, stored.body.idempotent_replay]).toEqual([200, true]);
      // A key-less request does not need the store.
      harness.fake.enqueue(extractionReply());
      expect((await postStructured(harness.gateway, structuredBody())).status).toBe(200);
      expect(await deltas(harness, before)).toEqual({ miss: 0, local_hit: 1, conflict: 0, capacity: 1 });
      expect(harness.fake.requests()).toHaveLength(2);
    } finally {
      await harness.close();
    }
  });

  it('counts the TTL from storing: a slow call replays for the TTL afterwards, then re-runs (item 50)', async () => {
    const harness = await startStructured({ STRUCTURED_IDEMPOTENCY_TTL: '1s' });
    try {
      // The store's clock, not a sleep: the call takes 1.5 s (more than the TTL) of store time.
      harness.fake.enqueue(extractionReply(undefined, { delayMs: 200, id: 'resp_slow' }));
      const firstCall = postStructured(harness.gateway, keyed('k-ttl'));
      await harness.fake.waitForRequests(1);
      advanceIdempotencyClock(harness.gateway, 1500);
      const first = await firstCall;
      expect(first.status).toBe(200);
      // 0.9 s after storing: still within the TTL counted from storing (not from arrival).
      advanceIdempotencyClock(harness.gateway, 900);
      const replay = await postStructured(harness.gateway, keyed('k-ttl'));
      expect([replay.status, replay.body.idempotent_replay, replay.body.upstream_response_id]).toEqual([
        200,
        true,
        'resp_slow',
      ]);
      // 1.1 s after storing: expired, so the same key runs again.
      advanceIdempotencyClock(harness.gateway, 200);
      harness.fake.enqueue(extractionReply(undefined, { id: 'resp_fresh' }));
      const fresh = await postStructured(harness.gateway, keyed('k-ttl'));
      expect([fresh.status, fresh.body.idempotent_replay, fresh.body.upstream_response_id]).toEqual([
        200,
        false,
        'resp_fresh',
      ]);
      expect(harness.fake.requests()).toHaveLength(2);
    } finally {
      await harness.close();
    }
  });
});
