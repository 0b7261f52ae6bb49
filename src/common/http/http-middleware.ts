import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import type { ServerResponse } from 'node:http';
import { MIMEType } from 'node:util';
import { errorSpec } from '../../core/error-codes';
import { ClientDisconnectedError, GatewayError } from '../../core/gateway.error';
import type { BearerCheck } from '../auth/bearer-check';
import { closeConnectionAfterAnswer, writeErrorResponse } from '../errors/error-writer';
import { CLIENT_LEFT_MID_BODY, toGatewayError, undecodableBody } from '../errors/to-gateway-error';
import { exceedsJsonContainers, exceedsJsonDepth, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH } from '../json';
import type { BodyBudget, BodyRoute } from '../lifecycle/body-budget';
import type { DrainService } from '../lifecycle/drain.service';
import { parseJsonOrUndefined } from '../egress/http-body';

/**
 * One step of the chain every request enters first: true to go on, false when the step answered
 * the request itself.
 */
export type EntryStep = (request: Request, response: Response) => boolean;

/**
 * The steps every request takes before its route, as one router layer: each layer Express
 * dispatches costs a path match, a parameter step and a prefix trim per request.
 */
export function entryMiddleware(steps: readonly EntryStep[]): RequestHandler {
  return (request, response, next) => {
    for (const step of steps) if (!step(request, response)) return;
    next();
  };
}

/**
 * HTTP/1.1 requires a Host header (RFC 9112, section 3.2). Node's own check answers a bare 400 without a
 * body, so installClientErrorHandler switches it off and it is done here instead, answered like
 * every other protocol-level rejection: the OpenAI shape and `Connection: close`.
 */
export const requireHostHeader: EntryStep = (request, response) => {
  if (request.httpVersion !== '1.1' || request.headers.host !== undefined) return true;
  writeErrorResponse(
    request,
    response,
    new GatewayError('invalid_request', { publicMessage: 'the Host header is required' }),
    { connectionClose: true },
  );
  return false;
};

/**
 * Counts requests in flight (ended on the response's close) so draining can wait for idle. A
 * request that arrives while draining is marked so (`arrivedWhileDraining`: structured inference
 * refuses a request that arrived after the signal, not one whose body merely ended after it) and
 * answered with `Connection: close`, so its client opens its next request elsewhere instead of
 * on a connection about to close. Once the drain deadline passed, a new request (but a probe or
 * a metrics scrape) is refused at once with the `draining` 503: it would otherwise start an
 * upstream turn the exit cuts without an answer. A POST to a route that takes a body is refused by
 * its body reader (jsonBodyMiddleware) before it reads a byte, so the route records it as it
 * records every refusal; a POST no route takes by the exception filter, in place of its 404;
 * any other request here.
 */
export function trackInFlight(drain: DrainService): EntryStep {
  return (request, response) => {
    if (request.path.startsWith('/health')) return true;
    drain.track(response);
    if (!drain.isDraining) return true;
    const pastDeadline = drain.pastDeadline;
    (request as MarkedRequest)[ARRIVED_DRAINING] = pastDeadline ? 'after deadline' : 'draining';
    closeConnectionAfterAnswer(response);
    // A scrape still reads the last counts; it starts nothing.
    if (!pastDeadline || request.method === 'POST' || request.path === METRICS_PATH) return true;
    writeErrorResponse(request, response, new GatewayError('draining'));
    return false;
  };
}

const METRICS_PATH = '/metrics';
const ARRIVED_DRAINING = Symbol('arrivedDraining');
type MarkedRequest = Request & { [ARRIVED_DRAINING]?: 'draining' | 'after deadline' };

/** The request arrived after the drain began (docs/design/behaviours.md §6.1 refuses only those). */
export function arrivedWhileDraining(request: Request): boolean {
  return (request as MarkedRequest)[ARRIVED_DRAINING] !== undefined;
}

/** The request arrived after the drain deadline: refused at once, its body never read. */
function arrivedAfterDrainDeadline(request: Request): boolean {
  return (request as MarkedRequest)[ARRIVED_DRAINING] === 'after deadline';
}

