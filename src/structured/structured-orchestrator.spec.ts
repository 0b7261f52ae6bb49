import type { EventLogger } from '../core/event-logger';
import type { BuildInfo } from '../common/build/build-info';
import { loadConfig } from '../config/app-config';
import type { PolledEvents } from '../core/chat-event';
import { GatewayError } from '../core/gateway.error';
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
      upstreamModel: 'gpt-6.1-terra',
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

function setup(adapter: FakeExtractor) {
  const config = loadConfig({
    HOME: '/nonexistent',
    GATEWAY_PROVIDERS: 'provider_a',
    STRUCTURED_INFERENCE_ENABLED: 'true',
  });
  const catalog = ModelCatalog.load(undefined, config.enabledProviders);
  const records: Record<string, unknown>[] = [];
  const push = (fields: Record<string, unknown>) => records.push(fields);
  const logger = { info: push, warn: push, debug: push, error: push } as EventLogger;
  // Every instrument call is accepted; the audit records are what these tests read.
  const metrics = new Proxy({}, { get: () => () => undefined }) as GatewayMetrics;
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
  return { orchestrator, command, audit, validator };
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
      body: { data: { total: 12 }, request_id: 'r-1', idempotent_replay: false, model: 'gpt-6.1-terra' },
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
    const { orchestrator, command, audit } = setup(new FakeExtractor(async () => '{"total":"twelve"}'));
    expect(await orchestrator.run(command(body()))).toMatchObject({
      kind: 'failure',
      error: { code: 'output_validation_failed' },
    });
    expect(audit()).toEqual(['structured_failure:422']);
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

  it('answers nothing to a client that left, records it as canceled, and aborts its upstream call', async () => {
    let upstreamSignal: AbortSignal | undefined;
    const adapter = new FakeExtractor(
      (context) =>
        new Promise<string>((_resolve, reject) => {
          upstreamSignal = context.signal;
          context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
        }),
    );
    const { orchestrator, command, audit } = setup(adapter);
    const client = new AbortController();
    const pending = orchestrator.run(command(body(), { signal: client.signal }));
    while (!upstreamSignal) await new Promise((resolve) => setImmediate(resolve));
    client.abort(new Error('client disconnected'));
    expect(await pending).toEqual({ kind: 'canceled' });
    expect(upstreamSignal.aborted).toBe(true);
    expect(audit()).toEqual(['structured_canceled:499']);
  });
});
