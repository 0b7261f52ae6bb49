import type { EventLogger } from '../core/event-logger';
import type { BuildInfo } from '../common/build/build-info';
import { loadConfig } from '../config/app-config';
import type { PolledEvents } from '../core/chat-event';
import { GatewayError } from '../core/gateway.error';
import { publicMessageOf } from '../common/errors/error-writer';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { ModelCatalog } from '../models/model-catalog';
import type {
  CallContext,
  ExtractionRequest,
  ExtractionResult,
  ProviderAdapter,
} from '../providers/shared/provider-adapter';
import { ProviderRegistry } from '../providers/provider-registry';
import { IdempotencyStore } from './idempotency-store';
import { OutputValidator } from '../common/json-schema/output-validator';
import { StructuredAllowlist } from './structured-allowlist';
import { StructuredExtractor } from './structured-extractor';
import { canonicalSha256 } from './structured-identity';
import type { StructuredCommand } from './structured-orchestrator';
import { StructuredOrchestrator } from './structured-orchestrator';
import { StructuredQueue } from '../queue/structured-queue';
import type { SharedAnswer } from './structured-response';

const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['total'],
  properties: { total: { type: 'integer' } },
};

const UPSTREAM_MODEL = 'gpt-6.1-terra-2026-02-17';

/** A provider_a that answers extractions from a script and records what it was asked. */
class FakeExtractor implements ProviderAdapter {
  readonly id = 'provider_a' as const;
  readonly requests: ExtractionRequest[] = [];

  constructor(private readonly answer: (context: CallContext) => Promise<string>) {}

  async extract(request: ExtractionRequest, context: CallContext): Promise<ExtractionResult> {
    this.requests.push(request);
    const text = await this.answer(context);
    return {
      text,
      upstreamResponseId: 'resp_1',
      // A dated snapshot, as the upstream names the model it ran: not the id the client asked for.
      upstreamModel: UPSTREAM_MODEL,
      usage: { promptTokens: 5, completionTokens: 2, totalTokens: 7 },
    };
  }

  stream(): Promise<PolledEvents> {
    throw new Error('not used');
  }

  complete(): Promise<PolledEvents> {
    throw new Error('not used');
  }
}

/** A provider_a whose extraction never answers until its signal ends it; `called` resolves to that signal once asked. */
function hangingExtractor() {
  let upstreamSignal: AbortSignal | undefined;
  const adapter = new FakeExtractor(
    (context) =>
      new Promise<string>((_resolve, reject) => {
        upstreamSignal = context.signal;
        context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
      }),
  );
  const called = async (): Promise<AbortSignal> => {
    while (!upstreamSignal) await new Promise((resolve) => setImmediate(resolve));
    return upstreamSignal;
  };
  return { adapter, called };
}

/** `onMetric` sees each instrument call as it is made: a test can act at that exact point of a run. */
function setup(adapter: FakeExtractor, onMetric: (name: string) => void = () => undefined) {
  const config = loadConfig({
    HOME: '/nonexistent',
    GATEWAY_PROVIDERS: 'provider_a',
    STRUCTURED_INFERENCE_ENABLED: 'true',
  });
  const catalog = ModelCatalog.load(undefined, config.enabledProviders);
  const records: Record<string, unknown>[] = [];
  const push = (fields: Record<string, unknown>) => records.push(fields);
  const logger = { info: push, warn: push, debug: push, error: push } as EventLogger;
  // Every instrument call is accepted and kept as [instrument, ...arguments]: what /metrics would show.
  const calls: unknown[][] = [];
  const metrics = new Proxy(
    {},
    {
      get:
        (_target, name) =>
        (...args: unknown[]) => {
          calls.push([name, ...args]);
          onMetric(String(name));
        },
    },
  ) as GatewayMetrics;
  const metricCalls = (name: keyof GatewayMetrics) =>
    calls.filter((call) => call[0] === name).map((call) => call.slice(1));
  const allowlist = StructuredAllowlist.build({
    requested: config.structured.models,
    catalog: catalog.bundledEntries(),
    enabledProviders: config.enabledProviders,
  });
  const validator = new OutputValidator();
  const build = { version: 'test' } as unknown as BuildInfo;
  const extractor = new StructuredExtractor(
    validator,
    new ProviderRegistry([adapter], catalog),
    new StructuredQueue(config, metrics),
    metrics,
    build,
  );
  const store = new IdempotencyStore<SharedAnswer>({ capacity: 8, ttlMs: 60_000 });
  const orchestrator = new StructuredOrchestrator(config, allowlist, store, extractor, metrics);
  const command = (body: unknown, overrides: Partial<StructuredCommand> = {}): StructuredCommand => ({
    arrivedAt: Date.now(),
    arrivedWhileDraining: false,
    caller: 'anonymous',
    body,
    contentTypeIsJson: true,
    logger,
    signal: new AbortController().signal,
    ...overrides,
  });
  const audit = () =>
    records
      .filter((record) => String(record.event).startsWith('structured_'))
      .map((record) => `${String(record.event)}:${String(record.status)}`);
  return { orchestrator, command, audit, records, metricCalls, validator };
}

