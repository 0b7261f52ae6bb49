import type { Request, Response } from 'express';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { ErrorCode } from '../../core/error-codes';
import {
  arrivalOf,
  loggedModelId,
  MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH,
  noteAnsweredError,
  requestLoggerOf,
  startRequestLog,
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

describe(startRequestLog.name, () => {
  it("adopts a caller's plain, bounded x-request-id and echoes it", () => {
    const { root } = capture();
    for (const id of ['abc-123', 'trace:01HX.9_z', 'a'.repeat(128)]) {
      const { request, response } = exchange('/v1/models', { 'x-request-id': id });
      startRequestLog(root)(request, response);
      expect(request.id).toBe(id);
      expect(response.headers['x-request-id']).toBe(id);
    }
  });

  it('adopts an x-request-id padded with whitespace, without the padding, so client and gateway logs join on it', () => {
    const { root } = capture();
    const { request, response } = exchange('/v1/models', { 'x-request-id': '  abc-123\t' });
    startRequestLog(root)(request, response);
    expect(request.id).toBe('abc-123');
    expect(response.headers['x-request-id']).toBe('abc-123');
  });

  it.each(['evil id', 'a'.repeat(129), '', 'ü', 'x/y'])(
    'replaces the unusable x-request-id %j by its own UUID',
    (id) => {
      const { root } = capture();
      const { request } = exchange('/v1/models', { 'x-request-id': id });
      startRequestLog(root)(request, exchangeResponse());
      expect(request.id).toMatch(UUID);
    },
  );

  it('assigns its own UUID, ignores a caller-supplied x-request-id that could forge a line, and echoes the id', () => {
    const { root } = capture();
    const { request, response } = exchange('/v1/models', { 'x-request-id': 'evil\n{"level":60}' });
    expect(startRequestLog(root)(request, response)).toBe(true);
    expect(request.id).toMatch(UUID);
    expect(response.headers['x-request-id']).toBe(request.id);
  });

  it('notes the arrival before the rest of the chain runs: reading it later (once the body is in) gives the arrival', () => {
    const { root } = capture();
    const { request, response } = exchange('/v1/structured/inference');
    jest.useFakeTimers({ now: 1_000_000 });
    try {
      startRequestLog(root)(request, response);
      jest.setSystemTime(1_002_500);
      expect(arrivalOf(request)).toBe(1_000_000);
    } finally {
      jest.useRealTimers();
    }
  });

  it('writes one access line per request, at the level its status calls for, with a sanitized path', async () => {
    const { root, records } = capture();
    // [status set, ended, headers sent, the error code the writer noted]
    const cases: Array<[number, boolean, boolean, ErrorCode?]> = [
      [200, true, true],
      [404, true, true],
      [502, true, true],
      [200, false, true],
      [200, false, false],
      [503, true, true, 'idempotency_store_full'],
      [503, true, true, 'draining'],
    ];
    for (const [status, ended, headersSent, code] of cases) {
      const { request, response } = exchange('/v1/chat/completions\n{"level":60}?q=secret');
      startRequestLog(root)(request, response);
      if (code !== undefined) noteAnsweredError(response, { code, logFields: () => ({ error_code: code }) });
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
      ['error', 'request errored', 503],
      // A drain's refusal is expected operation.
      ['info', 'request completed', 503],
    ]);
    for (const record of records) {
      expect(record.reqId).toMatch(UUID);
      expect(record.req).toEqual({ id: record.reqId, method: 'POST', path: '/v1/chat/completions {"level":60}' });
      expect(typeof record.responseTime).toBe('number');
      expect(JSON.stringify(record)).not.toContain('secret');
    }
    expect(records[2].error_message).toBe('failed with status code 502');
    expect(records[2]).not.toHaveProperty('err');
    // The answered error is said on the line that reports the failure, never on an info line.
    expect(records[5]).toMatchObject({ status: 503, error_code: 'idempotency_store_full' });
    expect(records[6]).not.toHaveProperty('error_code');
    expect(records[6]).not.toHaveProperty('status');
  });

  it('writes the access line of a health check at debug level only', async () => {
    const levels: Array<[string, number[]]> = [];
    for (const level of ['info', 'debug']) {
      const { root, records } = capture();
      root.level = level;
      const { request, response } = exchange('/health/ready');
      startRequestLog(root)(request, response);
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
    startRequestLog(root)(request, response);
    // What express does for `app.use('/v1/chat/completions', handler)` while the handler runs.
    request.url = '/';
    response.writableEnded = true;
    response.emit('finish');
    await flush();
    expect(records.map((record) => record.req)).toEqual([
      { id: request.id, method: 'POST', path: '/v1/chat/completions' },
    ]);
  });

  it('redacts a key pasted into the path of a request refused with 400', async () => {
    const { root, records } = capture();
    const { request, response } = exchange('/v1/models/sk-proj-AbC123dEf456GhI789jKl');
    startRequestLog(root)(request, response);
    response.statusCode = 400;
    response.writableEnded = true;
    response.emit('finish');
    await flush();
    expect(records.map((record) => (record.req as { path: string }).path)).toEqual(['/v1/models/[redacted]']);
  });

  it('writes no second error line for a 5xx the route already logged at error level', async () => {
    const { root, records } = capture();
    const { request, response } = exchange('/v1/chat/completions');
    startRequestLog(root)(request, response);
    requestLoggerOf(request, root).error({ event: 'upstream_failed' }, 'upstream failed');
    response.statusCode = 502;
    response.writableEnded = true;
    response.emit('finish');
    await flush();
    // One line says the failure; the access line records the exchange at info.
    expect(records.map((record) => [record.level, record.msg])).toEqual([
      [50, 'upstream failed'],
      [30, 'request completed'],
    ]);
  });
});

describe(requestLoggerOf.name, () => {
  it("gives the request's lines its id, and the fallback outside a request", async () => {
    const { root, records } = capture();
    const { request, response } = exchange('/v1/chat/completions');
    startRequestLog(root)(request, response);
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

describe(loggedModelId.name, () => {
  const KEY = 'sk-proj-AbC123dEf456GhI789jKl';
  const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';

  it('redacts a key or token pasted as an unknown model id, keeping what is around it', () => {
    expect(loggedModelId(KEY, false)).toBe('[redacted]');
    expect(loggedModelId(JWT, false)).toBe('[redacted]');
    expect(loggedModelId(`provider_a/${KEY}`, false)).toBe('provider_a/[redacted]');
    expect(loggedModelId(`Bearer ${KEY}`, false)).toBe('[redacted]');
  });

  it('redacts a key at the start of an id longer than a line keeps, and one in a value that is not a string', () => {
    expect(loggedModelId(`${JWT}${'x'.repeat(10_000)}`, false)).toBe('[redacted]');
    expect(loggedModelId([KEY], false)).toBe('[redacted]');
  });

  it('redacts an unbroken token from 40 characters on, the shortest a long opaque token is', () => {
    expect(loggedModelId('A'.repeat(40), false)).toBe('[redacted]');
    expect(loggedModelId('A'.repeat(39), false)).toBe('A'.repeat(39));
  });

  it('redacts a key whole when it starts near the end of what a line keeps', () => {
    // 120 characters of harmless text, then a key: the line keeps 128 code points.
    const logged = loggedModelId(`${'a.'.repeat(60)}${KEY}`, false);
    expect(logged).toBe(`${'a.'.repeat(60)}[redacte`);
    expect(logged).not.toContain('sk-');
  });

  it('keeps an ordinary unknown id, with the identifier rule applied', () => {
    expect(loggedModelId('gpt-9-turbo\n{"level":60}', false)).toBe('gpt-9-turbo {"level":60}');
    expect(loggedModelId('provider_b/gemini-2.5-flash', false)).toBe('provider_b/gemini-2.5-flash');
    expect(loggedModelId(undefined, false)).toBe('');
  });

  it('leaves a known id to the identifier rule alone', () => {
    expect(loggedModelId('gpt-5.6-sol', true)).toBe('gpt-5.6-sol');
  });
});

describe(sanitizeUpstreamMessage.name, () => {
  it('keeps the words of an upstream error and nothing that could forge a record', () => {
    expect(sanitizeUpstreamMessage('Not logged in · Please run /login\n{"level":50}')).toBe(
      'Not logged in · Please run /login {[quoted]:50}',
    );
  });

  // Upstreams quote back what they were sent; the span goes, the upstream's own words stay.
  it.each([
    [
      'Invalid value at \'contents[0].parts[0].text\' (TYPE_STRING), "SECRET prompt words"',
      'Invalid value at [quoted] (TYPE_STRING), [quoted]',
    ],
    [
      'Invalid JSON payload received. Unknown name "SECRET_field" at \'generation_config\': Cannot find field.',
      'Invalid JSON payload received. Unknown name [quoted] at [quoted]: Cannot find field.',
    ],
    ['Request contains an invalid argument.', 'Request contains an invalid argument.'],
    [
      "API Error: 400 Claude Code 2.1.332 does not support this model; version 2.1.400 or newer is required. Run 'claude update', or update the Claude desktop app, then try again.",
      'API Error: 400 Claude Code 2.1.332 does not support this model; version 2.1.400 or newer is required. Run [quoted], or update the Claude desktop app, then try again.',
    ],
    [
      "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
      'tools.0.custom.name: String should match pattern [quoted]',
    ],
    [
      "API Error: 400 You're out of extra usage. Add more at claude.ai/settings/usage and keep going.",
      "API Error: 400 You're out of extra usage. Add more at claude.ai/settings/usage and keep going.",
    ],
    [
      "Invalid value: 'SECRET'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
      'Invalid value: [quoted]. Supported values are: [quoted], [quoted], [quoted], [quoted], [quoted], and [quoted].',
    ],
    [
      'The model `SECRET-model` does not exist or you do not have access to it.',
      'The model [quoted] does not exist or you do not have access to it.',
    ],
    [
      "Invalid 'input[2].content': string too long. Expected a string with maximum length 1048576, but got a string with length 2000000 instead.",
      'Invalid [quoted]: string too long. Expected a string with maximum length 1048576, but got a string with length 2000000 instead.',
    ],
    [
      'Unexpected token \'S\', "SECRET prompt" is not valid JSON',
      'Unexpected token [quoted], [quoted] is not valid JSON',
    ],
    ['the value \u201cSECRET\u201d was refused', 'the value [quoted] was refused'],
  ])('replaces each quoted span of %j', (message, logged) => {
    expect(sanitizeUpstreamMessage(message)).toBe(logged);
  });

  it.each([
    // An apostrophe inside or at the end of a word neither opens nor closes a quote.
    ["The caller doesn't have permission", "The caller doesn't have permission"],
    ["the users' files can't be read", "the users' files can't be read"],
    ["Invalid value 'I don't know SECRET' here", 'Invalid value [quoted] here'],
    ['a 5" screen and a 6\' shelf', 'a 5" screen and a 6\' shelf'],
    // An escaped quote does not end the span.
    ['value "he said \\"SECRET\\" to me" refused', 'value [quoted] refused'],
    // Unescaped quotes inside a quote: where it ends cannot be told, so it runs to the end.
    ['Invalid value "tell "Bob" my PIN is 4411" for field x', 'Invalid value [quoted]'],
    // A quote left open runs to the end: the upstream may have cut the rest off.
    [
      "Invalid value at 'contents[0]' (TYPE_STRING), \"SECRET prompt cut",
      'Invalid value at [quoted] (TYPE_STRING), [quoted]',
    ],
  ])('reads %j as %j', (message, logged) => {
    expect(sanitizeUpstreamMessage(message)).toBe(logged);
  });

  it('redacts bearer tokens, JWTs, API keys, long opaque strings and e-mail addresses', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl';
    const message = `Bearer abc.def rejected; token ${jwt}; key sk-proj-0123456789abcdef; ya29.a0AfH6SMBx-long-token; user jane.doe@example.com; id ${'Z'.repeat(48)}`;
    const sanitized = sanitizeUpstreamMessage(message)!;
    for (const secret of ['abc.def', jwt, 'sk-proj', 'ya29', 'jane.doe', 'example.com', 'Z'.repeat(48)])
      expect(sanitized).not.toContain(secret);
    expect(sanitized).toContain('[redacted]');
  });

  // A signed link's credential sits in its query, in shapes no secret pattern knows.
  it.each([
    [
      'Timeout while downloading https://firebasestorage.googleapis.com/v0/b/app.appspot.com/o/u%2Fa.jpg?alt=media&token=0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.',
      'Timeout while downloading https://firebasestorage.googleapis.com/v0/b/app.appspot.com/o/u%2Fa.jpg?[redacted].',
    ],
    [
      'Error while downloading https://acct.blob.core.windows.net/c/x.png?sv=2022-11-02&se=2030-01-01&sp=r&sig=Zm9vYmFy%2BYmF6cXV4MTIzNDU2Nzg5MGFi%2Fa%3D.',
      'Error while downloading https://acct.blob.core.windows.net/c/x.png?[redacted].',
    ],
    [
      'Error while downloading https://cdn.example.com/a.png?token=s3cr3tT0k3n, retry later',
      'Error while downloading https://cdn.example.com/a.png?[redacted], retry later',
    ],
    ['see (https://cdn.example.com/a.png#key=s3cr3t)', 'see (https://cdn.example.com/a.png?[redacted])'],
    ['could not fetch s3://bucket/a.png?X-Amz-Signature=abc123', 'could not fetch s3://bucket/a.png?[redacted]'],
    // An empty query: the placeholder stands for it, with no stray '?' after it.
    [
      'could not fetch https://cdn.example.com/a.png? now',
      'could not fetch https://cdn.example.com/a.png?[redacted] now',
    ],
    [
      'no query: https://cdn.example.com/a.png. Why? Unknown.',
      'no query: https://cdn.example.com/a.png. Why? Unknown.',
    ],
  ])('drops the query and fragment of the URL in %j', (message, logged) => {
    expect(sanitizeUpstreamMessage(message)).toBe(logged);
  });

  it('reads a long run of URL-like text in linear time', () => {
    const message = `${'a://'.repeat(50_000)}?${'.'.repeat(200_000)}`;
    expect(sanitizeUpstreamMessage(message)).toBe(`${'a://'.repeat(50)}`);
  });

  it('cuts to 200 code points and gives undefined for no text', () => {
    expect(Array.from(sanitizeUpstreamMessage('é'.repeat(500))!)).toHaveLength(MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH);
    expect(sanitizeUpstreamMessage('   ')).toBeUndefined();
    expect(sanitizeUpstreamMessage(42)).toBeUndefined();
  });
});
