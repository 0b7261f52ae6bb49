import canonicalize from 'canonicalize';
import { isJsonObject } from '../common/json';
import { findSchemaBoundViolations, SCHEMA_LIMITS } from '../common/json-schema/schema-bounds';
import { propertyPath, quote } from '../common/json-schema/schema-paths';
import {
  namesUncheckableProperty,
  UNCHECKABLE_PROPERTY,
  uncheckablePropertyProblem,
} from '../common/json-schema/uncheckable-properties';

/**
 * The strict JSON-schema subset of structured inference (contract endpoint rules 2–4,
 * docs/design/behaviours.md §6.3). Hand-written because the subset and its detail strings are ours:
 * a validator library would accept the whole JSON-schema language, and clients need every
 * violation at once, with stable paths, to fix a schema in one round trip.
 */

const ALLOWED_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'enum',
  'description',
  'title',
]);
const SUPPORTED_TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
const OBJECT_KEYWORDS = new Set(['properties', 'required', 'additionalProperties']);
const ARRAY_KEYWORDS = new Set(['items', 'minItems', 'maxItems']);

/** At most this many violations are listed; one summary entry follows when there were more. */
export const MAX_SCHEMA_DETAILS = 50;

type SchemaNode = Record<string, unknown>;

/** One walk: the violations in walk order. */
interface Walk {
  readonly out: string[];
}

/**
 * Every violation of the subset: the size bounds broken (they concern the whole schema; shared
 * with every other schema the gateway compiles), then the rest in walk order (root first, object
 * keys sorted).
 */
export function findSchemaViolations(schema: unknown): string[] {
  const walk: Walk = { out: [] };
  walkNode(schema, '$', 0, walk);
  return [...findSchemaBoundViolations(schema), ...walk.out];
}

/** The `details` of an `invalid_schema` answer: at most 50 entries, then a summary entry. */
export function limitDetails(violations: readonly string[], max = MAX_SCHEMA_DETAILS): string[] {
  if (violations.length <= max) return [...violations];
  return [...violations.slice(0, max), `… and ${violations.length - max} more violations`];
}

function walkNode(node: unknown, path: string, depth: number, walk: Walk): void {
  const { out } = walk;
  if (!isJsonObject(node)) {
    out.push(`${path}: schema node must be a JSON object`);
    return;
  }
  // The bounds walk reports it; stopping here keeps this walk shallow too.
  if (depth > SCHEMA_LIMITS.depth) return;
  const isRoot = depth === 0;
  const type = typeof node.type === 'string' && SUPPORTED_TYPES.has(node.type) ? node.type : undefined;
  for (const key of Object.keys(node).sort()) {
    if (key === '$schema' && isRoot) continue;
    if (!ALLOWED_KEYWORDS.has(key)) {
      out.push(`${path}: keyword ${quote(key)} is not supported`);
      continue;
    }
    checkKeywordValue(node, key, type, path, walk);
  }
  if (!('type' in node)) out.push(`${path}: "type" is required`);
  if (isRoot && node.type !== 'object') out.push('$: the root schema must have type "object"');
  if (type === 'object') walkObject(node, path, depth, walk);
  if (type === 'array') walkArray(node, path, depth, walk);
}

/** Checks one allowed keyword's own value, at its place in the sorted key order. */
function checkKeywordValue(node: SchemaNode, key: string, type: string | undefined, path: string, walk: Walk): void {
  const { out } = walk;
  const value = node[key];
  switch (key) {
    case 'type':
      if (typeof value !== 'string') out.push(`${path}: "type" must be a single string; union types are not supported`);
      else if (!SUPPORTED_TYPES.has(value)) out.push(`${path}: type ${quote(value)} is not supported`);
      return;
    case 'enum':
      if (!Array.isArray(value) || value.length === 0) out.push(`${path}: "enum" must be a non-empty array`);
      else checkEnumValues(value, path, walk);
      return;
    case 'description':
    case 'title':
      if (typeof value !== 'string') out.push(`${path}: "${key}" must be a string`);
      return;
  }
  if (type === undefined) return;
  if ((OBJECT_KEYWORDS.has(key) && type !== 'object') || (ARRAY_KEYWORDS.has(key) && type !== 'array')) {
    out.push(`${path}: "${key}" does not apply to type ${quote(type)}`);
    return;
  }
  if ((key === 'minItems' || key === 'maxItems') && !isNonNegativeInteger(value)) {
    out.push(`${path}: "${key}" must be a non-negative integer`);
  }
}

/** Refuses an enum value listed twice (JSON Schema wants them unique). */
function checkEnumValues(values: readonly unknown[], path: string, walk: Walk): void {
  const seen = new Map<string, number>();
  values.forEach((value, index) => {
    // RFC 8785 text: equal JSON values (1 and 1.0, keys in any order) read the same.
    const text = canonicalize(value) ?? '';
    const first = seen.get(text);
    if (first === undefined) seen.set(text, index);
    else walk.out.push(`${path}: "enum" holds the same value twice (entries ${first} and ${index})`);
  });
}

function walkObject(node: SchemaNode, path: string, depth: number, walk: Walk): void {
  const { out } = walk;
  if (node.additionalProperties !== false) out.push(`${path}: "additionalProperties" must be present and set to false`);
  const properties = isJsonObject(node.properties) ? node.properties : undefined;
  if (!properties) out.push(`${path}: "properties" must be an object`);
  const required = node.required;
  const requiredNames =
    Array.isArray(required) && required.every((name) => typeof name === 'string') ? required : undefined;
  if (!requiredNames) out.push(`${path}: "required" must be an array of strings`);
  const declared = properties ? Object.keys(properties).sort() : [];
  // One entry for the name the validator cannot check, declared or required: renaming it is the fix,
  // so a mismatch of the two lists over it is not reported on top.
  if (namesUncheckableProperty(node)) out.push(uncheckablePropertyProblem(path));
  if (requiredNames) {
    const declaredSet = new Set(declared);
    const requiredSet = new Set<string>();
    const repeated = new Set<string>();
    for (const name of requiredNames) (requiredSet.has(name) ? repeated : requiredSet).add(name);
    for (const name of [...repeated].sort()) out.push(`${path}: "required" lists ${quote(name)} more than once`);
    for (const name of [...requiredSet].sort()) {
      if (!declaredSet.has(name) && name !== UNCHECKABLE_PROPERTY)
        out.push(`${path}: required property ${quote(name)} is not in "properties"`);
    }
    // Strict mode needs every property required; a missing `required` was reported once above.
    for (const name of declared) {
      if (!requiredSet.has(name) && name !== UNCHECKABLE_PROPERTY)
        out.push(`${path}: property ${quote(name)} is missing from "required"`);
    }
  }
  for (const name of declared) walkNode(properties![name], propertyPath(path, name), depth + 1, walk);
}

function walkArray(node: SchemaNode, path: string, depth: number, walk: Walk): void {
  const hasItems = isJsonObject(node.items);
  if (!hasItems) walk.out.push(`${path}: array schemas must declare "items"`);
  const { minItems, maxItems } = node;
  if (isNonNegativeInteger(minItems) && isNonNegativeInteger(maxItems) && minItems > maxItems) {
    walk.out.push(`${path}: "minItems" is greater than "maxItems"`);
  }
  if (hasItems) walkNode(node.items, `${path}[]`, depth + 1, walk);
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