/** How a route answers (and records, as every other of its errors) a body error the middleware itself answers. */
export type BodyErrorAnswer = (request: Request, response: Response, error: GatewayError) => void;

/**
 * JSON bodies with our cap and nesting bound; parse, size and depth errors are answered here in the
 * route's error shape (413 request_too_large, 400 invalid_request) through the route's `answer`,
 * because body-parser errors raised by express middleware never reach Nest's exception filters.
 *
 * body-parser reads the body (`Content-Type: application/json` only, the size cap, Content-Length
 * checks, gzip/deflate/br inflation) and `parseJsonBody` below turns the bytes into JSON: body-parser's
 * own JSON parser decodes through iconv-lite, whose first use loads every encoding table it has,
 * about 7 MiB of resident memory kept for the process's life (docs/performance.md), for bodies that
 * are UTF-8 in practice.
 */
export function jsonBodyMiddleware(
  limitBytes: number,
  options: {
    deferErrors?: boolean;
    answer?: BodyErrorAnswer;
    bearer?: BearerCheck;
    /** The setting behind `limitBytes`, named in the 413 (none: a fixed cap). */
    limitSetting?: string;
    /** The bytes all bodies together may hold (none: no bound), and the route its refusals count for. */
    budget?: { readonly of: BodyBudget; readonly route: BodyRoute };
  } = {},
): RequestHandler {
  const read = express.raw({ type: 'application/json', limit: limitBytes });
  const answer: BodyErrorAnswer = options.answer ?? writeErrorResponse;
  const { bearer } = options;
  const budget = options.budget?.of;
  const cap: BodyCap = {
    bytes: limitBytes,
    answer,
    tooLarge: tooLargeMessage(limitBytes, options.limitSetting),
    budget: options.budget,
    budgetFull: budget === undefined ? '' : budgetFullMessage(budget.limitBytes),
  };
  return (request: Request, response: Response, next: NextFunction) => {
    // A refused client's body is never read: it is answered 401 here, through the route's `answer`
    // (recorded as the route records every refusal), as the global guard would answer it, and the
    // connection closes rather than read what is left (a small compressed body may inflate to the cap).
    if (bearer?.refuses(request)) {
      closeConnectionAfterAnswer(response);
      answer(request, response, bearer.refusal());
      return;
    }
    // A request that arrived after the drain deadline (trackInFlight) starts no turn: refused now,
    // through the route's answer, which records it.
    if (arrivedAfterDrainDeadline(request)) {
      answer(request, response, new GatewayError('draining'));
      return;
    }
    // A body its Content-Length already puts over the cap is refused before a byte of it is read:
    // with `Expect: 100-continue`, before the client is invited to send it (client-error.handler.ts).
    const encoded = encodingOf(request) !== 'identity';
    const declared = encoded ? NaN : Number(request.headers['content-length']);
    if (declared > limitBytes) {
      answerOverCap(request, response, cap);
      return;
    }
    // So is one whose declared length does not fit in what is left of the body budget now. One that
    // fits is not held yet: every body is held as its bytes arrive (passesCap), so a client slow to
    // send its body, or that never sends it, holds nothing it has not sent.
    if (budget && declared > 0 && !budget.hasRoomFor(declared)) {
      answerOverBudget(request, response, cap);
      return;
    }
    // Within `read`, body-parser pipes an encoded body into its decompressor: watched from the start.
    if (encoded) watchInflatedBody(request, cap);
    read(request, response, (readError?: unknown) => {
      // Answered already, as the body grew past the cap or did not inflate (below).
      if (response.headersSent) return;
      let error = readError;
      if (!error && Buffer.isBuffer(request.body)) {
        try {
          request.body = parseJsonBody(request.body, request.headers['content-type']);
        } catch (parseError) {
          error = parseError;
        }
      } else if (!error && hasBody(request)) {
        // body-parser leaves a body of another type unread; without this it would read as no body
        // at all. It is answered now, before a byte of it is read (no `100 Continue` either), and
        // the connection closes after the answer rather than read the rest. A route that defers
        // body errors does so to keep draining ahead of them (docs/design/behaviours.md §6.1), so
        // a request that arrived while draining gets that answer instead; deferring this one too
        // would have the body read (the cap counts it as it arrives) only to refuse it.
        closeConnectionAfterAnswer(response);
        const draining = options.deferErrors && arrivedWhileDraining(request);
        answer(request, response, draining ? new GatewayError('draining') : notJsonContentType());
        return;
      }
      // V8's JSON.parse is iterative, so any depth parses; everything after it may recurse.
      error ??= exceedsJsonDepth(request.body) ? tooDeep() : undefined;
      if (!error) return next();
      let gatewayError = toGatewayError(error);
      // body-parser refuses an encoding it does not read before reading any of the body: the
      // connection closes after the answer rather than read the rest.
      if ((readError as { type?: unknown } | undefined)?.type === 'encoding.unsupported')
        closeConnectionAfterAnswer(response);
      if (gatewayError.code === 'request_too_large') gatewayError = gatewayError.with({ publicMessage: cap.tooLarge });
      // A client that left before its body ended (`canceled`) is recorded now, through the route's
      // answer, which writes nothing: there is no admission order to keep for a request no one awaits.
      if (!options.deferErrors || gatewayError.code === 'canceled') {
        answer(request, response, gatewayError);
        return;
      }
      // Structured admission checks auth and draining before the body (docs/design/behaviours.md §6.1),
      // so its route reports the body error itself, later.
      (request as RequestWithBodyError)[BODY_ERROR] = gatewayError;
      next();
    });
    // After `read` set up its own reading (in this same tick, so no chunk is missed).
    if (!encoded) answerOnceOverCap(request, cap);
  };
}

