import type { Request, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ErrorCode } from '../../core/error-codes';
import { answerLogLevel } from '../../core/error-codes';
import type { EventLogger } from '../../core/event-logger';

/**
 * Request ids and the access line, written by hand instead of pino-http + nestjs-pino's
 * request binding. Those build two child loggers per request and run every request inside an
 * AsyncLocalStorage, whose promise hooks on Node 20 tax every promise of a streamed turn, a large
 * share of the CPU per request and of chunks/s (docs/performance.md). Here the request's logger is handed to the code that logs for
 * the request (commands, filters, adapters' CallContext) instead of being found through ALS.
 *
 * The records are the ones pino-http wrote: every line of a request carries `reqId`, and one
 * `request completed` (or `request aborted` when the client left first, `request errored` for a
 * 5xx) line per request with `req` (id, method, sanitized path), `res.statusCode` and
 * `responseTime` in ms, at the level of the one rule (answerLogLevel: info, warn for a 4xx, error
 * for a 5xx, info again for a drain's refusal) — at info when a line of the request already said
 * its failure at warn or error (the route's own, with its cause and fix): a failed request has one
 * warning, never two (docs/troubleshooting.md "One line per failure"). Otherwise the access line is
 * that one line, and says the error the writer answered (`status`, `error_code`, for a 4xx its
 * message: noteAnsweredError). Health probes, which load balancers send every few seconds, get
 * theirs only at debug level.
 */

const REQUEST_LOG = Symbol('requestLog');
const ARRIVED_AT = Symbol('arrivedAt');

/**
 * A request's logger: every line it writes carries `reqId` first, as a pino child's would. Not a
 * child: a pino child builds its bindings and a function per level for each request, which an
 * open stream then holds; this is the one small record the request already keeps.
 */
class RequestLog implements EventLogger {
  /** A line of this request went out at warn or above: its access line is then no second warning. */
  reported = false;

  constructor(
    readonly id: string,
    private readonly root: Logger,
  ) {}

  info(fields: Record<string, unknown>, message: string): void {
    this.root.info({ reqId: this.id, ...fields }, message);
  }

  warn(fields: Record<string, unknown>, message: string): void {
    this.reported = true;
    this.root.warn({ reqId: this.id, ...fields }, message);
  }

  error(fields: Record<string, unknown>, message: string): void {
    this.reported = true;
    this.root.error({ reqId: this.id, ...fields }, message);
  }

  debug(fields: Record<string, unknown>, message: string): void {
    if (this.root.isLevelEnabled('debug')) this.root.debug({ reqId: this.id, ...fields }, message);
  }
}

type LoggedRequest = IncomingMessage & { id?: string; [REQUEST_LOG]?: RequestLog; [ARRIVED_AT]?: number };

/**
 * A caller's `X-Request-Id` we adopt: 1–128 characters of `[A-Za-z0-9._:-]`, so it cannot forge
 * log fields or lines, and a client's logs and ours join on one id. Anything else is ignored.
 */
const ADOPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function adoptableRequestId(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const trimmed = value?.trim();
  return trimmed !== undefined && ADOPTABLE_REQUEST_ID.test(trimmed) ? trimmed : undefined;
}

/**
 * First in the chain: the arrival time (its headers read, its body not yet), the request id (the
 * caller's `x-request-id` when it is a plain bounded token, else a new UUID), echoed as
 * `x-request-id`, and the access line once the response finished or the client left. A step of
 * `entryMiddleware` (common/http), which always goes on.
 */
export function startRequestLog(root: Logger): (request: Request, response: Response) => true {
  return (request, response) => {
    const arrivedAt = Date.now();
    const id = adoptableRequestId(request.headers['x-request-id']) ?? randomUUID();
    const logged = request as LoggedRequest;
    logged[ARRIVED_AT] = arrivedAt;
    logged.id = id;
    logged[REQUEST_LOG] = new RequestLog(id, root);
    response.setHeader('x-request-id', id);
    // The path as the client sent it, read here, before any route mounted with `app.use(path, …)`
    // (the body parsers are) strips its mount path from `request.url` for the rest of the chain.
    const url = request.url;
    const probe = url.startsWith('/health');
    if (!probe || root.isLevelEnabled('debug'))
      logAccessWhenDone(response, new AccessLine(logged, root, id, url, probe, arrivedAt));
    return true;
  };
}

/**
 * The logger for everything a request logs: its lines carry `reqId`. Outside a request (a unit
 * spec's bare object), the given fallback.
 */
export function requestLoggerOf(request: IncomingMessage, fallback: EventLogger): EventLogger {
  return (request as LoggedRequest)[REQUEST_LOG] ?? fallback;
}

