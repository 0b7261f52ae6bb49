import canonicalize from 'canonicalize';
import { sha256Hex } from '../common/hashing';
import type { ResolvedModel } from '../core/resolved-model';
import type { StructuredEnvelope } from './structured-request.parser';

/** What idempotency matching is computed from (docs/design/behaviours.md §6.5). */
export interface StructuredIdentity {
  readonly inputSha256: string;
  /** SHA-256 of the RFC 8785 form of the schema: a re-indented or key-reordered schema is the same. */
  readonly schemaSha256: string;
  /** Which binding a request belongs to; any difference means a fresh inference. */
  readonly replayKey: string;
  /** Same replay key with another fingerprint is a conflict. */
  readonly fingerprint: string;
}

/** RFC 8785 (JSON Canonicalization Scheme) text of a JSON value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

export const canonicalSha256 = (value: unknown): string => sha256Hex(canonicalJson(value));

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The input's raw bytes: its UTF-8. JSON may also carry an unpaired surrogate (`\ud800`), which
 * UTF-8 cannot hold and Node would encode as U+FFFD, so two different inputs would share one
 * checksum, and one binding. Such a surrogate is written in its three-byte generalized form
 * (WTF-8) instead, which no UTF-8 text contains: every input keeps a checksum of its own, and a
 * well-formed one the plain SHA-256 of its UTF-8.
 */
export function inputBytes(input: string): Buffer {
  if (!LONE_SURROGATE.test(input)) return Buffer.from(input, 'utf8');
  const parts: Buffer[] = [];
  for (const character of input) {
    const code = character.codePointAt(0)!;
    parts.push(
      code >= 0xd800 && code <= 0xdfff
        ? Buffer.from([0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)])
        : Buffer.from(character, 'utf8'),
    );
  }
  return Buffer.concat(parts);
}

/**
 * Checksums, replay key and fingerprint. `deadline_ms`, `schema_name`, `request_id` and
 * `max_output_tokens` are deliberately absent, so they may vary on a retry.
 */
export function deriveIdentity(
  envelope: StructuredEnvelope,
  model: ResolvedModel,
  caller: string,
  policyVersion: string,
  schemaSha256 = canonicalSha256(envelope.schema),
): StructuredIdentity {
  const inputSha256 = sha256Hex(inputBytes(envelope.input));
  const shared = {
    caller,
    operation: envelope.operation ?? '',
    input_sha256: inputSha256,
    schema_version: envelope.schemaVersion ?? '',
    model_policy_version: policyVersion,
  };
  const replayKey = canonicalSha256({ ...shared, idempotency_key: envelope.idempotencyKey ?? '' });
  const fingerprint = canonicalSha256({
    ...shared,
    model: envelope.model,
    resolved_model: model.upstreamModel,
    reasoning_effort: model.reasoningEffort ?? '',
    verbosity: model.verbosity ?? '',
    schema_sha256: schemaSha256,
  });
  return { inputSha256, schemaSha256, replayKey, fingerprint };
}

/**
 * The upstream `text.format.name` (docs/upstream/provider-a.md §6.2): `schema_name`, else `operation`, else
 * `structured_output`; every character outside `[A-Za-z0-9_-]` becomes `_`; cut to 64.
 */
export function upstreamSchemaName(schemaName: string | undefined, operation: string | undefined): string {
  const source = schemaName || operation || 'structured_output';
  // Array.from walks code points, so an astral character becomes one `_`, not two.
  return Array.from(source, (character) => (/^[A-Za-z0-9_-]$/.test(character) ? character : '_'))
    .join('')
    .slice(0, 64);
}

/**
 * The neutral conversation id of an extraction (docs/upstream/provider-a.md §6.4: one cache prefix per caller,
 * operation and schema), one per line. Adapters derive their upstream cache key from it.
 */
export function extractionConversationId(caller: string, operation: string | undefined, schemaSha256: string): string {
  return `${caller}\n${operation ?? ''}\n${schemaSha256}`;
}
