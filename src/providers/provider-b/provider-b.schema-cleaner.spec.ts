import nestedSchema from './__fixtures__/provider-b-nested-schema.json';
import refSchema from './__fixtures__/provider-b-ref-schema.json';
import { errorSpec } from '../../core/error-codes';
import { GatewayError } from '../../core/gateway.error';
import { cleanSchema, MAX_INLINED_CHARS, MAX_REF_DEPTH } from './provider-b.schema-cleaner';

const DROPPED = ['$schema', '$id', '$comment', '$ref', '$defs', 'definitions', 'strict'];

/** Every schema node of a cleaned schema (the same places the cleaner walks). */
function schemaNodes(node: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return out;
  const schema = node as Record<string, unknown>;
  out.push(schema);
  if (schema.properties) Object.values(schema.properties).forEach((child) => schemaNodes(child, out));
  if (Array.isArray(schema.items)) schema.items.forEach((child) => schemaNodes(child, out));
  else schemaNodes(schema.items, out);
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    if (Array.isArray(schema[key])) (schema[key] as unknown[]).forEach((child) => schemaNodes(child, out));
  schemaNodes(schema.not, out);
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