/*
 * body-parser reports a body over the cap, or one that does not inflate, only once the client has
 * sent all of it (it reads the rest to keep the connection usable): a client may send gigabytes,
 * or a chunked body that never ends, before it learns anything. Instead the body is counted as it
 * arrives, and answered the moment it passes the cap (413) or fails to inflate (400), before any
 * other check, with `Connection: close`: Node then closes the connection instead of reading on.
 */

/** An uncompressed body: its bytes are counted as they arrive. */
function answerOnceOverCap(request: Request, cap: BodyCap): void {
  if (request.readableEnded) return;
  const counted = request as CountedRequest;
  counted[BODY_CAP] = cap;
  counted[BODY_RECEIVED] = 0;
  request.on('data', countBodyBytes);
}

/**
 * A compressed body, whose cap counts its inflated bytes: the decompressor body-parser pipes the
 * request into (`request.pipe(decompressor)`, its one way in) is seen through an own `pipe` of the
 * request, which hands it on to the prototype's; its output is counted as it comes, its failure
 * answered at once. body-parser reads the decompressor, not the request, so it would never learn
 * that the client left mid-body (the request's 'aborted'): the request's 'close' before its body
 * is complete ends the decompressor with the error raw-body gives a request that closed so, and
 * the body's reader records it as it records every client that left.
 */
function watchInflatedBody(request: Request, cap: BodyCap): void {
  const counted = request as CountedRequest;
  counted[BODY_CAP] = cap;
  counted[BODY_RECEIVED] = 0;
  (counted as WatchedRequest).pipe = pipeIntoWatched;
}

const INFLATING = Symbol('inflating');
const DECOMPRESSOR = Symbol('decompressor');
type Decompressor = NodeJS.WritableStream &
  NodeJS.ReadableStream & { [INFLATING]: CountedRequest; destroy(error?: Error): void };
type WatchedRequest = CountedRequest & { pipe: typeof pipeIntoWatched; [DECOMPRESSOR]?: Decompressor };

/** The request's own `pipe` (`this` is the request): watches the decompressor, then pipes as the prototype does. */
function pipeIntoWatched<T extends NodeJS.WritableStream>(
  this: CountedRequest,
  destination: T,
  options?: { end?: boolean },
): T {
  Reflect.deleteProperty(this, 'pipe');
  const decompressor = destination as unknown as Decompressor;
  decompressor[INFLATING] = this;
  decompressor.on('data', countInflatedBytes);
  decompressor.on('error', answerUndecodable);
  (this as WatchedRequest)[DECOMPRESSOR] = decompressor;
  this.on('close', endInflatingIfCut);
  return this.pipe(destination, options);
}

