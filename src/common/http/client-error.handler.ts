import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import { rawErrorResponse } from '../errors/error-writer';
import type { ErrorCode } from '../../core/error-codes';
import { GatewayError } from '../../core/gateway.error';
import { sanitizeIdentifier } from '../logging/request-log';
import { answerWhileBodyArrives } from './http-middleware';

/** What the handler logs through (the app's pino logger). */
export interface ClientErrorLogger {
  warn(fields: Record<string, unknown>, message: string, context?: string): void;
}

/**
 * How long an answered connection may linger before it is destroyed. Closing at once, with request
 * bytes still unread (the rest of a 70 KB header), makes the kernel send an RST that can discard
 * the answer before the client reads it; meanwhile Node keeps reading and dropping what arrives.
 */
const LINGER_MS = 1000;

const ANSWERED = Symbol('clientErrorAnswered');
/** Node's own: the response being written on the socket (a pipelined one waits behind it). */
type AnsweredSocket = Socket & { [ANSWERED]?: boolean; _httpMessage?: ServerResponse | null };

/** A request with an expectation we do not know, served as if it had none (`this` is the server). */
function serveAnyway(this: Server, request: IncomingMessage, response: ServerResponse): void {
  this.emit('request', request, response);
}

/**
 * A request with `Expect: 100-continue` (curl sends it for a body over 1 MiB), served with
 * `100 Continue` sent once its body is first read, not on arrival as Node would (`this` is the
 * server). A body refused before it is read (a Content-Length over the cap, a refused bearer,
 * another Content-Type) is then answered without inviting the upload, and Node closes the
 * connection after that answer rather than wait for a body the client will not send.
 */
function continueOnceRead(this: Server, request: IncomingMessage, response: ServerResponse): void {
  request.once('resume', () => {
    // Node resumes an unread body itself once answered, to drain it: no invitation then.
    if (!response.headersSent) response.writeContinue();
  });
  this.emit('request', request, response);
}

/** Node's parser error codes → our error table; everything not listed is a malformed request (400). */
const CODE_BY_PARSER_ERROR: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'headers_too_large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'request_too_large',
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
};

/** The words of the answers whose table message says less than the parser knows. */
const MESSAGE_BY_CODE: Partial<Record<ErrorCode, { publicMessage: string }>> = {
  invalid_request: { publicMessage: 'the request is not valid HTTP/1.1' },
  // http.maxHeaderSize is Node's limit in force (--max-http-header-size, 16 KiB by default).
  headers_too_large: {
    publicMessage: `the request headers are larger than ${maxHeaderSize} bytes in all (Node's limit); send fewer or shorter headers (a large Cookie or custom header is the usual cause), or have the gateway's operator raise the limit with NODE_OPTIONS=--max-http-header-size=<bytes>`,
  },
};

/** Node's parser error: `rawPacket` is the chunk of the connection the parser failed on. */
type ParserError = NodeJS.ErrnoException & { rawPacket?: unknown };

/** A request line of visible ASCII only (a target with any other byte is not logged at all). */
const REQUEST_LINE = /^([A-Z]{1,16}) (\/[\x21\x22\x24-\x3e\x40-\x7e]{0,2047})[\x21-\x7e]* HTTP\/1\.[01]\r?\n/;

/**
 * The method and path (never the query, which may carry a key) of the request line at the start
 * of the failed chunk; nothing when that chunk does not start with one (a later part of a long
 * head, bytes that are not HTTP, a target with bytes other than visible ASCII). The path is the
 * caller's: cut as every logged identifier is.
 */
function requestLineOf(rawPacket: unknown): { method?: string; path?: string } {
  if (!Buffer.isBuffer(rawPacket)) return {};
  const match = REQUEST_LINE.exec(rawPacket.subarray(0, 4096).toString('latin1'));
  return match ? { method: match[1], path: sanitizeIdentifier(match[2]) } : {};
}

/**
 * Requests Node's HTTP parser rejects (oversized or malformed headers, bad bytes, folded headers,
 * both Content-Length and Transfer-Encoding, a request too slow to arrive) never reach Express, and
 * Node's default answer is a bare status line. This answers them as the chat route answers errors,
 * in the OpenAI shape, with `Connection: close` and a new `x-request-id`, written as raw HTTP since
 * no response object exists (the error writer's `rawErrorResponse`). A request whose body a route
 * is reading when the parser fails (a request timeout mid-body, a bad chunk) has a response object
 * and a route: that route answers it in its own shape and records it, under the request's id, as it
 * records every refusal, so the request has one answer and one line. Connections already gone
 * (ECONNRESET), ended by the client before its request did (HPE_INVALID_EOF_STATE), or mid-answer
 * are just closed, quietly: a body cut so is recorded by its route as the client's leaving.
 */
