import { exceedsJsonDepth, MAX_JSON_DEPTH } from './json';

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
