import { isJsonObject } from '../../common/json';

/**
 * Tool schemas go to Code Assist as `parametersJsonSchema` (as the Gemini CLI declares every
 * tool), which takes full JSON Schema: `const`, `oneOf`, `allOf`, `not`, type arrays,
 * `additionalProperties`, `exclusiveMinimum`… all pass unchanged. Preparing a schema walks every
 * schema node — the root, each value of `properties` (property names are never touched), `items`
 * (one schema or an array), members of `anyOf`/`oneOf`/`allOf`, and `not` — inlines local
 * `$ref`s (the declaration must stand alone) and drops only document metadata and OpenAI's
 * `strict` flag, which are not part of a parameter schema. Hand-written: no schema library
 * inlines references this way while leaving every other keyword alone.
 */
const DROPPED_KEYWORDS = new Set(['$schema', '$id', '$comment', '$ref', '$defs', 'definitions', 'strict']);
const COMBINATORS = ['anyOf', 'oneOf', 'allOf'] as const;
export const MAX_REF_DEPTH = 8;
const OPAQUE_OBJECT = { type: 'object' } as const;

export interface SchemaCleanReport {
  /** References replaced by `{"type":"object"}` (cyclic, deeper than 8, not local, or missing). */
  unresolvedRefs: number;
}

type Schema = Record<string, unknown>;
/** Returns a cleaned deep copy of `schema`; the input is not modified. */
export function cleanSchema(schema: Schema, report: SchemaCleanReport = { unresolvedRefs: 0 }): Schema {
  return cleanNode(schema, schema, [], report);
}

function cleanNode(node: Schema, root: Schema, refStack: readonly string[], report: SchemaCleanReport): Schema {
  const inlined = inlineRefs(node, root, refStack);
  if (!inlined) {
    report.unresolvedRefs++;
    return { ...OPAQUE_OBJECT };
  }
  const { schema, stack } = inlined;
  const clean = (child: unknown): unknown => (isJsonObject(child) ? cleanNode(child, root, stack, report) : child);
  const result: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED_KEYWORDS.has(key)) continue;
    if (key === 'properties' && isJsonObject(value)) {
      result.properties = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, clean(child)]));
    } else if (key === 'items') {
      result.items = Array.isArray(value) ? value.map(clean) : clean(value);
    } else if ((COMBINATORS as readonly string[]).includes(key) && Array.isArray(value)) {
      result[key] = value.map(clean);
    } else if (key === 'not') {
      result.not = clean(value);
    } else {
      result[key] = structuredClone(value);
    }
  }
  return result;
}

/**
 * Replaces `{"$ref": "#/…"}` by a copy of the target merged with the node's sibling keys (the
 * siblings win), repeatedly, while tracking the chain of references on the current path.
 * Returns undefined for a cyclic, too deep, non-local or dangling reference.
 */
function inlineRefs(
  node: Schema,
  root: Schema,
  refStack: readonly string[],
): { schema: Schema; stack: readonly string[] } | undefined {
  let schema = node;
  let stack = refStack;
  while (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    if (stack.includes(ref) || stack.length >= MAX_REF_DEPTH) return undefined;
    const target = resolveLocalRef(root, ref);
    if (!target) return undefined;
    const { $ref: _omitted, ...siblings } = schema;
    schema = { ...target, ...siblings };
    stack = [...stack, ref];
  }
  return { schema, stack };
}

/** Resolves a local JSON pointer (`#/$defs/X`, `#/definitions/X`, …) against the root schema. */
function resolveLocalRef(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let current: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const segment = decodePointerSegment(raw);
    if (segment === undefined) return undefined;
    if (!isJsonObject(current) || !(segment in current)) return undefined;
    current = current[segment];
  }
  return isJsonObject(current) ? current : undefined;
}

function decodePointerSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
  } catch {
    return undefined;
  }
}
