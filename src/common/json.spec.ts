import {
  exceedsJsonContainers,
  exceedsJsonDepth,
  int,
  MAX_JSON_CONTAINERS,
  MAX_JSON_DEPTH,
  nonEmptyString,
} from './json';

const nestedArrays = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));
const nestedObjects = (levels: number): unknown =>
  JSON.parse('{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1));

describe(exceedsJsonDepth.name, () => {
  it('counts the value itself as level 1 and scalars as no level at all', () => {
    expect(exceedsJsonDepth('text', 0)).toBe(false);
    expect(exceedsJsonDepth({}, 1)).toBe(false);
    expect(exceedsJsonDepth({}, 0)).toBe(true);
    expect(exceedsJsonDepth({ a: [1, 'x', null] }, 2)).toBe(false);
    expect(exceedsJsonDepth({ a: [1, 'x', null, {}] }, 2)).toBe(true);
  });

  it('accepts exactly MAX_JSON_DEPTH levels and refuses one more, for arrays and objects alike', () => {
    for (const build of [nestedArrays, nestedObjects]) {
      expect(exceedsJsonDepth(build(MAX_JSON_DEPTH))).toBe(false);
      expect(exceedsJsonDepth(build(MAX_JSON_DEPTH + 1))).toBe(true);
    }
  });

  it('finds the deep branch wherever it hides, including under __proto__ and constructor keys', () => {
    const deep = nestedArrays(MAX_JSON_DEPTH);
    expect(exceedsJsonDepth({ wide: Array.from({ length: 1000 }, () => ({})), hidden: [deep] })).toBe(true);
    expect(exceedsJsonDepth(JSON.parse(`{"__proto__": ${JSON.stringify(deep)}}`))).toBe(true);
    expect(exceedsJsonDepth(JSON.parse(`{"constructor": {"prototype": ${JSON.stringify(deep)}}}`))).toBe(true);
  });

  it('walks a million levels without recursion (it must survive what it refuses)', () => {
    expect(exceedsJsonDepth(nestedArrays(1_000_000))).toBe(true);
  });
});

describe(exceedsJsonContainers.name, () => {
  const body = (count: number, unit = '{}') => `[${Array.from({ length: count }, () => unit).join(',')}]`;

  it('counts every array and object, the body itself included, and refuses one past the bound', () => {
    expect(exceedsJsonContainers(body(9), 10)).toBe(false); // 9 objects and the array
    expect(exceedsJsonContainers(body(10), 10)).toBe(true);
    expect(exceedsJsonContainers(body(10, '[]'), 10)).toBe(true);
    expect(exceedsJsonContainers(body(10, '0'), 10)).toBe(false);
  });

  it('skips brackets inside strings, escaped quotes and backslashes included', () => {
    const text = (value: string) => JSON.stringify({ content: value, padding: 'x'.repeat(40) });
    expect(exceedsJsonContainers(text('{[{[{[{[{[{[{[{[{[{[{[{['), 3)).toBe(false);
    expect(exceedsJsonContainers(text('say \\"{[{[{[{[{[\\" and {[{[{[{['), 3)).toBe(false);
    // After an escaped backslash the quote closes the string, so what follows is structure.
    expect(exceedsJsonContainers(`["\\\\",{},{},{},"${'x'.repeat(20)}"]`, 3)).toBe(true);
  });

  it('reads nothing of text too short to hold more than the bound', () => {
    expect(exceedsJsonContainers('[[[[', 2)).toBe(false);
  });

  it('refuses the shortest text that holds one container past the bound', () => {
    // Three nested arrays are six characters: exactly the length where the pre-scan must start reading.
    expect(exceedsJsonContainers('[[[]]]', 2)).toBe(true);
    expect(exceedsJsonContainers('[[]]', 2)).toBe(false);
  });

  it('refuses the default bound’s worth of empty objects, and passes a long history of long texts', () => {
    expect(exceedsJsonContainers(body(MAX_JSON_CONTAINERS))).toBe(true);
    const message = JSON.stringify({
      role: 'tool',
      tool_call_id: 'call_1',
      content: '{"a":[1,2,{"b":3}]}'.repeat(200),
    });
    expect(exceedsJsonContainers(`{"messages":[${Array.from({ length: 2_000 }, () => message).join(',')}]}`)).toBe(
      false,
    );
  });

  it('stops at an unterminated string', () => {
    expect(exceedsJsonContainers(`[{}, "${'{'.repeat(100)}`, 5)).toBe(false);
  });
});

describe(int.name, () => {
  it('passes integers and refuses fractions, numeric strings and non-numbers', () => {
    expect(int(0)).toBe(0);
    expect(int(-3)).toBe(-3);
    expect(int(128_000)).toBe(128_000);
    expect(int(1.5)).toBeUndefined();
    expect(int(Number.NaN)).toBeUndefined();
    expect(int('12')).toBeUndefined();
    expect(int(null)).toBeUndefined();
  });
});

describe(nonEmptyString.name, () => {
  it('passes a non-empty string and treats an empty one as absent', () => {
    expect(nonEmptyString('token')).toBe('token');
    expect(nonEmptyString(' ')).toBe(' ');
    expect(nonEmptyString('')).toBeUndefined();
    expect(nonEmptyString(42)).toBeUndefined();
    expect(nonEmptyString(undefined)).toBeUndefined();
  });
});
