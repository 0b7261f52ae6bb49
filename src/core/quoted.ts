/**
 * A value quoted for a message or a log line: JSON's quoting (so a control character or a quote
 * in it cannot break the line), at most `max` characters of a string; any other value as JSON.
 */
export function quoted(value: unknown, max = 80): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, max));
  return JSON.stringify(value)?.slice(0, max + 2) ?? String(value);
}
