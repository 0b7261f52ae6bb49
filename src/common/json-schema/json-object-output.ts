import { isJsonObject } from '../json';

/**
 * The result of reading a model's text as one JSON object (docs/design/behaviours.md §6.8): the
 * structured route's output, and chat answers held to a `response_format` by the gateway.
 */
export type ParsedOutput =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  /**
   * Not a JSON object, or (with `nonFinite`) one holding numbers beyond what a double holds, at
   * these instance paths (`/a/0`, as Ajv's): JSON.parse reads them as ±Infinity, which
   * JSON.stringify writes as null, a value the model never gave, and which no schema keyword
   * catches where the schema names no type.
   */
  | { readonly ok: false; readonly nonFinite?: readonly string[] };

/** One whole-text markdown fence: ```json … ``` (any info string, or none). */
const SURROUNDING_FENCE = /^```[^\n`]*\n([\s\S]*?)\n?[ \t]*```$/;

/**
 * Text → object: trim; strip one surrounding code fence; if what is left does not start with
 * `{`, keep the span from the first `{` to the last `}` (prose around an object). Anything that
 * is not then a JSON object (prose, an array, a number, empty) is unparsable.
 */
export function parseJsonObjectOutput(text: string): ParsedOutput {
  let candidate = text.trim();
  const fenced = SURROUNDING_FENCE.exec(candidate);
  if (fenced) candidate = fenced[1].trim();
  if (candidate === '') return { ok: false };
  const whole = tryParse(candidate);
  // A complete JSON value of another kind (an array of objects, say) must not be mined for an object inside it.
  if (whole.parsed) return asObject(whole.value, candidate);
  if (candidate.startsWith('{')) return { ok: false };
  const first = candidate.indexOf('{');
  const last = candidate.lastIndexOf('}');
  if (first === -1 || last <= first) return { ok: false };
  const spanText = candidate.slice(first, last + 1);
  const span = tryParse(spanText);
  return span.parsed ? asObject(span.value, spanText) : { ok: false };
}

function tryParse(text: string): { parsed: true; value: unknown } | { parsed: false } {
  try {
    return { parsed: true, value: JSON.parse(text) };
  } catch {
    return { parsed: false };
  }
}

function asObject(value: unknown, text: string): ParsedOutput {
  if (!isJsonObject(value)) return { ok: false };
  if (MAY_OVERFLOW.test(text)) {
    const nonFinite = nonFinitePaths(value);
    if (nonFinite.length > 0) return { ok: false, nonFinite };
  }
  return { ok: true, value };
}

/**
 * What a number literal past a double's range must contain: a positive exponent (a digit, `e`,
 * a digit), or 309 digits in a row (the largest double has 309 integer digits). Text without
 * either, most answers, is not walked; a match in a string only costs the walk.
 */
const MAY_OVERFLOW = /\d[eE]\+?\d|\d{309}/;

/** The instance paths of ±Infinity in a parsed value, in document order; iterative, as deep as the value is. */
function nonFinitePaths(root: Record<string, unknown>): string[] {
  const found: string[] = [];
  const pending: [unknown, string][] = [[root, '']];
  while (pending.length > 0) {
    const [value, path] = pending.pop()!;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) found.push(path);
    } else if (typeof value === 'object' && value !== null) {
      const entries = Array.isArray(value)
        ? value.map((item, index) => [String(index), item] as const)
        : Object.entries(value);
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, item] = entries[index];
        if (typeof item === 'number' || (typeof item === 'object' && item !== null))
          pending.push([item, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
      }
    }
  }
  return found;
}
