/**
 * Length in Unicode code points (docs/design/decisions.md §7: identifiers are bounded in code points, so an
 * emoji counts once), counted without building an array of the characters.
 */
export function codePointLength(value: string): number {
  let count = 0;
  for (let index = 0; index < value.length; index++) {
    const unit = value.charCodeAt(index);
    // A high surrogate followed by a low one is one code point; a lone surrogate counts once.
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < value.length) {
      const next = value.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
    count++;
  }
  return count;
}

/** Choices for a message: `a`, `a or b`, `a, b or c`. */
export function orList(items: readonly string[]): string {
  return items.length === 1 ? items[0] : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}