/**
 * The request's 'close' listener while its body inflates (`this` is the request): a body not
 * complete by then was cut by the client's leaving. The decompressor is destroyed with the error
 * raw-body gives such a body, so its reader ends (and the decompressor is not left open).
 */
function endInflatingIfCut(this: WatchedRequest): void {
  if (this.complete) return;
  this[DECOMPRESSOR]?.destroy(
    Object.assign(new Error('the client left before its body ended'), { type: CLIENT_LEFT_MID_BODY }),
  );
}

/** The decompressor's 'data' listener (`this` is the decompressor). */
function countInflatedBytes(this: Decompressor, chunk: Buffer): void {
  if (passesCap(this[INFLATING], chunk.length)) this.off('data', countInflatedBytes);
}

/**
 * The decompressor's 'error' listener (`this` is the decompressor): corrupt, cut short, or not
 * compressed at all; not the client's leaving (endInflatingIfCut), which the body's reader records.
 */
function answerUndecodable(this: Decompressor, error: unknown): void {
  const request = this[INFLATING];
  const response = request.res!;
  if (response.headersSent || (error as { type?: unknown } | undefined)?.type === CLIENT_LEFT_MID_BODY) return;
  closeConnectionAfterAnswer(response);
  request[BODY_CAP].answer(request, response, undecodableBody(encodingOf(request)));
}

/** The request's Content-Encoding as body-parser reads it (lower case); `identity` when none or empty. */
function encodingOf(request: Request): string {
  return (request.headers['content-encoding'] || 'identity').toLowerCase();
}

/**
 * A route's body cap, made once per route: its bytes, how the route answers, the 413's words, the
 * body budget and the 503's words.
 */
interface BodyCap {
  readonly bytes: number;
  readonly answer: BodyErrorAnswer;
  readonly tooLarge: string;
  readonly budget: { readonly of: BodyBudget; readonly route: BodyRoute } | undefined;
  readonly budgetFull: string;
}

const BODY_CAP = Symbol('bodyCap');
const BODY_RECEIVED = Symbol('bodyReceived');
type CountedRequest = Request & { [BODY_CAP]: BodyCap; [BODY_RECEIVED]: number };

/** The 413's words: the cap, and the setting behind it when there is one. */
function tooLargeMessage(limitBytes: number, setting: string | undefined): string {
  const cap = `the request body is larger than ${limitBytes} bytes`;
  return setting === undefined
    ? cap
    : `${cap} (${setting}); send a shorter history, or have the gateway's operator raise ${setting}`;
}

/** The 503's words: the error table's, with the budget's bound in bytes beside its setting. */
function budgetFullMessage(limitBytes: number): string {
  const setting = 'GATEWAY_MAX_BODY_BYTES_IN_FLIGHT';
  return errorSpec('body_budget_full').message.replace(setting, `${setting} (${limitBytes} bytes)`);
}

/** The request's 'data' listener (`this` is the request): one module function, no closure per request. */
function countBodyBytes(this: CountedRequest, chunk: Buffer): void {
  if (passesCap(this, chunk.length)) this.off('data', countBodyBytes);
}

/**
 * Counts `length` more bytes of the body (held in the body budget as they come); once past the
 * cap, or past what the budget has room for, answers it and says so.
 */
function passesCap(request: CountedRequest, length: number): boolean {
  const received = (request[BODY_RECEIVED] += length);
  const cap = request[BODY_CAP];
  const response = request.res!;
  const overCap = received > cap.bytes;
  if (!overCap && (cap.budget === undefined || cap.budget.of.holdUpTo(response, received))) return false;
  // Answered already, before the body was read (a body of another type, a route's own refusal):
  // the rest of it is not read either.
  if (response.headersSent) request.socket?.destroy();
  else if (overCap) answerOverCap(request, response, cap);
  else answerOverBudget(request, response, cap);
  return true;
}

/** 413 with `Connection: close`: Node closes the connection once answered, instead of reading the rest. */
function answerOverCap(request: Request, response: Response, cap: BodyCap): void {
  closeConnectionAfterAnswer(response);
  cap.answer(request, response, new GatewayError('request_too_large', { publicMessage: cap.tooLarge }));
}

