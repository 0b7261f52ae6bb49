import type { Request, Response } from 'express';
import express from 'express';
import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import * as net from 'node:net';
import { parseRawAnswer, parseRawAnswers, sendAfterContinue, sendRawBytes } from '../../../test/support/raw-http';
import { ClientDisconnectedError, GatewayError } from '../../core/gateway.error';
import { writeErrorResponse } from '../errors/error-writer';
import { BodyBudget } from '../lifecycle/body-budget';
import { DrainService } from '../lifecycle/drain.service';
import { installClientErrorHandler } from './client-error.handler';
import type { EntryStep } from './http-middleware';
import {
  abortOnClientDisconnect,
  entryMiddleware,
  jsonBodyMiddleware,
  onPostToMountPath,
  parseJsonBody,
  trackInFlight,
} from './http-middleware';

/** `server` on a random loopback port. */
const listen = (server: http.Server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
/** `server` closed, its connections with it. */
const close = (server: http.Server) => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
};

describe(onPostToMountPath.name, () => {
  it('runs the handler only for a POST to exactly the mounted path; everything else goes on to its 404', () => {
    const seen: string[] = [];
    const guarded = onPostToMountPath((request, _response, next) => {
      seen.push(`${request.method} ${request.path}`);
      next();
    });
    const next = jest.fn();
    guarded({ method: 'POST', path: '/' } as Request, {} as Response, next);
    guarded({ method: 'GET', path: '/' } as Request, {} as Response, next);
    guarded({ method: 'POST', path: '/extra' } as Request, {} as Response, next);
    expect(seen).toEqual(['POST /']);
    expect(next).toHaveBeenCalledTimes(3);
  });
});

describe(parseJsonBody.name, () => {
  const message = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return error instanceof GatewayError ? `${error.code}: ${error.publicMessage}` : String(error);
    }
    return 'parsed';
  };

  it('reads UTF-8 by default and as declared, without a leading byte-order mark', () => {
    expect(parseJsonBody(Buffer.from('{"a":"é"}'), undefined)).toEqual({ a: 'é' });
    expect(parseJsonBody(Buffer.from('\ufeff [1]'), 'application/json; charset=UTF-8')).toEqual([1]);
  });

  it('reads UTF-16 as declared', () => {
    expect(parseJsonBody(Buffer.from('{"a":1}', 'utf16le'), 'application/json; charset=utf-16le')).toEqual({ a: 1 });
  });

  it('takes an empty body as {} and refuses anything but an object or array at the top', () => {
    expect(parseJsonBody(Buffer.alloc(0), 'application/json')).toEqual({});
    for (const text of [' ', '{"a":', '{a:1}', 'nul', '"open'])
      expect(message(() => parseJsonBody(Buffer.from(text), 'application/json'))).toBe(
        'invalid_request: the request body is not valid JSON',
      );
    for (const text of ['"text"', '42', ' null ', 'true'])
      expect(message(() => parseJsonBody(Buffer.from(text), 'application/json'))).toBe(
        'invalid_request: the request body must be a JSON object',
      );
  });

  it('refuses a charset that is neither UTF-8 nor UTF-16, naming it', () => {
    expect(message(() => parseJsonBody(Buffer.from('{}'), 'application/json; charset=latin1'))).toBe(
      'invalid_request: Content-Type must be application/json in UTF-8 or UTF-16 (charset latin1 is not supported)',
    );
  });
});

describe(abortOnClientDisconnect.name, () => {
  const response = (writableFinished: boolean) =>
    Object.assign(new EventEmitter(), { writableFinished }) as unknown as Response;

  it('aborts with ClientDisconnectedError when the response closes before it finished', () => {
    const cut = response(false);
    const client = abortOnClientDisconnect(cut);
    cut.emit('close');
    expect(client.signal.reason).toBeInstanceOf(ClientDisconnectedError);
  });

  it('does not abort once the answer went out whole: the close after it is no client leaving', () => {
    const answered = response(true);
    const client = abortOnClientDisconnect(answered);
    answered.emit('close');
    expect(client.signal.aborted).toBe(false);
  });
});

