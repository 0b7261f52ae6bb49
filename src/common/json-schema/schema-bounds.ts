import canonicalize from 'canonicalize';
import { isJsonObject } from '../json';
import { codePointLength } from '../text';
import { keywordPath, propertyPath } from './schema-paths';

/**
 * The size bounds of a client's JSON schema that the gateway compiles into a validator: the
 * structured route's (docs/structured.md "Schema subset") and a chat `response_format` the gateway
 * checks answers against (docs/chat.md "Structured output"). Depth, enum values and characters
 * are the upstream's own strict-mode limits. The node bound is the gateway's, below the
 * upstream's 5,000 properties: Ajv compiles a schema on the event loop at a cost that grows with
 * its nodes, and this bound keeps short how long one schema can hold every other request back.
 */
export const SCHEMA_LIMITS = {
  /**
   * Objects in the schema (the root, each property's schema, each `items` schema and any other),
   * and each name a `dependencies` or `dependentRequired` list requires.
   */
  nodes: 1_000,
  /** Steps below the root (`properties`, `items` or any other keyword); also what keeps every walk of it shallow. */
  depth: 10,
  /** Entries of every `enum` together. */
  enumValues: 1_000,
  /** Code points of every property name and enum value together (a non-string value counts as its JSON). */
  characters: 120_000,
} as const;

/** Keywords whose value maps names to schemas: such a map is no schema itself, each of its values is one. */
export const SCHEMA_MAPS: ReadonlySet<string> = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);

/**
 * Keywords whose value maps a property to the names it requires: Ajv's code for such a list grows
 * faster than its length (a list of 2,000 names compiles for most of a second), so each listed name
 * counts as a node.
 */
const NAME_LISTS: ReadonlySet<string> = new Set(['dependencies', 'dependentRequired']);

/** What one walk counts. */
interface Tally {
  nodes: number;
  /** Of `nodes`, the names listed under NAME_LISTS. */
  listedNames: number;
  enumValues: number;
  characters: number;
  /** The places nested too deep, in walk order. */
  readonly tooDeep: string[];
}

/**
 * Every bound the schema passes: the totals first (nodes, enum values, characters), one entry
 * each, then each place nested too deep. Every object anywhere in the schema counts as a node,
 * not only those under keywords known to hold schemas: Ajv compiles whatever a `$ref` points at,
 * an unknown keyword's value or an `enum` entry included, so a walk of known keywords alone would
 * let a schema hide its size. Keys are visited sorted, so the places come in a stable order
 * (`properties` entries are `.name`, `items` is `[]`, another keyword is `/keyword`).
 */
export function findSchemaBoundViolations(schema: unknown): string[] {
  const tally: Tally = { nodes: 0, listedNames: 0, enumValues: 0, characters: 0, tooDeep: [] };
  visit(schema, '$', 0, tally);
  const found: string[] = [];
  if (tally.nodes > SCHEMA_LIMITS.nodes)
    found.push(
      `$: the schema has ${tally.nodes} nodes (the root, each property's schema, each "items" schema and any other object${listed(tally)}); at most ${SCHEMA_LIMITS.nodes} are allowed`,
    );
  if (tally.enumValues > SCHEMA_LIMITS.enumValues)
    found.push(
      `$: the schema has ${tally.enumValues} enum values in all; at most ${SCHEMA_LIMITS.enumValues} are allowed`,
    );
  if (tally.characters > SCHEMA_LIMITS.characters)
    found.push(
      `$: property names and enum values have ${tally.characters} characters in all; at most ${SCHEMA_LIMITS.characters} are allowed`,
    );
  return [...found, ...tally.tooDeep];
}

/**
 * Calls `each` with every object or array value under `node`'s keys, keys sorted, and its place in
 * the bounds' path style: each entry of a SCHEMA_MAPS map at `.name` (below `/keyword` for maps
 * other than `properties`), an `items` object at `[]`, any other value at `/keyword`. `skip`:
 * keywords whose values are not walked. Every walk of a client's schema steps down through here,
 * so they all name a place alike.
 */
export function forEachSchemaChild(
  node: Record<string, unknown>,
  path: string,
  each: (child: unknown, childPath: string) => void,
  skip?: ReadonlySet<string>,
): void {
  for (const key of Object.keys(node).sort()) {
    if (skip?.has(key)) continue;
    const child = node[key];
    if (SCHEMA_MAPS.has(key) && isJsonObject(child)) {
      const mapPath = key === 'properties' ? path : keywordPath(path, key);
      for (const name of Object.keys(child).sort()) each(child[name], propertyPath(mapPath, name));
      continue;
    }
    if (typeof child !== 'object' || child === null) continue;
    each(child, key === 'items' && isJsonObject(child) ? `${path}[]` : keywordPath(path, key));
  }
}

/** An object one level below its parent; arrays hold their entries at the array's own level. */
function visit(value: unknown, path: string, depth: number, tally: Tally): void {
  if (Array.isArray(value)) {
    value.forEach((entry, index) => visit(entry, `${path}[${index}]`, depth, tally));
    return;
  }
  if (!isJsonObject(value)) return;
  if (depth > SCHEMA_LIMITS.depth) {
    tally.tooDeep.push(`${path}: schema nesting exceeds ${SCHEMA_LIMITS.depth} levels`);
    return;
  }
  tally.nodes++;
  for (const key of NAME_LISTS) {
    const lists = value[key];
    if (isJsonObject(lists)) countListedNames(lists, tally);
  }
  const { properties, enum: values } = value;
  if (isJsonObject(properties)) for (const name of Object.keys(properties)) tally.characters += codePointLength(name);
  if (Array.isArray(values)) countEnumValues(values, tally);
  forEachSchemaChild(value, path, (child, childPath) => visit(child, childPath, depth + 1, tally));
}

function countListedNames(lists: Record<string, unknown>, tally: Tally): void {
  for (const list of Object.values(lists))
    if (Array.isArray(list)) {
      tally.nodes += list.length;
      tally.listedNames += list.length;
    }
}

/** The node count's own words for the listed names, when there are any. */
const listed = (tally: Tally) =>
  tally.listedNames === 0
    ? ''
    : `, ${tally.listedNames} of them names that "dependencies" or "dependentRequired" lists require`;

function countEnumValues(values: readonly unknown[], tally: Tally): void {
  tally.enumValues += values.length;
  for (const value of values)
    tally.characters += typeof value === 'string' ? codePointLength(value) : (canonicalize(value) ?? '').length;
}
