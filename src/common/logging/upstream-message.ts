/**
 * The upstream's own words about a failure, made fit for one log line: a CLI's "Not logged in ·
 * Please run /login" tells an operator more than `exit_code: 1`. The text comes from a program we
 * do not control, so it is bounded and stripped of what must never reach a log: control
 * characters (no forged lines), e-mail addresses, bearer values and anything shaped like a key or
 * token. Never sent to a client, which gets the error table's message.
 */
export const MAX_UPSTREAM_MESSAGE_LENGTH = 240;

// eslint-disable-next-line no-control-regex -- these are the characters it exists to replace
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
const EMAIL = /[^\s@<>()"',;:]+@[^\s@<>()"',;:]+\.[A-Za-z]{2,}/g;
/** A bearer value (digits or punctuation in it: "Invalid bearer token" is prose and stays). */
const BEARER = /\bbearer\s+(?=[^\s"',;]*[0-9._~+/=-])[^\s"',;]{6,}/gi;
const NAMED_SECRET = /\b(token|key|secret|password|authorization)(\s*[:=]\s*)("?)[^\s"',;]+/gi;
/** Long runs of token alphabet (JWTs, OAuth and API keys, base64) — never prose. */
const TOKEN_LIKE = /[A-Za-z0-9_\-+/=.]*[0-9_\-+/=][A-Za-z0-9_\-+/=.]*/g;
const MIN_TOKEN_LENGTH = 24;

export function boundedUpstreamMessage(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let cleaned = text
    .replace(CONTROL_CHARACTERS, ' ')
    .replace(EMAIL, '[email]')
    .replace(BEARER, 'Bearer [redacted]')
    .replace(
      NAMED_SECRET,
      (_match, word: string, separator: string, quote: string) => `${word}${separator}${quote}[redacted]`,
    )
    .replace(TOKEN_LIKE, (run) => (run.length >= MIN_TOKEN_LENGTH ? '[redacted]' : run))
    .replace(/\s+/g, ' ')
    .trim();
  if (cleaned === '') return undefined;
  const codePoints = Array.from(cleaned);
  if (codePoints.length > MAX_UPSTREAM_MESSAGE_LENGTH)
    cleaned = `${codePoints.slice(0, MAX_UPSTREAM_MESSAGE_LENGTH - 1).join('')}…`;
  return cleaned;
}
