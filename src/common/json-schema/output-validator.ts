import { Injectable } from '@nestjs/common';
import type Ajv from 'ajv';
import type { CodeOptions, ErrorObject, ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import { propertyPath } from './schema-paths';

/** At most this many validation details, then one summary entry (docs/design/behaviours.md §6.8). */
export const MAX_OUTPUT_DETAILS = 20;
/**
 * Compiled validators kept. Compiling is the costly part, so a schema is compiled once and reused
 * by its canonical checksum; the bound keeps a stream of one-off schemas from growing memory —
 * Ajv's own cache included: an evicted validator's schema is removed from Ajv too.
 */
export const VALIDATOR_CACHE_SIZE = 256;

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
  // Created on first use: chat holds a validator for `response_format` on families the gateway
  // enforces it for, and loading Ajv costs an idle process about 8 MiB of RSS that a deployment
  // never asking for JSON output should not pay.
  private ajvInstance: Ajv | undefined;
  // Ajv keeps every compiled schema in its own cache (keyed by the schema object) until
  // removeSchema; without the dispose hook, evicting here would free nothing.
  private readonly compiled = new LRUCache<string, ValidateFunction>({
    max: VALIDATOR_CACHE_SIZE,
    dispose: (validate) => this.ajv.removeSchema(validate.schema),
  });
  private compilations = 0;

  // allErrors: the client sees every failure at once. strict off: strict mode only adds console
  // warnings. logger off: Ajv would write a client's `format` name raw to stderr, where a line
  // break in it forges a log record. addUsedSchema off: Ajv would otherwise register every schema
  // with an `$id` for the whole process, so one client's schema could be `$ref`ed by another's and
  // a second schema with the same `$id` would fail to compile; each schema is compiled on its own.
  private get ajv(): Ajv {
    this.ajvInstance ??= new (loadAjv().default)({
      allErrors: true,
      strict: false,
      logger: false,
      addUsedSchema: false,
      code: { regExp: linearRegExpEngine() },
    });
    return this.ajvInstance;
  }

  /** How many schemas were compiled so far (a cache hit does not compile). */
  get compileCount(): number {
    return this.compilations;
  }

  /**
   * Compiles the schema before any upstream call, so a schema the subset walker let through but
   * JSON Schema itself refuses (duplicate `required` or `enum` entries) is an `invalid_schema`
   * answer instead of a failure after tokens were spent. Returns the problems, `[]` when usable.
   */
  prepare(schemaSha256: string, schema: Record<string, unknown>): string[] {
    if (this.compiled.has(schemaSha256)) return [];
    const body = withoutMetaSchema(schema);
    if (!this.ajv.validateSchema(body)) return mostSpecific(this.ajv.errors ?? []).map(describeSchemaError);
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
    const details = (validate.errors ?? []).map(describeError);
    if (details.length > MAX_OUTPUT_DETAILS) {
      const extra = details.length - MAX_OUTPUT_DETAILS;
      return { valid: false, details: [...details.slice(0, MAX_OUTPUT_DETAILS), `… and ${extra} more violations`] };
    }
    return { valid: false, details };
  }

  private validatorFor(schemaSha256: string, schema: Record<string, unknown>): ValidateFunction {
    const cached = this.compiled.get(schemaSha256);
    if (cached) return cached;
    const validate = this.ajv.compile(withoutMetaSchema(schema));
    this.compilations++;
    this.compiled.set(schemaSha256, validate);
    return validate;
  }
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
