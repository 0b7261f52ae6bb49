import nestedSchema from './__fixtures__/provider-b-nested-schema.json';
import refSchema from './__fixtures__/provider-b-ref-schema.json';
import { errorSpec } from '../../core/error-codes';
import { GatewayError } from '../../core/gateway.error';
import { cleanSchema, MAX_INLINED_CHARS, MAX_REF_DEPTH } from './provider-b.schema-cleaner';

const DROPPED = ['$schema', '$id', '$comment', '$ref', '$defs', 'definitions', 'strict'];

/** Keywords whose value is a schema or a list of schemas (JSON Schema draft 4 to 2020-12). */
const SUBSCHEMA_KEYWORDS = [
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
];
/** Keywords whose value maps names or patterns to schemas. */
const SUBSCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies'];

/** Every schema node of a cleaned schema (every place JSON Schema reads a schema). */
function schemaNodes(node: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return out;
  const schema = node as Record<string, unknown>;
  out.push(schema);
  for (const key of SUBSCHEMA_MAP_KEYWORDS)
    if (typeof schema[key] === 'object' && schema[key] !== null)
      Object.values(schema[key]).forEach((child) => schemaNodes(child, out));
  for (const key of SUBSCHEMA_KEYWORDS) {
    const value = schema[key];
    if (Array.isArray(value)) value.forEach((child) => schemaNodes(child, out));
    else schemaNodes(value, out);
  }
  return out;
}

/** `$defs` d0…d{depth-1}, each with `width` properties that all reference the next one: width^depth copies. */
function exponentialSchema(width: number, depth = 8): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let level = 0; level < depth; level++) {
    const properties: Record<string, unknown> = {};
    for (let index = 0; index < width; index++)
      properties[`p${index}`] = level === depth - 1 ? { type: 'string' } : { $ref: `#/$defs/d${level + 1}` };
    $defs[`d${level}`] = { type: 'object', properties };
  }
  return { type: 'object', properties: { root: { $ref: '#/$defs/d0' } }, $defs };
}

const ITEM = {
  type: 'object',
  description: 'One edit of a file: the path, the 1-based line and the replacement text.',
  properties: { path: { type: 'string' }, line: { type: 'integer', minimum: 1 }, text: { type: 'string' } },
  required: ['path', 'line'],
  additionalProperties: false,
};

/** A tool schema whose `count` properties all reference one definition (ITEM). */
function sharedSchema(count: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let index = 0; index < count; index++) properties[`edit${index}`] = { $ref: '#/$defs/Item' };
  return { type: 'object', properties, $defs: { Item: ITEM } };
}

/** The error `run` throws; fails the test when it returns instead. */
function thrownBy(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a refusal');
}

function expectExpansionRefusal(error: GatewayError): void {
  expect(error.code).toBe('invalid_request');
  expect(errorSpec(error.code).status).toBe(400);
  expect(error.param).toBe('tools');
  expect(error.publicMessage).toBe(
    "tools: the $refs of the tools' parameters schemas expand past 1 MiB when inlined (provider_b must send " +
      'every schema without references); send schemas with fewer shared definitions or without the recursion',
  );
}

