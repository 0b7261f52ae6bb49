import { MAX_SHOWN_NAME_CHARS, propertyPath } from '../common/json-schema/schema-paths';
import { SCHEMA_LIMITS } from '../common/json-schema/schema-bounds';
import { findSchemaViolations, limitDetails } from './schema-subset.walker';

const strictObject = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
  ...extra,
});

describe('findSchemaViolations', () => {
  it('accepts every supported construct', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'Everything',
      description: 'all allowed keywords',
      ...strictObject({
        text: { type: 'string', description: 'd', title: 't' },
        count: { type: 'integer' },
        ratio: { type: 'number' },
        flag: { type: 'boolean' },
        nothing: { type: 'null' },
        colour: { type: 'string', enum: ['red', 'green'] },
        mixed: { enum: [1, 'a', null], type: 'string' },
        list: { type: 'array', items: { type: 'string' }, minItems: 0, maxItems: 3 },
        same: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 },
        nested: strictObject({ inner: strictObject({ deep: { type: 'string' } }) }),
        rows: { type: 'array', items: strictObject({ id: { type: 'integer' } }) },
        empty: strictObject({}),
      }),
    };
    expect(findSchemaViolations(schema)).toEqual([]);
  });

  it.each([
    '$ref',
    '$defs',
    'oneOf',
    'anyOf',
    'allOf',
    'not',
    'if',
    'then',
    'else',
    'pattern',
    'format',
    'patternProperties',
    'propertyNames',
    'const',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
    'multipleOf',
    'minLength',
    'maxLength',
    'default',
    'definitions',
    'unevaluatedProperties',
  ])('rejects the keyword %s wherever it appears', (keyword) => {
    const schema = strictObject({ field: { type: 'string', [keyword]: 1 } });
    expect(findSchemaViolations(schema)).toEqual([`$.field: keyword "${keyword}" is not supported`]);
  });

  it('tolerates $schema only at the root', () => {
    const schema = strictObject({ field: { type: 'string', $schema: 'x' } }, { $schema: 'x' });
    expect(findSchemaViolations(schema)).toEqual(['$.field: keyword "$schema" is not supported']);
  });

  it('collects all violations of one schema in walk order (behaviour 39)', () => {
    const schema = {
      type: 'object',
      required: ['a', 'b', 'c'],
      properties: {
        c: { type: 'string', pattern: '^x' },
        a: { $ref: '#/x' },
        b: { anyOf: [{ type: 'string' }], type: 'string' },
      },
    };
    expect(findSchemaViolations(schema)).toEqual([
      '$: "additionalProperties" must be present and set to false',
      '$.a: keyword "$ref" is not supported',
      '$.a: "type" is required',
      '$.b: keyword "anyOf" is not supported',
      '$.c: keyword "pattern" is not supported',
    ]);
  });

  it('reports the documented example exactly', () => {
    const schema = { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'email' } } };
    expect(findSchemaViolations(schema)).toEqual([
      '$: "additionalProperties" must be present and set to false',
      '$.email: keyword "format" is not supported',
    ]);
  });

  it('rejects a declared property missing from required, and a required name not declared (behaviour 40)', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['a', 'ghost'],
      properties: { a: { type: 'string' }, b: { type: 'string' } },
    };
    expect(findSchemaViolations(schema)).toEqual([
      '$: required property "ghost" is not in "properties"',
      '$: property "b" is missing from "required"',
    ]);
  });

  it('refuses a property named __proto__, declared or required, once per object (the validator cannot check it)', () => {
    // Parsed from text, as a request body is: a literal's `__proto__` key would set the prototype.
    const parsed = (text: string) => JSON.parse(text) as Record<string, unknown>;
    const both = parsed(
      '{"type":"object","additionalProperties":false,"required":["__proto__","a"],"properties":{"__proto__":{"type":"string"},"a":{"type":"string"}}}',
    );
    expect(findSchemaViolations(both)).toEqual(['$: property "__proto__" is not supported; rename it']);
    const declaredOnly = parsed(
      '{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"object","additionalProperties":false,"required":[],"properties":{"__proto__":{"type":"string"}}}}}',
    );
    expect(findSchemaViolations(declaredOnly)).toEqual(['$.a: property "__proto__" is not supported; rename it']);
    const requiredOnly = parsed(
      '{"type":"object","additionalProperties":false,"required":["__proto__","__proto__"],"properties":{}}',
    );
    expect(findSchemaViolations(requiredOnly)).toEqual([
      '$: property "__proto__" is not supported; rename it',
      '$: "required" lists "__proto__" more than once',
    ]);
    // Other names of Object.prototype are ordinary own properties to the validator.
    expect(
      findSchemaViolations(strictObject({ constructor: { type: 'string' }, toString: { type: 'string' } })),
    ).toEqual([]);
  });
  it('rejects union types and non-string types (behaviour 40)', () => {
    const schema = strictObject({ a: { type: ['string', 'null'] }, b: { type: 7 } });
    expect(findSchemaViolations(schema)).toEqual([
      '$.a: "type" must be a single string; union types are not supported',
      '$.b: "type" must be a single string; union types are not supported',
    ]);
  });

  it('names the bad type, not the keywords, when a node without a usable type carries object or array keywords', () => {
    // Which keywords apply depends on the type; without one there is nothing to check them against.
    const schema = strictObject({
      union: { type: ['string', 'null'], minItems: 1 },
      untyped: { properties: {} },
      unknown: { type: 'date', items: { type: 'string' }, additionalProperties: false, required: [] },
    });
    expect(findSchemaViolations(schema)).toEqual([
      '$.union: "type" must be a single string; union types are not supported',
      '$.unknown: type "date" is not supported',
      '$.untyped: "type" is required',
    ]);
  });

  it('rejects unknown types and a missing type', () => {
    const schema = strictObject({ a: { type: 'date' }, b: { description: 'no type' } });
    expect(findSchemaViolations(schema)).toEqual(['$.a: type "date" is not supported', '$.b: "type" is required']);
  });

  it('rejects a node that is not an object', () => {
    const schema = strictObject({ a: true, b: ['string'], c: null });
    expect(findSchemaViolations(schema)).toEqual([
      '$.a: schema node must be a JSON object',
      '$.b: schema node must be a JSON object',
      '$.c: schema node must be a JSON object',
    ]);
    expect(findSchemaViolations([])).toEqual(['$: schema node must be a JSON object']);
  });

  it('checks enum, description and title values', () => {
    const schema = strictObject({
      a: { type: 'string', enum: [] },
      b: { type: 'string', enum: 'x' },
      c: { type: 'string', description: 1, title: {} },
    });
    expect(findSchemaViolations(schema)).toEqual([
      '$.a: "enum" must be a non-empty array',
      '$.b: "enum" must be a non-empty array',
      '$.c: "description" must be a string',
      '$.c: "title" must be a string',
    ]);
  });

  it('rejects object keywords on non-objects and array keywords on non-arrays', () => {
    const schema = strictObject({
      s: { type: 'string', properties: {}, items: { type: 'string' } },
      o: strictObject({}, { minItems: 1 }),
      n: { type: 'number', additionalProperties: false, required: [], maxItems: 2 },
    });
    expect(findSchemaViolations(schema)).toEqual([
      '$.n: "additionalProperties" does not apply to type "number"',
      '$.n: "maxItems" does not apply to type "number"',
      '$.n: "required" does not apply to type "number"',
      '$.o: "minItems" does not apply to type "object"',
      '$.s: "items" does not apply to type "string"',
      '$.s: "properties" does not apply to type "string"',
    ]);
  });

  it('requires additionalProperties false, a properties object and a required array of strings', () => {
    const schema = strictObject({
      a: { type: 'object', additionalProperties: true, properties: {}, required: [] },
      b: { type: 'object', additionalProperties: { type: 'string' }, properties: [], required: 'x' },
      c: { type: 'object', additionalProperties: false, required: [1], properties: {} },
      d: { type: 'object', additionalProperties: false },
    });
    expect(findSchemaViolations(schema)).toEqual([
      '$.a: "additionalProperties" must be present and set to false',
      '$.b: "additionalProperties" must be present and set to false',
      '$.b: "properties" must be an object',
      '$.b: "required" must be an array of strings',
      '$.c: "required" must be an array of strings',
      '$.d: "properties" must be an object',
      '$.d: "required" must be an array of strings',
    ]);
  });

  it('checks array items, minItems and maxItems', () => {
    const schema = strictObject({
      a: { type: 'array' },
      b: { type: 'array', items: [{ type: 'string' }] },
      c: { type: 'array', items: { type: 'string' }, minItems: -1, maxItems: 1.5 },
      d: { type: 'array', items: { type: 'string' }, minItems: 3, maxItems: 2 },
      e: { type: 'array', items: { type: 'string', format: 'uri' } },
    });
    expect(findSchemaViolations(schema)).toEqual([
      '$.a: array schemas must declare "items"',
      '$.b: array schemas must declare "items"',
      '$.c: "maxItems" must be a non-negative integer',
      '$.c: "minItems" must be a non-negative integer',
      '$.d: "minItems" is greater than "maxItems"',
      '$.e[]: keyword "format" is not supported',
    ]);
  });

  it('requires the root to be an object schema', () => {
    expect(findSchemaViolations({ type: 'string' })).toEqual(['$: the root schema must have type "object"']);
    expect(findSchemaViolations({ type: 'array', items: { type: 'string' } })).toEqual([
      '$: the root schema must have type "object"',
    ]);
    expect(findSchemaViolations({})).toEqual(['$: "type" is required', '$: the root schema must have type "object"']);
  });

  it('formats paths with dots, brackets for odd names, and [] for items', () => {
    const schema = strictObject({
      'weird name': { type: 'string', format: 'x' },
      list: {
        type: 'array',
        items: strictObject({ '9lives': strictObject({ ok_1: { type: 'string', pattern: 'y' } }) }),
      },
      'quo"te': { type: 'string', const: 'x' },
    });
    expect(findSchemaViolations(schema)).toEqual([
      '$.list[]["9lives"].ok_1: keyword "pattern" is not supported',
      '$["quo\\"te"]: keyword "const" is not supported',
      '$["weird name"]: keyword "format" is not supported',
    ]);
    expect(propertyPath('$', '_x9')).toBe('$._x9');
    expect(propertyPath('$.a[]', 'b-c')).toBe('$.a[]["b-c"]');
  });

  it('refuses schemas nested deeper than 10 levels instead of recursing', () => {
    const nested = (levels: number, leaf: Record<string, unknown> = { type: 'string' }) => {
      let schema = leaf;
      for (let level = 0; level < levels; level++) schema = strictObject({ a: schema });
      return schema;
    };
    expect(SCHEMA_LIMITS.depth).toBe(10);
    expect(findSchemaViolations(nested(10))).toEqual([]);
    // The deepest allowed node is still checked against the subset.
    expect(findSchemaViolations(nested(10, { type: 'string', format: 'email' }))).toEqual([
      `$${'.a'.repeat(10)}: keyword "format" is not supported`,
    ]);
    expect(findSchemaViolations(nested(11))).toEqual([`$${'.a'.repeat(11)}: schema nesting exceeds 10 levels`]);
    // `items` is a level too.
    expect(findSchemaViolations(strictObject({ list: { type: 'array', items: nested(9) } }))).toEqual([
      `$.list[]${'.a'.repeat(9)}: schema nesting exceeds 10 levels`,
    ]);
    expect(findSchemaViolations(nested(200))).toHaveLength(1);
  });

  describe('size bounds (the whole schema, listed first)', () => {
    const flat = (count: number, property: (index: number) => unknown = () => ({ type: 'string' })) =>
      strictObject(Object.fromEntries(Array.from({ length: count }, (_, index) => [`p${index}`, property(index)])));

    it('allows 1,000 nodes, counting the root, every property and every items schema', () => {
      expect(findSchemaViolations(flat(999))).toEqual([]);
      expect(findSchemaViolations(flat(1000))).toEqual([
        `$: the schema has 1001 nodes (the root, each property's schema, each "items" schema and any other object); at most 1000 are allowed`,
      ]);
      const lists = flat(500, () => ({ type: 'array', items: { type: 'string' } }));
      expect(findSchemaViolations(lists)[0]).toMatch(/^\$: the schema has 1001 nodes/);
    });

    it('allows 1,000 enum values in all', () => {
      const enums = (each: number) =>
        flat(10, (index) => ({
          type: 'string',
          enum: Array.from({ length: each }, (_, value) => `v${index}-${value}`),
        }));
      expect(findSchemaViolations(enums(100))).toEqual([]);
      expect(findSchemaViolations(enums(101))).toEqual([
        '$: the schema has 1010 enum values in all; at most 1000 are allowed',
      ]);
    });

    it('allows 120,000 characters of property names and enum values in all, code points counted', () => {
      const named = (length: number) => strictObject({ ['😀'.repeat(length)]: { type: 'string', enum: ['ab', 7] } });
      // 3 more characters: "ab" and the JSON of 7.
      expect(findSchemaViolations(named(119_997))).toEqual([]);
      expect(findSchemaViolations(named(119_998))).toEqual([
        '$: property names and enum values have 120001 characters in all; at most 120000 are allowed',
      ]);
    });

    it('lists the bounds before the other violations, so the first details say what to shrink', () => {
      const details = findSchemaViolations(flat(1200, () => ({ type: 'string', format: 'x' })));
      expect(details[0]).toMatch(/^\$: the schema has 1201 nodes/);
      expect(details[1]).toBe('$.p0: keyword "format" is not supported');
    });
  });

  it('refuses a name listed twice in required, and a value listed twice in enum (JSON Schema wants them unique)', () => {
    const schema = {
      ...strictObject({
        a: { type: 'string', enum: ['x', 'y', 'x'] },
        n: { type: 'number', enum: [1, 1.0] },
        o: {
          type: 'object',
          additionalProperties: false,
          required: [],
          properties: {},
          enum: [
            { k: 1, j: 2 },
            { j: 2, k: 1 },
          ],
        },
      }),
      required: ['a', 'n', 'o', 'a'],
    };
    expect(findSchemaViolations(schema)).toEqual([
      '$: "required" lists "a" more than once',
      '$.a: "enum" holds the same value twice (entries 0 and 2)',
      '$.n: "enum" holds the same value twice (entries 0 and 1)',
      '$.o: "enum" holds the same value twice (entries 0 and 1)',
    ]);
  });
});

