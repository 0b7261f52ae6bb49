/** A parsed JSON object (not an array, not null). */
export type JsonObject = Record<string, unknown>;

/** True for a plain JSON object: every upstream payload, login file and schema node is read through this. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value when it is a string, else `undefined`: how an upstream payload's text fields are read. */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The value when it is a number, else `undefined`: how an upstream payload's counts are read. */
export function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

/** The value when it is an integer, else `undefined`. */
export function int(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

/** The value when it is a non-empty string, else `undefined` (token and login-file fields). */
export function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The deepest nesting of arrays and objects a request body may have (the body itself is level 1).
 * Generous for real traffic: a 64-level structured schema (the walker's own bound) needs about 130
 * levels, and serde_json-based clients such as the Codex CLI cannot even produce more than 128. It
 * is checked once, right after JSON parsing, so no recursive code (JSON.stringify,
 * canonicalization, Ajv, the adapters) ever sees a value deep enough to exhaust the stack.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * True when `value` nests arrays/objects deeper than `maxDepth` levels. Iterative on purpose (an
 * explicit stack, no recursion), because it must survive exactly the inputs it refuses; O(n) in the
 * number of containers and their entries, and it stops at the first level too deep.
 */
export function exceedsJsonDepth(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (maxDepth < 1) return true;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const childDepth = depths.pop()! + 1;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (let index = 0; index < children.length; index++) {
      const child = children[index];
      if (typeof child !== 'object' || child === null) continue;
      if (childDepth > maxDepth) return true;
      nodes.push(child);
      depths.push(childDepth);
    }
  }
  return false;
}
