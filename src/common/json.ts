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
 * The most arrays and objects a request body may hold, counted before it is parsed. Parsing is
 * where a body's memory goes: 32 MiB of `{},` parses into 11 million objects, over 700 MiB of heap
 * and seconds of a blocked event loop, where the same bytes of text cost about their own size.
 * Real requests stay far below: a message is a few containers, a tool schema some dozens, and a
 * history of 100,000 messages is past every model's context window. The bound is also what keeps
 * the count cheap: text shorter than twice the bound, which includes the long agent histories of
 * a megabyte, cannot exceed it and is not read.
 */
export const MAX_JSON_CONTAINERS = 1_000_000;

/**
 * True when the JSON text opens more than `max` arrays and objects, brackets inside strings not
 * counted. Run on the text before `JSON.parse`, so a body that would parse into millions of
 * objects never does. A container takes at least two characters, so shorter text is not read at
 * all; strings are skipped by `indexOf`, so a history of long texts costs little more than a scan
 * of its structure. Text that is not JSON is counted as far as it goes (the parser refuses it).
 */
export function exceedsJsonContainers(text: string, max: number = MAX_JSON_CONTAINERS): boolean {
  if (text.length < 2 * (max + 1)) return false;
  let containers = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) index = closingQuote(text, index);
    else if ((code === OPEN_BRACE || code === OPEN_BRACKET) && ++containers > max) return true;
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/** The index of the quote that closes the string opened at `open` (past the end when none does). */
function closingQuote(text: string, open: number): number {
  let quote = text.indexOf('"', open + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    // An even run of backslashes escapes itself, not the quote.
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  return text.length;
}

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
