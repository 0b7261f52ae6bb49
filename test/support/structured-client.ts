import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { IDEMPOTENCY_CLOCK } from '../../src/structured/idempotency-store';
import type { TestGateway } from './create-test-app';
import { startGateway } from './create-test-app';
import type { FakeScript } from './fake-provider-a';
import { FakeProviderA } from './fake-provider-a';
import { completed, created, providerASettings, textDelta } from './provider-a-fixtures';

/** Helpers for the structured inference e2e suites (test/structured*.e2e-spec.ts). */

export const STRUCTURED_PATH = '/v1/structured/inference';

export const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['headline', 'growth_percent'],
  properties: { headline: { type: 'string' }, growth_percent: { type: 'integer' } },
};

export const GOOD_OUTPUT = '{"headline":"Q3 revenue up 12%","growth_percent":12}';

/** A minimal valid body; override any field. */
export function structuredBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    request_id: 'req-1',
    model: 'gpt-6.1-terra',
    input: 'Revenue grew 12% in the third quarter.',
    schema: SCHEMA,
    ...overrides,
  };
}

/** An upstream reply whose text is `text` (split into `parts` deltas), with an optional delay before completion. */
export function extractionReply(
  text = GOOD_OUTPUT,
  options: { id?: string; model?: string; delayMs?: number; firstDelayMs?: number } = {},
): FakeScript {
  const id = options.id ?? 'resp_s1';
  const model = options.model ?? 'gpt-6.1-terra';
  const first = created(id, model);
  const frames = [options.firstDelayMs ? { ...first, delayMs: options.firstDelayMs } : first, textDelta(text)];
  const done = completed({ input_tokens: 42, output_tokens: 9, total_tokens: 51 }, id, model);
  frames.push(options.delayMs ? { ...done, delayMs: options.delayMs } : done);
  return { frames };
}

export interface StructuredAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
  readonly error?: { code: string; message: string; details?: string[] };
}

/** POSTs `body` (JSON-encoded unless it is already a string) to the structured route. */
export async function postStructured(
  gateway: TestGateway,
  body: unknown,
  options: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<StructuredAnswer> {
  const response = await fetch(`${gateway.url}${STRUCTURED_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: options.signal,
  });
  const text = await response.text();
  const parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  return {
    status: response.status,
    headers: response.headers,
    body: parsed,
    error: parsed.error as StructuredAnswer['error'],
  };
}

export interface StructuredHarness {
  readonly gateway: TestGateway;
  readonly fake: FakeProviderA;
  close(): Promise<void>;
}

/** The fake provider_a plus a gateway with structured inference on, wired to it. */
export async function startStructured(settings: Record<string, string> = {}): Promise<StructuredHarness> {
  const fake = await FakeProviderA.start();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'structured-e2e-'));
  try {
    const gateway = await startGateway({
      ...providerASettings(fake, scratch),
      GATEWAY_PROVIDERS: 'provider_a',
      STRUCTURED_INFERENCE_ENABLED: 'true',
      GATEWAY_STREAM_IDLE_TIMEOUT: '0',
      ...settings,
    });
    return {
      gateway,
      fake,
      close: async () => {
        await gateway.close();
        await fake.close();
        fs.rmSync(scratch, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await fake.close();
    fs.rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}

/** Moves the idempotency store's clock of a running gateway forward (TTLs), instead of sleeping. */
export function advanceIdempotencyClock(gateway: TestGateway, ms: number): void {
  const clock = gateway.app.get<{ now(): number }>(IDEMPOTENCY_CLOCK, { strict: false });
  const previous = clock.now.bind(clock);
  clock.now = () => previous() + ms;
}

/** Resolves true when `promise` settles within `ms`, else false (the promise keeps running). */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);
}
