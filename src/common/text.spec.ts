import { codePointLength, orList } from './text';

describe(codePointLength.name, () => {
  it('counts code points: a surrogate pair once, a lone surrogate once', () => {
    expect(codePointLength('')).toBe(0);
    expect(codePointLength('abc')).toBe(3);
    expect(codePointLength('😀😀')).toBe(2);
    expect(codePointLength('é')).toBe(1);
    expect(codePointLength('\ud800x')).toBe(2);
    expect(codePointLength('x\udc00')).toBe(2);
    expect(codePointLength('\udc00\ud800')).toBe(2);
    expect(codePointLength('\ud800')).toBe(1);
  });
});

describe(orList.name, () => {
  it('joins choices the way a sentence lists them', () => {
    expect(orList(['a'])).toBe('a');
    expect(orList(['a', 'b'])).toBe('a or b');
    expect(orList(['a', 'b', 'c'])).toBe('a, b or c');
  });
});
