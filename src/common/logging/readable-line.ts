import type { PrettyOptions } from 'pino-pretty';
import { EVENT_WORDS } from './event-words';

/**
 * One readable line per record for a person at a terminal: time, level, the message in words, then
 * only the fields the message does not already say, as `name=value`. pino-pretty writes the time
 * and the level and calls `messageFormat` for the rest; `hideObject` keeps it from dumping the
 * whole record after it. The JSON records themselves are untouched (log-destination.ts).
 */
export const READABLE_OPTIONS: PrettyOptions = {
  hideObject: true,
  ignore: 'pid,hostname',
  translateTime: 'SYS:HH:MM:ss.l',
  messageFormat: (log, messageKey) => readableMessage(log, messageKey),
};

/** What every line shows in its own place, or never: not repeated among the fields. */
const NEVER_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'context']);
const PLACEHOLDER = /\{([A-Za-z0-9_.]+)\}/g;
const BARE_VALUE = /^[^\s"=,{}[\]]+$/;

/** The words of a record and then the fields they leave unsaid. */
export function readableMessage(log: Record<string, unknown>, messageKey = 'msg'): string {
  const message = typeof log[messageKey] === 'string' ? log[messageKey] : undefined;
  const event = typeof log.event === 'string' ? log.event : undefined;
  // A record whose message is only its event's name gets the event's words; a sentence stays.
  const template = event !== undefined && (message === undefined || message === event) ? EVENT_WORDS[event] : undefined;
  const said = new Set<string>([messageKey]);
  const words =
    template === undefined
      ? (message ?? event ?? '')
      : template.replace(PLACEHOLDER, (_whole, name: string) => {
          said.add(name);
          return wordsOf(log[name]);
        });
  // An event without words (event-words.spec.ts keeps that from happening) shows its name once.
  if (words === event) said.add('event');
  const fields: string[] = [];
  // A nested value that repeats one already on the line (pino-http's `req.id` is the line's `reqId`) is left out.
  const written = new Set<unknown>();
  for (const [name, value] of Object.entries(log)) {
    if (value === undefined || NEVER_FIELDS.has(name) || said.has(name)) continue;
    if (name !== 'event' && saysValue(words, value)) continue;
    // A sentence says its facts in words; a list of records beside it is for machines (JSON).
    if (template === undefined && Array.isArray(value) && value.some(isPlainObject)) continue;
    fields.push(...fieldsOf(name, value, written));
    if (typeof value === 'string') written.add(value);
  }
  return fields.length === 0 ? words : `${words}  ${fields.join(' ')}`;
}

/** A value inside a sentence: lists joined by commas, everything else as itself. */
function wordsOf(value: unknown): string {
  if (value === undefined) return '?';
  if (Array.isArray(value)) return value.map(wordsOf).join(', ');
  if (typeof value === 'string') return value;
  if (isPlainObject(value)) return JSON.stringify(value);
  return String(value);
}

/** True when the message already carries a string field's value (or its snake_case read as words). */
function saysValue(words: string, value: unknown): boolean {
  if (typeof value !== 'string' || value.length < 2) return false;
  return [value, value.replace(/_/g, ' ')].some((form) =>
    new RegExp(`(^|[^\\w-])${escapeRegExp(form)}($|[^\\w-])`).test(words),
  );
}

/** `name=value`; a nested object one level down as `name.key=value` (pino-http's `req`, `res`); an error as its type and message. */
function fieldsOf(name: string, value: unknown, written: ReadonlySet<unknown>): string[] {
  if (isErrorLike(value)) return [`${name}=${valueOf(`${value.type ?? 'Error'}: ${value.message}`)}`];
  if (isPlainObject(value)) {
    return Object.entries(value)
      .filter(([, inner]) => inner !== undefined && !(typeof inner === 'string' && written.has(inner)))
      .map(([key, inner]) => `${name}.${key}=${valueOf(inner)}`);
  }
  return [`${name}=${valueOf(value)}`];
}

function valueOf(value: unknown): string {
  if (typeof value === 'string') return BARE_VALUE.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return JSON.stringify(value) ?? String(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isErrorLike(value: unknown): value is { type?: string; message: string } {
  return isPlainObject(value) && typeof value.message === 'string' && typeof value.stack === 'string';
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
