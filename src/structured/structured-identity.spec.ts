import { createHash } from 'node:crypto';
import type { ResolvedModel } from '../core/resolved-model';
import { structuredPromptCacheKey } from '../providers/provider-a/provider-a.request';
import {
  canonicalJson,
  canonicalSha256,
  deriveIdentity,
  extractionConversationId,
  inputBytes,
  upstreamSchemaName,
} from './structured-identity';
import type { StructuredEnvelope } from './structured-request.parser';

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['headline', 'growth_percent'],
  properties: { headline: { type: 'string' }, growth_percent: { type: 'integer' } },
};

const envelope: StructuredEnvelope = {
  requestId: 'r-1',
  idempotencyKey: 'k-1',
  operation: 'op',
  schemaVersion: 'v1',
  model: 'gpt-5.6-sol',
  input: 'Revenue grew 12%.',
  schema,
};

const model: ResolvedModel = {
  requestedId: 'gpt-5.6-sol',
  catalogId: 'gpt-5.6-sol',
  provider: 'provider_a',
  upstreamModel: 'gpt-5.6-sol',
  reasoningEffort: 'low',
  verbosity: 'low',
  serviceTier: null,
};

const identity = (
  overrides: Partial<StructuredEnvelope> = {},
  modelOverrides: Partial<ResolvedModel> = {},
  caller = 'anonymous',
  policy = 'p0',
) => deriveIdentity({ ...envelope, ...overrides }, { ...model, ...modelOverrides }, caller, policy);

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys, drops whitespace, keeps array order and writes numbers in ECMAScript form', () => {
    expect(canonicalJson(JSON.parse('{ "b": [3, 1], "a": { "d": 1.0, "c": 1e2 } }'))).toBe(
      '{"a":{"c":100,"d":1},"b":[3,1]}',
    );
    expect(canonicalJson({ '\u00e9': 1, z: 2, A: 3 })).toBe('{"A":3,"z":2,"é":1}');
  });
});

describe('deriveIdentity', () => {
  const base = identity();

  it('gives each unpaired surrogate of the input its own checksum, and a well-formed input its UTF-8 SHA-256', () => {
    const sums = ['Revenue \ud800 grew', 'Revenue \udfff grew', 'Revenue \ufffd grew', 'Revenue \ud800\ud800 grew'].map(
      (input) => identity({ input }).inputSha256,
    );
    expect(new Set(sums).size).toBe(4);
    expect(sums[2]).toBe(sha('Revenue \ufffd grew'));
    expect(inputBytes('a\ud83d\ude00b\udc00')).toEqual(
      Buffer.from([0x61, 0xf0, 0x9f, 0x98, 0x80, 0x62, 0xed, 0xb0, 0x80]),
    );
  });

  it('hashes exactly the documented replay-key and fingerprint objects', () => {
    const inputSha = sha('Revenue grew 12%.');
    const schemaSha = sha(canonicalJson(schema));
    expect(base.inputSha256).toBe(inputSha);
    expect(base.schemaSha256).toBe(schemaSha);
    expect(base.replayKey).toBe(
      sha(
        `{"caller":"anonymous","idempotency_key":"k-1","input_sha256":"${inputSha}","model_policy_version":"p0","operation":"op","schema_version":"v1"}`,
      ),
    );
    expect(base.fingerprint).toBe(
      sha(
        `{"caller":"anonymous","input_sha256":"${inputSha}","model":"gpt-5.6-sol","model_policy_version":"p0","operation":"op",` +
          `"reasoning_effort":"low","resolved_model":"gpt-5.6-sol","schema_sha256":"${schemaSha}","schema_version":"v1","verbosity":"low"}`,
      ),
    );
  });

  it('treats a re-indented, key-reordered schema with 1.0 for 1 as the same (behaviour 45)', () => {
    const reordered = JSON.parse(`{
      "properties": { "growth_percent": { "type": "integer" }, "headline": { "type": "string" } },
      "required": ["headline", "growth_percent"], "additionalProperties": false, "type": "object"
    }`);
    expect(identity({ schema: reordered })).toEqual(base);
    const withNumber = (value: number) => ({
      ...schema,
      properties: { ...schema.properties, list: { type: 'array', items: { type: 'string' }, maxItems: value } },
    });
    expect(canonicalSha256(withNumber(JSON.parse('1.0')))).toBe(canonicalSha256(withNumber(1)));
  });

  it('ignores deadline_ms, schema_name and request_id', () => {
    expect(identity({ deadlineMs: 5, schemaName: 'other', requestId: 'r-2' })).toEqual(base);
  });

  it('keeps the replay key but changes the fingerprint for model, effort, verbosity or schema body (behaviour 44)', () => {
    const variants = [
      identity({ model: 'gpt-5.6-sol-low' }),
      identity({}, { upstreamModel: 'gpt-5.6-terra' }),
      identity({}, { reasoningEffort: 'high' }),
      identity({}, { verbosity: 'high' }),
      identity({ schema: { ...schema, required: ['growth_percent', 'headline'] } }),
    ];
    for (const variant of variants) {
      expect(variant.replayKey).toBe(base.replayKey);
      expect(variant.fingerprint).not.toBe(base.fingerprint);
    }
  });

  it('changes the replay key for caller, operation, input, schema_version, policy or key (behaviour 46)', () => {
    const variants = [
      identity({}, {}, 'bearer:abc'),
      identity({ operation: 'other' }),
      identity({ input: 'Revenue grew 12%. ' }),
      identity({ schemaVersion: 'v2' }),
      identity({}, {}, 'anonymous', 'p1'),
      identity({ idempotencyKey: 'k-2' }),
    ];
    for (const variant of variants) expect(variant.replayKey).not.toBe(base.replayKey);
    expect(new Set(variants.map((variant) => variant.replayKey)).size).toBe(variants.length);
  });

  it('treats absent strings as empty ones', () => {
    expect(identity({ operation: undefined, schemaVersion: undefined })).toEqual(
      identity({ operation: '', schemaVersion: '' }),
    );
  });
});

describe('upstreamSchemaName', () => {
  it('uses schema_name, else operation, else structured_output', () => {
    expect(upstreamSchemaName('quarter_summary', 'op')).toBe('quarter_summary');
    expect(upstreamSchemaName(undefined, 'summarize-quarter')).toBe('summarize-quarter');
    expect(upstreamSchemaName('', '')).toBe('structured_output');
  });

  it('replaces characters outside [A-Za-z0-9_-] and cuts to 64', () => {
    expect(upstreamSchemaName('my schema.v1/é😀', undefined)).toBe('my_schema_v1___');
    expect(upstreamSchemaName('x'.repeat(70), undefined)).toBe('x'.repeat(64));
  });
});

describe('extractionConversationId', () => {
  // The upstream value is provider_a's derivation over this neutral id (docs/providers.md).
  const promptCacheKey = (caller: string, operation: string | undefined, schema: string) =>
    structuredPromptCacheKey(extractionConversationId(caller, operation, schema));

  it("keeps provider_a's cache key the UUID-formatted SHA-256 of the structured seed", () => {
    const hex = sha('provider_a.structured:anonymous\nop\nabc');
    expect(promptCacheKey('anonymous', 'op', 'abc')).toBe(
      `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`,
    );
    expect(promptCacheKey('anonymous', undefined, 'abc')).toBe(promptCacheKey('anonymous', '', 'abc'));
  });
});
