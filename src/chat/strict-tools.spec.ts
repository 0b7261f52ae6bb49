import { OutputValidator } from '../common/json-schema/output-validator';
import { SCHEMA_LIMITS } from '../common/json-schema/schema-bounds';
import type { NormalizedTool } from '../core/chat-message';
import { normalizeTools } from './chat-tools';
import { StrictTools } from './strict-tools';

const LOOKUP = {
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
  required: ['city', 'days'],
  additionalProperties: false,
};

const tools = (...definitions: Record<string, unknown>[]): readonly NormalizedTool[] => normalizeTools(definitions);
const strictFunction = (name: string, parameters: unknown, strict: unknown = true) => ({
  type: 'function',
  function: { name, parameters, strict },
});

/** Whether the strict tools accept a function call of `name` with these arguments. */
const fits = (strict: StrictTools, name: string, args: string): boolean =>
  strict.accepts({ name, kind: 'function', arguments: args });

describe('StrictTools', () => {
  it('is undefined without a strict function tool that has a schema', () => {
    const validator = new OutputValidator();
    expect(StrictTools.of([], validator)).toBeUndefined();
    expect(
      StrictTools.of(
        tools(
          strictFunction('loose', LOOKUP, false),
          { type: 'function', function: { name: 'bare', strict: true } },
          { type: 'custom', custom: { name: 'apply_patch' } },
        ),
        validator,
      ),
    ).toBeUndefined();
    expect(validator.compileCount).toBe(0);
  });

  it('accepts the arguments its schema accepts and refuses the others, in nested and flat forms', () => {
    const validator = new OutputValidator();
    const strict = StrictTools.of(
      tools(strictFunction('lookup', LOOKUP), { type: 'function', name: 'flat', parameters: LOOKUP, strict: true }),
      validator,
    )!;
    expect(strict.refusal()).toBeUndefined();
    for (const name of ['lookup', 'flat']) {
      expect(fits(strict, name, '{"city":"Oslo","days":2}')).toBe(true);
      expect(fits(strict, name, '{"city":"Oslo"}')).toBe(false);
      expect(fits(strict, name, '{"city":"Oslo","days":0}')).toBe(false);
      expect(fits(strict, name, '{"city":"Oslo","days":2,"extra":1}')).toBe(false);
    }
    // A tool that is not strict (or not declared) is not looked at.
    expect(fits(strict, 'other', '{"anything":true}')).toBe(true);
    // Compiled once per schema text, at the refusal check; the calls reuse it.
    expect(validator.compileCount).toBe(1);
  });

  it('reads blank arguments as {} and leaves custom calls alone', () => {
    const strict = StrictTools.of(
      tools(strictFunction('tight', LOOKUP), strictFunction('open', {})),
      new OutputValidator(),
    )!;
    expect(fits(strict, 'tight', '  ')).toBe(false);
    expect(fits(strict, 'open', '')).toBe(true);
    expect(strict.accepts({ name: 'open', kind: 'function' })).toBe(true);
    expect(strict.accepts({ name: 'tight', kind: 'custom', input: 'not json' })).toBe(true);
  });

  it('checks each call once, however many readers ask about it', () => {
    const validator = new OutputValidator();
    const strict = StrictTools.of(tools(strictFunction('tight', LOOKUP)), validator)!;
    const check = jest.spyOn(validator, 'check');
    const call = { name: 'tight', kind: 'function', arguments: '{"city":"Oslo","days":0}' } as const;
    expect([strict.accepts(call), strict.accepts(call)]).toEqual([false, false]);
    expect(check).toHaveBeenCalledTimes(1);
    expect(strict.accepts({ ...call, arguments: '{"city":"Oslo","days":2}' })).toBe(true);
    expect(check).toHaveBeenCalledTimes(2);
  });

  it('leaves a non-strict tool beside a strict one alone', () => {
    const strict = StrictTools.of(
      tools(strictFunction('loose', LOOKUP, false), strictFunction('tight', LOOKUP)),
      new OutputValidator(),
    )!;
    expect(fits(strict, 'loose', '{}')).toBe(true);
    expect(fits(strict, 'tight', '{}')).toBe(false);
  });

  it('refuses a strict schema that cannot be compiled with a 400 naming the tool, its place and the fix', () => {
    const strict = StrictTools.of(
      tools(
        strictFunction('fine', LOOKUP),
        strictFunction('broken', { type: 'object', properties: { a: { type: 'nope' } } }),
      ),
      new OutputValidator(),
    )!;
    const refusal = strict.refusal();
    expect(refusal).toMatchObject({ code: 'invalid_request', param: 'tools' });
    expect(refusal?.publicMessage).toMatch(
      /^tools\.1 \("broken"\) is strict, and the gateway checks its calls against its parameters schema, which is not a valid JSON Schema \(.+\); send a valid schema, or send the tool without strict \(docs\/chat\.md "Strict tools"\)$/,
    );
  });

  it('refuses a strict schema past the size bounds, and one with a property it cannot check', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level <= SCHEMA_LIMITS.depth; level++) deep = { type: 'object', properties: { a: deep } };
    const tooDeep = StrictTools.of(tools(strictFunction('deep', deep)), new OutputValidator())!.refusal();
    expect(tooDeep?.publicMessage).toContain('tools.0 ("deep") is strict');
    expect(tooDeep?.publicMessage).toContain('is too large for the gateway to check answers against');
    expect(tooDeep?.publicMessage).toContain('; make it smaller, or send the tool without strict');

    const proto = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}') as unknown;
    const unnamed = StrictTools.of(tools(strictFunction('proto', proto)), new OutputValidator())!.refusal();
    expect(unnamed?.publicMessage).toContain('declares or requires a property named "__proto__"');
    expect(unnamed?.publicMessage).toContain('; rename it, or send the tool without strict');
  });
});
