import { OutputValidator } from './output-validator';
import { findUncheckableProperties, namesUncheckableProperty } from './uncheckable-properties';

// Parsed from text, as request bodies are: an object literal's `__proto__` key sets the prototype.
const parsed = (text: string) => JSON.parse(text) as Record<string, unknown>;

describe('findUncheckableProperties', () => {
  it('names every object schema declaring or requiring __proto__, wherever it is, in the bounds path style', () => {
    const schema = parsed(
      '{"properties":{"__proto__":{}},"$defs":{"d":{"required":["__proto__"]}},' +
        '"items":{"properties":{"odd name":{"properties":{"__proto__":{"type":"string"}}}}},' +
        '"anyOf":[{},{"required":["a","__proto__"]}]}',
    );
    expect(findUncheckableProperties(schema)).toEqual(['$', '$/$defs.d', '$/anyOf[1]', '$[]["odd name"]']);
  });

  it('finds nothing in data keywords, in other names of Object.prototype, or in a schema without the name', () => {
    expect(
      findUncheckableProperties(
        parsed(
          '{"enum":[{"properties":{"__proto__":1}}],"const":{"required":["__proto__"]},"default":{"properties":{"__proto__":{}}},' +
            '"examples":[{"required":["__proto__"]}],"properties":{"constructor":{},"toString":{}},"required":["constructor"]}',
        ),
      ),
    ).toEqual([]);
    expect(findUncheckableProperties({ type: 'string' })).toEqual([]);
    expect(findUncheckableProperties(true)).toEqual([]);
  });

  it('refuses exactly what the validator cannot check: every answer fails, or one without the property passes', () => {
    const validator = new OutputValidator();
    const declared = parsed(
      '{"type":"object","additionalProperties":false,"required":["__proto__"],"properties":{"__proto__":{"type":"string"}}}',
    );
    expect(namesUncheckableProperty(declared)).toBe(true);
    expect(validator.prepare('declared', declared)).toEqual([]);
    expect(validator.check('declared', declared, parsed('{"__proto__":"x"}')).valid).toBe(false);
    expect(validator.check('declared', declared, {}).valid).toBe(true);
    // A dependency on it is always met: an answer without it passes.
    const depending = parsed(
      '{"type":"object","properties":{"a":{"type":"string"}},"dependentRequired":{"a":["__proto__"]}}',
    );
    expect(namesUncheckableProperty(depending)).toBe(true);
    expect(validator.check('depending', depending, { a: 'x' }).valid).toBe(true);
  });

  it('finds it in every keyword that names properties: dependentRequired, dependentSchemas, dependencies', () => {
    for (const text of [
      '{"dependentRequired":{"a":["__proto__"]}}',
      '{"dependentRequired":{"__proto__":["a"]}}',
      '{"dependentSchemas":{"__proto__":{}}}',
      '{"dependencies":{"a":["b","__proto__"]}}',
    ])
      expect(findUncheckableProperties(parsed(text))).toEqual(['$']);
    expect(findUncheckableProperties(parsed('{"dependentRequired":{"a":["b"]},"dependencies":{"a":{}}}'))).toEqual([]);
  });
});
