import { OutputValidator } from '../common/json-schema/output-validator';
import { canonicalSha256 } from './structured-identity';
import { parseJsonObjectOutput } from '../common/json-schema/json-object-output';

describe('parseJsonObjectOutput', () => {
  it.each([
    ['plain JSON', '{"a":1}', { a: 1 }],
    ['surrounding whitespace', '\n  {"a":1}  \n', { a: 1 }],
    ['a json code fence', '```json\n{"a":1}\n```', { a: 1 }],
    ['a bare code fence', '```\n{"a": [1, 2]}\n```', { a: [1, 2] }],
    ['a fence with surrounding whitespace', '  ```JSON\n  {"a":1}\n```\n', { a: 1 }],
    ['prose around an object', 'Here it is: {"a":{"b":2}} Hope that helps.', { a: { b: 2 } }],
    ['braces inside strings', '{"a":"}{"}', { a: '}{' }],
  ])('accepts %s', (_name, text, expected) => {
    expect(parseJsonObjectOutput(text)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['prose', 'I cannot help with that.'],
    ['empty text', '   '],
    ['an empty fence', '```json\n```'],
    ['a JSON array', '[{"a":1}]'],
    ['a JSON array of numbers', '[1,2]'],
    ['a number', '42'],
    ['null', 'null'],
    ['a JSON string holding an object', '"{\\"a\\":1}"'],
    ['truncated JSON', '{"a":1'],
    ['an object followed by junk', '{"a":1} trailing'],
    ['two objects in prose', 'first {"a":1} then {"b":2}'],
  ])('rejects %s as unparsable', (_name, text) => {
    expect(parseJsonObjectOutput(text)).toEqual({ ok: false });
  });

  it('refuses numbers JSON.parse reads as ±Infinity, naming where they are: they would go out as null', () => {
    const huge = '1' + '0'.repeat(309);
    expect(parseJsonObjectOutput(`{"a":1e400,"b":{"c/d~":[0,-2E+309]},"e":${huge},"f":{}}`)).toEqual({
      ok: false,
      nonFinite: ['/a', '/b/c~1d~0/1', '/e'],
    });
    // A 2-digit exponent after 250 digits, and prose around the object.
    expect(parseJsonObjectOutput(`Here: {"a":[${'9'.repeat(250)}e99]}`)).toEqual({ ok: false, nonFinite: ['/a/0'] });
  });

  it('keeps the numbers a double holds, and the text of strings that look like numbers', () => {
    const text = `{"max":1.7976931348623157e308,"tiny":1e-400,"long":${'1'.repeat(300)},"s":"1e400 ${'9'.repeat(400)}"}`;
    expect(parseJsonObjectOutput(text)).toEqual({ ok: true, value: JSON.parse(text) });
  });
});

describe(OutputValidator.name, () => {
  const schema = {
    type: 'object',
    additionalProperties: false,
    required: ['headline', 'growth_percent', 'tags'],
    properties: {
      headline: { type: 'string' },
      growth_percent: { type: 'integer' },
      tags: { type: 'array', items: { type: 'string', enum: ['up', 'down'] }, minItems: 1, maxItems: 2 },
    },
  };
  const sha = canonicalSha256(schema);

  it('accepts conforming output', () => {
    expect(new OutputValidator().check(sha, schema, { headline: 'h', growth_percent: 12, tags: ['up'] })).toEqual({
      valid: true,
    });
  });

  it('lists every failure with paths and keywords, never values', () => {
    const secret = 'SECRET-VALUE-123';
    const result = new OutputValidator().check(sha, schema, {
      headline: 7,
      growth_percent: 'SECRET',
      tags: [secret, 'x', 'y'],
      [secret]: 1,
    });
    expect(result.valid).toBe(false);
    const details = result.valid ? [] : result.details;
    expect(details).toEqual([
      '$: additional properties are not allowed',
      '/headline: must be of type "string"',
      '/growth_percent: must be of type "integer"',
      '/tags: must have at most 2 items',
      '/tags/0: must be one of the allowed values',
      '/tags/1: must be one of the allowed values',
      '/tags/2: must be one of the allowed values',
    ]);
    expect(details.join('\n')).not.toContain('SECRET');
  });

  it('reports missing required properties by their schema name', () => {
    const result = new OutputValidator().check(sha, schema, { headline: 'h', tags: [] });
    expect(result).toEqual({
      valid: false,
      details: ['$: missing required property "growth_percent"', '/tags: must have at least 1 items'],
    });
  });

  it('caps details at 20 plus a summary entry', () => {
    const many = {
      type: 'object',
      additionalProperties: false,
      required: ['list'],
      properties: { list: { type: 'array', items: { type: 'integer' } } },
    };
    const result = new OutputValidator().check(canonicalSha256(many), many, {
      list: Array.from({ length: 25 }, () => 'x'),
    });
    expect(result.valid ? [] : result.details).toHaveLength(21);
    expect(result.valid ? '' : result.details[20]).toBe('… and 5 more violations');
  });

  it('compiles a schema once per canonical checksum and ignores a root $schema', () => {
    const validator = new OutputValidator();
    const withMeta = { $schema: 'https://json-schema.org/draft/2020-12/schema', ...schema };
    validator.check(sha, withMeta, {});
    validator.check(sha, withMeta, { headline: 'h', growth_percent: 1, tags: ['down'] });
    expect(validator.compileCount).toBe(1);
    validator.check(canonicalSha256({ type: 'object' }), { type: 'object' }, {});
    expect(validator.compileCount).toBe(2);
  });
});

describe('OutputValidator.prepare', () => {
  it('reports schemas JSON Schema refuses, in the walker path style, without compiling them', () => {
    const validator = new OutputValidator();
    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['a', 'a', 'list'],
      properties: {
        a: { type: 'string', enum: ['x', 'x'] },
        list: { type: 'array', items: { type: 'string', enum: ['y', 'y'] } },
      },
    };
    expect(validator.prepare(canonicalSha256(schema), schema)).toEqual([
      '$: "required" must NOT have duplicate items (items ## 1 and 0 are identical)',
      '$.a: "enum" must NOT have duplicate items (items ## 0 and 1 are identical)',
      '$.list[]: "enum" must NOT have duplicate items (items ## 0 and 1 are identical)',
    ]);
    expect(validator.compileCount).toBe(0);
  });

  it('compiles a usable schema once, so the later check does not compile again', () => {
    const validator = new OutputValidator();
    const schema = { type: 'object', additionalProperties: false, required: [], properties: {} };
    const sha = canonicalSha256(schema);
    expect(validator.prepare(sha, schema)).toEqual([]);
    expect(validator.prepare(sha, schema)).toEqual([]);
    expect(validator.check(sha, schema, {})).toEqual({ valid: true });
    expect(validator.compileCount).toBe(1);
  });
});