describe(jsonBodyMiddleware.name, () => {
  /** The body cap of the routes below. */
  const LIMIT = 64;
  const servers: http.Server[] = [];
  afterAll(() => Promise.all(servers.map(close)));

  /**
   * A route behind the body middleware on a loopback port: the middleware's own answers are
   * recorded (and written as every route writes them); the route answers 200 with the body it read.
   */
  async function bodyRoute(options: Parameters<typeof jsonBodyMiddleware>[1] = {}, steps: EntryStep[] = []) {
    const answered: string[] = [];
    const app = express();
    app.use(entryMiddleware(steps));
    app.use(
      jsonBodyMiddleware(LIMIT, {
        ...options,
        answer: (request, response, error) => {
          answered.push(error.code);
          writeErrorResponse(request, response, error);
        },
      }),
    );
    app.use((request: Request, response: Response) => {
      response.json({ read: request.body as unknown });
    });
    const server = http.createServer(app);
    // As the gateway's server: `100 Continue` only once a body is read.
    installClientErrorHandler(server, { warn: () => undefined });
    servers.push(server);
    await listen(server);
    return { port: (server.address() as net.AddressInfo).port, answered };
  }

  const post = (headers: string, body: string) =>
    Buffer.from(`POST / HTTP/1.1\r\nHost: x\r\n${headers}\r\n${body}`, 'latin1');
  /** A JSON object of exactly `length` bytes. */
  const jsonOf = (length: number) => `{"a":"${'x'.repeat(length - 8)}"}`;
  const chunked = (body: string) => `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;

  /** What a JSON POST of `body` that asks `Expect: 100-continue` gets, as latin1 text. */
  const postAfterContinue = async (port: number, body: string) =>
    (
      await sendAfterContinue(
        port,
        `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
        Buffer.from(body),
      )
    ).toString('latin1');

  it('reads a body of exactly the cap, declared or chunked, and refuses one byte more with 413', async () => {
    const route = await bodyRoute();
    const send = (headers: string, body: string) =>
      sendRawBytes(route.port, post(`Content-Type: application/json\r\n${headers}`, body), { halfClose: false });
    const atCap = jsonOf(LIMIT);
    expect((await send(`Content-Length: ${LIMIT}\r\n`, atCap)).status).toBe(200);
    expect((await send('Transfer-Encoding: chunked\r\n', chunked(atCap))).status).toBe(200);
    const over = jsonOf(LIMIT + 1);
    expect((await send(`Content-Length: ${LIMIT + 1}\r\n`, over)).status).toBe(413);
    expect((await send('Transfer-Encoding: chunked\r\n', chunked(over))).status).toBe(413);
  });

  it('invites a body within the cap with 100 Continue once it reads it, and serves it', async () => {
    const route = await bodyRoute();
    const body = jsonOf(LIMIT);
    const text = await postAfterContinue(route.port, body);
    expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n/);
    expect(parseRawAnswer(text).status).toBe(200);
  });

  it('refuses a declared body that does not fit in what is left of the body budget with 503, before inviting it', async () => {
    const route = await bodyRoute({ budget: { of: new BodyBudget(LIMIT / 2), route: 'chat' } });
    const body = jsonOf(LIMIT / 2 + 1);
    const text = await postAfterContinue(route.port, body);
    expect(text).not.toContain('100 Continue');
    expect(parseRawAnswer(text).status).toBe(503);
    expect(route.answered).toEqual(['body_budget_full']);
  });

  it('on a route that defers body errors, answers draining, not the Content-Type, for a request that arrived while draining', async () => {
    const drain = new DrainService();
    drain.startDraining();
    const route = await bodyRoute({ deferErrors: true }, [trackInFlight(drain)]);
    const answer = await sendRawBytes(route.port, post('Content-Type: text/plain\r\nContent-Length: 5\r\n', 'hello'), {
      halfClose: false,
    });
    expect(answer.status).toBe(503);
    expect(route.answered).toEqual(['draining']);
  });
});

describe(installClientErrorHandler.name, () => {
  /** A raw client of `server`: what it has received so far, and when the server ended it. */
  const rawClient = (server: http.Server) => {
    const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    socket.on('error', () => undefined);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => socket.once('end', resolve));
    return { socket, received: () => Buffer.concat(chunks), ended };
  };

  it('keeps the connection of a malformed request open a moment after its 400, so a reset cannot discard the answer', async () => {
    const server = http.createServer((_request, response) => response.end());
    installClientErrorHandler(server, { warn: () => undefined });
    const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
    await listen(server);
    // Only the linger's timer is faked: sockets keep working.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const { socket, received, ended } = rawClient(server);
      socket.write('NOT HTTP\r\n\r\n');
      const serverSide = await accepted;
      await ended;
      expect(parseRawAnswer(received().toString('latin1')).status).toBe(400);
      // Closed at once, with request bytes still unread, the kernel would send a reset that can
      // discard the answer before the client reads it.
      expect(serverSide.destroyed).toBe(false);
      jest.advanceTimersByTime(1000);
      expect(serverSide.destroyed).toBe(true);
      socket.destroy();
    } finally {
      jest.useRealTimers();
      await close(server);
    }
  });

  it('answers and logs a malformed request once, however many more bytes follow it on the connection', async () => {
    // A request ahead of the malformed one, answered only when the case says.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = http.createServer((_request, response) => void held.then(() => response.end('held')));
    const warn = jest.fn();
    installClientErrorHandler(server, { warn });
    // Node emits clientError again for every chunk that arrives after its parser failed.
    const clientErrors: Array<() => void> = [];
    const nthClientError = (n: number) => new Promise<void>((resolve) => (clientErrors[n - 1] = resolve));
    const first = nthClientError(1);
    const second = nthClientError(2);
    let seen = 0;
    server.on('clientError', () => clientErrors[seen++]?.());
    await listen(server);
    try {
      const { socket, received, ended } = rawClient(server);
      socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\nNOT HTTP\r\n\r\n');
      await first;
      socket.write('MORE BYTES\r\n\r\n');
      await second;
      release();
      await ended;
      socket.destroy();
      expect(parseRawAnswers(received()).map((answer) => answer.status)).toEqual([200, 400]);
      expect(warn).toHaveBeenCalledTimes(1);
    } finally {
      await close(server);
    }
  });
});
