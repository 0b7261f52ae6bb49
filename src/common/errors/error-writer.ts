import type { Request, RequestHandler, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import { CONTRACT_VERSION } from '../build/build-info';
import type { StructuredErrorCode } from '../../core/error-codes';
import { familyMessage, structuredHttpStatus } from '../../core/error-codes';
import type { GatewayError } from '../../core/gateway.error';
import { codePointLength } from '../text';
import { noteAnsweredError, oneLogLine } from '../logging/request-log';
import { toGatewayError } from './to-gateway-error';

/*
 * THE error writer: the one place where a failure becomes what a client receives, in each of the
 * forms the gateway answers in, all read from the one error table (core/error-codes.ts):
 *
 *   errorAnswer          status, headers and JSON body in the route's shape (OpenAI or the
 *                        structured contract's): what every form below writes
 *   writeErrorResponse   that answer on an Express response: the exception filter, the structured
 *                        failure answer and controller, the HTTP middleware (Host header, JSON
 *                        body)
 *   rawErrorResponse     the OpenAI answer as raw HTTP/1.1 bytes, for the `clientError` handler
 *                        (Node's parser refused the request, so no response object exists)
 *   streamErrorContent   the content of the in-stream `[error: …]` chunk, once SSE headers went out
 *
 * No other file builds an error body (src/error-stages.spec.ts checks the source tree). Nothing
 * here runs for a request that succeeds.
 */

export const STRUCTURED_ROUTE = '/v1/structured/inference';

/** The contract's bound on a structured `request_id`, in code points (docs/structured.md "Limits and settings"). */
export const MAX_REQUEST_ID_CHARS = 128;

/**
 * The `request_id` a structured answer may echo: a string with a non-whitespace character within
 * its bound. An id that breaks its own bound is not an id, and echoing it would send a megabyte of
 * the client's input back in a 400 (docs/structured.md).
 */
export function echoableRequestId(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/\S/u.test(value)) return undefined;
  return codePointLength(value) <= MAX_REQUEST_ID_CHARS ? value : undefined;
}

const STRUCTURED_ROUTE_MARK = Symbol('structuredRoute');
type MarkedRequest = Request & { [STRUCTURED_ROUTE_MARK]?: boolean };

/**
 * Marks requests of the structured route. Mounted only while the route is enabled, and only for a
 * POST to exactly its path: a disabled route, another method or a sub-path must answer exactly
 * like an unknown route (docs/endpoints.md), OpenAI shape included.
 */
export function markStructuredRoute(): RequestHandler {
  return (request, _response, next) => {
    (request as MarkedRequest)[STRUCTURED_ROUTE_MARK] = true;
    next();
  };
}

/** Structured inference answers in its contract's error shape; everything else in OpenAI's. */
export function isStructuredRoute(request: Request): boolean {
  return (request as MarkedRequest)[STRUCTURED_ROUTE_MARK] === true;
}

/** The error shapes of the routes: OpenAI's (chat, models, metrics, unknown paths) and the structured contract's. */
export type ErrorShape = 'openai' | 'structured';

/** `{"error": {"message", "type", "code", "param"}}` (docs/design/decisions.md §4). */
export interface OpenAiErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: string;
    readonly code: string;
    readonly param: string | null;
  };
}

/** `{"error": {"code", "message", "details"?}, "request_id"?, "contract_version"}` (docs/design/decisions.md §7). */
export interface StructuredErrorBody {
  readonly error: { readonly code: StructuredErrorCode; readonly message: string; readonly details?: string[] };
  readonly request_id?: string;
  readonly contract_version: string;
}

/** One error as a client receives it: status, the headers it adds (in writing order) and the body. */
export interface ErrorAnswer {
  readonly status: number;
  readonly headers: readonly (readonly [name: string, value: string])[];
  readonly body: OpenAiErrorBody | StructuredErrorBody;
}

export interface ErrorAnswerOptions {
  /** The request's own `request_id`, echoed by the structured shape when usable. */
  readonly requestId?: unknown;
  /** Ask the client to close the connection (protocol-level rejections). */
  readonly connectionClose?: boolean;
}

