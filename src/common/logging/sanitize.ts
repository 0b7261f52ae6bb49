/**
 * Log sanitizer for caller-controlled identifiers (contract "Log records",
 * gateway-behaviours.md §9): every control character (Unicode Cc: U+0000–U+001F and
 * U+007F–U+009F, so CR, LF, TAB and NEL), plus U+2028 and U+2029, becomes one space, and the
 * value is cut to its first 128 code points without splitting a surrogate pair. Hand-written
 * because the rule is ours; no library implements exactly this.
 */
// eslint-disable-next-line no-control-regex -- these are the characters it exists to replace
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
export const MAX_LOGGED_IDENTIFIER_LENGTH = 128;

export function sanitizeIdentifier(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : String(value);
  const replaced = text.replace(CONTROL_CHARACTERS, ' ');
  // Array.from iterates by code point, so a surrogate pair is never split.
  const codePoints = Array.from(replaced);
  return codePoints.length <= MAX_LOGGED_IDENTIFIER_LENGTH
    ? replaced
    : codePoints.slice(0, MAX_LOGGED_IDENTIFIER_LENGTH).join('');
}

/** The longest upstream error message a log line carries. */
export const MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH = 200;
// Secrets and personal data an upstream may quote back: bearer tokens, JWTs, API keys, e-mails.
const SECRET_PATTERNS = [
  /\bBearer\s+\S+/gi,
  /\beyJ[\w-]+\.[\w-]+\.[\w-]*/g,
  /\b(?:sk|rk|pk|ya29|gho|ghp|xox[abp])[-_.][\w.-]{8,}/g,
  /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g,
  /\b[A-Za-z0-9_-]{40,}\b/g,
];

/**
 * An upstream's error message fit for a log line: secrets and e-mail addresses replaced by
 * `[redacted]`, control characters by spaces, cut to 200 code points. `undefined` for no text.
 */
export function sanitizeUpstreamMessage(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  let text = value;
  for (const pattern of SECRET_PATTERNS) text = text.replace(pattern, '[redacted]');
  text = text.replace(CONTROL_CHARACTERS, ' ').trim();
  if (text === '') return undefined;
  const codePoints = Array.from(text);
  return codePoints.length <= MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH
    ? text
    : codePoints.slice(0, MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH).join('');
}
