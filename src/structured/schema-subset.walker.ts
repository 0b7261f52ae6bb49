import { isJsonObject } from '../common/json';
import { propertyPath, quote } from '../common/json-schema/schema-paths';

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

/**
 * Deeper schemas are refused instead of walked: canonicalization and Ajv recurse too, and a
 * 256 KiB schema can nest thousands of levels, enough to exhaust the stack.
 */
export const MAX_SCHEMA_DEPTH = 64;

type SchemaNode = Record<string, unknown>;

/** Every violation of the subset, in walk order (root first, object keys sorted). */
export function findSchemaViolations(schema: unknown): string[] {
  const violations: string[] = [];
  walkNode(schema, '$', 0, violations);
  return violations;
}

/** The `details` of an `invalid_schema` answer: at most 50 entries, then a summary entry. */
export function limitDetails(violations: readonly string[], max = MAX_SCHEMA_DETAILS): string[] {
  if (violations.length <= max) return [...violations];
  return [...violations.slice(0, max), `… and ${violations.length - max} more violations`];
}

function walkNode(node: unknown, path: string, depth: number, out: string[]): void {
  if (!isJsonObject(node)) {
    out.push(`${path}: schema node must be a JSON object`);
    return;
  }
  if (depth > MAX_SCHEMA_DEPTH) {
    out.push(`${path}: schema nesting exceeds ${MAX_SCHEMA_DEPTH} levels`);
    return;
  }
  const isRoot = depth === 0;
  const type = typeof node.type === 'string' && SUPPORTED_TYPES.has(node.type) ? node.type : undefined;
  for (const key of Object.keys(node).sort()) {
    if (key === '$schema' && isRoot) continue;
    if (!ALLOWED_KEYWORDS.has(key)) {
      out.push(`${path}: keyword ${quote(key)} is not supported`);
      continue;
    }
    checkKeywordValue(node, key, type, path, out);
  }
  if (!('type' in node)) out.push(`${path}: "type" is required`);
  if (isRoot && node.type !== 'object') out.push('$: the root schema must have type "object"');
  if (type === 'object') walkObject(node, path, depth, out);
  if (type === 'array') walkArray(node, path, depth, out);
}

/** Checks one allowed keyword's own value, at its place in the sorted key order. */
function checkKeywordValue(node: SchemaNode, key: string, type: string | undefined, path: string, out: string[]): void {
  const value = node[key];
  switch (key) {
    case 'type':
      if (typeof value !== 'string') out.push(`${path}: "type" must be a single string; union types are not supported`);
      else if (!SUPPORTED_TYPES.has(value)) out.push(`${path}: type ${quote(value)} is not supported`);
      return;
    case 'enum':
      if (!Array.isArray(value) || value.length === 0) out.push(`${path}: "enum" must be a non-empty array`);
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

function walkObject(node: SchemaNode, path: string, depth: number, out: string[]): void {
  if (node.additionalProperties !== false) out.push(`${path}: "additionalProperties" must be present and set to false`);
  const properties = isJsonObject(node.properties) ? node.properties : undefined;
  if (!properties) out.push(`${path}: "properties" must be an object`);
  const required = node.required;
  const requiredNames =
    Array.isArray(required) && required.every((name) => typeof name === 'string') ? required : undefined;
  if (!requiredNames) out.push(`${path}: "required" must be an array of strings`);
  const declared = properties ? Object.keys(properties).sort() : [];
  if (requiredNames) {
    const declaredSet = new Set(declared);
    for (const name of [...new Set(requiredNames)].sort()) {
      if (!declaredSet.has(name)) out.push(`${path}: required property ${quote(name)} is not in "properties"`);
    }
  }
  // Strict mode needs every property required; a missing `required` was reported once above.
  if (requiredNames) {
    const requiredSet = new Set(requiredNames);
    for (const name of declared) {
      if (!requiredSet.has(name)) out.push(`${path}: property ${quote(name)} is missing from "required"`);
    }
  }
  for (const name of declared) walkNode(properties![name], propertyPath(path, name), depth + 1, out);
}

function walkArray(node: SchemaNode, path: string, depth: number, out: string[]): void {
  const hasItems = isJsonObject(node.items);
  if (!hasItems) out.push(`${path}: array schemas must declare "items"`);
  const { minItems, maxItems } = node;
  if (isNonNegativeInteger(minItems) && isNonNegativeInteger(maxItems) && minItems > maxItems) {
    out.push(`${path}: "minItems" is greater than "maxItems"`);
  }
  if (hasItems) walkNode(node.items, `${path}[]`, depth + 1, out);
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