/**
 * Epoch ms the request arrived, before its body was read: what a deadline "from arrival" and a
 * latency count from (a slow upload is part of them). Outside a request (a unit spec's bare
 * object), now.
 */
export function arrivalOf(request: IncomingMessage): number {
  return (request as LoggedRequest)[ARRIVED_AT] ?? Date.now();
}

/**
 * The access line of one request, written once its response finished, closed or failed. Kept on
 * the response, whose three listeners are one module function: no closure per request, which an
 * open stream would hold for its whole life.
 */
/** The status of a request whose client left before it was answered (nginx's convention). */
const CLIENT_CLOSED = 499;

class AccessLine {
  constructor(
    private readonly request: LoggedRequest,
    private readonly root: Logger,
    private readonly id: string,
    /** `request.url` as it arrived (path and query). */
    private readonly url: string,
    /** A health probe: logged at debug level, whatever its status. */
    private readonly probe: boolean,
    /** Epoch ms the request arrived. */
    private readonly started: number,
  ) {}

  /** Written at the first of the three; the listeners are removed with it. */
  write(response: ServerResponse, error?: Error): void {
    response.off('finish', accessLineDue);
    response.off('close', accessLineDue);
    response.off('error', accessLineDue);
    const { id, root } = this;
    const aborted = !response.writableEnded;
    // A client that left before any answer got none: 499, as the chat line and the metrics say,
    // not the 200 a response object holds until a status is set.
    const status = aborted && !response.headersSent ? CLIENT_CLOSED : response.statusCode;
    // A refused path may be a key pasted into a URL (`/v1/models/sk-…`), redacted whole before the
    // cut; a served one is a route's.
    const path = pathOf(this.url);
    const fields: Record<string, unknown> = {
      reqId: id,
      req: {
        id,
        method: this.request.method,
        path: status >= 400 ? redactedIdentifier(path) : sanitizeIdentifier(path),
      },
      res: { statusCode: status },
      responseTime: Date.now() - this.started,
    };
    const outcome = aborted ? 'request aborted' : 'request completed';
    if (this.probe) {
      root.debug(fields, outcome);
      return;
    }
    // A client that left before any answer (499) is info: leaving is the client's right (a stopped
    // agent turn), not a failure of the request.
    const answered = (response as LoggedResponse)[ANSWERED_ERROR];
    const level = error ? 'error' : answerLogLevel(status, answered?.code);
    if (level !== 'info' && this.request[REQUEST_LOG]?.reported) {
      // The route's own line already said what failed and the fix, at warn or error: this one
      // records the exchange only, so a failure is one warning, not two.
      root.info(fields, outcome);
      return;
    }
    if (level !== 'info' && answered !== undefined) {
      // No line of the route said it (an unknown path or model id, a refused bearer outside
      // chat): this one is the failure's line, so it says what the client was answered.
      fields.status = status;
      Object.assign(fields, answered.logFields(status));
    }
    if (level === 'error') {
      // The status says what happened and the turn's `upstream_*` line why. A plain field, not
      // pino's `err`: its serializer writes a stack, which would say nothing here and may name
      // files of the deployment.
      fields.error_message = error ? error.message : `failed with status code ${status}`;
      root.error(fields, 'request errored');
    } else {
      root[level](fields, outcome);
    }
  }
}

/**
 * The path of a request target, never its query (which may carry a key). A target in absolute
 * form (`http://user:password@host/path`, which Node and Express serve as the path) is reduced to
 * its path too: its userinfo may be a password, and its scheme and host say nothing of the route.
 * Anything else (`*`) logs as no path.
 */
function pathOf(url: string): string {
  if (url.startsWith('/')) return url.split('?')[0];
  try {
    const { pathname } = new URL(url);
    return pathname.startsWith('/') ? pathname : '';
  } catch {
    return '';
  }
}

/** The error a request was answered with, as its access line may state it (the error writer's words). */
export interface AnsweredError {
  readonly code: ErrorCode;
  /**
   * The fields that say it (`error_code`; for a client error `param` and `error_message`), at the
   * status that went out. Asked only when the access line is the request's one failure line.
   */
  logFields(status: number): Record<string, unknown>;
}

const ACCESS_LINE = Symbol('accessLine');
const ANSWERED_ERROR = Symbol('answeredError');
type LoggedResponse = ServerResponse & { [ACCESS_LINE]?: AccessLine; [ANSWERED_ERROR]?: AnsweredError };

