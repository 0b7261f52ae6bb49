import type { OutputValidator } from './output-validator';
import { findSchemaBoundViolations } from './schema-bounds';
import { findUncheckableProperties, UNCHECKABLE_PROPERTY } from './uncheckable-properties';

/** Why a client's schema cannot be checked against, in words that follow the schema's own name. */
export interface UncheckableSchema {
  /** What is wrong, e.g. `is too large for the gateway to check answers against (…)`. */
  readonly problem: string;
  /** What the client can do, when there is more to say than the problem. */
  readonly fix?: string;
}

/** The first three places of a list, and how many more. */
function firstPlaces(places: readonly string[], separator: string): string {
  const more = places.length > 3 ? `; … and ${places.length - 3} more` : '';
  return `${places.slice(0, 3).join(separator)}${more}`;
}

/**
 * Why the gateway cannot check values against a client's JSON schema, or undefined when it can
 * (the schema is then compiled and cached under `key`). The size bounds come first: they are what
 * keeps a compile, which holds the event loop for a time growing with the schema, short. Then a
 * property no value can be checked for, which would have every value refused. Then what Ajv finds
 * wrong with the schema itself, compiling it. The words name the schema's own keys, never a value.
 */
export function uncheckableSchema(
  schema: Record<string, unknown>,
  key: string,
  validator: OutputValidator,
): UncheckableSchema | undefined {
  const passed = findSchemaBoundViolations(schema);
  if (passed.length > 0)
    return {
      problem: `is too large for the gateway to check answers against (${firstPlaces(passed, '; ')})`,
      fix: 'make it smaller',
    };
  const places = findUncheckableProperties(schema);
  if (places.length > 0)
    return {
      problem: `declares or requires a property named "${UNCHECKABLE_PROPERTY}", which the gateway cannot check answers for (at ${firstPlaces(places, ', ')})`,
      fix: 'rename it',
    };
  const problems = validator.prepare(key, schema);
  return problems.length === 0 ? undefined : { problem: `is not a valid JSON Schema (${problems[0]})` };
}
