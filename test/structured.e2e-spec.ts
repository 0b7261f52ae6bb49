import { bundledTierModel } from './support/bundled-tiers';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DrainService } from '../src/common/lifecycle/drain.service';
import { startGateway } from './support/create-test-app';
import { eventually } from './support/poll';
import {
  CHUNKED_UPLOAD_LIMIT,
  exchangeUntilClosed,
  parseRawAnswers,
  postHalfABody,
  rawRequest,
  sendChunkedUntilAnswered,
  sendRawBytes,
} from './support/raw-http';
import { completed, created, textDelta } from './support/provider-a-fixtures';
import type { StructuredHarness } from './support/structured-client';
import { metricValue, scrapeMetrics } from './support/prometheus-text';
import {
  extractionReply,
  GOOD_OUTPUT,
  postStructured,
  SCHEMA,
  startStructured,
  STRUCTURED_PATH,
  structuredBody,
} from './support/structured-client';

/**
 * Structured inference over HTTP against the provider_a fake: admission (docs/design/behaviours.md
 * docs/design/behaviours.md §10 items 35–42), the golden pair (item 55, §7), metrics and audit logs (items 57–60).
 * Idempotency is in structured-idempotency.e2e-spec.ts, deadlines and output in
 * structured-deadline.e2e-spec.ts.
 */

jest.setTimeout(20_000);

const FIXTURES = path.join(__dirname, 'fixtures', 'contract-2.0.0');
const GOLDEN_BUILD = {
  BUILD_VERSION: 'v0.1.0',
  BUILD_COMMIT: '0'.repeat(40),
  BUILD_DATE: '2026-01-01T00:00:00Z',
};
/**
 * The allowlist the contract's golden pair was computed with: the 30 ids of the gpt-5.6 tier
 * models. The default follows the bundled tier models (docs/structured.md "Models").
 */
const GOLDEN_ALLOWLIST = ['sol', 'terra', 'luna']
  .flatMap((tier) =>
    ['', '-fast'].flatMap((fast) =>
      ['', '-low', '-medium', '-high', '-xhigh'].map((effort) => `gpt-5.6-${tier}${fast}${effort}`),
    ),
  )
  .join(',');
const fixture = (name: string) =>
  JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, unknown>;

