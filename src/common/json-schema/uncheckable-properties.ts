import { isJsonObject } from '../json';
import { forEachSchemaChild } from './schema-bounds';

/**
 * The property name no answer can be checked for. Ajv's compiled validator reads a property by
 * name from the answer object, and `__proto__` there names the object's prototype, not the key
 * the model wrote: a declared `__proto__` is dropped from the schema (so with
 * `"additionalProperties": false` every answer that has it fails), and a required one always
 * counts as present. A schema naming it is refused before any upstream call, instead of spending
 * calls on answers that can never pass.
 */
export const UNCHECKABLE_PROPERTY = '__proto__';

/** The problem at `path`, an object schema declaring or requiring the property, in `details` style. */
export const uncheckablePropertyProblem = (path: string) =>
  `${path}: property "${UNCHECKABLE_PROPERTY}" is not supported; rename it`;

/** Keywords that name properties as their keys, and as their string lists, beside `properties`. */
const DEPENDENCY_KEYWORDS = ['dependentRequired', 'dependentSchemas', 'dependencies'] as const;

/**
 * Whether an object schema declares (`properties`), requires (`required`) or makes another
 * property depend on (`dependentRequired`, `dependentSchemas`, `dependencies`) the property.
 */
export function namesUncheckableProperty(node: Record<string, unknown>): boolean {
  const { properties, required } = node;
  if (isJsonObject(properties) && Object.hasOwn(properties, UNCHECKABLE_PROPERTY)) return true;
  if (Array.isArray(required) && required.includes(UNCHECKABLE_PROPERTY)) return true;
  return DEPENDENCY_KEYWORDS.some((keyword) => {
    const map = node[keyword];
    if (!isJsonObject(map)) return false;
    if (Object.hasOwn(map, UNCHECKABLE_PROPERTY)) return true;
    return Object.values(map).some((names) => Array.isArray(names) && names.includes(UNCHECKABLE_PROPERTY));
  });
}

/** Keywords whose value is data, not schemas: a `properties` key inside one is no declaration. */
const DATA_KEYWORDS: ReadonlySet<string> = new Set(['enum', 'const', 'default', 'examples']);

/**
 * The places of every object schema that declares or requires the property, anywhere in a JSON
 * Schema (under `$defs`, `anyOf` and the like too), in the bounds' path style (`.name`, `[]`,
 * `/keyword`), keys sorted. Run only on a schema within the size bounds, whose depth they bound.
 */
export function findUncheckableProperties(schema: unknown): string[] {
  const places: string[] = [];
  visit(schema, '$', places);
  return places;
}

function visit(value: unknown, path: string, places: string[]): void {
  if (Array.isArray(value)) {
    value.forEach((entry, index) => visit(entry, `${path}[${index}]`, places));
    return;
  }
  if (!isJsonObject(value)) return;
  if (namesUncheckableProperty(value)) places.push(path);
  forEachSchemaChild(value, path, (child, childPath) => visit(child, childPath, places), DATA_KEYWORDS);
}
