/**
 * The result of reading a model's text as one JSON object (docs/design/behaviours.md §6.8): the
 * structured route's output, and chat answers held to a `response_format` by the gateway.
 */
export type ParsedOutput = { readonly ok: true; readonly value: Record<string, unknown> } | { readonly ok: false };

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
  if (whole.parsed) return asObject(whole.value);
  if (candidate.startsWith('{')) return { ok: false };
  const first = candidate.indexOf('{');
  const last = candidate.lastIndexOf('}');
  if (first === -1 || last <= first) return { ok: false };
  const span = tryParse(candidate.slice(first, last + 1));
  return span.parsed ? asObject(span.value) : { ok: false };
}

function tryParse(text: string): { parsed: true; value: unknown } | { parsed: false } {
  try {
    return { parsed: true, value: JSON.parse(text) };
  } catch {
    return { parsed: false };
  }
}

function asObject(value: unknown): ParsedOutput {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? { ok: true, value: value as Record<string, unknown> }
    : { ok: false };
}