describe('POST /v1/structured/inference', () => {
  let harness: StructuredHarness;

  beforeAll(async () => {
    harness = await startStructured(GOLDEN_BUILD);
  });
  afterAll(async () => harness?.close());
  beforeEach(() => harness.fake.reset());

  describe('golden contract examples (item 55)', () => {
    it('keeps the fixtures identical to their SHA256SUMS', () => {
      const lines = fs.readFileSync(path.join(FIXTURES, 'SHA256SUMS'), 'utf8').trim().split('\n');
      expect(lines.map((line) => line.split(/\s+/)[1]).sort()).toEqual(['error.json', 'request.json', 'success.json']);
      for (const line of lines) {
        const [digest, name] = line.split(/\s+/);
        expect(
          createHash('sha256')
            .update(fs.readFileSync(path.join(FIXTURES, name)))
            .digest('hex'),
        ).toBe(digest);
      }
    });

    it('answers the golden request with the golden success, then the golden conflict', async () => {
      // The golden pair was computed with the gpt-5.6 tier ids as the allowlist (its model_policy_version).
      const harness = await startStructured({ ...GOLDEN_BUILD, STRUCTURED_MODELS: GOLDEN_ALLOWLIST });
      try {
        const request = fixture('request.json');
        harness.fake.enqueue({
          frames: [
            created('resp_golden_1', 'gpt-5.6-sol'),
            textDelta('{"headline":"Q3 revenue up 12%","growth_percent":12}'),
            completed({ input_tokens: 42, output_tokens: 9, total_tokens: 51 }, 'resp_golden_1', 'gpt-5.6-sol'),
          ],
        });
        const success = await postStructured(harness.gateway, request);
        expect(success.status).toBe(200);
        const expected = fixture('success.json');
        const { latency_ms: latency, build, ...rest } = success.body;
        const { latency_ms: _latency, build: expectedBuild, ...expectedRest } = expected;
        expect(rest).toEqual(expectedRest);
        expect(Object.keys(success.body)).toEqual(Object.keys(expected));
        expect(Number.isInteger(latency) && (latency as number) >= 0).toBe(true);
        expect(Object.keys(build as object).sort()).toEqual(Object.keys(expectedBuild as object).sort());
        expect(build).toMatchObject({
          version: 'v0.1.0',
          commit: '0'.repeat(40),
          build_date: '2026-01-01T00:00:00Z',
          modified: false,
        });
        expect((build as { go_version: string }).go_version).toMatch(/^node\d+\.\d+\.\d+$/);

        const [upstream] = harness.fake.requests();
        expect(upstream.body).toMatchObject({
          model: 'gpt-5.6-sol',
          // gpt-5.6-sol takes the Responses lite shape (its instructions travel as developer input).
          reasoning: { effort: 'high', context: 'all_turns' },
          text: {
            verbosity: 'low',
            format: { type: 'json_schema', name: 'quarter_summary', strict: true, schema: request.schema },
          },
          stream: true,
          store: false,
        });
        for (const key of [
          'tools',
          'instructions',
          'tool_choice',
          'parallel_tool_calls',
          'include',
          'max_output_tokens',
        ]) {
          expect(upstream.body).not.toHaveProperty(key);
        }
        expect(Object.keys(upstream.body!.client_metadata as object).sort()).toEqual([
          'ws_request_header_x_openai_internal_codex_responses_lite',
          'x-codex-ws-stream-request-start-ms',
        ]);

        const conflict = await postStructured(harness.gateway, {
          ...request,
          request_id: 'golden-req-0002',
          model: 'gpt-5.6-terra',
        });
        expect(conflict.status).toBe(409);
        expect(conflict.body).toEqual(fixture('error.json'));
        expect(harness.fake.requests()).toHaveLength(1);
      } finally {
        await harness.close();
      }
    });
  });

  describe('other methods and sub-paths of the enabled route (docs/endpoints.md)', () => {
    const NOT_FOUND = {
      error: { message: 'no such route', type: 'invalid_request_error', code: 'not_found', param: null },
    };

    it('answers them with the plain 404 of an unknown route, whatever their body', async () => {
      const badJson = { headers: { 'content-type': 'application/json' }, body: '{"request_id": "probe",' };
      for (const [method, route] of [
        ['GET', STRUCTURED_PATH],
        ['PUT', STRUCTURED_PATH],
        ['DELETE', STRUCTURED_PATH],
        ['POST', `${STRUCTURED_PATH}/extra`],
      ]) {
        const response = await rawRequest(`${harness.gateway.url}${route}`, { method, ...badJson });
        expect([method, route, response.status]).toEqual([method, route, 404]);
        expect(JSON.parse(response.body.toString())).toEqual(NOT_FOUND);
        expect(response.headers['retry-after']).toBeUndefined();
      }
    });

    it("answers a POST whose headers Node's parser refuses with the OpenAI 431, as on every path (docs/error-codes.md)", async () => {
      const body = '{"request_id": "probe"}';
      const answer = await sendRawBytes(
        Number(new URL(harness.gateway.url).port),
        Buffer.from(
          `POST ${STRUCTURED_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
            `X-Big: ${'b'.repeat(20_000)}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          'latin1',
        ),
      );
      expect(answer.status).toBe(431);
      expect(JSON.parse(answer.body)).toEqual({
        error: expect.objectContaining({ type: 'invalid_request_error', code: 'request_header_fields_too_large' }),
      });
    });

    it('still treats a trailing slash as the route itself', async () => {
      const response = await rawRequest(`${harness.gateway.url}${STRUCTURED_PATH}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"request_id": "probe",',
      });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body.toString())).toMatchObject({
        error: { code: 'invalid_request' },
        contract_version: '2.0.0',
      });
    });
  });

  describe('admission (items 36–40)', () => {
    it('requires request_id and bounds it and schema_version in code points (item 36)', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ request_id: undefined }, 'request_id is required'],
        [{ request_id: '   ' }, 'request_id is required'],
        [{ request_id: 'r'.repeat(129) }, 'request_id exceeds 128 characters'],
        [{ schema_version: 'v'.repeat(65) }, 'schema_version exceeds 64 characters'],
        [{ idempotency_key: 'k'.repeat(201) }, 'idempotency_key exceeds 200 characters'],
        [{ operation: 'o'.repeat(129) }, 'operation exceeds 128 characters'],
        [{ model: '' }, 'model is required'],
        [{ model: '  ' }, 'model is required'],
        [{ input: ' ' }, 'input is required'],
        [{ deadline_ms: -5 }, 'deadline_ms must be a non-negative integer'],
        [{ deadline_ms: 2.5 }, 'deadline_ms must be a non-negative integer'],
        [
          { reasoning_effort: 'maximal' },
          'reasoning_effort is not supported; use one of none, minimal, low, medium, high, xhigh',
        ],
        [{ request_id: 42 }, 'request_id must be a string'],
        [{ schema: undefined }, 'schema is required'],
      ];
      for (const [overrides, message] of cases) {
        const answer = await postStructured(harness.gateway, structuredBody(overrides));
        expect([answer.status, answer.error?.code, answer.error?.message]).toEqual([400, 'invalid_request', message]);
        expect(answer.body.contract_version).toBe('2.0.0');
      }
      // At the bounds (multi-byte characters count once) admission goes on to the model check.
      const atBounds = await postStructured(
        harness.gateway,
        structuredBody({ request_id: '😀'.repeat(128), schema_version: 'é'.repeat(64), model: 'sonnet' }),
      );
      expect([atBounds.status, atBounds.error?.code]).toEqual([404, 'unsupported_model']);
      expect(atBounds.body.request_id).toBe('😀'.repeat(128));
      expect(harness.fake.requests()).toHaveLength(0);
    });

    it('refuses an effort the model does not take with invalid_request naming the ones it does, without calling the upstream', async () => {
      for (const effort of ['none', 'minimal']) {
        const answer = await postStructured(harness.gateway, structuredBody({ reasoning_effort: effort }));
        expect([answer.status, answer.error?.code]).toEqual([400, 'invalid_request']);
        // Only efforts this route takes: the catalog row's `max` is not one of them.
        expect(answer.error?.message).toBe(
          'reasoning_effort must be one of low, medium, high, xhigh for model gpt-6.1-terra',
        );
      }
      expect(harness.fake.requests()).toHaveLength(0);
    });

    it('answers a chunked body that never ends as soon as it passes the 4 MiB cap, and closes the connection', async () => {
      const { answer, chunksSent } = await sendChunkedUntilAnswered(harness.gateway.url, '/v1/structured/inference');
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(answer).toContain('"code":"invalid_request"');
      expect(chunksSent).toBeLessThan(CHUNKED_UPLOAD_LIMIT);
      expect(harness.fake.requests()).toHaveLength(0);
      // Recorded like every structured error response.
      await eventually(() => harness.gateway.logs.records('structured_failure').some((line) => line.status === 400));
    });

    it('rejects an input over 1 MiB and a schema over 256 KiB without calling the upstream (item 37)', async () => {
      const input = await postStructured(harness.gateway, structuredBody({ input: 'x'.repeat(1_048_577) }));
      expect([input.status, input.error?.code, input.error?.message]).toEqual([
        400,
        'invalid_request',
        'input exceeds 1048576 bytes',
      ]);
      const shell = { ...SCHEMA, description: '' };
      const big = { ...shell, description: 'd'.repeat(262_145 - Buffer.byteLength(JSON.stringify(shell))) };
      expect(Buffer.byteLength(JSON.stringify(big))).toBe(262_145);
      const schema = await postStructured(harness.gateway, structuredBody({ schema: big }));
      expect([schema.status, schema.error?.code, schema.error?.message]).toEqual([
        400,
        'invalid_schema',
        'schema exceeds the maximum size of 262144 bytes',
      ]);
      expect(harness.fake.requests()).toHaveLength(0);
    });

    it('refuses a body of another Content-Type without reading it: no 100 Continue, a 400 in the structured shape, the connection closed, recorded', async () => {
      const failures = () =>
        metricValue(harness.gateway, 'gateway_chat_api_structured_failures_total', { code: 'invalid_request' });
      const before = await failures();
      const body = JSON.stringify(structuredBody({ request_id: 'r-plain' }));
      const head = (extra: string) =>
        `POST ${STRUCTURED_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n${extra}\r\n`;
      const port = Number(new URL(harness.gateway.url).port);
      // A client that waits to be invited sends nothing more; one that does not sends its body at once.
      for (const bytes of [head('Expect: 100-continue\r\n'), `${head('')}${body}`]) {
        const { received, closed } = await exchangeUntilClosed(port, Buffer.from(bytes));
        expect(received.toString('latin1')).toMatch(/^HTTP\/1\.1 400 /);
        const [answer] = parseRawAnswers(received);
        expect(answer.headers.connection).toBe('close');
        // The body was not read, so its request_id is not echoed.
        expect(JSON.parse(answer.body)).toEqual({
          error: {
            code: 'invalid_request',
            message: 'Content-Type must be application/json (the body was sent as another type, so it was not read)',
          },
          contract_version: '2.0.0',
        });
        expect(closed).toBe(true);
      }
      expect(await failures()).toBe(before + 2);
      expect(harness.gateway.logs.records('structured_failure').at(-1)).toMatchObject({
        code: 'invalid_request',
        status: 400,
      });
      expect(harness.fake.requests()).toHaveLength(0);
    });

    it('rejects bad bodies as invalid_request in the structured shape', async () => {
      const notJson = await postStructured(harness.gateway, '{"request_id": "r-bad",');
      expect([notJson.status, notJson.error?.code, notJson.error?.message]).toEqual([
        400,
        'invalid_request',
        'the request body is not valid JSON',
      ]);
      const array = await postStructured(harness.gateway, '[1]');
      expect([array.status, array.error?.code]).toEqual([400, 'invalid_request']);
      const scalar = await postStructured(harness.gateway, 'null');
      expect([scalar.status, scalar.error?.message]).toEqual([400, 'the request body must be a JSON object']);
      const compress = await postStructured(harness.gateway, JSON.stringify(structuredBody()), {
        headers: { 'content-encoding': 'compress' },
      });
      expect([compress.status, compress.error?.code, compress.error?.message]).toEqual([
        400,
        'invalid_request',
        'Content-Encoding "compress" is not supported; send the body uncompressed, or compressed once with gzip, deflate, br or zstd (and Content-Encoding naming it)',
      ]);
      const plain = await postStructured(harness.gateway, JSON.stringify(structuredBody()), {
        headers: { 'content-type': 'text/plain' },
      });
      expect([plain.status, plain.error?.code, plain.error?.message]).toEqual([
        400,
        'invalid_request',
        'Content-Type must be application/json (the body was sent as another type, so it was not read)',
      ]);
      const huge = await postStructured(
        harness.gateway,
        JSON.stringify(structuredBody({ padding: 'p'.repeat(4 * 1024 * 1024) })),
      );
      expect([huge.status, huge.error?.code]).toEqual([400, 'invalid_request']);
      expect(huge.body).toEqual({ error: huge.error, contract_version: '2.0.0' });
      expect(harness.fake.requests()).toHaveLength(0);
    });

    it('rejects a 10,000-level schema (50 KB, well inside 256 KiB) and a deep enum as a client error', async () => {
      let deepSchema = '{"type":"string"}';
      for (let level = 0; level < 10_000; level++) deepSchema = `{"type":"array","items":${deepSchema}}`;
      const deep = await postStructured(
        harness.gateway,
        `{"request_id":"r-deep","model":"gpt-6.1-terra","input":"x","schema":${deepSchema}}`,
      );
      expect(deep.body).toEqual({
        error: { code: 'invalid_request', message: 'the request body nests arrays and objects deeper than 256 levels' },
        request_id: 'r-deep',
        contract_version: '2.0.0',
      });
      expect(deep.status).toBe(400);
      // Below the body bound, the walker's own schema bound answers in schema terms.
      let schema: Record<string, unknown> = { type: 'string' };
      for (let level = 0; level < 100; level++) schema = { type: 'array', items: schema };
      const walked = await postStructured(
        harness.gateway,
        structuredBody({
          schema: {
            ...SCHEMA,
            properties: { ...SCHEMA.properties, list: schema },
            required: [...SCHEMA.required, 'list'],
          },
        }),
      );
      expect([walked.status, walked.error?.code]).toEqual([400, 'invalid_schema']);
      const nest = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
      const enumDeep = await postStructured(
        harness.gateway,
        `{"request_id":"r-enum","model":"gpt-6.1-terra","input":"x","schema":{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"string","enum":${nest(5000)}}}}}`,
      );
      expect([enumDeep.status, enumDeep.error?.code]).toEqual([400, 'invalid_request']);
      expect(harness.fake.requests()).toHaveLength(0);
    });

    it('refuses a schema over the size bounds with invalid_schema naming the bound, before the model check, the store and the upstream', async () => {
      const flat = (count: number) => {
        const properties = Object.fromEntries(
          Array.from({ length: count }, (_, index) => [`p${index}`, { type: 'string' }]),
        );
        return { type: 'object', additionalProperties: false, required: Object.keys(properties), properties };
      };
      // 7,700 properties: about 254 KB, inside the byte cap, and once compiled on the event loop for seconds.
      const wide = flat(7_700);
      expect(Buffer.byteLength(JSON.stringify(wide))).toBeLessThan(262_144);
      for (const model of ['gpt-6.1-terra', 'nope']) {
        const answer = await postStructured(
          harness.gateway,
          structuredBody({ request_id: 'r-wide', model, idempotency_key: 'k-wide', schema: { ...wide, title: model } }),
        );
        expect(answer.status).toBe(400);
        expect(answer.headers.get('x-should-retry')).toBe('false');
        expect(answer.body).toEqual({
          error: {
            code: 'invalid_schema',
            message: 'schema uses unsupported constructs',
            details: [
              `$: the schema has 7701 nodes (the root, each property's schema, each "items" schema and any other object); at most 1000 are allowed`,
            ],
          },
          request_id: 'r-wide',
          contract_version: '2.0.0',
        });
      }
      const enums = await postStructured(
        harness.gateway,
        structuredBody({
          schema: {
            ...SCHEMA,
            properties: {
              ...SCHEMA.properties,
              headline: { type: 'string', enum: Array.from({ length: 1001 }, (_, index) => `h${index}`) },
            },
          },
        }),
      );
      expect(enums.error?.details).toEqual(['$: the schema has 1001 enum values in all; at most 1000 are allowed']);
      let deep: Record<string, unknown> = { type: 'string' };
      for (let level = 0; level < 11; level++) deep = { type: 'array', items: deep };
      const nested = await postStructured(
        harness.gateway,
        structuredBody({ schema: { ...SCHEMA, properties: { ...SCHEMA.properties, headline: deep } } }),
      );
      expect(nested.error?.details).toEqual([`$.headline${'[]'.repeat(10)}: schema nesting exceeds 10 levels`]);
      expect(harness.fake.requests()).toHaveLength(0);
    });

    it('serves the largest schema the node bound allows', async () => {
      const properties = Object.fromEntries(
        Array.from({ length: 999 }, (_, index) => [`p${index}`, { type: 'integer' }]),
      );
      const schema = { type: 'object', additionalProperties: false, required: Object.keys(properties), properties };
      const output = Object.fromEntries(Object.keys(properties).map((name, index) => [name, index]));
      harness.fake.enqueue(extractionReply(JSON.stringify(output)));
      const answer = await postStructured(harness.gateway, structuredBody({ schema }));
      expect(answer.status).toBe(200);
      expect(answer.body.data).toEqual(output);
    });

    it('rejects verbosity "loud" and ignores max_output_tokens (item 38)', async () => {
      const loud = await postStructured(harness.gateway, structuredBody({ verbosity: 'loud' }));
      expect([loud.status, loud.error?.code, loud.error?.message]).toEqual([
        400,
        'invalid_request',
        'verbosity is not supported; use one of low, medium, high',
      ]);
      harness.fake.enqueue(extractionReply());
      const ignored = await postStructured(
        harness.gateway,
        structuredBody({ max_output_tokens: 5, some_future_field: true }),
      );
      expect(ignored.status).toBe(200);
      expect(harness.fake.lastBody()).not.toHaveProperty('max_output_tokens');
      expect(harness.fake.lastBody()).not.toHaveProperty('max_tokens');
    });

    it('lists every schema problem in one invalid_schema answer (items 39, 40)', async () => {
      const schema = {
        type: 'object',
        required: ['a', 'b', 'c'],
        properties: {
          a: { $ref: '#/x', type: 'string' },
          b: { anyOf: [{ type: 'string' }], type: 'string' },
          c: { type: 'string', pattern: '^x' },
        },
      };
      const answer = await postStructured(harness.gateway, structuredBody({ request_id: 'r-schema', schema }));
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        error: {
          code: 'invalid_schema',
          message: 'schema uses unsupported constructs',
          details: [
            '$: "additionalProperties" must be present and set to false',
            '$.a: keyword "$ref" is not supported',
            '$.b: keyword "anyOf" is not supported',
            '$.c: keyword "pattern" is not supported',
          ],
        },
        request_id: 'r-schema',
        contract_version: '2.0.0',
      });
      const missing = { ...SCHEMA, required: ['headline'] };
      const union = { ...SCHEMA, properties: { ...SCHEMA.properties, headline: { type: ['string', 'null'] } } };
      expect((await postStructured(harness.gateway, structuredBody({ schema: missing }))).error?.details).toEqual([
        '$: property "growth_percent" is missing from "required"',
      ]);
      expect((await postStructured(harness.gateway, structuredBody({ schema: union }))).error?.details).toEqual([
        '$.headline: "type" must be a single string; union types are not supported',
      ]);
      const duplicated = await postStructured(
        harness.gateway,
        structuredBody({
          model: 'sonnet',
          schema: { ...SCHEMA, required: ['headline', 'growth_percent', 'headline'] },
        }),
      );
      expect([duplicated.status, duplicated.error?.code, duplicated.error?.details]).toEqual([
        400,
        'invalid_schema',
        ['$: "required" lists "headline" more than once'],
      ]);
      const notObject = await postStructured(harness.gateway, structuredBody({ schema: ['type'] }));
      expect([notObject.status, notObject.error?.code]).toEqual([400, 'invalid_schema']);
      expect(harness.fake.requests()).toHaveLength(0);
    });

    it('refuses a property named __proto__ with invalid_schema naming the place and the fix, before any upstream call', async () => {
      // Sent as text: an object literal's `__proto__` key would set its prototype instead.
      const withSchema = (schema: string) =>
        JSON.stringify(structuredBody({ request_id: 'r-proto', schema: 'SCHEMA' })).replace('"SCHEMA"', schema);
      const cases: Array<[string, string]> = [
        [
          '{"type":"object","additionalProperties":false,"required":["__proto__","headline"],' +
            '"properties":{"__proto__":{"type":"string"},"headline":{"type":"string"}}}',
          '$: property "__proto__" is not supported; rename it',
        ],
        [
          '{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":' +
            '{"type":"object","additionalProperties":false,"required":["__proto__"],"properties":{}}}}',
          '$.a: property "__proto__" is not supported; rename it',
        ],
      ];
      for (const [schema, detail] of cases) {
        harness.fake.enqueue(extractionReply('{"__proto__":"x","headline":"h"}'));
        const answer = await postStructured(harness.gateway, withSchema(schema));
        expect([answer.status, answer.body]).toEqual([
          400,
          {
            error: { code: 'invalid_schema', message: 'schema uses unsupported constructs', details: [detail] },
            request_id: 'r-proto',
            contract_version: '2.0.0',
          },
        ]);
      }
      expect(harness.fake.requests()).toHaveLength(0);
    });

    it('answers unsupported_model 404 for provider_b and provider_c ids and unknown ids (item 41)', async () => {
      for (const model of ['gemini-2.5-pro', 'sonnet', 'gpt-6.1-TERRA', 'provider_a/gpt-6.1-terra']) {
        const answer = await postStructured(harness.gateway, structuredBody({ model }));
        expect([answer.status, answer.error?.code, answer.error?.message]).toEqual([
          404,
          'unsupported_model',
          'model is not enabled for structured inference',
        ]);
        // The default allowlist: the ids of the bundled tier models (docs/structured.md "Models").
        expect(answer.error?.details?.[0]).toMatch(/^supported models: /);
        for (const tier of ['sol', 'terra', 'luna'] as const)
          expect(answer.error?.details?.[0]).toContain(`${bundledTierModel(tier).model}-fast-xhigh`);
      }
      expect(harness.fake.requests()).toHaveLength(0);
    });
  });

  describe('observability (items 57–60)', () => {
    it('counts validation results and labels unknown models as other (items 57, 58)', async () => {
      const gateway = harness.gateway;
      const invalidBefore = await metricValue(gateway, 'gateway_chat_api_structured_validation_total', {
        result: 'invalid',
      });
      const unparsableBefore = await metricValue(gateway, 'gateway_chat_api_structured_validation_total', {
        result: 'unparsable',
      });
      const validBefore = await metricValue(gateway, 'gateway_chat_api_structured_validation_total', {
        result: 'valid',
      });
      harness.fake.enqueue(
        extractionReply('{"headline":"h","growth_percent":"twelve"}'),
        extractionReply('no JSON here'),
        extractionReply(),
      );
      expect((await postStructured(gateway, structuredBody())).status).toBe(422);
      expect((await postStructured(gateway, structuredBody())).status).toBe(422);
      expect((await postStructured(gateway, structuredBody())).status).toBe(200);
      expect(await metricValue(gateway, 'gateway_chat_api_structured_validation_total', { result: 'invalid' })).toBe(
        invalidBefore + 1,
      );
      expect(await metricValue(gateway, 'gateway_chat_api_structured_validation_total', { result: 'unparsable' })).toBe(
        unparsableBefore + 1,
      );
      expect(await metricValue(gateway, 'gateway_chat_api_structured_validation_total', { result: 'valid' })).toBe(
        validBefore + 1,
      );
      expect(await metricValue(gateway, 'gateway_chat_api_structured_validation_total', { result: 'unknown' })).toBe(0);

      const otherBefore = await metricValue(gateway, 'gateway_chat_api_structured_latency_seconds_count', {
        model: 'other',
        result: 'unsupported_model',
      });
      await postStructured(gateway, structuredBody({ model: 'my-secret-model-name' }));
      expect(
        await metricValue(gateway, 'gateway_chat_api_structured_latency_seconds_count', {
          model: 'other',
          result: 'unsupported_model',
        }),
      ).toBe(otherBefore + 1);
      const metrics = await scrapeMetrics(gateway);
      expect(metrics).not.toContain('my-secret-model-name');
      expect(
        await metricValue(gateway, 'gateway_chat_api_structured_latency_seconds_count', {
          model: 'gpt-6.1-terra',
          result: 'success',
        }),
      ).toBeGreaterThan(0);
      expect(
        await metricValue(gateway, 'gateway_chat_api_structured_tokens_total', {
          model: 'gpt-6.1-terra',
          kind: 'prompt',
        }),
      ).toBeGreaterThanOrEqual(42);
      expect(
        await metricValue(gateway, 'gateway_chat_api_structured_failures_total', { code: 'output_validation_failed' }),
      ).toBeGreaterThanOrEqual(2);
    });

    it('sanitizes a poisoned request_id in logs but echoes it raw (item 59)', async () => {
      const gateway = harness.gateway;
      harness.fake.enqueue(extractionReply(), extractionReply());
      const countFor = async (requestId: string) => {
        const before = gateway.logs.lines.length;
        const answer = await postStructured(gateway, structuredBody({ request_id: requestId }));
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { answer, lines: gateway.logs.lines.slice(before) };
      };
      const clean = await countFor('req-clean');
      const poisoned = 'req\n{"level":50}\r\t\u0085\u2028x';
      const dirty = await countFor(poisoned);
      expect(dirty.answer.status).toBe(200);
      expect(dirty.answer.body.request_id).toBe(poisoned);
      expect(dirty.lines.length).toBe(clean.lines.length);
      const kinds = (lines: string[]) =>
        lines.map(
          (line) =>
            (JSON.parse(line) as { event?: string; msg?: string }).event ?? (JSON.parse(line) as { msg?: string }).msg,
        );
      expect(kinds(dirty.lines)).toEqual(kinds(clean.lines));
      const success = dirty.lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((record) => record.event === 'structured_success');
      expect(success?.request_id).toBe('req {"level":50}    x');
      for (const line of dirty.lines) expect(line).not.toMatch(/[\u0085\u2028]/);
    });

    it('logs a rejected 200-character request_id as its first 128 characters and never echoes it (docs/design/behaviours.md §10 item 60)', async () => {
      const requestId = 'a'.repeat(100) + 'b'.repeat(100);
      const answer = await postStructured(harness.gateway, structuredBody({ request_id: requestId }));
      expect([answer.status, answer.error?.code]).toEqual([400, 'invalid_request']);
      expect(answer.body).toEqual({
        error: { code: 'invalid_request', message: 'request_id exceeds 128 characters' },
        contract_version: '2.0.0',
      });
      const huge = await postStructured(
        harness.gateway,
        structuredBody({ request_id: 'r'.repeat(1_200_000), model: 'sonnet' }),
      );
      expect(huge.body).toEqual({
        error: { code: 'invalid_request', message: 'request_id exceeds 128 characters' },
        contract_version: '2.0.0',
      });
      const record = harness.gateway.logs
        .records('structured_failure')
        .find((entry) => String(entry.request_id).startsWith('a'.repeat(100)));
      expect(record).toMatchObject({ request_id: requestId.slice(0, 128), code: 'invalid_request', status: 400 });
      expect(record?.caller_hash).toMatch(/^[0-9a-f]{16}$/);
    });

    it('never logs the input, schema, output or bearer', async () => {
      harness.fake.enqueue(extractionReply('{"headline":"OUTPUT-MARKER-Q","growth_percent":1}'));
      const schema = { ...SCHEMA, description: 'SCHEMA-MARKER-S' };
      const answer = await postStructured(harness.gateway, structuredBody({ input: 'INPUT-MARKER-I', schema }), {
        headers: { authorization: 'Bearer BEARER-MARKER-B' },
      });
      expect(answer.status).toBe(200);
      const text = harness.gateway.logs.text;
      for (const marker of ['OUTPUT-MARKER-Q', 'SCHEMA-MARKER-S', 'INPUT-MARKER-I', 'BEARER-MARKER-B'])
        expect(text).not.toContain(marker);
      expect(harness.gateway.logs.records('structured_success').at(-1)).toMatchObject({
        request_id: 'req-1',
        model: 'gpt-6.1-terra',
      });
    });
  });
});

