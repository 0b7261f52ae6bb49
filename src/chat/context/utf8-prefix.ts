/** UTF-8 size of a string, the unit every context-management bound is measured in. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, cut on a character
 * boundary: a multi-byte character (or surrogate pair) is kept whole or dropped whole, never
 * split into invalid bytes. Hand-written because it is a four-line walk back over continuation
 * bytes (0b10xxxxxx); no library call does exactly this.
 */
export function utf8Prefix(text: string, maxBytes: number): { text: string; bytes: number } {
  // Every UTF-16 unit takes at least one byte, so the prefix lies within the first `maxBytes`
  // units: only those are encoded, however long the text. A pair cut there encodes as a 3-byte
  // replacement that ends past `maxBytes`, so the walk below drops it.
  const head = text.length > maxBytes ? text.slice(0, Math.max(0, maxBytes)) : text;
  const encoded = Buffer.from(head, 'utf8');
  if (encoded.length <= maxBytes) return { text: head, bytes: encoded.length };
  let end = Math.max(0, maxBytes);
  while (end > 0 && (encoded[end] & 0xc0) === 0x80) end--;
  return { text: encoded.subarray(0, end).toString('utf8'), bytes: end };
}