const body = (overrides: Record<string, unknown> = {}) => ({
  request_id: 'r-1',
  model: 'gpt-6.1-terra',
  input: 'Total: 12',
  schema: SCHEMA,
  operation: 'op',
  ...overrides,
});

describe(StructuredOrchestrator.name, () => {
  it('answers a valid request with the contract body and records one success', async () => {
    const adapter = new FakeExtractor(async () => '{"total":12}');
    const { orchestrator, command, audit } = setup(adapter);
    const outcome = await orchestrator.run(command(body()));
    expect(outcome).toMatchObject({
      kind: 'success',
      body: { data: { total: 12 }, request_id: 'r-1', idempotent_replay: false, model: UPSTREAM_MODEL },
    });
    expect(audit()).toEqual(['structured_success:200']);
  });

  it('gives the adapter a neutral conversation id (caller, operation, schema checksum), no provider cache key', async () => {
    const adapter = new FakeExtractor(async () => '{"total":1}');
    const { orchestrator, command } = setup(adapter);
    await orchestrator.run(command(body(), { caller: 'header:acme' }));
    expect(adapter.requests[0].conversationId).toBe(`header:acme\nop\n${canonicalSha256(SCHEMA)}`);
    expect(adapter.requests[0]).not.toHaveProperty('promptCacheKey');
  });

  it('refuses a request that arrived while draining before looking at the body, and answers a deferred body error in its place', async () => {
    const adapter = new FakeExtractor(async () => '{"total":1}');
    const { orchestrator, command, audit } = setup(adapter);
    const tooLarge = new GatewayError('request_too_large');
    expect(await orchestrator.run(command(undefined, { bodyError: tooLarge }))).toEqual({
      kind: 'failure',
      error: tooLarge,
    });
    expect(
      await orchestrator.run(command('not even an object', { bodyError: tooLarge, arrivedWhileDraining: true })),
    ).toMatchObject({
      kind: 'failure',
      error: { code: 'draining' },
    });
    expect(audit()).toEqual(['structured_failure:400', 'structured_failure:503']);
    expect(adapter.requests).toHaveLength(0);
  });

  it('records output that breaks the schema as a 422 failure', async () => {
    const { orchestrator, command, audit, records } = setup(new FakeExtractor(async () => '{"total":"twelve"}'));
    expect(await orchestrator.run(command(body()))).toMatchObject({
      kind: 'failure',
      error: { code: 'output_validation_failed' },
    });
    expect(audit()).toEqual(['structured_failure:422']);
    // A refusal the client can fix: its line says why, as the client was told.
    expect(records.find((record) => record.event === 'structured_failure')).toHaveProperty('error_message');
  });

  it('replays a stored answer for the same idempotency key without a second upstream call', async () => {
    const adapter = new FakeExtractor(async () => '{"total":3}');
    const { orchestrator, command, audit } = setup(adapter);
    await orchestrator.run(command(body({ idempotency_key: 'k-1' })));
    const replay = await orchestrator.run(command(body({ idempotency_key: 'k-1', request_id: 'r-2' })));
    expect(replay).toMatchObject({
      kind: 'success',
      body: { request_id: 'r-2', idempotent_replay: true, data: { total: 3 } },
    });
    expect(adapter.requests).toHaveLength(1);
    expect(audit()).toEqual(['structured_success:200', 'structured_replay:200']);
  });

  it('compiles the schema only for a call that runs: never for a model off the allowlist, a replay or a conflict', async () => {
    const adapter = new FakeExtractor(async () => '{"total":3}');
    const { orchestrator, command, audit, validator } = setup(adapter);
    expect(await orchestrator.run(command(body({ model: 'gpt-6-astra', idempotency_key: 'k' })))).toMatchObject({
      kind: 'failure',
      error: { code: 'unsupported_model' },
    });
    expect(validator.compileCount).toBe(0);
    await orchestrator.run(command(body({ idempotency_key: 'k' })));
    expect(validator.compileCount).toBe(1);
    // Another schema under the same key is a conflict; the same one a replay: neither compiles.
    const other = { ...SCHEMA, title: 'other' };
    expect(await orchestrator.run(command(body({ idempotency_key: 'k', schema: other })))).toMatchObject({
      kind: 'failure',
      error: { code: 'idempotency_conflict' },
    });
    await orchestrator.run(command(body({ idempotency_key: 'k' })));
    expect(validator.compileCount).toBe(1);
    expect(adapter.requests).toHaveLength(1);
    expect(audit()).toEqual([
      'structured_failure:404',
      'structured_success:200',
      'structured_conflict:409',
      'structured_replay:200',
    ]);
  });

  it("compiles the schema's validator before the upstream call, so a schema it refuses never costs a call", async () => {
    let compiledWhenCalled: number | undefined;
    const compiled: { count?: () => number } = {};
    const adapter = new FakeExtractor(async () => {
      compiledWhenCalled = compiled.count!();
      return '{"total":1}';
    });
    const { orchestrator, command, validator } = setup(adapter);
    compiled.count = () => validator.compileCount;
    expect(await orchestrator.run(command(body()))).toMatchObject({ kind: 'success' });
    expect(compiledWhenCalled).toBe(1);
  });

  it('answers nothing to a client that left, records it as canceled, and aborts its upstream call', async () => {
    const upstream = hangingExtractor();
    const { orchestrator, command, audit } = setup(upstream.adapter);
    const client = new AbortController();
    const pending = orchestrator.run(command(body(), { signal: client.signal }));
    const upstreamSignal = await upstream.called();
    client.abort(new Error('client disconnected'));
    expect(await pending).toEqual({ kind: 'canceled' });
    expect(upstreamSignal.aborted).toBe(true);
    expect(audit()).toEqual(['structured_canceled:499']);
  });

  it('answers nothing to a client that left while its answer was being made ready, and records it as canceled', async () => {
    const client = new AbortController();
    // The output's validation is the last step before the answer: the client leaves right there.
    const leaveOnValidation = (name: string) => {
      if (name === 'structuredValidated') client.abort(new Error('client disconnected'));
    };
    const { orchestrator, command, audit } = setup(new FakeExtractor(async () => '{"total":1}'), leaveOnValidation);
    expect(await orchestrator.run(command(body(), { signal: client.signal }))).toEqual({ kind: 'canceled' });
    expect(audit()).toEqual(['structured_canceled:499']);
  });

  it('ends the upstream call of a keyed request with the drain as its reason when the drain deadline ends it', async () => {
    const upstream = hangingExtractor();
    const { orchestrator, command, audit } = setup(upstream.adapter);
    const client = new AbortController();
    const pending = orchestrator.run(command(body({ idempotency_key: 'k-drain' }), { signal: client.signal }));
    const upstreamSignal = await upstream.called();
    const draining = new GatewayError('draining');
    client.abort(draining);
    expect(await pending).toMatchObject({ kind: 'failure', error: { code: 'draining' } });
    // The adapter's own lines then say the drain ended the call, not a client that left.
    expect(upstreamSignal.reason).toBe(draining);
    expect(audit()).toEqual(['structured_failure:503']);
  });

  it("writes a bug's cause on its failure line, and no client-facing reason on a 5xx line", async () => {
    const bug = new TypeError('cannot read properties of undefined');
    const { orchestrator, command, records } = setup(new FakeExtractor(async () => Promise.reject(bug)));
    const outcome = await orchestrator.run(command(body()));
    expect(outcome).toMatchObject({ kind: 'failure', error: { code: 'internal' } });
    const line = records.find((record) => record.event === 'structured_failure')!;
    expect(line.status).toBe(502);
    // The line's `err` leads to the bug itself (its message and stack), through the wrapping errors.
    const causes: unknown[] = [];
    for (let err = line.err; err instanceof Error; err = err.cause) causes.push(err);
    expect(causes).toContain(bug);
    expect(line).not.toHaveProperty('error_message');
  });

  it("keeps an adapter's own timeout before the deadline in its own words: the client's deadline_ms was not what ran out", async () => {
    const { orchestrator, command } = setup(new FakeExtractor(async () => Promise.reject(new GatewayError('timeout'))));
    const outcome = await orchestrator.run(command(body({ deadline_ms: 60_000 })));
    expect(outcome).toMatchObject({ kind: 'failure', error: { code: 'timeout' } });
    expect(publicMessageOf((outcome as { error: GatewayError }).error)).toMatch(
      /^provider_a: the upstream did not answer in time; .* PROVIDER_A_TIMEOUT/,
    );
  });

  describe('metrics', () => {
    const NOW = 1_800_000_000_000;
    // A frozen clock: the request arrived 2.5 s before it is answered, whatever the machine's speed.
    beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(NOW));
    afterEach(() => jest.restoreAllMocks());
    const arrived = { arrivedAt: NOW - 2500 };

    it('reports the tokens by kind and the success latency in seconds under the model label', async () => {
      const { orchestrator, command, records, metricCalls } = setup(new FakeExtractor(async () => '{"total":12}'));
      expect(await orchestrator.run(command(body(), arrived))).toMatchObject({ kind: 'success' });
      expect(metricCalls('structuredTokensUsed')).toEqual([
        ['gpt-6.1-terra', 'prompt', 5],
        ['gpt-6.1-terra', 'completion', 2],
      ]);
      expect(metricCalls('structuredCompleted')).toEqual([['gpt-6.1-terra', 'success', 2.5]]);
      expect(records.find((record) => record.event === 'structured_success')).toMatchObject({ latency_ms: 2500 });
    });

    it("labels a failure's latency with its contract code", async () => {
      const { orchestrator, command, metricCalls } = setup(new FakeExtractor(async () => '{"total":"twelve"}'));
      await orchestrator.run(command(body(), arrived));
      expect(metricCalls('structuredFailure')).toEqual([['output_validation_failed']]);
      expect(metricCalls('structuredCompleted')).toEqual([['gpt-6.1-terra', 'output_validation_failed', 2.5]]);
    });

    it('counts an upstream failure as an upstream error of the structured route, answered with its own code', async () => {
      const { orchestrator, command, metricCalls } = setup(
        new FakeExtractor(async () => Promise.reject(new GatewayError('extra_usage_required'))),
      );
      const outcome = await orchestrator.run(command(body(), arrived));
      expect(outcome).toMatchObject({ kind: 'failure', error: { code: 'extra_usage_required' } });
      // The table's own words for the code, which name the fix; not a bare "upstream error".
      expect(publicMessageOf((outcome as { error: GatewayError }).error)).toBe(
        "the upstream bills this use from the account's extra usage, which is off or spent; the account owner can add extra usage on the vendor's usage page, or use another model family",
      );
      expect(metricCalls('upstreamError')).toEqual([['provider_a', 'extra_usage_required', 'structured']]);
      expect(metricCalls('structuredCompleted')).toEqual([['gpt-6.1-terra', 'auth_error', 2.5]]);
    });

    it('labels and logs a model off the allowlist as other: the field may hold a pasted key', async () => {
      const pasted = 'sk-proj-Zq8vXw3LmN0pRt5YuB7cDe9F';
      const { orchestrator, command, records, metricCalls } = setup(new FakeExtractor(async () => '{"total":1}'));
      expect(await orchestrator.run(command(body({ model: pasted }), arrived))).toMatchObject({
        kind: 'failure',
        error: { code: 'unsupported_model' },
      });
      expect(metricCalls('structuredCompleted')).toEqual([['other', 'unsupported_model', 2.5]]);
      const line = records.find((record) => record.event === 'structured_failure');
      expect(line?.model).toBe('[redacted]');
      expect(JSON.stringify(records)).not.toContain(pasted);
    });

    it('leaves the in-flight gauge alone for requests refused before admission, and counts a run up and down', async () => {
      const { orchestrator, command, metricCalls } = setup(new FakeExtractor(async () => '{"total":1}'));
      const refused = [
        command(undefined, { bodyError: new GatewayError('request_too_large') }),
        command(body(), { arrivedWhileDraining: true }),
        command(body({ input: '' })),
        command(body({ model: 'gpt-6-astra' })),
      ];
      for (const refusal of refused) expect(await orchestrator.run(refusal)).toMatchObject({ kind: 'failure' });
      expect(metricCalls('structuredInflightChanged')).toEqual([]);
      expect(await orchestrator.run(command(body()))).toMatchObject({ kind: 'success' });
      expect(metricCalls('structuredInflightChanged')).toEqual([[1], [-1]]);
    });
  });
});