describe('structured inference settings', () => {
  it('answers exactly like an unknown route when disabled; other endpoints are unchanged (item 35)', async () => {
    const gateway = await startGateway({ GATEWAY_PROVIDERS: 'provider_a' });
    try {
      const structured = await fetch(`${gateway.url}${STRUCTURED_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(structuredBody()),
      });
      const unknown = await fetch(`${gateway.url}/v1/structured/unknown`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(structuredBody()),
      });
      expect(structured.status).toBe(404);
      expect(structured.status).toBe(unknown.status);
      expect(await structured.json()).toEqual(await unknown.json());
      const badJson = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"request_id":' };
      const structuredBad = await fetch(`${gateway.url}${STRUCTURED_PATH}`, badJson);
      const unknownBad = await fetch(`${gateway.url}/v1/structured/unknown`, badJson);
      expect(structuredBad.status).toBe(unknownBad.status);
      expect(await structuredBad.json()).toEqual(await unknownBad.json());
      expect((await fetch(`${gateway.url}/v1/models`)).status).toBe(200);
      expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });

  it('answers unsupported_model when provider_a is disabled (item 41)', async () => {
    const gateway = await startGateway({ GATEWAY_PROVIDERS: 'provider_b', STRUCTURED_INFERENCE_ENABLED: 'true' });
    try {
      const answer = await postStructured(gateway, structuredBody());
      expect([answer.status, answer.error?.code]).toEqual([404, 'unsupported_model']);
      expect(answer.error?.details).toEqual(['supported models: ']);
    } finally {
      await gateway.close();
    }
  });

  it('answers unavailable 503 with Retry-After while draining, before looking at the body (item 42)', async () => {
    const harness = await startStructured();
    try {
      harness.gateway.app.get(DrainService).startDraining();
      const answer = await postStructured(harness.gateway, structuredBody({ request_id: 'r-drain' }));
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(answer.body).toEqual({
        error: { code: 'unavailable', message: 'the gateway is shutting down; retry on another instance' },
        request_id: 'r-drain',
        contract_version: '2.0.0',
      });
      const badBody = await postStructured(harness.gateway, '{not json');
      expect([badBody.status, badBody.error?.code]).toEqual([503, 'unavailable']);
      expect(harness.fake.requests()).toHaveLength(0);
      // A drain's refusal is how the gateway is meant to work: info lines, no error line.
      const { logs } = harness.gateway;
      expect(logs.records('structured_failure').map((record) => [record.code, record.level])).toEqual([
        ['unavailable', 30],
        ['unavailable', 30],
      ]);
      expect(
        logs.records('request completed').filter((record) => (record.res as { statusCode: number }).statusCode === 503),
      ).toHaveLength(2);
      expect(logs.records().filter((record) => (record.level as number) >= 50)).toEqual([]);
      expect((await fetch(`${harness.gateway.url}/health/ready`)).status).toBe(503);
    } finally {
      await harness.close();
    }
  });

  it('answers a body of another Content-Type that arrives while draining with 503, unread, as draining comes first (docs/design/behaviours.md §6.1)', async () => {
    const harness = await startStructured();
    try {
      harness.gateway.app.get(DrainService).startDraining();
      const { received, closed } = await exchangeUntilClosed(
        Number(new URL(harness.gateway.url).port),
        Buffer.from(
          `POST ${STRUCTURED_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n` +
            'Expect: 100-continue\r\n\r\n',
        ),
      );
      expect(received.toString('latin1')).toMatch(/^HTTP\/1\.1 503 /);
      const [answer] = parseRawAnswers(received);
      expect([answer.headers['retry-after'], answer.headers.connection, closed]).toEqual(['5', 'close', true]);
      expect(JSON.parse(answer.body)).toEqual({
        error: { code: 'unavailable', message: 'the gateway is shutting down; retry on another instance' },
        contract_version: '2.0.0',
      });
      expect(harness.gateway.logs.records('structured_failure').map((record) => record.code)).toEqual(['unavailable']);
    } finally {
      await harness.close();
    }
  });

  it('serves a request that arrived before draining began though its body ends after (docs/design/behaviours.md §6.1)', async () => {
    const harness = await startStructured();
    try {
      harness.fake.enqueue(extractionReply());
      // Its headers are in, half of its body read; the rest comes once the drain began.
      const early = await postHalfABody(
        Number(new URL(harness.gateway.url).port),
        STRUCTURED_PATH,
        JSON.stringify(structuredBody({ request_id: 'r-early' })),
      );
      harness.gateway.app.get(DrainService).startDraining();
      early.rest();
      const answer = await early.answer;
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ request_id: 'r-early', data: JSON.parse(GOOD_OUTPUT) });
      // Only a request that arrives now is refused.
      const late = await postStructured(harness.gateway, structuredBody({ request_id: 'r-late' }));
      expect([late.status, late.error?.code]).toEqual([503, 'unavailable']);
      expect(harness.fake.requests()).toHaveLength(1);
    } finally {
      await harness.close();
    }
  });

  it('answers auth_error 401 for a rejected bearer, before draining and without reading its body, and records it (contract Authentication 1)', async () => {
    const harness = await startStructured({ GATEWAY_BEARER_SECRET: 'right-secret-0123' });
    try {
      const metricsHeaders = { authorization: 'Bearer right-secret-0123' };
      const failures = () =>
        metricValue(
          harness.gateway,
          'gateway_chat_api_structured_failures_total',
          { code: 'auth_error' },
          metricsHeaders,
        );
      const before = await failures();
      harness.gateway.app.get(DrainService).startDraining();
      const answer = await postStructured(harness.gateway, structuredBody({ request_id: 'r-auth' }), {
        headers: { authorization: 'Bearer wrong' },
      });
      expect(answer.status).toBe(401);
      // The body was never read, so its request_id is not echoed.
      expect(answer.body).toEqual({
        error: {
          code: 'auth_error',
          message:
            "missing or invalid bearer token: send `Authorization: Bearer <the gateway's key>`, the value of GATEWAY_BEARER_SECRET on the gateway",
        },
        contract_version: '2.0.0',
      });
      expect(await failures()).toBe(before + 1);
      expect(harness.gateway.logs.records('structured_failure').at(-1)).toMatchObject({
        code: 'auth_error',
        status: 401,
      });
      expect(harness.gateway.logs.text).not.toContain('wrong');
      const authorized = await postStructured(harness.gateway, structuredBody(), { headers: metricsHeaders });
      expect([authorized.status, authorized.error?.code]).toEqual([503, 'unavailable']);
    } finally {
      await harness.close();
    }
  });
});
