import { Injectable } from '@nestjs/common';
import type Ajv from 'ajv';
import type { CodeOptions, ErrorObject, Options, ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import { propertyPath } from './schema-paths';

/** At most this many validation details, then one summary entry (docs/design/behaviours.md §6.8). */
export const MAX_OUTPUT_DETAILS = 20;
/**
 * Compiled validators kept. Compiling is the costly part, so a schema is compiled once and reused
 * by its canonical checksum; the bounds keep a stream of one-off schemas from growing memory. A
 * validator holds its schema and its generated code, so the cache counts both (`validatorSize`)
 * against VALIDATOR_CACHE_CHARACTERS, besides at most VALIDATOR_CACHE_SIZE entries; a validator
 * larger than the whole budget serves its one call and is dropped.
 */
export const VALIDATOR_CACHE_SIZE = 256;
export const VALIDATOR_CACHE_CHARACTERS = 8 * 1024 * 1024;

/** The `details` of an output failure: at most MAX_OUTPUT_DETAILS, then one summary entry. */
export function limitOutputDetails(details: readonly string[]): string[] {
  if (details.length <= MAX_OUTPUT_DETAILS) return [...details];
  const extra = details.length - MAX_OUTPUT_DETAILS;
  return [...details.slice(0, MAX_OUTPUT_DETAILS), `… and ${extra} more violations`];
}

export type OutputCheck = { readonly valid: true } | { readonly valid: false; readonly details: string[] };

type AjvModule = typeof import('ajv');

function loadAjv(): AjvModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- synchronous load on first use
  return require('ajv') as AjvModule;
}

/**
 * The engine a schema's `pattern` runs on: RE2's (re2js), which matches in time linear in the
 * text. A client's pattern is tested against the model's output, which the same client steers, so
 * a backtracking pattern (`^(a+)+$`) on JavaScript's engine could block the event loop for every
 * request. A pattern RE2 cannot read (lookaround, backreferences) does not compile: the schema is
 * refused with a 400 naming it.
 */
function linearRegExpEngine(): NonNullable<CodeOptions['regExp']> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded with Ajv, on first use
  const { RE2JS } = require('re2js') as typeof import('re2js');
  const engine = (pattern: string) => RE2JS.compile(pattern);
  return Object.assign(engine, { code: 'RE2JS.compile' });
}

/**
 * Validates parsed model output against the caller's schema with Ajv (docs/design/decisions.md §7). Details name
 * instance paths and keywords only, never values, so no model output reaches the client through
 * an error.
 */
@Injectable()
export class OutputValidator {
  // Loaded on first use: chat holds a validator for `response_format` on families the gateway
  // enforces it for, and loading Ajv costs an idle process about 8 MiB of RSS that a deployment
  // never asking for JSON output should not pay.
  private ajvModule: AjvModule | undefined;
  private options: Options | undefined;
  // Checks schemas against the meta-schema only; it never compiles a client's schema.
  private metaInstance: Ajv | undefined;
  // Each validator is compiled by an Ajv instance of its own, kept only by the validator: an Ajv
  // instance keeps every validator it ever compiled (and its schema) in its code scope, which no
  // removeSchema empties, so one shared instance would keep every schema ever sent. Evicting an
  // entry here frees the validator, its instance and its schema together.
  private readonly compiled = new LRUCache<string, ValidateFunction>({
    max: VALIDATOR_CACHE_SIZE,
    maxSize: VALIDATOR_CACHE_CHARACTERS,
  });
  private compilations = 0;

  // allErrors: the client sees every failure at once. strict off: strict mode only adds console
  // warnings. strictNumbers: NaN and ±Infinity are no number (JSON.parse reads `1e400` as
  // Infinity, which JSON.stringify writes as null: an answer must not pass as a number and go
  // out as null). logger off: Ajv would write a client's `format` name raw to stderr, where a line
  // break in it forges a log record. addUsedSchema off: an instance would otherwise register a
  // schema's `$id`, which no other schema may `$ref` (each instance compiles one schema anyway).
  // code.optimize off: the optimizing pass over the generated code costs more compile time than it
  // saves in validation, most of all for deep schemas, and a compile holds up every other request.
  private ajvOptions(): Options {
    this.options ??= {
      allErrors: true,
      strict: false,
      strictNumbers: true,
      logger: false,
      addUsedSchema: false,
      code: { regExp: linearRegExpEngine(), optimize: false },
    };
    return this.options;
  }

  private newAjv(options: Options): Ajv {
    this.ajvModule ??= loadAjv();
    return new this.ajvModule.default(options);
  }

  private get meta(): Ajv {
    this.metaInstance ??= this.newAjv(this.ajvOptions());
    return this.metaInstance;
  }