export function installClientErrorHandler(server: Server, logger: ClientErrorLogger): void {
  // Node's missing-Host check answers a bare 400; requireHostHeader (http-middleware.ts) answers it in our shape.
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  // Node answers an `Expect` other than 100-continue with a bare 417 of its own. A server may
  // ignore such an expectation (RFC 9110, section 10.1.1): the request is served as any other,
  // so every answer keeps the documented shape.
  server.on('checkExpectation', serveAnyway);
  server.on('checkContinue', continueOnceRead);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: AnsweredSocket) => {
    // Node emits again for every later chunk on a connection whose parser has failed.
    if (socket[ANSWERED]) return;
    socket[ANSWERED] = true;
    // A client that closes its side before its request is whole has left, as Node takes it: it
    // ends its request (a route reading its body records the client's leaving), and no one waits
    // for an answer; HTTP/1.1 clients do not half-close to await one.
    if (error.code === 'ECONNRESET' || error.code === 'HPE_INVALID_EOF_STATE' || !socket.writable) {
      socket.destroy();
      return;
    }
    const failedAnswer = answerOfFailedRequest(socket);
    // Once the failing request's own answer sent headers, any bytes of ours would corrupt it
    // (Node's own rule).
    if (failedAnswer?.headersSent) {
      socket.destroy();
      return;
    }
    const code = CODE_BY_PARSER_ERROR[error.code ?? ''] ?? 'invalid_request';
    const gatewayError = new GatewayError(code, MESSAGE_BY_CODE[code] ?? {});
    if (failedAnswer && answerWhileBodyArrives(failedAnswer, gatewayError)) return;
    const requestId = randomUUID();
    const { status, bytes, logFields } = rawErrorResponse(gatewayError, requestId);
    logRejection(
      logger,
      socket,
      requestId,
      sanitizeIdentifier(error.code ?? 'unknown'),
      status,
      logFields,
      requestLineOf((error as ParserError).rawPacket),
    );
    answerAfterInFlight(socket, bytes);
  });
  // Node drops a CONNECT (a proxy's method) without a word unless something listens for it.
  server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    // Node no longer watches this socket: a client's reset must not become an uncaught error.
    socket.on('error', ignore);
    const requestId = randomUUID();
    const { status, bytes, logFields } = rawErrorResponse(new GatewayError('route_not_found'), requestId);
    // The target (host:port) is not logged: it is not a path, and may carry userinfo.
    logRejection(logger, socket, requestId, 'CONNECT', status, logFields, { method: 'CONNECT' });
    // Pipelined behind other requests, it is answered after them, as a malformed request is.
    answerAfterInFlight(socket, bytes);
  });
}

function ignore(): void {}

/**
 * The one `http_request_rejected` line of a request refused before any route saw it, under the
 * `reqId` its answer's `x-request-id` carries, as every request's lines are.
 */
function logRejection(
  logger: ClientErrorLogger,
  socket: Socket,
  requestId: string,
  reason: string,
  status: number,
  errorFields: Record<string, unknown>,
  requestLine: { method?: string; path?: string },
): void {
  logger.warn(
    {
      reqId: requestId,
      event: 'http_request_rejected',
      reason,
      status,
      // What the client was answered: `error_code`, and for a 4xx its message (the error writer's).
      ...errorFields,
      // Who sent it, so the operator can find the client; the request line when it was read.
      remote_address: socket.remoteAddress ?? 'unknown',
      remote_port: socket.remotePort,
      ...requestLine,
    },
    'http_request_rejected',
    'http',
  );
}

/** Writes the answer and closes, lingering a moment so the client reads it (LINGER_MS). */
function endWith(socket: Socket, bytes: Buffer): void {
  socket.end(bytes);
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/**
 * The answer on the socket when it belongs to the request the parser failed on (its body cut
 * short by the failure); none when the socket is idle or answering a request read in full.
 */
function answerOfFailedRequest(socket: AnsweredSocket): ServerResponse | undefined {
  const inFlight = socket._httpMessage;
  return inFlight && !inFlight.req.complete ? inFlight : undefined;
}

/**
 * Writes `bytes` and closes once the answers to the requests pipelined ahead of the failed one
 * (read in full) went out, one after the other as Node hands the socket to each: their clients
 * get them rather than a 400 in their place. An answer that closed the connection itself, or a
 * client that left, leaves nothing to write; so does an answer to the failed request itself that
 * started meanwhile.
 */
function answerAfterInFlight(socket: AnsweredSocket, bytes: Buffer): void {
  if (socket.destroyed) return;
  // Node hands the socket to the next pipelined answer on the previous one's 'finish', before its 'close'.
  const inFlight = socket._httpMessage;
  if (inFlight && inFlight.req.complete) {
    inFlight.once('close', () => answerAfterInFlight(socket, bytes));
    return;
  }
  if (socket.writable && !inFlight?.headersSent) endWith(socket, bytes);
  else socket.destroy();
}
