import type { Request, Response } from 'express';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import pino from 'pino';
import {
  MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH,
  requestLoggerOf,
  requestLogMiddleware,
  sanitizeIdentifier,
  sanitizeUpstreamMessage,
} from './request-log';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function capture() {
  const records: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      records.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { records, root: pino({ level: 'debug' }, stream) };
}

/** Enough of a request/response pair for the middleware: headers, the events it listens to. */
function exchange(url: string, headers: Record<string, string> = {}) {
  const request = { url, method: 'POST', headers } as unknown as Request & { id?: string };
  const responseHeaders: Record<string, string> = {};
  const response = Object.assign(new EventEmitter(), {
    statusCode: 200,
    writableEnded: false,
    headers: responseHeaders,
    setHeader(name: string, value: string) {
      this.headers[name] = value;
    },
  });
  return { request, response: response as unknown as Response & typeof response };
}

const exchangeResponse = () => exchange('/').response;

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe(requestLogMiddleware.name, () => {
  it("adopts a caller's plain, bounded x-request-id and echoes it", () => {
    const { root } = capture();
    for (const id of ['abc-123', 'trace:01HX.9_z', 'a'.repeat(128)]) {
      const { request, response } = exchange('/v1/models', { 'x-request-id': id });
      requestLogMiddleware(root)(request, response, () => undefined);
      expect(request.id).toBe(id);
      expect(response.headers['x-request-id']).toBe(id);
    }
  });

  it.each(['evil id', 'a'.repeat(129), '', 'ü', 'x/y'])(
    'replaces the unusable x-request-id %j by its own UUID',
    (id) => {
      const { root } = capture();
      const { request } = exchange('/v1/models', { 'x-request-id': id });
      requestLogMiddleware(root)(request, exchangeResponse(), () => undefined);
      expect(request.id).toMatch(UUID);
    },
  );

  it('assigns its own UUID, ignores a caller-supplied x-request-id that could forge a line, and echoes the id', () => {
    const { root } = capture();
    const { request, response } = exchange('/v1/models', { 'x-request-id': 'evil\n{"level":60}' });
    const next = jest.fn();
    requestLogMiddleware(root)(request, response, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(request.id).toMatch(UUID);
    expect(response.headers['x-request-id']).toBe(request.id);
  });

  it('writes one access line per request, at the level its status calls for, with a sanitized path', async () => {
    const { root, records } = capture();
    // [status set, ended, headers sent]
    const cases: Array<[number, boolean, boolean]> = [
      [200, true, true],
      [404, true, true],
      [502, true, true],
      [200, false, true],
      [200, false, false],
    ];
    for (const [status, ended, headersSent] of cases) {
      const { request, response } = exchange('/v1/chat/completions\n{"level":60}?q=secret');
      requestLogMiddleware(root)(request, response, () => undefined);
      response.statusCode = status;
      response.writableEnded = ended;
      (response as unknown as { headersSent: boolean }).headersSent = headersSent;
      response.emit(ended ? 'finish' : 'close');
      response.emit('close'); // a finished response closes too: still one line
    }
    await flush();
    const levels = { 30: 'info', 40: 'warn', 50: 'error' } as Record<number, string>;
    expect(
      records.map((record) => [
        levels[record.level as number],
        record.msg,
        (record.res as { statusCode: number }).statusCode,
      ]),
    ).toEqual([
      ['info', 'request completed', 200],
      ['warn', 'request completed', 404],
      ['error', 'request errored', 502],
      // A stream the client left: its status went out. A request left before any answer: 499.
      ['info', 'request aborted', 200],
      ['info', 'request aborted', 499],
    ]);
    for (const record of records) {
      expect(record.reqId).toMatch(UUID);
      expect(record.req).toEqual({ id: record.reqId, method: 'POST', path: '/v1/chat/completions {"level":60}' });
      expect(typeof record.responseTime).toBe('number');
      expect(JSON.stringify(record)).not.toContain('secret');
    }
    expect(records[2].error_message).toBe('failed with status code 502');
    expect(records[2]).not.toHaveProperty('err');
  });

  it('writes the access line of a health check at debug level only', async () => {
    const levels: Array<[string, number[]]> = [];
    for (const level of ['info', 'debug']) {
      const { root, records } = capture();
      root.level = level;
      const { request, response } = exchange('/health/ready');
      requestLogMiddleware(root)(request, response, () => undefined);
      response.writableEnded = true;
      response.emit('finish');
      await flush();
      levels.push([level, records.map((record) => record.level as number)]);
    }
    expect(levels).toEqual([
      ['info', []],
      ['debug', [20]],
    ]);
  });

  it('logs the path the request arrived with, even when a mounted route rewrote request.url', async () => {
    const { root, records } = capture();
    const { request, response } = exchange('/v1/chat/completions?stream=1');
    requestLogMiddleware(root)(request, response, () => {
      // What express does for `app.use('/v1/chat/completions', handler)` while the handler runs.
      request.url = '/';
    });
    response.writableEnded = true;
    response.emit('finish');
    await flush();
    expect(records.map((record) => record.req)).toEqual([
      { id: request.id, method: 'POST', path: '/v1/chat/completions' },
    ]);
  });
});

describe(requestLoggerOf.name, () => {
  it("gives the request's lines its id, and the fallback outside a request", async () => {
    const { root, records } = capture();
    const { request, response } = exchange('/v1/chat/completions');
    requestLogMiddleware(root)(request, response, () => undefined);
    const logger = requestLoggerOf(request, root);
    expect(requestLoggerOf(request, root)).toBe(logger);
    logger.info({ event: 'chat_completion' }, 'chat_completion');
    await flush();
    expect(records).toEqual([expect.objectContaining({ reqId: request.id, event: 'chat_completion' })]);

    const fallback = { info: jest.fn(), warn: jest.fn(), debug: jest.fn(), error: jest.fn() };
    expect(requestLoggerOf(exchange('/x').request, fallback)).toBe(fallback);
  });
});

describe(sanitizeIdentifier.name, () => {
  it('turns CR and LF into spaces so a value cannot forge a second record', () => {
    expect(sanitizeIdentifier('req\r\n{"level":50}')).toBe('req  {"level":50}');
    expect(sanitizeIdentifier('req\n{"level":50}')).toBe('req {"level":50}');
  });

  it('replaces NUL, TAB, DEL, C1 controls (NEL) and the Unicode line/paragraph separators', () => {
    expect(sanitizeIdentifier('a\u0000b\tc\u007fd\u0085e\u009ff\u2028g\u2029h')).toBe('a b c d e f g h');
  });

  it('cuts a 10 000-character value to its first 128 characters', () => {
    const long = 'x'.repeat(10_000);
    expect(sanitizeIdentifier(long)).toBe('x'.repeat(128));
  });

  it('keeps a 128-character value and cuts a 130-character one without a suffix', () => {
    expect(sanitizeIdentifier('a'.repeat(128))).toBe('a'.repeat(128));
    expect(sanitizeIdentifier('b'.repeat(130))).toBe('b'.repeat(128));
  });

  it('counts code points, never splitting a surrogate pair', () => {
    const value = '😀'.repeat(130);
    const result = sanitizeIdentifier(value);
    expect(Array.from(result)).toHaveLength(128);
    expect(result).toBe('😀'.repeat(128));
    // Only a bounded prefix of a huge value is read, with the pairs still whole at its end.
    expect(sanitizeIdentifier(`a${'😀'.repeat(100_000)}`)).toBe(`a${'😀'.repeat(127)}`);
  });

  it('renders absent values as an empty string and leaves clean values alone', () => {
    expect(sanitizeIdentifier(undefined)).toBe('');
    expect(sanitizeIdentifier('golden-req-0001')).toBe('golden-req-0001');
  });
});

describe(sanitizeUpstreamMessage.name, () => {
  it('keeps the words of an upstream error and nothing that could forge a record', () => {
    expect(sanitizeUpstreamMessage('Not logged in · Please run /login\n{"level":50}')).toBe(
      'Not logged in · Please run /login {"level":50}',
    );
  });

  it('redacts bearer tokens, JWTs, API keys, long opaque strings and e-mail addresses', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl';
    const message = `Bearer abc.def rejected; token ${jwt}; key sk-proj-0123456789abcdef; ya29.a0AfH6SMBx-long-token; user jane.doe@example.com; id ${'Z'.repeat(48)}`;
    const sanitized = sanitizeUpstreamMessage(message)!;
    for (const secret of ['abc.def', jwt, 'sk-proj', 'ya29', 'jane.doe', 'example.com', 'Z'.repeat(48)])
      expect(sanitized).not.toContain(secret);
    expect(sanitized).toContain('[redacted]');
  });

  it('cuts to 200 code points and gives undefined for no text', () => {
    expect(Array.from(sanitizeUpstreamMessage('é'.repeat(500))!)).toHaveLength(MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH);
    expect(sanitizeUpstreamMessage('   ')).toBeUndefined();
    expect(sanitizeUpstreamMessage(42)).toBeUndefined();
  });
});