/**
 * The message a client gets for `error`: the error's own, else its family's fix, else the table's.
 * `knownWait` is the wait its Retry-After carries, when the error knows one.
 */
export function publicMessageOf(
  error: GatewayError,
  knownWait = error.retryAfterSeconds === undefined ? undefined : error.retryAfterHeader,
): string {
  return (
    error.publicMessage ?? familyMessage(error.code, error.provider, error.resetsAt, knownWait) ?? error.spec.message
  );
}

/** Longest `error_message` a log line carries, in code points; the public messages are far shorter. */
const LOGGED_MESSAGE_MAX = 400;

/**
 * `param` and `error_message` for the request's log line of a client error (4xx): why it was
 * refused, in the words the client got. Only the gateway's own words: a message that quotes the
 * request (`quotesRequest`) is left out, and the rest has control characters replaced and is
 * bounded, as the model ids it may name are (they are the line's `model` already).
 */
export function clientErrorLogFields(error: GatewayError): { param?: string; error_message?: string } {
  if (error.quotesRequest) return { param: error.param };
  return { param: error.param, error_message: oneLogLine(publicMessageOf(error), LOGGED_MESSAGE_MAX) };
}

/**
 * What the one line of a request no route's line records (its access line, or the
 * `http_request_rejected` of a request Node's parser refused) says of the error it was answered with
 * at `status`: `error_code`, and for a client error (4xx but a client's leaving, 499) `param` and
 * `error_message` as the routes' own lines carry them (clientErrorLogFields).
 */
function answeredErrorLogFields(error: GatewayError, status: number): Record<string, unknown> {
  const clientError = status >= 400 && status < 500 && status !== 499;
  return { error_code: error.code, ...(clientError ? clientErrorLogFields(error) : {}) };
}

/**
 * The longest Retry-After that the clients which honour it wait for before they retry by
 * themselves: the `openai` SDK (and the other Stainless-generated SDKs) and LangChain.js wait up
 * to 60 s. The SDK ignores a longer Retry-After and retries after its own backoff of about a second.
 */
export const CLIENT_RETRY_AFTER_MAX_SECONDS = 60;

/**
 * The `x-should-retry` of a 429 or 503 whose Retry-After is `retryAfterSeconds`. The value is
 * `true` when a client that waits that long and retries finds what it asked for: a short rate
 * limit, a full queue, or a reset within the minute. It is `false` when the wait is longer than
 * such a client waits: a spent plan, quota or credit that resets in minutes or hours. The `openai`
 * SDK obeys the header over its own rule ("retry every 429 and 5xx"). Without a `false` it would
 * ask again within a second or two, twice, and every attempt would reach the upstream
 * (docs/error-codes.md "Retries by clients").
 */
export function shouldRetryHeader(retryAfterSeconds: number): 'true' | 'false' {
  return retryAfterSeconds <= CLIENT_RETRY_AFTER_MAX_SECONDS ? 'true' : 'false';
}

/**
 * The `x-should-retry` of any other 4xx: `true` for 408 (the request was too slow to arrive; sent
 * again it may make it), `false` for the rest, which the same request meets again. The `openai`
 * SDK retries 408 and 409 by default: without `false`, one SDK call that meets an
 * `idempotency_conflict` becomes three conflicts (docs/error-codes.md "Retries by clients").
 */
export function clientErrorShouldRetry(status: number): 'true' | 'false' {
  return status === 408 ? 'true' : 'false';
}

/**
 * The answer to `thrown` (a GatewayError, or anything else through toGatewayError) in `shape`:
 * the table's status, `type`/`code` or structured code, our own message (the error's, else the
 * family's fix, else the table's), `param` and `details`; Retry-After and x-should-retry on every
 * 429 and 503, x-should-retry on every other 4xx and on a 5xx answering a refusal of the request.
 */