/**
 * 503 `body_budget_full` (retry) with `Connection: close`: the body's bytes are not read, or not
 * read on, so the connection closes once answered.
 */
function answerOverBudget(request: Request, response: Response, cap: BodyCap): void {
  cap.budget?.of.countRefusal(cap.budget.route);
  closeConnectionAfterAnswer(response);
  cap.answer(request, response, new GatewayError('body_budget_full', { publicMessage: cap.budgetFull }));
}

/**
 * The body as body-parser's JSON parser read it: its declared charset (UTF-8 when none; UTF-16 as
 * declared; any other refused, as body-parser refuses a charset that is not UTF), a leading
 * byte-order mark dropped, an empty body `{}`, and only an object or array at the top (its strict
 * mode): other valid JSON (`null`, a string, a number) is refused as not an object, anything else
 * as not JSON. An array goes on to the route's parser, which refuses it the same way. A body of more arrays and objects than `MAX_JSON_CONTAINERS` is
 * refused before it is parsed.
 */
export function parseJsonBody(bytes: Buffer, contentType: string | undefined): unknown {
  const text = decodeBody(bytes, charsetOf(contentType));
  if (text.length === 0) return {};
  const start = text.search(/[^ \t\n\r]/);
  if (start < 0) throw notJson();
  // A scalar at the top: no container, so no depth or size bound applies to parsing it.
  if (text[start] !== '{' && text[start] !== '[')
    throw parseJsonOrUndefined(text) !== undefined ? notObject() : notJson();
  if (exceedsJsonContainers(text)) throw tooManyContainers();
  try {
    return JSON.parse(text);
  } catch {
    throw notJson();
  }
}

function charsetOf(contentType: string | undefined): string {
  // Almost every client sends no charset: skip building a MIMEType for it on every request.
  if (contentType === undefined || !/charset/i.test(contentType)) return 'utf-8';
  try {
    return (new MIMEType(contentType).params.get('charset') ?? 'utf-8').toLowerCase();
  } catch {
    return 'utf-8';
  }
}