/**
 * Notes the error a request is answered with (the error writer does, for every error answer), so
 * its access line takes the level of the one rule (a drain's 503 is no error line) and, when no
 * line of the route said the failure, says it.
 */
export function noteAnsweredError(response: ServerResponse, answered: AnsweredError): void {
  (response as LoggedResponse)[ANSWERED_ERROR] = answered;
}

function logAccessWhenDone(response: ServerResponse, line: AccessLine): void {
  (response as LoggedResponse)[ACCESS_LINE] = line;
  response.on('finish', accessLineDue);
  response.on('close', accessLineDue);
  response.on('error', accessLineDue);
}

/** The response's 'finish', 'close' and 'error' listener (`this` is the response). */
function accessLineDue(this: LoggedResponse, error?: Error): void {
  this[ACCESS_LINE]?.write(this, error);
}

// ── What a log line may carry ────────────────────────────────────────────────────────────────

/**
 * Log sanitizer for caller-controlled identifiers (docs/endpoints.md "Logs",
 * docs/design/behaviours.md §9): every control character (Unicode Cc: U+0000–U+001F and
 * U+007F–U+009F, so CR, LF, TAB and NEL), plus U+2028 and U+2029, becomes one space, and the
 * value is cut to its first 128 code points without splitting a surrogate pair. Hand-written
 * because the rule is ours; no library implements exactly this.
 */
// eslint-disable-next-line no-control-regex -- these are the characters it exists to replace
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
export const MAX_LOGGED_IDENTIFIER_LENGTH = 128;

export function sanitizeIdentifier(value: unknown): string {
  return oneLogLine(value, MAX_LOGGED_IDENTIFIER_LENGTH);
}

/** `value` as one line of at most `maxCodePoints` code points: the identifier rule with another bound. */
export function oneLogLine(value: unknown, maxCodePoints: number): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : String(value);
  // At most two code units a code point: only that prefix can be kept, whatever the value's size.
  const replaced = text.slice(0, 2 * maxCodePoints + 1).replace(CONTROL_CHARACTERS, ' ');
  // Array.from iterates by code point, so a surrogate pair is never split.
  const codePoints = Array.from(replaced);
  return codePoints.length <= maxCodePoints ? replaced : codePoints.slice(0, maxCodePoints).join('');
}

/**
 * How much of a client's model id or refused path the redactor reads: far more than the 128 code points a line
 * keeps, so a key is redacted whole, and a bound, so an id of any size costs the same.
 */
const MAX_REDACTED_LENGTH = 1024;

/**
 * A model id the client sent, fit for a log line (`chat_completion`, the structured lines): the
 * identifier rule, with every key, token and e-mail address in it replaced by `[redacted]`
 * (redactSecrets), since a client's API key pasted into its model setting arrives there. `known`:
 * the id is one the gateway serves, which holds no secret, so the redactor is skipped and a
 * served turn pays nothing for it. Any value that is not a string is read as its text.
 */
export function loggedModelId(value: unknown, known: boolean): string {
  if (known || value === undefined || value === null) return sanitizeIdentifier(value);
  return redactedIdentifier(typeof value === 'string' ? value : String(value));
}

/** A client's text as the identifier rule logs it, with its secrets redacted whole before the cut. */
function redactedIdentifier(text: string): string {
  return sanitizeIdentifier(redactSecrets(text.slice(0, MAX_REDACTED_LENGTH)));
}

/** The longest upstream error message a log line carries. */
export const MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH = 200;
// Secrets and personal data an upstream may quote back, or a client paste in the wrong field:
// bearer tokens, JWTs, API keys, e-mails.
const SECRET_PATTERNS = [
  /\bBearer\s+\S+/gi,
  /\beyJ[\w-]+\.[\w-]+\.[\w-]*/g,
  /\b(?:sk|rk|pk|ya29|gho|ghp|xox[abp])[-_.][\w.-]{8,}/g,
  /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g,
  /\b[A-Za-z0-9_-]{40,}\b/g,
];

/**
 * `text` with every bearer value, JWT, API key, e-mail address and long unbroken token in it
 * replaced by `[redacted]`: for text that may hold what a client or an upstream should not have
 * put there. Runs only where it is called, never on every line.
 */
export function redactSecrets(text: string): string {
  for (const pattern of SECRET_PATTERNS) text = text.replace(pattern, '[redacted]');
  return text;
}

/**
 * A message of ours that quotes what the client sent in double quotes (`model "…": …`), fit for a
 * log line: keys and tokens inside the quotes redacted (redactSecrets), our own words, fix texts
 * included (which name `Authorization: Bearer`), left whole.
 */
