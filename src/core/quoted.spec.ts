import { quoted } from './quoted';

describe(quoted.name, () => {
  it('quotes a value on one line, a string cut to its first max characters', () => {
    expect(quoted('a "b"\nc')).toBe('"a \\"b\\"\\nc"');
    expect(quoted('x'.repeat(100))).toBe(`"${'x'.repeat(80)}"`);
    expect(quoted('abcdef', 3)).toBe('"abc"');
    expect(quoted(42)).toBe('42');
    expect(quoted({ a: 'y'.repeat(100) }, 10)).toBe('{"a":"yyyyyy');
    expect(quoted(undefined)).toBe('undefined');
  });
});
