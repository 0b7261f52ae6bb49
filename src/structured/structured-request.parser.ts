import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Min,
  ValidateBy,
  classValidator,
} from '../common/validation/class-validator';
import type { ValidationError, ValidatorOptions } from '../common/validation/class-validator';
import { MAX_REQUEST_ID_CHARS } from '../common/errors/error-writer';
import { codePointLength } from '../common/text';
import { BODY_NOT_AN_OBJECT } from '../common/http/http-middleware';
import { GatewayError } from '../core/gateway.error';
import { VERBOSITIES } from '../core/resolved-model';
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

const invalid = (message: string) => new GatewayError('invalid_request', { publicMessage: message });
const hasText = (value: unknown) => typeof value === 'string' && /\S/u.test(value);

/** A class-validator rule from a predicate, with its own message. */
function satisfies(name: string, predicate: (value: unknown) => boolean, message: string): PropertyDecorator {
  return ValidateBy({ name, validator: { validate: predicate, defaultMessage: () => message } });
}

/** The contract's words for a value off its list, then the values allowed (the fix). */
const oneOf = (field: string, allowed: readonly string[]) =>
  `${field} is not supported; use one of ${allowed.join(', ')}`;

/** A required string: present, with a non-whitespace character. */
const HasText = (field: string) => satisfies('hasText', hasText, `${field} is required`);

/** A string of at most `max` code points. */
const MaxCodePoints = (field: string, max: number) =>
  satisfies('maxCodePoints', (value) => codePointLength(value as string) <= max, `${field} exceeds ${max} characters`);

/** A string of at most `max` bytes in UTF-8. */
const MaxUtf8Bytes = (field: string, max: number) =>
  satisfies(
    'maxUtf8Bytes',
    (value) => Buffer.byteLength(value as string, 'utf8') <= max,
    `${field} exceeds ${max} bytes`,
  );

/**
 * Step 4, the field types, in report order: every string field, then `deadline_ms`. `null` counts
 * as absent, as JSON clients often send it for optional fields.
 */
class StructuredFieldTypes {
  @IsOptional() @IsString() request_id?: unknown;
  @IsOptional() @IsString() idempotency_key?: unknown;
  @IsOptional() @IsString() operation?: unknown;
  @IsOptional() @IsString() schema_version?: unknown;
  @IsOptional() @IsString() model?: unknown;
  @IsOptional() @IsString() input?: unknown;
  @IsOptional() @IsString() schema_name?: unknown;
  @IsOptional() @IsString() reasoning_effort?: unknown;
  @IsOptional() @IsString() verbosity?: unknown;
  @IsOptional() @IsInt({ message: 'deadline_ms must be a non-negative integer' }) deadline_ms?: unknown;
}

/**
 * Step 5, the envelope's bounds (docs/design/behaviours.md §6.2), in the table's order, over fields
 * that passed step 4 (absent ones `undefined`). Decorators register bottom to top and class-validator
 * runs a field's rules in that order, so a field's first rule is its last decorator.
 */
class StructuredEnvelopeBounds {
  @MaxCodePoints('request_id', MAX_REQUEST_ID_CHARS)
  @HasText('request_id')
  request_id?: string;

  @IsOptional() @MaxCodePoints('idempotency_key', 200) idempotency_key?: string;
  @IsOptional() @MaxCodePoints('operation', 128) operation?: string;
  @IsOptional() @MaxCodePoints('schema_version', 64) schema_version?: string;

  @HasText('model') model?: string;

  @MaxUtf8Bytes('input', MAX_INPUT_BYTES)
  @HasText('input')
  input?: string;

  @IsOptional() @Min(0, { message: 'deadline_ms must be a non-negative integer' }) deadline_ms?: number;
  @IsOptional()
  @IsIn(REASONING_EFFORTS, { message: oneOf('reasoning_effort', REASONING_EFFORTS) })
  reasoning_effort?: string;
  @IsOptional() @IsIn(VERBOSITIES, { message: oneOf('verbosity', VERBOSITIES) }) verbosity?: string;
}

const FIRST_FAILURE: ValidatorOptions = {
  stopAtFirstError: true,
  forbidUnknownValues: false,
  validationError: { target: false, value: false },
};

const validateFieldTypes = classValidator(StructuredFieldTypes, FIRST_FAILURE);
const validateEnvelopeBounds = classValidator(StructuredEnvelopeBounds, FIRST_FAILURE);

/** Throws the first broken rule of `dto` (its class's validator) as `invalid_request`. */
function assertValid<T extends object>(dto: T, validate: (dto: T) => ValidationError[]): void {
  const [failure] = validate(dto);
  if (failure !== undefined)
    throw invalid(Object.values(failure.constraints ?? {})[0] ?? `${failure.property} is invalid`);
}

/** The envelope's fields: the string ones, then `deadline_ms`. */
const FIELDS = [
  'request_id',
  'idempotency_key',
  'operation',
  'schema_version',
  'model',
  'input',
  'schema_name',
  'reasoning_effort',
  'verbosity',
  'deadline_ms',
] as const;

/** `target` with the envelope's fields of `source`, copied by reference (`null` as absent); nothing else is read. */
function fill<T extends object>(target: T, source: Record<string, unknown>): T {
  for (const key of FIELDS) (target as Record<string, unknown>)[key] = source[key] ?? undefined;
  return target;
}

/**
 * Admission steps 3–9 in order; the first failure throws. `null` counts as absent (JSON clients
 * often send it for optional fields). Values are kept exactly as sent: no trimming.
 */
export function parseStructuredRequest(isJson: boolean, body: unknown): StructuredEnvelope {
  // Step 3: a JSON object body (size and syntax errors were deferred by the body middleware, which
  // refused a body of another type before reading it; here only a request without a body is left).
  if (!isJson) throw invalid('Content-Type must be application/json');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid(BODY_NOT_AN_OBJECT);
  const fields = body as Record<string, unknown>;
  // Step 4: field types.
  assertValid(fill(new StructuredFieldTypes(), fields), validateFieldTypes);
  // Step 5: envelope bounds.
  const envelope = fill(new StructuredEnvelopeBounds(), fields);
  assertValid(envelope, validateEnvelopeBounds);

  const schema = checkSchema(fields.schema);
  return {
    requestId: envelope.request_id!,
    idempotencyKey: envelope.idempotency_key,
    operation: envelope.operation,
    schemaVersion: envelope.schema_version,
    model: envelope.model!,
    input: envelope.input!,
    deadlineMs: envelope.deadline_ms,
    reasoningEffort: envelope.reasoning_effort,
    verbosity: envelope.verbosity,
    schemaName: fields.schema_name === null ? undefined : (fields.schema_name as string | undefined),
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
