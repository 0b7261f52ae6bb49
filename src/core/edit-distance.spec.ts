import { editDistance } from './edit-distance';

describe(editDistance.name, () => {
  it('counts the fewest one-character inserts, deletes and substitutions', () => {
    expect(editDistance('', '')).toBe(0);
    expect(editDistance('sol-hgh', 'sol-high')).toBe(1);
    expect(editDistance('sol-high', 'sol-hgh')).toBe(1);
    expect(editDistance('hihg', 'high')).toBe(2);
    expect(editDistance('abc', '')).toBe(3);
  });
});