describe(cleanSchema.name, () => {
  it('drops only document metadata and strict at every depth, keeps every JSON Schema keyword and properties named like them (docs/upstream/provider-b.md §13.12)', () => {
    const cleaned = cleanSchema(nestedSchema);
    const nodes = schemaNodes(cleaned);
    expect(nodes.length).toBeGreaterThan(10);
    for (const node of nodes) for (const key of DROPPED) expect(node).not.toHaveProperty([key]);
    const properties = cleaned.properties as Record<string, Record<string, unknown>>;
    expect(Object.keys(properties)).toEqual(['strict', 'additionalProperties', 'count', 'edits']);
    expect(properties.strict).toEqual({ type: 'boolean', description: 'a parameter literally named strict' });
    expect(properties.count).toEqual({ type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 10, minimum: 1 });
    expect(cleaned.additionalProperties).toBe(false);
    expect(cleaned).toMatchInlineSnapshot(`
{
  "additionalProperties": false,
  "properties": {
    "additionalProperties": {
      "type": "string",
    },
    "count": {
      "exclusiveMaximum": 10,
      "exclusiveMinimum": 0,
      "minimum": 1,
      "type": "integer",
    },
    "edits": {
      "items": {
        "additionalProperties": false,
        "properties": {
          "mode": {
            "allOf": [
              {
                "additionalProperties": true,
              },
            ],
            "not": {
              "type": "string",
            },
            "oneOf": [
              {
                "enum": [
                  "a",
                ],
              },
            ],
          },
          "range": {
            "anyOf": [
              {
                "additionalProperties": false,
                "properties": {
                  "start": {
                    "exclusiveMinimum": 0,
                    "type": "integer",
                  },
                },
                "type": "object",
              },
              {
                "type": "null",
              },
            ],
          },
          "tuple": {
            "items": [
              {
                "type": "string",
              },
              {
                "exclusiveMaximum": 5,
                "type": "number",
              },
            ],
            "type": "array",
          },
        },
        "type": "object",
      },
      "type": "array",
    },
    "strict": {
      "description": "a parameter literally named strict",
      "type": "boolean",
    },
  },
  "type": "object",
}
`);
  });

  it('does not modify its input', () => {
    const before = JSON.stringify(nestedSchema);
    cleanSchema(nestedSchema);
    expect(JSON.stringify(nestedSchema)).toBe(before);
  });

  it('inlines local $defs/definitions references and drops the definitions (docs/upstream/provider-b.md §13.13)', () => {
    const report = { unresolvedRefs: 0 };
    const cleaned = cleanSchema(refSchema, report);
    const properties = cleaned.properties as Record<string, unknown>;
    expect(properties.items).toEqual({
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: { name: { type: 'string' }, tag: { type: 'string', enum: ['a', 'b'] } },
        required: ['name'],
      },
    });
    expect(properties.owner).toEqual({
      type: 'object',
      properties: { id: { type: 'string' } },
      description: 'who owns it',
    });
    expect(properties.remote).toEqual({ type: 'object' });
    expect(cleaned).not.toHaveProperty(['$defs']);
    expect(cleaned).not.toHaveProperty(['definitions']);
    expect(JSON.stringify(cleaned)).not.toContain('$ref');
    // The cyclic Node inlines once, then its self-reference becomes an opaque object.
    expect(properties.tree).toEqual({ type: 'object', properties: { child: { type: 'object' } } });
    expect(report.unresolvedRefs).toBe(2);
  });

  it("keeps a reference's sibling keywords over the target's own", () => {
    const cleaned = cleanSchema({
      type: 'object',
      properties: { owner: { $ref: '#/$defs/Owner', description: 'who owns the file', title: 'Owner' } },
      $defs: { Owner: { type: 'object', description: 'a user', title: 'User', required: ['id'] } },
    });
    expect(cleaned.properties).toEqual({
      owner: { type: 'object', description: 'who owns the file', title: 'Owner', required: ['id'] },
    });
  });

  it('decodes a JSON pointer segment as RFC 6901 says: ~1 to / and then ~0 to ~, so ~01 names ~1', () => {
    const $defs = { 'a~1b': { type: 'string' }, 'a/b': { type: 'integer' }, 'c d': { type: 'boolean' } };
    const report = { unresolvedRefs: 0 };
    const cleaned = cleanSchema(
      {
        type: 'object',
        properties: {
          tilde: { $ref: '#/$defs/a~01b' },
          slash: { $ref: '#/$defs/a~1b' },
          escaped: { $ref: '#/$defs/c%20d' },
        },
        $defs,
      },
      report,
    );
    expect(cleaned.properties).toEqual({
      tilde: { type: 'string' },
      slash: { type: 'integer' },
      escaped: { type: 'boolean' },
    });
    expect(report.unresolvedRefs).toBe(0);
  });

  describe('inlines references under every keyword that holds a schema, so no $ref outlives the dropped definitions', () => {
    const MODE = { type: 'string', enum: ['replace', 'insert'] };
    const EDIT = { type: 'object', properties: { line: { type: 'integer' }, mode: { $ref: '#/$defs/Mode' } } };
    const EDIT_INLINED = { type: 'object', properties: { line: { type: 'integer' }, mode: MODE } };
    const RULE = { type: 'object', required: ['name'] };
    const ref = (name: string) => ({ $ref: name === 'Rule' ? '#/definitions/Rule' : `#/$defs/${name}` });

    it.each<[string, unknown, unknown]>([
      ['additionalProperties', ref('Edit'), EDIT_INLINED],
      ['patternProperties', { '^x-': ref('Rule'), '^y-': ref('Edit') }, { '^x-': RULE, '^y-': EDIT_INLINED }],
      ['prefixItems', [ref('Mode'), { type: 'integer' }], [MODE, { type: 'integer' }]],
      ['items', [ref('Mode'), ref('Edit')], [MODE, EDIT_INLINED]],
      ['items', ref('Edit'), EDIT_INLINED],
      ['additionalItems', ref('Edit'), EDIT_INLINED],
      ['contains', ref('Rule'), RULE],
      ['if', ref('Rule'), RULE],
      ['then', ref('Edit'), EDIT_INLINED],
      ['else', ref('Mode'), MODE],
      ['dependentSchemas', { path: ref('Rule') }, { path: RULE }],
      ['dependencies', { path: ref('Rule'), line: ['path'] }, { path: RULE, line: ['path'] }],
      ['propertyNames', ref('Mode'), MODE],
      ['unevaluatedProperties', ref('Edit'), EDIT_INLINED],
      ['unevaluatedItems', ref('Mode'), MODE],
      ['contentSchema', ref('Edit'), EDIT_INLINED],
      ['anyOf', [ref('Edit'), { type: 'null' }], [EDIT_INLINED, { type: 'null' }]],
      ['not', ref('Rule'), RULE],
    ])('%s: %j', (keyword, value, expected) => {
      const report = { unresolvedRefs: 0 };
      const schema = {
        type: 'object',
        [keyword]: value,
        $defs: { Edit: EDIT, Mode: MODE },
        definitions: { Rule: RULE },
      };
      const cleaned = cleanSchema(schema, report);
      expect(cleaned).toEqual({ type: 'object', [keyword]: expected });
      expect(JSON.stringify(cleaned)).not.toContain('$ref');
      expect(report.unresolvedRefs).toBe(0);
    });

    it('inlines what an inlined definition references under those keywords, and keeps boolean schemas', () => {
      const schema = {
        type: 'object',
        additionalProperties: { $ref: '#/$defs/Pair' },
        $defs: {
          Pair: { type: 'array', prefixItems: [{ $ref: '#/$defs/Mode' }], items: false },
          Mode: { type: 'string', enum: ['a'] },
        },
      };
      expect(cleanSchema(schema)).toEqual({
        type: 'object',
        additionalProperties: { type: 'array', prefixItems: [{ type: 'string', enum: ['a'] }], items: false },
      });
    });

    it('replaces a cyclic, non-local or dynamic reference under those keywords by an opaque object and counts it', () => {
      const report = { unresolvedRefs: 0 };
      const cleaned = cleanSchema(
        {
          type: 'object',
          properties: {
            tree: { $ref: '#/$defs/Tree' },
            remote: { type: 'array', prefixItems: [{ $ref: 'https://example.com/mode.json' }] },
            recursive: { type: 'object', additionalProperties: { $recursiveRef: '#' } },
            dynamic: { type: 'array', items: { $dynamicRef: '#node' } },
          },
          $defs: { Tree: { type: 'object', additionalProperties: { $ref: '#/$defs/Tree' } } },
        },
        report,
      );
      expect(cleaned.properties).toEqual({
        tree: { type: 'object', additionalProperties: { type: 'object' } },
        remote: { type: 'array', prefixItems: [{ type: 'object' }] },
        recursive: { type: 'object', additionalProperties: { type: 'object' } },
        dynamic: { type: 'array', items: { type: 'object' } },
      });
      expect(report.unresolvedRefs).toBe(4);
    });

    it('drops metadata and strict inside those keywords, and never touches the names of their maps', () => {
      const meta = { $schema: 'x', $id: 'urn:x', $comment: 'c', strict: true };
      const cleaned = cleanSchema({
        type: 'object',
        patternProperties: { '^strict$': { type: 'string', ...meta } },
        dependentSchemas: { $ref: { required: ['a'], ...meta }, additionalProperties: { ...meta } },
        if: { ...meta, properties: { a: { const: 1 } } },
        unevaluatedProperties: { ...meta, type: 'number' },
      });
      expect(cleaned).toEqual({
        type: 'object',
        patternProperties: { '^strict$': { type: 'string' } },
        dependentSchemas: { $ref: { required: ['a'] }, additionalProperties: {} },
        if: { properties: { a: { const: 1 } } },
        unevaluatedProperties: { type: 'number' },
      });
    });

    it('leaves a $ref inside data (const, enum, default, examples) as the value it is', () => {
      const data = { $ref: '#/$defs/Gone' };
      const schema = { type: 'object', const: data, enum: [data], default: data, examples: [data] };
      expect(cleanSchema(schema)).toEqual(schema);
    });

    it('counts a reference inlined under any of those keywords against the budget', () => {
      const report: { unresolvedRefs: number; inlinedChars?: number } = { unresolvedRefs: 0 };
      cleanSchema({ type: 'object', additionalProperties: { $ref: '#/$defs/Item' }, $defs: { Item: ITEM } }, report);
      expect(report.inlinedChars).toBe(JSON.stringify(ITEM).length);
    });
  });

  it(`follows a chain of references up to depth ${MAX_REF_DEPTH} and no further`, () => {
    const chain = (length: number) => {
      const defs: Record<string, unknown> = {};
      for (let index = 0; index < length; index++) {
        defs[`D${index}`] =
          index === length - 1
            ? { type: 'string' }
            : { type: 'object', properties: { next: { $ref: `#/$defs/D${index + 1}` } } };
      }
      return { $ref: '#/$defs/D0', $defs: defs };
    };
    const depthOf = (schema: Record<string, unknown>): string => JSON.stringify(schema);
    const withinLimit = cleanSchema(chain(MAX_REF_DEPTH));
    expect(depthOf(withinLimit)).toContain('"type":"string"');
    const report = { unresolvedRefs: 0 };
    const beyond = cleanSchema(chain(MAX_REF_DEPTH + 1), report);
    expect(depthOf(beyond)).not.toContain('"type":"string"');
    expect(report.unresolvedRefs).toBe(1);
  });

  describe(`bounds what inlining adds to ${MAX_INLINED_CHARS} characters per request`, () => {
    it('refuses definitions that reference each other exponentially (8 × 8: a 2 KB body, 8^8 copies) with 400 invalid_request naming tools', () => {
      const schema = exponentialSchema(8);
      expect(JSON.stringify(schema).length).toBeLessThan(2500);
      expectExpansionRefusal(thrownBy(() => cleanSchema(schema)));
    });

    it('refuses the same shape with 50 properties per definition: the budget, not the shape, bounds the work', () => {
      expectExpansionRefusal(thrownBy(() => cleanSchema(exponentialSchema(50))));
    });

    it('still inlines a schema just inside the budget, and refuses it one reference later', () => {
      const fits = Math.floor(MAX_INLINED_CHARS / JSON.stringify(ITEM).length);
      const report = { unresolvedRefs: 0 };
      const cleaned = cleanSchema(sharedSchema(fits), report);
      const properties = cleaned.properties as Record<string, unknown>;
      expect(Object.keys(properties)).toHaveLength(fits);
      expect(properties[`edit${fits - 1}`]).toEqual(ITEM);
      expect(report.unresolvedRefs).toBe(0);
      expect(JSON.stringify(cleaned).length).toBeGreaterThan(MAX_INLINED_CHARS * 0.9);
      expectExpansionRefusal(thrownBy(() => cleanSchema(sharedSchema(fits + 1))));
    });

    it('inlines one definition shared many times below the budget exactly as before', () => {
      const report = { unresolvedRefs: 0 };
      const cleaned = cleanSchema(sharedSchema(500), report);
      expect(cleaned).toEqual({
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: 500 }, (_, index) => [`edit${index}`, ITEM])),
      });
      expect(report.unresolvedRefs).toBe(0);
      // A realistic nested schema (exponent 3 over 8 levels: 6,561 leaves) fits as well.
      expect(JSON.stringify(cleanSchema(exponentialSchema(3)))).not.toContain('$ref');
    });

    it('counts every tool cleaned with the same report (one request), so many tools cannot multiply the budget', () => {
      const half = Math.ceil(MAX_INLINED_CHARS / 2 / JSON.stringify(ITEM).length) + 1;
      const report = { unresolvedRefs: 0 };
      cleanSchema(sharedSchema(half), report);
      expectExpansionRefusal(thrownBy(() => cleanSchema(sharedSchema(half), report)));
      expect(() => cleanSchema(sharedSchema(half), { unresolvedRefs: 0 })).not.toThrow();
    });

    it('does not count a schema without references, whatever its size', () => {
      const report: { unresolvedRefs: number; inlinedChars?: number } = { unresolvedRefs: 0 };
      const big = {
        type: 'object',
        properties: { text: { type: 'string', description: 'x'.repeat(2 * MAX_INLINED_CHARS) } },
      };
      expect(cleanSchema(big, report)).toEqual(big);
      expect(report.inlinedChars).toBeUndefined();
    });
  });
});