export function errorAnswer(thrown: unknown, shape: ErrorShape, options: ErrorAnswerOptions = {}): ErrorAnswer {
  const error = toGatewayError(thrown);
  const spec = error.spec;
  // A wait the error knows (not the table's default) is the one its Retry-After carries, in the same whole seconds.
  const knownWait = error.retryAfterSeconds === undefined ? undefined : error.retryAfterHeader;
  const message = publicMessageOf(error, knownWait);
  let status: number;
  let body: OpenAiErrorBody | StructuredErrorBody;
  // An error of a request no route took (table row `openaiShapeOnly`) is OpenAI-shaped on every path.
  if (shape === 'structured' && !spec.openaiShapeOnly) {
    status = structuredHttpStatus(spec);
    const echoed = echoableRequestId(options.requestId);
    body = {
      error: { code: spec.structuredCode, message, ...(error.details ? { details: error.details } : {}) },
      ...(echoed !== undefined ? { request_id: echoed } : {}),
      contract_version: CONTRACT_VERSION,
    };
  } else {
    status = spec.status;
    body = { error: { message, type: spec.type, code: spec.openaiCode, param: error.param ?? null } };
  }
  const headers: [string, string][] = [];
  if (status === 429 || status === 503) {
    const wait = error.retryAfterHeader ?? 5;
    headers.push(['Retry-After', String(wait)], ['x-should-retry', shouldRetryHeader(wait)]);
  } else if (status >= 400 && status < 500) {
    headers.push(['x-should-retry', clientErrorShouldRetry(status)]);
  } else if (status >= 500 && spec.status >= 400 && spec.status < 500) {
    // The structured contract's 502 for an upstream refusal of the request itself: SDKs retry
    // every 5xx, and the same request meets the same refusal.
    headers.push(['x-should-retry', 'false']);
  }
  if (options.connectionClose) headers.push(['Connection', 'close']);
  return { status, headers, body };
}

/**
 * Writes `thrown` as the JSON error of the request's route (errorAnswer). Once headers went out
 * (a stream's own error path owns the response), it only ends the response. A client that left
 * (`canceled`) is written nothing: its connection is gone.
 */
export function writeErrorResponse(
  request: Request,
  response: Response,
  thrown: unknown,
  options: Omit<ErrorAnswerOptions, 'requestId'> = {},
): void {
  if (response.headersSent) {
    if (!response.writableEnded) response.end();
    return;
  }
  const error = toGatewayError(thrown);
  if (error.code === 'canceled') return;
  const structured = isStructuredRoute(request);
  noteAnsweredError(response, { code: error.code, logFields: (status) => answeredErrorLogFields(error, status) });
  const answer = errorAnswer(error, structured ? 'structured' : 'openai', {
    ...options,
    requestId: structured ? (request.body as { request_id?: unknown } | undefined)?.request_id : undefined,
  });
  for (const [name, value] of answer.headers) response.setHeader(name, value);
  response.status(answer.status).json(answer.body);
}

/**
 * Has the error answer about to be written on `response` close its connection: an answer given
 * before the request's body was read to its end, which Node would otherwise go on reading.
 */
export function closeConnectionAfterAnswer(response: Response): void {
  response.setHeader('Connection', 'close');
}

/**
 * The OpenAI answer to `thrown` as a whole HTTP/1.1 response with `Connection: close`, for a socket
 * whose request never became a request object (the `clientError` handler). It carries
 * `x-request-id` as every answer does: `requestId` is the id its log line names, and `logFields`
 * what that line says of the error (answeredErrorLogFields).
 */
export function rawErrorResponse(
  thrown: unknown,
  requestId: string,
): { readonly status: number; readonly bytes: Buffer; readonly logFields: Record<string, unknown> } {
  const error = toGatewayError(thrown);
  const { status, headers, body } = errorAnswer(error, 'openai', { connectionClose: true });
  const payload = Buffer.from(JSON.stringify(body));
  const head =
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${payload.length}\r\n` +
    `x-request-id: ${requestId}\r\n` +
    headers.map(([name, value]) => `${name}: ${value}\r\n`).join('') +
    '\r\n';
  return {
    status,
    bytes: Buffer.concat([Buffer.from(head, 'latin1'), payload]),
    logFields: answeredErrorLogFields(error, status),
  };
}

/**
 * The content of the contract's in-stream error chunk (`[error: <the table's stream text>]`, sent
 * with finish `stop` and followed by `[DONE]`): a failure after the SSE headers went out can no
 * longer change the status.
 */
export function streamErrorContent(failure: GatewayError): string {
  return `[error: ${failure.spec.streamText}]`;
}
