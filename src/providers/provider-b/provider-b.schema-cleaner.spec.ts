import nestedSchema from './__fixtures__/provider-b-nested-schema.json';
import refSchema from './__fixtures__/provider-b-ref-schema.json';
import { cleanSchema, MAX_REF_DEPTH } from './provider-b.schema-cleaner';

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
});