  /** How many schemas were compiled so far (a cache hit does not compile). */
  get compileCount(): number {
    return this.compilations;
  }

  /**
   * Compiles the schema before any upstream call, so a schema the subset walker let through but
   * JSON Schema itself refuses is an `invalid_schema` answer instead of a failure after tokens
   * were spent. Returns the problems, `[]` when usable.
   */
  prepare(schemaSha256: string, schema: Record<string, unknown>): string[] {
    if (this.compiled.has(schemaSha256)) return [];
    const body = withoutMetaSchema(schema);
    if (!this.meta.validateSchema(body)) return mostSpecific(this.meta.errors ?? []).map(describeSchemaError);
    try {
      this.validatorFor(schemaSha256, schema);
    } catch (error) {
      // What the meta-schema cannot see: a `$ref` that resolves nowhere (a local one, or any
      // remote one: nothing is fetched), a `pattern` that is no regular expression, an `$id` given
      // twice. Ajv's message names the schema's own text, never anything else.
      return [`$: the schema cannot be compiled: ${compileProblem(error)}`];
    }
    return [];
  }

  check(schemaSha256: string, schema: Record<string, unknown>, value: unknown): OutputCheck {
    const validate = this.validatorFor(schemaSha256, schema);
    if (validate(value)) return { valid: true };
    return { valid: false, details: limitOutputDetails((validate.errors ?? []).map(describeError)) };
  }

  /**
   * The cached validator, else a new one, kept when it fits the cache's budget. One larger than the
   * budget serves this call and is then garbage, its instance with it.
   */
  private validatorFor(schemaSha256: string, schema: Record<string, unknown>): ValidateFunction {
    const cached = this.compiled.get(schemaSha256);
    if (cached) return cached;
    const body = withoutMetaSchema(schema);
    // The meta-schema check is prepare's, done once per schema before its first compile.
    const validate = this.newAjv({ ...this.ajvOptions(), validateSchema: false }).compile(body);
    this.compilations++;
    this.compiled.set(schemaSha256, validate, { size: validatorSize(body, validate) });
    return validate;
  }
}

/**
 * What a compiled validator keeps, in characters: its schema (as JSON) and its generated code.
 * The schema alone is no fair measure: a deep schema generates many times more code per character
 * than a flat one. Together they track the validator's heap closely (docs/deployment.md "Memory").
 */
function validatorSize(schema: Record<string, unknown>, validate: ValidateFunction): number {
  return JSON.stringify(schema).length + Function.prototype.toString.call(validate).length;
}

/** Ajv's compile error in one bounded line. */
function compileProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0].trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** `$schema` is tolerated at the root and ignored (docs/design/behaviours.md §6.3); Ajv would try to resolve it. */
function withoutMetaSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...body } = schema;
  return body;
}

/**
 * Meta-schema failures without the noise of alternatives: an `items` problem is also reported as
 * "must be array" / "must match a schema in anyOf" on its parent (`items` may be a schema or an
 * array of schemas), so only errors with no deeper error below them are kept.
 */
function mostSpecific(errors: readonly ErrorObject[]): ErrorObject[] {
  return errors.filter(
    (error) =>
      error.keyword !== 'anyOf' && !errors.some((other) => other.instancePath.startsWith(`${error.instancePath}/`)),
  );
}

/** A meta-schema failure in the walker's path style: `/properties/a/enum` → `$.a: "enum" …`. */
function describeSchemaError(error: ErrorObject): string {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = '$';
  let index = 0;
  while (index < segments.length) {
    if (segments[index] === 'properties' && index + 1 < segments.length) {
      path = propertyPath(path, segments[index + 1]);
      index += 2;
    } else if (segments[index] === 'items') {
      path += '[]';
      index += 1;
    } else break;
  }
  const keyword = segments[index];
  return keyword === undefined ? `${path}: ${error.message}` : `${path}: ${JSON.stringify(keyword)} ${error.message}`;
}

/** `<instance path or $>: <reason>`; reasons come from the schema (names, types, counts), never the output. */
function describeError(error: ErrorObject): string {
  const path = error.instancePath === '' ? '$' : error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${path}: missing required property ${JSON.stringify(params.missingProperty)}`;
    case 'additionalProperties':
      return `${path}: additional properties are not allowed`;
    case 'type':
      return `${path}: must be of type ${JSON.stringify(params.type)}`;
    case 'enum':
      return `${path}: must be one of the allowed values`;
    case 'minItems':
      return `${path}: must have at least ${Number(params.limit)} items`;
    case 'maxItems':
      return `${path}: must have at most ${Number(params.limit)} items`;
    default:
      return `${path}: fails keyword ${JSON.stringify(error.keyword)}`;
  }
}