export function redactQuotedSecrets(message: string): string {
  return message.replace(/"[^"]*"/g, redactSecrets);
}

/**
 * An upstream's error message fit for a log line: the query and fragment of every URL replaced by
 * `?[redacted]` (withoutUrlQuery), every quoted span by `[quoted]` (an
 * upstream quotes back what it was sent: Google's `Invalid value at 'contents[0]' (TYPE_STRING),
 * "…"` holds the prompt), secrets and e-mail addresses by `[redacted]`, control characters by
 * spaces, cut to 200 code points. The upstream's own words around them stay: they tell the operator
 * what happened. `undefined` for no text.
 */
export function sanitizeUpstreamMessage(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = redactSecrets(replaceQuotedSpans(value.replace(/\S+/g, withoutUrlQuery)))
    .replace(CONTROL_CHARACTERS, ' ')
    .trim();
  if (text === '') return undefined;
  const codePoints = Array.from(text);
  return codePoints.length <= MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH
    ? text
    : codePoints.slice(0, MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH).join('');
}

/** What stands in a logged upstream message for a URL's query and fragment. */
export const URL_QUERY_PLACEHOLDER = '?[redacted]';
// Punctuation that may close the sentence or quote a URL stands in, not part of the URL.
const TRAILING_PUNCTUATION = new Set(['.', ',', ';', ':', '!', '?', "'", '"', '`', ')', ']', '}', '>']);

/**
 * One whitespace-free `token` with the query and fragment of a URL in it (`scheme://…?…` or
 * `…#…`) replaced by `?[redacted]`: signed links carry their credential there (Azure's `sig=`,
 * Firebase's `token=`, S3's `X-Amz-Signature=`), in shapes no secret pattern knows, and an
 * upstream that cannot download an image quotes its URL. The scheme, host and path stay: they tell
 * the operator which link failed. Punctuation closing the token stays outside. Linear in the
 * token, so an upstream's long message costs no more than reading it.
 */
function withoutUrlQuery(token: string): string {
  const scheme = token.indexOf('://');
  if (scheme < 0) return token;
  const query = token.slice(scheme).search(/[?#]/);
  if (query < 0) return token;
  let end = token.length;
  while (end > scheme + query + 1 && TRAILING_PUNCTUATION.has(token[end - 1])) end--;
  return `${token.slice(0, scheme + query)}${URL_QUERY_PLACEHOLDER}${token.slice(end)}`;
}

/** What stands in a logged upstream message for a span it quoted. */
export const QUOTED_PLACEHOLDER = '[quoted]';
// Each opening quote and the quote that closes it: ASCII ones close themselves.
const CLOSING_QUOTES: Readonly<Record<string, string>> = {
  "'": "'",
  '"': '"',
  '`': '`',
  '\u201c': '\u201d',
  '\u2018': '\u2019',
  '\u00ab': '\u00bb',
};
const WORD_CHARACTER = /[\p{L}\p{N}_]/u;
const isWordCharacter = (character: string | undefined): boolean =>
  character !== undefined && WORD_CHARACTER.test(character);

/**
 * `text` with each quoted span, quotes included, replaced by `[quoted]`. A quote opens a span
 * only at the start or after a character that is not a letter, digit or underscore, and closes it
 * only before the end or such a character, so the apostrophe of "doesn't" or "users' files"
 * neither opens nor closes one; a backslash-escaped quote never closes one. A span left open runs
 * to the end: what follows may be the rest of a quote the upstream cut off; so does one holding a
 * quote that would open another (`"tell "Bob" my PIN"`), whose end cannot be told.
 */
function replaceQuotedSpans(text: string): string {
  let result = '';
  let kept = 0;
  for (let index = 0; index < text.length; index++) {
    const closing = CLOSING_QUOTES[text[index]];
    if (closing === undefined || isWordCharacter(text[index - 1])) continue;
    const end = closingQuoteIndex(text, index + 1, closing);
    result += text.slice(kept, index) + QUOTED_PLACEHOLDER;
    if (end === -1) return result;
    kept = end + 1;
    index = end;
  }
  return kept === 0 ? text : result + text.slice(kept);
}

function closingQuoteIndex(text: string, from: number, closing: string): number {
  for (let index = from; index < text.length; index++) {
    if (text[index] === '\\') index++;
    else if (text[index] === closing) {
      if (!isWordCharacter(text[index + 1])) return index;
      // A quote that would open one inside an open span: the upstream quoted a text holding
      // unescaped quotes, whose end cannot be told, so the span runs to the end.
      if (!isWordCharacter(text[index - 1])) return -1;
    }
  }
  return -1;
}