describe('limitDetails', () => {
  it('keeps up to 50 entries and summarizes the rest', () => {
    const many = Array.from({ length: 53 }, (_, index) => `v${index}`);
    const limited = limitDetails(many);
    expect(limited).toHaveLength(51);
    expect(limited[49]).toBe('v49');
    expect(limited[50]).toBe('… and 3 more violations');
    expect(limitDetails(many.slice(0, 50))).toHaveLength(50);
  });

  it('lists every violation of a large schema up to the cap', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 60 }, (_, index) => [`f${String(index).padStart(2, '0')}`, { type: 'string', format: 'x' }]),
    );
    const details = limitDetails(findSchemaViolations(strictObject(properties)));
    expect(details).toHaveLength(51);
    expect(details[0]).toBe('$.f00: keyword "format" is not supported');
    expect(details[50]).toBe('… and 10 more violations');
  });

  it('cuts long names and values in details, so a violation never sends the schema back', () => {
    const long = 'n'.repeat(200_000);
    const cut = `${'n'.repeat(MAX_SHOWN_NAME_CHARS)}…`;
    const details = findSchemaViolations(strictObject({ [long]: { type: long, [long]: 1 } }));
    expect(details).toEqual([
      '$: property names and enum values have 200000 characters in all; at most 120000 are allowed',
      `$["${cut}"]: keyword "${cut}" is not supported`,
      `$["${cut}"]: type "${cut}" is not supported`,
    ]);
    expect(propertyPath('$', '😀'.repeat(MAX_SHOWN_NAME_CHARS))).toBe(`$["${'😀'.repeat(MAX_SHOWN_NAME_CHARS)}"]`);
    expect(propertyPath('$', '😀'.repeat(MAX_SHOWN_NAME_CHARS + 1))).toBe(`$["${'😀'.repeat(MAX_SHOWN_NAME_CHARS)}…"]`);
    expect(propertyPath('$', 'a'.repeat(MAX_SHOWN_NAME_CHARS))).toBe(`$.${'a'.repeat(MAX_SHOWN_NAME_CHARS)}`);
  });
});
