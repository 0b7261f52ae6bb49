import * as path from 'node:path';
import { quoted } from '../core/quoted';

/**
 * Value parsers for settings. Each returns the typed value or throws a `SettingRuleError`
 * whose message is the rule that was broken (the loader adds the setting name).
 */
export class SettingRuleError extends Error {}

/** What a parser may read besides the value: the user's home, which a leading `~` stands for. */
export interface ParseContext {
  readonly home: string;
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `500ms`, `90s`, `5m`, `1h` or `0` → whole milliseconds, rounded. A value that is not 0 but rounds
 * to 0 is refused: 0 has a meaning of its own in many rows (no bound, off, at once), which a
 * `0.4ms` meant as a tiny bound must not silently take.
 */
export function parseDuration(raw: string): number {
  const value = raw.trim();
  if (value === '0') return 0;
  const match = DURATION.exec(value);
  if (!match) throw new SettingRuleError('must be a duration such as 500ms, 90s, 5m, 1h or 0');
  const given = Number(match[1]) * UNIT_MS[match[2]];
  const ms = Math.round(given);
  if (ms === 0 && given !== 0) {
    throw new SettingRuleError(
      'is less than 1 ms, and durations are whole milliseconds, so it would read as 0, which has its own meaning here; write at least 1ms, or 0 if that meaning is what you want',
    );
  }
  return ms;
}

/** A duration of more than 0, for an interval or timeout that 0 would turn into a busy loop or an instant failure. */
export function parsePositiveDuration(raw: string): number {
  const ms = parseDuration(raw);
  if (ms === 0) throw new SettingRuleError('must be a positive duration');
  return ms;
}

export function parseBoolean(raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(value)) return true;
  if (['false', '0', 'no', 'off'].includes(value)) return false;
  throw new SettingRuleError('must be true or false');
}

export function parseNonNegativeInteger(raw: string): number {
  const value = raw.trim();
  if (!/^\d+$/.test(value)) throw new SettingRuleError('must be a non-negative integer');
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed)) throw new SettingRuleError('must be a non-negative integer');
  return parsed;
}

export function parsePositiveInteger(raw: string): number {
  const parsed = parseNonNegativeInteger(raw);
  if (parsed < 1) throw new SettingRuleError('must be an integer of at least 1');
  return parsed;
}

/**
 * An integer from `min` to `max`: for a count or size whose value is held at once (entries of a
 * cache, a body read into memory), so that a slip of a few digits is refused at
 * startup instead of failing there with a stack trace or taking gigabytes. `rule` is the refusal's
 * words when the range has a name of its own.
 */
export function parseIntegerIn(min: number, max: number, rule = `must be an integer from ${min} to ${max}`) {
  return (raw: string): number => {
    const value = raw.trim();
    const parsed = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!(parsed >= min && parsed <= max)) throw new SettingRuleError(rule);
    return parsed;
  };
}

export const parsePort = parseIntegerIn(0, 65535, 'must be a port number between 0 and 65535');

/** The value without surrounding whitespace (a pasted value, a secret file's last newline), not empty. */
export function parseNonEmpty(raw: string): string {
  const value = raw.trim();
  if (value === '') throw new SettingRuleError('must not be empty');
  return value;
}

/** The `token` rule of RFC 9110 (section 5.6.2): the only characters a header field name may hold. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * An HTTP header name, trimmed. A name with a space, a colon or another character outside the
 * token rule can never arrive on a request, so a setting naming one would silently never match.
 */
export function parseHeaderName(raw: string): string {
  const name = parseNonEmpty(raw);
  if (!HEADER_NAME.test(name)) {
    throw new SettingRuleError(
      `${quoted(name, 60)} is not an HTTP header name: use only letters, digits and !#$%&'*+-.^_\`|~ (no spaces or colons)`,
    );
  }
  return name;
}

/** A path with a leading `~` (alone or before `/`) made the user's home, as a shell would. */
export function expandHome(value: string, home: string): string {
  if (value === '~') return home;
  if (value.startsWith('~/')) return path.join(home, value.slice(2));
  return value;
}

/**
 * The parser of every path and command row: trimmed, not empty, a leading `~` made the home, so
 * whoever reads the value gets the path the operator meant (docs/configuration.md "Formats").
 */
export function parsePath(raw: string, context: ParseContext): string {
  return expandHome(parseNonEmpty(raw), context.home);
}

export function parseUrl(schemes: readonly string[]) {
  return (raw: string): string => {
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      throw new SettingRuleError(`must be a URL with scheme ${schemes.join(', ')}`);
    }
    if (!schemes.includes(url.protocol.replace(/:$/, ''))) {
      throw new SettingRuleError(`must be a URL with scheme ${schemes.join(', ')}`);
    }
    return raw.trim().replace(/\/+$/, '');
  };
}

export function parseEnum<T extends string>(allowed: readonly T[]) {
  return (raw: string): T => {
    const value = raw.trim() as T;
    if (!allowed.includes(value)) throw new SettingRuleError(`must be one of ${allowed.join(', ')}`);
    return value;
  };
}

/** Comma-separated list, trimmed, blanks and duplicates removed, order kept. */
export function parseList(raw: string): string[] {
  return [
    ...new Set(
      raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    ),
  ];
}
