import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  MAX_OUTPUT_DETAILS,
  OutputValidator,
  VALIDATOR_CACHE_CHARACTERS,
  VALIDATOR_CACHE_SIZE,
} from './output-validator';

/** A schema no other call uses, as a stream of one-off structured requests sends. */
const oneOff = (index: number) => ({
  type: 'object',
  additionalProperties: false,
  required: [`field_${index}`],
  properties: { [`field_${index}`]: { type: 'string' } },
});

/** The validators the cache holds, by schema key (white box: what is kept is the point). */
const cached = (validator: OutputValidator) =>
  (validator as unknown as { compiled: { size: number; peek(key: string): unknown } }).compiled;

/** A full collection, as a test may ask for one (`node --expose-gc` without the flag). */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

describe(OutputValidator.name, () => {
  it('keeps at most VALIDATOR_CACHE_SIZE compiled schemas after 3,000 one-off schemas', () => {
    const validator = new OutputValidator();
    for (let index = 0; index < 3000; index++) expect(validator.prepare(`sha-${index}`, oneOff(index))).toEqual([]);
    expect(validator.compileCount).toBe(3000);
    expect(cached(validator).size).toBe(VALIDATOR_CACHE_SIZE);
  });

  it('frees an evicted validator and its schema: nothing else, Ajv included, keeps them', async () => {
    const validator = new OutputValidator();
    // The schema's nested objects are the ones the validator holds (its root is a copy without `$schema`).
    const sent = ((schema: Record<string, unknown>) => {
      validator.prepare('sha-0', schema);
      return new WeakRef(schema.properties as object);
    })(oneOff(0));
    const validate = new WeakRef(cached(validator).peek('sha-0') as object);
    for (let index = 1; index <= VALIDATOR_CACHE_SIZE; index++) validator.prepare(`sha-${index}`, oneOff(index));
    expect(cached(validator).peek('sha-0')).toBeUndefined();
    // WeakRef targets stay alive until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(validate.deref()).toBeUndefined();
    expect(sent.deref()).toBeUndefined();
  });

  it('keeps compiled validators within VALIDATOR_CACHE_CHARACTERS of schema and code, whatever their count', () => {
    const validator = new OutputValidator();
    // Each weighs a little over a third of the budget: two fit, a third evicts the oldest.
    const heavy = (index: number) => ({ ...oneOff(index), description: 'd'.repeat(VALIDATOR_CACHE_CHARACTERS / 3) });
    for (let index = 0; index < 5; index++) expect(validator.prepare(`heavy-${index}`, heavy(index))).toEqual([]);
    expect(cached(validator).size).toBe(2);
    expect(validator.check('heavy-4', heavy(4), { field_4: 'x' })).toEqual({ valid: true });
    expect(validator.check('heavy-0', heavy(0), { field_0: 'x' })).toEqual({ valid: true });
    expect(validator.compileCount).toBe(6);
    expect(cached(validator).size).toBe(2);
  });

  it('uses a validator larger than the whole budget for its call only', () => {
    const validator = new OutputValidator();
    const huge = { ...oneOff(1), description: 'd'.repeat(VALIDATOR_CACHE_CHARACTERS) };
    expect(validator.prepare('huge', huge)).toEqual([]);
    expect(validator.check('huge', huge, {})).toEqual({
      valid: false,
      details: ['$: missing required property "field_1"'],
    });
    expect(validator.compileCount).toBe(2);
    expect(cached(validator).size).toBe(0);
  });

  it('refuses NaN and ±Infinity as a number or an integer: JSON.parse reads 1e400 as Infinity, JSON.stringify writes it as null', () => {
    const validator = new OutputValidator();
    const schema = {
      type: 'object',
      properties: { n: { type: 'number' }, i: { type: 'integer' }, list: { type: 'array', items: { type: 'number' } } },
    };
    const overflowing = JSON.parse('{"n":1e400,"i":-1e400,"list":[1.5,1e999]}') as Record<string, unknown>;
    expect(validator.check('numbers', schema, overflowing)).toEqual({
      valid: false,
      details: ['/n: must be of type "number"', '/i: must be of type "integer"', '/list/1: must be of type "number"'],
    });
    expect(validator.check('numbers', schema, { n: Number.NaN, i: 1e300, list: [] })).toEqual({
      valid: false,
      details: ['/n: must be of type "number"'],
    });
    expect(validator.check('numbers', schema, { n: -0.5, i: 12, list: [1e308] })).toEqual({ valid: true });
  });

  it('returns what keeps a schema from compiling instead of throwing: a dangling $ref, a remote one, a bad pattern', () => {
    const validator = new OutputValidator();
    expect(validator.prepare('a', { $ref: '#/$defs/nope' })).toEqual([
      "$: the schema cannot be compiled: can't resolve reference #/$defs/nope from id #",
    ]);
    expect(validator.prepare('b', { $ref: 'https://example.test/s.json' })).toEqual([
      expect.stringContaining("can't resolve reference https://example.test/s.json"),
    ]);
    expect(validator.prepare('c', { type: 'string', pattern: '(' })).toEqual([
      expect.stringContaining('error parsing regexp: missing closing )'),
    ]);
    // RE2 has no lookaround or backreferences: such a pattern is refused, not run on a backtracking engine.
    expect(validator.prepare('d', { type: 'string', pattern: '^(?=a)a$' })).toEqual([
      expect.stringContaining('invalid or unsupported Perl syntax'),
    ]);
  });

  it("runs a schema's pattern in linear time: a pattern that backtracks exponentially in JavaScript's engine answers at once", () => {
    const validator = new OutputValidator();
    const schema = { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } };
    expect(validator.prepare('redos', schema)).toEqual([]);
    expect(validator.check('redos', schema, { a: `${'a'.repeat(30)}!` })).toMatchObject({ valid: false });
    expect(validator.check('redos', schema, { a: 'a'.repeat(5_000) })).toEqual({ valid: true });
    // A pattern matches anywhere in the text unless anchored, as JSON Schema says.
    const unanchored = { type: 'string', pattern: 'b' };
    expect(validator.check('unanchored', unanchored, 'abc')).toEqual({ valid: true });
  });

  it("never writes a client's unknown format to stderr, where a line break would forge a log record", () => {
    const validator = new OutputValidator();
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(validator.prepare('format', { type: 'string', format: 'x"\n{"level":60,"msg":"forged"}' })).toEqual([]);
      expect(warn).not.toHaveBeenCalled();
      expect(log).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      log.mockRestore();
    }
  });

  it('compiles every schema on its own: an $id is not shared between schemas', () => {
    const validator = new OutputValidator();
    const id = 'https://example.test/shared';
    expect(validator.prepare('first', { $id: id, type: 'object' })).toEqual([]);
    expect(validator.prepare('second', { $id: id, type: 'string' })).toEqual([]);
    expect(validator.check('second', { $id: id, type: 'string' }, 'text')).toEqual({ valid: true });
    expect(validator.prepare('third', { $ref: id })).toEqual([expect.stringContaining("can't resolve reference")]);
  });

  it('reuses a cached validator, recompiles an evicted one, and still validates with both', () => {
    const validator = new OutputValidator();
    validator.prepare('sha-0', oneOff(0));
    expect(validator.check('sha-0', oneOff(0), { field_0: 'x' })).toEqual({ valid: true });
    expect(validator.compileCount).toBe(1);
    for (let index = 1; index <= VALIDATOR_CACHE_SIZE; index++) validator.prepare(`sha-${index}`, oneOff(index));
    expect(validator.check('sha-0', oneOff(0), {})).toEqual({
      valid: false,
      details: ['$: missing required property "field_0"'],
    });
    expect(validator.compileCount).toBe(VALIDATOR_CACHE_SIZE + 2);
  });

  it('lists up to MAX_OUTPUT_DETAILS violations whole, and past that adds one summary entry', () => {
    const validator = new OutputValidator();
    const requiring = (count: number) => ({
      type: 'object',
      required: Array.from({ length: count }, (_, index) => `f${index}`),
    });
    const exact = validator.check('exact', requiring(MAX_OUTPUT_DETAILS), {});
    expect(exact).toEqual({ valid: false, details: expect.any(Array) });
    const details = (exact as { details: string[] }).details;
    expect(details).toHaveLength(MAX_OUTPUT_DETAILS);
    expect(details[MAX_OUTPUT_DETAILS - 1]).toBe(`$: missing required property "f${MAX_OUTPUT_DETAILS - 1}"`);
    const over = validator.check('over', requiring(MAX_OUTPUT_DETAILS + 1), {}) as { details: string[] };
    expect(over.details).toHaveLength(MAX_OUTPUT_DETAILS + 1);
    expect(over.details[MAX_OUTPUT_DETAILS]).toBe('… and 1 more violations');
  });

  it('names array length failures in the words of the bound that failed', () => {
    const validator = new OutputValidator();
    const schema = { type: 'object', properties: { few: { minItems: 2 }, many: { maxItems: 1 } } };
    expect(validator.check('items', schema, { few: [1], many: [1, 2] })).toEqual({
      valid: false,
      details: ['/few: must have at least 2 items', '/many: must have at most 1 items'],
    });
  });

  it('reports a bad meta-schema value once per problem, without the alternatives noise', () => {
    const validator = new OutputValidator();
    // `type` may be a type name or an array of them: Ajv also reports that neither alternative matched.
    expect(validator.prepare('type', { type: 'strin' })).toEqual([
      '$: "type" must be equal to one of the allowed values',
      '$: "type" must be array',
    ]);
  });

  it('ignores a root $schema naming a meta-schema Ajv does not hold', () => {
    const validator = new OutputValidator();
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: ['a'] };
    expect(validator.prepare('draft-2020', schema)).toEqual([]);
    expect(validator.check('draft-2020', schema, {})).toEqual({
      valid: false,
      details: ['$: missing required property "a"'],
    });
  });

  it("cuts a compile error to 200 characters, so a client's long $ref is not echoed whole", () => {
    const validator = new OutputValidator();
    const [problem] = validator.prepare('long', { $ref: `https://example.test/${'x'.repeat(300)}` });
    const prefix = '$: the schema cannot be compiled: ';
    expect(problem.startsWith(prefix)).toBe(true);
    expect(problem.slice(prefix.length)).toHaveLength(201);
    expect(problem.endsWith('x…')).toBe(true);
  });
});
