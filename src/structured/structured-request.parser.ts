import { MAX_REQUEST_ID_CHARS } from '../common/errors/error-writer';
import { codePointLength } from '../common/text';
import { GatewayError } from '../core/gateway.error';
import { findSchemaViolations, limitDetails } from './schema-subset.walker';

/** The structured request envelope after admission steps 3–9 (docs/design/behaviours.md §6.1). */
export interface StructuredEnvelope {
  readonly requestId: string;
  /** As sent; `undefined` or `''` means no idempotency. */
  readonly idempotencyKey?: string;
  readonly operation?: string;
  readonly schemaVersion?: string;
  readonly model: string;
  readonly input: string;
  readonly deadlineMs?: number;
  readonly reasoningEffort?: string;
  readonly verbosity?: string;
  readonly schemaName?: string;
  readonly schema: Record<string, unknown>;
}

export const MAX_INPUT_BYTES = 1_048_576;
export const MAX_SCHEMA_BYTES = 262_144;
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export const VERBOSITIES = ['low', 'medium', 'high'] as const;

const STRING_FIELDS = [
  'request_id',
  'idempotency_key',
  'operation',
  'schema_version',
  'model',
  'input',
  'schema_name',
  'reasoning_effort',
  'verbosity',
] as const;

const invalid = (message: string) => new GatewayError('invalid_request', { publicMessage: message });
const hasText = (value: string | undefined) => value !== undefined && /\S/u.test(value);

/**
 * Admission steps 3–9 in order; the first failure throws. `null` counts as absent (JSON clients
 * often send it for optional fields). Values are kept exactly as sent: no trimming.
 */
export function parseStructuredRequest(isJson: boolean, body: unknown): StructuredEnvelope {
  // Step 3: a JSON object body (size and syntax errors were deferred by the body middleware).
  if (!isJson) throw invalid('Content-Type must be application/json');
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid('the request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  const present = (name: string) => fields[name] !== undefined && fields[name] !== null;

  // Step 4: field types.
  for (const name of STRING_FIELDS) {
    if (present(name) && typeof fields[name] !== 'string') throw invalid(`${name} must be a string`);
  }
  if (present('deadline_ms') && !Number.isInteger(fields.deadline_ms))
    throw invalid('deadline_ms must be a non-negative integer');
  const text = (name: (typeof STRING_FIELDS)[number]) => (present(name) ? (fields[name] as string) : undefined);

  // Step 5: envelope bounds, table docs/design/behaviours.md §6.2, in its order.
  const requestId = text('request_id');
  if (!hasText(requestId)) throw invalid('request_id is required');
  if (codePointLength(requestId!) > MAX_REQUEST_ID_CHARS)
    throw invalid(`request_id exceeds ${MAX_REQUEST_ID_CHARS} characters`);
  const idempotencyKey = text('idempotency_key');
  if (idempotencyKey !== undefined && codePointLength(idempotencyKey) > 200)
    throw invalid('idempotency_key exceeds 200 characters');
  const operation = text('operation');
  if (operation !== undefined && codePointLength(operation) > 128) throw invalid('operation exceeds 128 characters');
  const schemaVersion = text('schema_version');
  if (schemaVersion !== undefined && codePointLength(schemaVersion) > 64)
    throw invalid('schema_version exceeds 64 characters');
  const model = text('model');
  if (!model) throw invalid('model is required');
  const input = text('input');
  if (!hasText(input)) throw invalid('input is required');
  if (Buffer.byteLength(input!, 'utf8') > MAX_INPUT_BYTES) throw invalid(`input exceeds ${MAX_INPUT_BYTES} bytes`);
  const deadlineMs = present('deadline_ms') ? (fields.deadline_ms as number) : undefined;
  if (deadlineMs !== undefined && deadlineMs < 0) throw invalid('deadline_ms must be a non-negative integer');
  const reasoningEffort = text('reasoning_effort');
  if (reasoningEffort !== undefined && !(REASONING_EFFORTS as readonly string[]).includes(reasoningEffort)) {
    throw invalid('reasoning_effort is not supported');
  }
  const verbosity = text('verbosity');
  if (verbosity !== undefined && !(VERBOSITIES as readonly string[]).includes(verbosity))
    throw invalid('verbosity is not supported');

  const schema = checkSchema(fields.schema);
  return {
    requestId: requestId!,
    idempotencyKey,
    operation,
    schemaVersion,
    model,
    input: input!,
    deadlineMs,
    reasoningEffort,
    verbosity,
    schemaName: text('schema_name'),
    schema,
  };
}

/** Steps 6–9: presence, object, size (measured before the walk), subset. */
function checkSchema(schema: unknown): Record<string, unknown> {
  if (schema === undefined || schema === null) throw invalid('schema is required');
  if (typeof schema !== 'object' || Array.isArray(schema)) {
    throw new GatewayError('invalid_schema', {
      publicMessage: 'schema must be a JSON object',
      details: ['$: schema node must be a JSON object'],
    });
  }
  const bytes = Buffer.byteLength(JSON.stringify(schema), 'utf8');
  if (bytes > MAX_SCHEMA_BYTES) {
    throw new GatewayError('invalid_schema', {
      publicMessage: `schema exceeds the maximum size of ${MAX_SCHEMA_BYTES} bytes`,
      details: [`$: the schema is ${bytes} bytes; the maximum is ${MAX_SCHEMA_BYTES}`],
    });
  }
  const violations = findSchemaViolations(schema);
  if (violations.length > 0) {
    throw new GatewayError('invalid_schema', {
      publicMessage: 'schema uses unsupported constructs',
      details: limitDetails(violations),
    });
  }
  return schema as Record<string, unknown>;
}
