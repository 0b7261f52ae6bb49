/*
 * How schema locations and names are written in validation details (`$.a.b`, `$["odd name"]`),
 * shared by the structured route's subset walker and the Ajv output validator.
 */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Names and values from the schema are shown in `details` cut to this many code points (then `…`):
 * a detail names what is wrong, it does not send the client's 256 KiB back, 50 times over.
 */
export const MAX_SHOWN_NAME_CHARS = 64;

function shown(text: string): string {
  if (text.length <= MAX_SHOWN_NAME_CHARS) return text;
  // 2 × the bound in UTF-16 units always holds the bound in code points; Array.from keeps pairs whole.
  const points = Array.from(text.slice(0, 2 * MAX_SHOWN_NAME_CHARS));
  return points.length <= MAX_SHOWN_NAME_CHARS && text.length <= 2 * MAX_SHOWN_NAME_CHARS
    ? text
    : `${points.slice(0, MAX_SHOWN_NAME_CHARS).join('')}…`;
}

export const quote = (text: string) => JSON.stringify(shown(text));

/** `$.name`, or `$["weird name"]` when the name is not an identifier; long names are cut. */
export function propertyPath(parent: string, name: string): string {
  return IDENTIFIER.test(name) && name.length <= MAX_SHOWN_NAME_CHARS
    ? `${parent}.${name}`
    : `${parent}[${quote(name)}]`;
}

const KEYWORD = /^\$?[A-Za-z_][A-Za-z0-9_]*$/;

/** `$/keyword`, or `$/"odd keyword"`: the place of a keyword other than `properties` and `items`. */
export function keywordPath(parent: string, key: string): string {
  return KEYWORD.test(key) && key.length <= MAX_SHOWN_NAME_CHARS ? `${parent}/${key}` : `${parent}/${quote(key)}`;
}
