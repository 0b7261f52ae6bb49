import { OutputValidator, VALIDATOR_CACHE_SIZE } from './output-validator';

/** A schema no other call uses, as a stream of one-off structured requests sends. */
const oneOff = (index: number) => ({
  type: 'object',
  additionalProperties: false,
  required: [`field_${index}`],
  properties: { [`field_${index}`]: { type: 'string' } },
});

/** Ajv's own cache of compiled schemas (keyed by schema object): where the memory actually is. */
const ajvCacheSize = (validator: OutputValidator) =>
  (validator as unknown as { ajv: { _cache: Map<unknown, unknown> } }).ajv._cache.size;

describe(OutputValidator.name, () => {
  it("keeps at most VALIDATOR_CACHE_SIZE compiled schemas after 3,000 one-off schemas, Ajv's own cache included", () => {
    const validator = new OutputValidator();
    const before = ajvCacheSize(validator);
    for (let index = 0; index < 3000; index++) expect(validator.prepare(`sha-${index}`, oneOff(index))).toEqual([]);
    expect(validator.compileCount).toBe(3000);
    expect(ajvCacheSize(validator) - before).toBeLessThanOrEqual(VALIDATOR_CACHE_SIZE);
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
});