function decodeBody(bytes: Buffer, charset: string): string {
  let text: string;
  if (charset === 'utf-8' || charset === 'utf8') text = bytes.toString('utf8');
  else if (charset === 'utf-16le' || charset === 'utf-16be' || charset === 'utf-16')
    text = new TextDecoder(charset).decode(bytes);
  else
    throw new GatewayError('invalid_request', {
      publicMessage: `Content-Type must be application/json in UTF-8 or UTF-16 (charset ${charset} is not supported)`,
      // The charset is the caller's header value: the request's log line keeps it out.
      quotesRequest: true,
    });
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** The request says it carries a body (RFC 9112, section 6.3: a framing header, a length other than 0). */
function hasBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

const notJsonContentType = () =>
  new GatewayError('invalid_request', {
    publicMessage: 'Content-Type must be application/json (the body was sent as another type, so it was not read)',
  });

const notJson = () => new GatewayError('invalid_request', { publicMessage: 'the request body is not valid JSON' });

/** The words for a body that is JSON but no object: here, and in the routes' parsers for an array. */
export const BODY_NOT_AN_OBJECT = 'the request body must be a JSON object';

const notObject = () => new GatewayError('invalid_request', { publicMessage: BODY_NOT_AN_OBJECT });

const tooManyContainers = () =>
  new GatewayError('invalid_request', {
    publicMessage: `the request body holds more than ${MAX_JSON_CONTAINERS.toLocaleString('en-US')} arrays and objects; send a shorter history or fewer tools`,
  });

const tooDeep = () =>
  new GatewayError('invalid_request', {
    publicMessage: `the request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
  });

/**
 * Runs `handler` only for a POST to exactly the path it is mounted on (`app.use(path, …)`; a
 * trailing slash still matches, as in the router), so other methods and sub-paths go straight
 * to their 404.
 */
export function onPostToMountPath(handler: RequestHandler): RequestHandler {
  return (request, response, next) =>
    request.method === 'POST' && request.path === '/' ? handler(request, response, next) : next();
}

const BODY_ERROR = Symbol('bodyError');
type RequestWithBodyError = Request & { [BODY_ERROR]?: GatewayError };

/** The body-parser error deferred by `jsonBodyMiddleware(…, { deferErrors: true })`, if any. */
export function deferredBodyError(request: Request): GatewayError | undefined {
  return (request as RequestWithBodyError)[BODY_ERROR];
}

/**
 * An AbortController that fires when the client goes away. It listens on the RESPONSE's
 * 'close' with `!writableFinished`: a request's 'close' fires as soon as its body was read on
 * Node ≥16, long before the client actually leaves (docs/design/code-shape.md B.5 item 4). The link lasts for the
 * whole request, stream included. The controller is kept on the response and the listener is one
 * shared function, so a request allocates no closure for it.
 */
export function abortOnClientDisconnect(response: Response): AbortController {
  const controller = new AbortController();
  (response as ResponseWithClient)[CLIENT] = controller;
  response.on('close', abortIfUnfinished);
  return controller;
}

const CLIENT = Symbol('clientAbort');
type ResponseWithClient = ServerResponse & { [CLIENT]?: AbortController };

/** The response's 'close' listener (`this` is the response; 'close' is emitted once). */
function abortIfUnfinished(this: ResponseWithClient): void {
  if (!this.writableFinished) this[CLIENT]?.abort(new ClientDisconnectedError());
}

/** What a client whose request the drain deadline ended is told: what happened, and to retry elsewhere. */
export const DRAIN_DEADLINE_MESSAGE =
  'the gateway is shutting down and its drain timeout ended this request before it finished; retry on another instance';

/**
 * The drain deadline (GATEWAY_DRAIN_TIMEOUT, main.ts): ends every request still in flight with the
 * `draining` error, whatever stage it is in. A request with a turn (its client signal) has that
 * signal aborted with the error as its reason, the path a client's leaving takes, so the turn stops
 * its upstream (socket closed, fetch aborted, child killed) and leaves the agent queue or a token
 * wait the same way; but the client is still there, so the route answers the error (a 503 with
 * Retry-After, or a stream's error chunk and `[DONE]`) and records it as `draining`, not as a
 * cancel (clientLeft). A request without a turn yet (its body still arriving) is answered here,
 * through its route's own answer for a body error, which records it as the route records every
 * failure. An answer not yet begun closes its connection after it. From here on a request that
 * arrives is refused at once (trackInFlight). Nothing here is kept per request: what it reads is
 * on the response and request already. Returns how many requests were in flight.
 */
export function endRequestsInFlight(drain: DrainService): number {
  drain.passDeadline();
  const responses = drain.inFlightResponses() as (Response & ResponseWithClient)[];
  for (const response of responses) {
    // One error each: a route names its family on the error it records (GatewayError.attributeTo).
    const error = new GatewayError('draining', { publicMessage: DRAIN_DEADLINE_MESSAGE });
    const client = response[CLIENT];
    if (response.headersSent) client?.abort(error);
    else {
      closeConnectionAfterAnswer(response);
      if (client) client.abort(error);
      else answerWithoutTurn(response, error);
    }
  }
  return responses.length;
}

/**
 * Answers a request that has no turn (no route has taken it: its body is still being read) with
 * `error`: through its route's body-error answer when its body is counted (every body still
 * arriving is), else in the route's error shape. The body's reader then finds the answer sent and
 * stops (jsonBodyMiddleware), and the connection closes instead of reading the rest.
 */
function answerWithoutTurn(response: Response, error: GatewayError): void {
  if (!answerWhileBodyArrives(response, error)) writeErrorResponse(response.req, response, error);
}

/**
 * Answers `error` through the route whose body reader is reading the request's body (its route's
 * body-error answer, which records it as the route records every refusal), with `Connection:
 * close`; false, and nothing done, when no route is reading its body. The reader then finds the
 * answer sent and stops (jsonBodyMiddleware).
 */
export function answerWhileBodyArrives(response: ServerResponse, error: GatewayError): boolean {
  const request = response.req as Request & Partial<CountedRequest>;
  const cap = request[BODY_CAP];
  if (!cap) return false;
  closeConnectionAfterAnswer(response as Response);
  cap.answer(request, response as Response, error);
  return true;
}
