import { findSchemaBoundViolations, SCHEMA_LIMITS } from './schema-bounds';

/*
 * The bounds on any JSON schema the gateway compiles. The structured subset's cases (nodes,
 * nesting, enum values, characters, counted as the structured route counts them) are in
 * structured/schema-subset.walker.spec.ts; these are the shapes only a full JSON schema has.
 */

const objects = (count: number) => Array.from({ length: count }, (_, index) => ({ title: `s${index}` }));
const nodes = (count: number) =>
  `$: the schema has ${count} nodes (the root, each property's schema, each "items" schema and any other object); at most ${SCHEMA_LIMITS.nodes} are allowed`;

describe(findSchemaBoundViolations.name, () => {
  it('counts every object as a node, under any keyword, and not the maps that name schemas', () => {
    expect(findSchemaBoundViolations({ anyOf: objects(999) })).toEqual([]);
    expect(findSchemaBoundViolations({ anyOf: objects(1000) })).toEqual([nodes(1001)]);
    // Ajv compiles whatever a `$ref` points at: an unknown keyword's value, an enum entry, a default.
    for (const hidden of [{ 'x-hidden': objects(1000) }, { enum: objects(1000) }, { default: { list: objects(999) } }])
      expect(findSchemaBoundViolations({ $ref: '#/x', ...hidden })).toEqual([nodes(1001)]);
    // A `$defs` or `properties` map is no node; each schema in it is one.
    const defined = Object.fromEntries(objects(999).map((schema, index) => [`d${index}`, schema]));
    expect(findSchemaBoundViolations({ $defs: defined })).toEqual([]);
    expect(findSchemaBoundViolations({ $defs: defined, properties: { extra: {} } })).toEqual([nodes(1001)]);
  });

  it('counts every keyword step as a level, and names each place nested too deep', () => {
    const chain = (levels: number) => {
      let schema: Record<string, unknown> = { type: 'string' };
      for (let level = 0; level < levels; level++)
        schema = level % 2 === 0 ? { anyOf: [schema] } : { type: 'object', properties: { a: schema } };
      return schema;
    };
    expect(findSchemaBoundViolations(chain(10))).toEqual([]);
    expect(findSchemaBoundViolations(chain(11))).toEqual([
      '$/anyOf[0].a/anyOf[0].a/anyOf[0].a/anyOf[0].a/anyOf[0].a/anyOf[0]: schema nesting exceeds 10 levels',
    ]);
    expect(findSchemaBoundViolations({ $defs: { deep: chain(10) }, items: { 'odd key': [[chain(9)]] } })).toEqual([
      '$/$defs.deep.a/anyOf[0].a/anyOf[0].a/anyOf[0].a/anyOf[0].a/anyOf[0]: schema nesting exceeds 10 levels',
      '$[]/"odd key"[0][0]/anyOf[0].a/anyOf[0].a/anyOf[0].a/anyOf[0].a/anyOf[0]: schema nesting exceeds 10 levels',
    ]);
  });

  it('counts enum values and property names under any keyword, the totals before the places', () => {
    const enums = { anyOf: [{ enum: Array.from({ length: 600 }, (_, index) => index) }, { enum: objects(401) }] };
    expect(findSchemaBoundViolations(enums)).toEqual([
      '$: the schema has 1001 enum values in all; at most 1000 are allowed',
    ]);
    const named = { not: { properties: { ['n'.repeat(120_001)]: {} } } };
    expect(findSchemaBoundViolations(named)).toEqual([
      '$: property names and enum values have 120001 characters in all; at most 120000 are allowed',
    ]);
    // Exactly the bound is allowed.
    expect(findSchemaBoundViolations({ properties: { ['n'.repeat(119_990)]: {} }, enum: ['e'.repeat(10)] })).toEqual(
      [],
    );
  });

  it('counts a non-string enum value as the characters of its JSON', () => {
    // {"k":"…"} is 8 characters of JSON around the string; 5 more come from the number 12345.
    const hidden = { enum: [{ k: 'x'.repeat(119_988) }, 12345] };
    expect(findSchemaBoundViolations(hidden)).toEqual([
      '$: property names and enum values have 120001 characters in all; at most 120000 are allowed',
    ]);
  });

  it('counts each name a dependencies or dependentRequired list requires as a node', () => {
    const names = (count: number) => Array.from({ length: count }, (_, index) => `p${index}`);
    expect(findSchemaBoundViolations({ dependencies: { a: names(999) } })).toEqual([]);
    expect(
      findSchemaBoundViolations({ dependencies: { a: names(600) }, dependentRequired: { b: names(400) } }),
    ).toEqual([
      `$: the schema has 1002 nodes (the root, each property's schema, each "items" schema and any other object, 1000 of them names that "dependencies" or "dependentRequired" lists require); at most ${SCHEMA_LIMITS.nodes} are allowed`,
    ]);
    // A schema under `dependencies` is a node as anywhere else.
    expect(findSchemaBoundViolations({ dependencies: { a: { anyOf: objects(999) } } })).toEqual([nodes(1001)]);
  });
});
