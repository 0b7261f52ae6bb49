import { isJsonObject } from '../../common/json';
import { SCHEMA_MAPS } from '../../common/json-schema/schema-bounds';
import { GatewayError } from '../../core/gateway.error';

/**
 * Tool schemas go to Code Assist as `parametersJsonSchema` (as the Gemini CLI declares every
 * tool), which takes full JSON Schema: `const`, `oneOf`, `allOf`, `not`, type arrays,
 * `additionalProperties`, `exclusiveMinimum`… all pass unchanged. Preparing a schema walks every
 * place JSON Schema (draft 4 to 2020-12) reads a schema: the root, each value of the maps in
 * SCHEMA_MAPS (the names are never touched; draft 7's `dependencies` may map a name to a list of
 * names, copied as it is; `$defs` and `definitions` are dropped before) and the schema or each schema of the
 * keywords in SUBSCHEMA_KEYWORDS. At each node it inlines local `$ref`s (the definitions are
 * dropped, so a reference anywhere the walk misses would dangle, which the backend refuses) and
 * drops only document metadata and OpenAI's `strict` flag, which are not part of a parameter
 * schema. Data (`const`, `enum`, `default`, `examples`) and unknown keywords are copied as they
 * are. Hand-written: no schema library inlines references this way while leaving every other
 * keyword alone.
 */
const DROPPED_KEYWORDS = new Set(['$schema', '$id', '$comment', '$ref', '$defs', 'definitions', 'strict']);
/** Keywords whose value is a schema or a list of schemas (`items` is either: draft 7 tuples). */
const SUBSCHEMA_KEYWORDS = new Set([
  'items',
  'additionalItems',
  'prefixItems',
  'contains',
  'additionalProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
]);
/**
 * References resolved against anchors (`$dynamicAnchor`, `$recursiveAnchor`) rather than a
 * pointer: never inlined, like a cyclic reference (`$recursiveRef` is one by definition).
 */
const DYNAMIC_REF_KEYWORDS = ['$dynamicRef', '$recursiveRef'] as const;
export const MAX_REF_DEPTH = 8;
/**
 * What inlining may add to one request's tool schemas, in characters of serialized JSON. The depth
 * bound alone does not bound the copies: definitions that each reference the next one many times
 * grow exponentially (8 definitions of 8 such properties: a 2 KB body, 8^8 copies). Only copies of
 * `$ref` targets count (the client's own schema is copied once, and the body cap bounds it), each
 * inlining its whole target: an upper bound on what it adds, for one serialization per distinct
 * reference. 1 MiB is four times the whole schema the structured endpoint accepts and far above
 * what real agents' `$defs` expand to; it is per request, so many small tools cannot multiply it.
 */
export const MAX_INLINED_CHARS = 1024 * 1024;
const OPAQUE_OBJECT = { type: 'object' } as const;

export interface SchemaCleanReport {
  /** References replaced by `{"type":"object"}` (cyclic, deeper than 8, not local, missing, or dynamic). */
  unresolvedRefs: number;
  /**
   * Characters of `$ref` targets inlined so far by every schema cleaned with this report (the
   * tools of one request), checked against MAX_INLINED_CHARS; absent until something is inlined.
   */
  inlinedChars?: number;
}

type Schema = Record<string, unknown>;
/** Serialized sizes of the `$ref` targets of one schema, by reference text. */
type TargetSizes = Map<string, number>;

/**
 * Returns a cleaned deep copy of `schema`; the input is not modified. Throws 400 `invalid_request`
 * (`param: "tools"`) once the references inlined with this report pass MAX_INLINED_CHARS.
 */
export function cleanSchema(schema: Schema, report: SchemaCleanReport = { unresolvedRefs: 0 }): Schema {
  return cleanNode(schema, schema, [], report, new Map());
}

function cleanNode(
  node: Schema,
  root: Schema,
  refStack: readonly string[],
  report: SchemaCleanReport,
  sizes: TargetSizes,
): Schema {
  const inlined = inlineRefs(node, root, refStack, report, sizes);
  if (!inlined) {
    report.unresolvedRefs++;
    return { ...OPAQUE_OBJECT };
  }
  const { schema, stack } = inlined;
  const clean = (child: unknown): unknown =>
    isJsonObject(child) ? cleanNode(child, root, stack, report, sizes) : structuredClone(child);
  const result: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED_KEYWORDS.has(key)) continue;
    if (SCHEMA_MAPS.has(key) && isJsonObject(value)) {
      result[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, clean(child)]));
    } else if (SUBSCHEMA_KEYWORDS.has(key)) {
      result[key] = Array.isArray(value) ? value.map(clean) : clean(value);
    } else {
      result[key] = structuredClone(value);
    }
  }
  return result;
}

/**
 * Replaces `{"$ref": "#/…"}` by a copy of the target merged with the node's sibling keys (the
 * siblings win), repeatedly, while tracking the chain of references on the current path and
 * counting each target against MAX_INLINED_CHARS before it is copied.
 * Returns undefined for a cyclic, too deep, non-local, dangling or dynamic reference.
 */
function inlineRefs(
  node: Schema,
  root: Schema,
  refStack: readonly string[],
  report: SchemaCleanReport,
  sizes: TargetSizes,
): { schema: Schema; stack: readonly string[] } | undefined {
  let schema = node;
  let stack = refStack;
  for (;;) {
    if (DYNAMIC_REF_KEYWORDS.some((keyword) => typeof schema[keyword] === 'string')) return undefined;
    if (typeof schema.$ref !== 'string') break;
    const ref = schema.$ref;
    if (stack.includes(ref) || stack.length >= MAX_REF_DEPTH) return undefined;
    const target = resolveLocalRef(root, ref);
    if (!target) return undefined;
    spend(report, sizeOf(target, ref, sizes));
    const { $ref: _omitted, ...siblings } = schema;
    schema = { ...target, ...siblings };
    stack = [...stack, ref];
  }
  return { schema, stack };
}

function sizeOf(target: Schema, ref: string, sizes: TargetSizes): number {
  let size = sizes.get(ref);
  if (size === undefined) {
    size = JSON.stringify(target).length;
    sizes.set(ref, size);
  }
  return size;
}

function spend(report: SchemaCleanReport, chars: number): void {
  report.inlinedChars = (report.inlinedChars ?? 0) + chars;
  if (report.inlinedChars <= MAX_INLINED_CHARS) return;
  throw new GatewayError('invalid_request', {
    param: 'tools',
    publicMessage:
      `tools: the $refs of the tools' parameters schemas expand past ${MAX_INLINED_CHARS / 1024 / 1024} MiB when ` +
      'inlined (provider_b must send every schema without references); send schemas with fewer shared ' +
      'definitions or without the recursion',
  });
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
