import * as zlib from 'node:zlib';
import OpenAI from 'openai';
import {
  CHUNKED_UPLOAD_LIMIT,
  exchangeUntilClosed,
  parseRawAnswers,
  postHalfABody,
  rawRequest,
  sendAfterContinue,
  sendChunkedUntilAnswered,
  sendRawBytes,
} from './support/raw-http';
import type { RawAnswer } from './support/raw-http';
import type { TestGateway } from './support/create-test-app';
import { useGateway } from './support/create-test-app';
import { eventually } from './support/poll';
import { metricValue, sampleValue, scrapeMetrics } from './support/prometheus-text';
import { BodyBudget } from '../src/common/lifecycle/body-budget';

/** A request id the gateway made (a UUID), as opposed to one a caller sent. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The body of every 404 on chat and models routes (docs/design/decisions.md §4 OpenAI shape). */
const NOT_FOUND = {
  error: { message: 'no such route', type: 'invalid_request_error', code: 'not_found', param: null },
};

describe('HTTP surface', () => {
  // A small chat body cap so the 413 case stays cheap; structured inference is off (the default).
  const gateway = useGateway(() => ({ GATEWAY_MAX_BODY_BYTES: '2048' }));
  const port = () => Number(new URL(gateway.url).port);

  describe('404 for every other path and every other method (never 405)', () => {
    it.each([
      ['GET', '/'],
      ['GET', '/v1'],
      // /v1/responses: the same 404 with its own message, test/clients-docs.e2e-spec.ts.
      ['GET', '/v2/models'],
      ['GET', '/health/deep'],
      ['POST', '/v1/completions'],
      ['GET', '/v1/chat/completions/extra'],
    ])('%s %s is a JSON 404', async (method, route) => {
      const response = await rawRequest(`${gateway.url}${route}`, { method });
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(response.body.toString())).toEqual(NOT_FOUND);
    });

    it.each([
      ['DELETE', '/v1/models'],
      ['DELETE', '/v1/models/gpt-5.6-sol'],
      ['POST', '/v1/models/gpt-5.6-sol'],
      ['POST', '/v1/models'],
      ['PUT', '/v1/models'],
      ['OPTIONS', '/v1/models'],
      ['GET', '/v1/chat/completions'],
      ['PUT', '/v1/chat/completions'],
      ['PATCH', '/v1/chat/completions'],
      ['DELETE', '/v1/chat/completions'],
      ['POST', '/health'],
      ['DELETE', '/health/ready'],
      ['POST', '/metrics'],
    ])('%s %s (a known path, another method) is a JSON 404', async (method, route) => {
      const response = await rawRequest(`${gateway.url}${route}`, { method });
      expect(response.status).toBe(404);
      expect(JSON.parse(response.body.toString())).toEqual(NOT_FOUND);
    });

    // Express answers HEAD with its GET route, without the body (docs/endpoints.md).
    it.each(['/health', '/health/ready', '/v1/models', '/metrics'])(
      'HEAD %s is answered as GET, headers only',
      async (route) => {
        const [head, get] = [
          await rawRequest(`${gateway.url}${route}`, { method: 'HEAD' }),
          await rawRequest(`${gateway.url}${route}`),
        ];
        expect({ status: head.status, type: head.headers['content-type'], body: head.body.length }).toEqual({
          status: get.status,
          type: get.headers['content-type'],
          body: 0,
        });
        expect(head.status).toBe(200);
      },
    );

    it('HEAD is never compressed: the uncompressed length, where the GET is gzipped (docs/endpoints.md)', async () => {
      const headers = { 'accept-encoding': 'gzip' };
      const head = await rawRequest(`${gateway.url}/v1/models`, { method: 'HEAD', headers });
      const get = await rawRequest(`${gateway.url}/v1/models`, { headers });
      expect(get.headers['content-encoding']).toBe('gzip');
      expect(head.headers['content-encoding']).toBeUndefined();
      expect(Number(head.headers['content-length'])).toBe((await rawRequest(`${gateway.url}/v1/models`)).body.length);
    });

    it('HEAD on a path with no GET route is the JSON 404 as headers only', async () => {
      for (const route of ['/v1/chat/completions', '/v2/models']) {
        const response = await rawRequest(`${gateway.url}${route}`, { method: 'HEAD' });
        expect({ status: response.status, body: response.body.length }).toEqual({ status: 404, body: 0 });
        expect(response.headers['content-type']).toMatch(/^application\/json/);
      }
    });

    it('answers 404 on an unknown path whatever its body: malformed or oversized JSON is not parsed there', async () => {
      for (const body of ['{"model": ', JSON.stringify({ padding: 'x'.repeat(10_000) })]) {
        const response = await rawRequest(`${gateway.url}/v1/unknown`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        expect(response.status).toBe(404);
        expect(JSON.parse(response.body.toString())).toEqual(NOT_FOUND);
      }
    });
  });

  describe('structured inference disabled (docs/endpoints.md; docs/design/behaviours.md §10 item 35)', () => {
    const bodies: (string | undefined)[] = [
      undefined,
      JSON.stringify({ request_id: 'probe-1', model: 'gpt-5.6-sol', input: 'x', schema: {} }),
      '{"request_id": "broken',
      JSON.stringify({ request_id: 'big', input: 'x'.repeat(8000) }),
    ];

    it.each(bodies.map((body) => [body === undefined ? 'no body' : body.slice(0, 40), body]))(
      'answers POST /v1/structured/inference (%s) byte-identically to an unknown route',
      async (_name, body) => {
        const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
        const structured = await rawRequest(`${gateway.url}/v1/structured/inference`, {
          method: 'POST',
          headers,
          body,
        });
        const unknown = await rawRequest(`${gateway.url}/v1/structured/nothing-here`, {
          method: 'POST',
          headers,
          body,
        });
        expect(structured.status).toBe(404);
        expect(structured.status).toBe(unknown.status);
        expect(structured.body.equals(unknown.body)).toBe(true);
        expect(structured.headers['content-type']).toBe(unknown.headers['content-type']);
        expect(structured.headers['content-length']).toBe(unknown.headers['content-length']);
        expect(structured.headers['retry-after']).toBeUndefined();
      },
    );

    it('keeps the other endpoints unchanged', async () => {
      expect((await rawRequest(`${gateway.url}/v1/models`)).status).toBe(200);
      expect((await rawRequest(`${gateway.url}/health`)).status).toBe(200);
    });

    it('serves a request with an expectation it does not know as any other, not with a bare 417', async () => {
      const models = await rawRequest(`${gateway.url}/v1/models`, { headers: { expect: 'something-else' } });
      expect(models.status).toBe(200);
      expect(JSON.parse(models.body.toString()).object).toBe('list');
      const refused = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { expect: 'something-else', 'content-type': 'application/json' },
        body: '{"messages":[]}',
      });
      expect(refused.status).toBe(400);
      expect(refused.headers['x-request-id']).toEqual(expect.any(String));
      expect(JSON.parse(refused.body.toString()).error).toMatchObject({ code: 'invalid_request', param: 'messages' });
    });
  });

  describe("requests Node's HTTP parser refuses (docs/endpoints.md)", () => {
    it('answers headers over the limit with 431 naming the limit and the fix', async () => {
      const answer = await sendRawBytes(
        port(),
        Buffer.from(`GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`, 'latin1'),
      );
      expect(answer.status).toBe(431);
      expect(JSON.parse(answer.body)).toEqual({
        error: {
          message:
            "the request headers are larger than 16384 bytes in all (Node's limit); send fewer or shorter headers (a large Cookie or custom header is the usual cause), or have the gateway's operator raise the limit with NODE_OPTIONS=--max-http-header-size=<bytes>",
          type: 'invalid_request_error',
          code: 'request_header_fields_too_large',
          param: null,
        },
      });
    });

    it('logs the client address and port, and the method and path when the request line was read', async () => {
      const before = gateway.logs.records('http_request_rejected').length;
      const malformed = await sendRawBytes(
        port(),
        Buffer.from('POST /v1/chat/completions?key=SECRET HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n', 'latin1'),
      );
      const oversized = await sendRawBytes(
        port(),
        Buffer.from(`GET /v1/models HTTP/1.1\r\nX-Big: ${'b'.repeat(70_000)}\r\n\r\n`),
      );
      const records = gateway.logs.records('http_request_rejected').slice(before);
      // Each refusal carries its own new x-request-id, the reqId of its log line (docs/endpoints.md).
      const ids = [malformed, oversized].map((answer) => answer.headers['x-request-id']);
      expect(ids).toEqual([expect.stringMatching(UUID), expect.stringMatching(UUID)]);
      expect(ids[0]).not.toBe(ids[1]);
      expect(records).toEqual([
        expect.objectContaining({
          reqId: ids[0],
          reason: 'HPE_INVALID_HEADER_TOKEN',
          status: 400,
          error_code: 'invalid_request',
          error_message: 'the request is not valid HTTP/1.1',
          remote_address: '127.0.0.1',
          remote_port: expect.any(Number),
          method: 'POST',
          path: '/v1/chat/completions',
        }),
        expect.objectContaining({
          reqId: ids[1],
          reason: 'HPE_HEADER_OVERFLOW',
          status: 431,
          error_code: 'headers_too_large',
          error_message: expect.stringMatching(/^the request headers are larger than /),
          remote_address: '127.0.0.1',
        }),
      ]);
      expect(JSON.stringify(records)).not.toContain('SECRET');
    });

    it('answers the requests pipelined before a malformed one first, then the 400, then closes', async () => {
      const chat = JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
      const { received, closed } = await exchangeUntilClosed(
        port(),
        Buffer.from(
          'GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n' +
            `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${chat.length}\r\n\r\n${chat}` +
            'GET /v1/models HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n',
          'latin1',
        ),
      );
      const answers = parseRawAnswers(received);
      expect(answers.map((answer) => answer.status)).toEqual([200, 404, 400]);
      expect(JSON.parse(answers[0].body).object).toBe('list');
      expect(JSON.parse(answers[1].body).error.code).toBe('model_not_found');
      expect(JSON.parse(answers[2].body).error.message).toBe('the request is not valid HTTP/1.1');
      expect(answers[2].headers.connection).toBe('close');
      expect(closed).toBe(true);
    });

    it('answers a pipelined request whose own body is malformed with the 400 after the one ahead of it', async () => {
      const { received, closed } = await exchangeUntilClosed(
        port(),
        Buffer.from(
          'GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n' +
            'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
          'latin1',
        ),
      );
      const answers = parseRawAnswers(received);
      expect(answers.map((answer) => answer.status)).toEqual([200, 400]);
      expect(JSON.parse(answers[1].body).error.message).toBe('the request is not valid HTTP/1.1');
      expect(closed).toBe(true);
    });

    it('answers CONNECT with the JSON 404 of any other method, closes, and logs the refusal', async () => {
      const before = gateway.logs.records('http_request_rejected').length;
      const answer = await sendRawBytes(
        port(),
        Buffer.from('CONNECT user:SECRET@127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n'),
        { halfClose: false },
      );
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.body)).toEqual(NOT_FOUND);
      expect(answer.headers.connection).toBe('close');
      expect(answer.headers['x-request-id']).toMatch(UUID);
      const records = gateway.logs.records('http_request_rejected').slice(before);
      expect(records).toEqual([
        expect.objectContaining({
          reqId: answer.headers['x-request-id'],
          reason: 'CONNECT',
          status: 404,
          error_code: 'route_not_found',
          error_message: 'no such route',
          remote_address: '127.0.0.1',
          method: 'CONNECT',
        }),
      ]);
      expect(JSON.stringify(records)).not.toContain('SECRET');
    });

    it('answers the requests pipelined before a CONNECT first, then its 404', async () => {
      const { received, closed } = await exchangeUntilClosed(
        port(),
        Buffer.from(
          'GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\nCONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n',
          'latin1',
        ),
      );
      const answers = parseRawAnswers(received);
      expect(answers.map((answer) => answer.status)).toEqual([200, 404]);
      expect(JSON.parse(answers[0].body).object).toBe('list');
      expect(JSON.parse(answers[1].body)).toEqual(NOT_FOUND);
      expect(closed).toBe(true);
    });

    it('serves an absolute-form target and logs its path only, never the userinfo, host or query', async () => {
      const chat = JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
      const before = gateway.logs.lines.length;
      const answer = await sendRawBytes(
        port(),
        Buffer.from(
          'POST http://alice:S3CRET@evil.example/v1/chat/completions?key=K3Y HTTP/1.1\r\nHost: x\r\n' +
            `Content-Type: application/json\r\nContent-Length: ${chat.length}\r\n\r\n${chat}`,
        ),
        { halfClose: false },
      );
      expect(JSON.parse(answer.body).error.code).toBe('model_not_found');
      const isAccessLine = (line: string) => line.includes('"msg":"request completed"');
      await gateway.logs.waitForLine(() => gateway.logs.lines.slice(before).some(isAccessLine));
      const logged = gateway.logs.lines.slice(before);
      expect(logged.filter(isAccessLine).map((line) => JSON.parse(line).req.path)).toEqual(['/v1/chat/completions']);
      for (const secret of ['S3CRET', 'alice', 'evil.example', 'K3Y']) expect(logged.join('\n')).not.toContain(secret);
    });
  });

  describe('HTTP server timeouts (docs/deployment.md "Behind a load balancer")', () => {
    it("holds an idle client connection for longer than the common balancers' 60 s, and keeps Node's header and request timeouts", async () => {
      const server = gateway.app.getHttpServer();
      expect({
        keepAlive: server.keepAliveTimeout,
        headers: server.headersTimeout,
        request: server.requestTimeout,
      }).toEqual({ keepAlive: 65_000, headers: 60_000, request: 300_000 });
      // What a client or balancer that reads the header is told.
      const response = await rawRequest(`${gateway.url}/health`, { headers: { connection: 'keep-alive' } });
      expect(response.headers['keep-alive']).toBe('timeout=65');
    });
  });

  describe('compression of JSON responses (docs/endpoints.md)', () => {
    let plain: Buffer;

    beforeAll(async () => {
      const response = await rawRequest(`${gateway.url}/v1/models`);
      plain = response.body;
    });

    it('sends no Content-Encoding when the client does not send Accept-Encoding', async () => {
      const response = await rawRequest(`${gateway.url}/v1/models`);
      expect(response.status).toBe(200);
      expect(response.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(response.body.toString()).object).toBe('list');
    });

    it.each([
      ['gzip', zlib.gunzipSync],
      ['br', zlib.brotliDecompressSync],
      ['deflate', zlib.inflateSync],
    ] as const)('compresses /v1/models with %s and sets Content-Encoding to match', async (encoding, decompress) => {
      const response = await rawRequest(`${gateway.url}/v1/models`, { headers: { 'accept-encoding': encoding } });
      expect(response.status).toBe(200);
      expect(response.headers['content-encoding']).toBe(encoding);
      expect(response.headers.vary).toMatch(/accept-encoding/i);
      expect(response.body.length).toBeLessThan(plain.length);
      expect(decompress(response.body).equals(plain)).toBe(true);
    });

    it('does not compress when the client accepts only identity', async () => {
      const response = await rawRequest(`${gateway.url}/v1/models`, { headers: { 'accept-encoding': 'identity' } });
      expect(response.headers['content-encoding']).toBeUndefined();
    });

    it('compresses /metrics as well (its controller is the library one, with the interceptor)', async () => {
      const response = await rawRequest(`${gateway.url}/metrics`, { headers: { 'accept-encoding': 'gzip' } });
      expect(response.status).toBe(200);
      expect(response.headers['content-encoding']).toBe('gzip');
      expect(zlib.gunzipSync(response.body).toString()).toMatch(/^# HELP /m);
    });

    it.each([
      [false, undefined],
      [false, 'gzip'],
      [true, undefined],
      [true, 'gzip'],
    ])(
      'sets up compression on a chat JSON answer unless the request streams (stream %s, Accept-Encoding %s)',
      async (stream, encoding) => {
        const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(encoding ? { 'accept-encoding': encoding } : {}) },
          body: JSON.stringify({ model: 'no-such-model', stream, messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(response.status).toBe(404);
        expect(response.headers['content-encoding']).toBeUndefined();
        // A JSON answer names Accept-Encoding in Vary; a stream request sets up nothing of compression.
        expect(response.headers.vary).toEqual(stream ? undefined : expect.stringMatching(/accept-encoding/i));
      },
    );
  });

  describe('request bodies on POST /v1/chat/completions', () => {
    it('answers 413 request_too_large in the OpenAI shape for a body over GATEWAY_MAX_BODY_BYTES', async () => {
      const body = JSON.stringify({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'x'.repeat(4096) }] });
      const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(413);
      expect(JSON.parse(response.body.toString())).toEqual({
        error: {
          message:
            "the request body is larger than 2048 bytes (GATEWAY_MAX_BODY_BYTES); send a shorter history, or have the gateway's operator raise GATEWAY_MAX_BODY_BYTES",
          type: 'invalid_request_error',
          code: 'request_too_large',
          param: null,
        },
      });
    });

    it('answers a chunked body that never ends with 413 as soon as it passes the cap, and closes the connection', async () => {
      const { answer, chunksSent } = await sendChunkedUntilAnswered(gateway.url, '/v1/chat/completions');
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(answer).toContain('"code":"request_too_large"');
      expect(answer).toContain('"message":"the request body is larger than 2048 bytes (GATEWAY_MAX_BODY_BYTES);');
      // The cap is 2 KiB: the answer came long before the client would have stopped on its own.
      expect(chunksSent).toBeLessThan(CHUNKED_UPLOAD_LIMIT);
    });

    const chatHead = 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';

    it('refuses a Content-Length over the cap with 413 before reading the body, and closes the connection', async () => {
      const answer = await sendRawBytes(port(), Buffer.from(`${chatHead}Content-Length: 100000000\r\n\r\n{"model":`), {
        halfClose: false,
      });
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body).error.code).toBe('request_too_large');
    });

    it('answers Expect: 100-continue with 413, not 100 Continue, when the Content-Length is over the cap', async () => {
      const answer = await sendRawBytes(
        port(),
        Buffer.from(`${chatHead}Content-Length: 100000000\r\nExpect: 100-continue\r\n\r\n`),
        { halfClose: false },
      );
      expect(answer.raw).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body).error.code).toBe('request_too_large');
    });

    it('invites a body within the cap with 100 Continue once it is read, and serves it', async () => {
      const chat = Buffer.from(JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }));
      const received = await sendAfterContinue(
        port(),
        `${chatHead}Content-Length: ${chat.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
        chat,
      );
      expect(received.toString('latin1')).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 404 /);
      expect(JSON.parse(parseRawAnswers(received)[0].body).error.code).toBe('model_not_found');
      // A route that reads no body answers without inviting one (and closes: the client may still send it).
      const models = await exchangeUntilClosed(
        port(),
        Buffer.from('GET /v1/models HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n'),
      );
      expect(models.received.subarray(0, 13).toString('latin1')).toBe('HTTP/1.1 200 ');
      expect(models.closed).toBe(true);
    });

    it('answers 400 invalid_request_error for malformed JSON, without echoing the body', async () => {
      const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"model": "gpt-5.6-sol", "messages": [SECRET-PROMPT',
      });
      expect(response.status).toBe(400);
      const body = JSON.parse(response.body.toString());
      expect(body).toEqual({
        error: { message: expect.any(String), type: 'invalid_request_error', code: 'invalid_request', param: null },
      });
      expect(response.body.toString()).not.toContain('SECRET-PROMPT');
    });

    it('answers 400 naming the Content-Type for a JSON body sent as another type (curl -d sends a form type)', async () => {
      const body = JSON.stringify({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'hi' }] });
      for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
        const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': type },
          body,
        });
        expect(response.status).toBe(400);
        expect(JSON.parse(response.body.toString())).toEqual({
          error: {
            message: 'Content-Type must be application/json (the body was sent as another type, so it was not read)',
            type: 'invalid_request_error',
            code: 'invalid_request',
            param: null,
          },
        });
      }
    });

    it('answers a body of another type that never ends at once, closes the connection, and keeps serving', async () => {
      const { answer, chunksSent } = await sendChunkedUntilAnswered(gateway.url, '/v1/chat/completions', {
        'content-type': 'text/plain',
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(answer).toContain('Content-Type must be application/json');
      expect(chunksSent).toBeLessThan(CHUNKED_UPLOAD_LIMIT);
      // The gateway is still up (the unread body passing the cap once threw after the answer).
      expect((await rawRequest(`${gateway.url}/health/live`)).status).toBe(200);
    });

    describe('compressed bodies (Content-Encoding)', () => {
      const CHAT = JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
      // Keep-alive asked for, so `Connection: close` in an answer is the gateway's own choice.
      const send = (encoding: string, body: Buffer) =>
        rawRequest(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': encoding, connection: 'keep-alive' },
          body,
        });
      const invalid = (message: string) => ({
        error: { message, type: 'invalid_request_error', code: 'invalid_request', param: null },
      });

      it.each([
        ['gzip', zlib.gzipSync],
        ['deflate', zlib.deflateSync],
        ['br', zlib.brotliCompressSync],
        ['zstd', zlib.zstdCompressSync],
      ] as const)('reads a body compressed with %s', async (encoding, compress) => {
        const response = await send(encoding, compress(Buffer.from(CHAT)));
        // Read and parsed: the request reached the model check.
        expect(JSON.parse(response.body.toString()).error.code).toBe('model_not_found');
      });

      it.each([
        ['compress', 'compress', 'Content-Encoding "compress" is not supported'],
        ['a list', 'gzip, br', 'Content-Encoding "gzip, br" is not supported'],
        // Never echoed: a long value, or one that is not a list of encoding names.
        ['a 202-character value', `x-${'a'.repeat(200)}`, 'this Content-Encoding is not supported'],
        ['a value with quotes', 'x"\\SECRET', 'this Content-Encoding is not supported'],
      ])(
        'answers Content-Encoding %s with the encodings the gateway reads, and closes the unread connection',
        async (_label, encoding, what) => {
          const response = await send(encoding, Buffer.from(CHAT));
          expect(response.status).toBe(400);
          expect(JSON.parse(response.body.toString())).toEqual(
            invalid(
              `${what}; send the body uncompressed, or compressed once with gzip, deflate, br or zstd (and Content-Encoding naming it)`,
            ),
          );
          expect(response.headers.connection).toBe('close');
        },
      );

      it('answers a compressed body that inflates past the cap with 413 at once, however much more is coming', async () => {
        // Each chunk is a whole gzip member inflating to 16 KiB: an upload that never ends.
        const { answer, chunksSent } = await sendChunkedUntilAnswered(
          gateway.url,
          '/v1/chat/completions',
          { 'content-encoding': 'gzip' },
          zlib.gzipSync(Buffer.alloc(16384, 'x')),
        );
        expect(answer).toMatch(/^HTTP\/1\.1 413 /);
        expect(answer).toMatch(/\r\nconnection: close\r\n/i);
        expect(answer).toContain('"message":"the request body is larger than 2048 bytes (GATEWAY_MAX_BODY_BYTES);');
        expect(chunksSent).toBeLessThan(CHUNKED_UPLOAD_LIMIT);
      });

      it('answers a body that does not inflate with 400 at once, however much more is coming', async () => {
        const { answer, chunksSent } = await sendChunkedUntilAnswered(gateway.url, '/v1/chat/completions', {
          'content-encoding': 'gzip',
        });
        expect(answer).toMatch(/^HTTP\/1\.1 400 /);
        expect(answer).toMatch(/\r\nconnection: close\r\n/i);
        expect(answer).toContain('"message":"the body is not valid gzip data (Content-Encoding: gzip);');
        expect(chunksSent).toBeLessThan(CHUNKED_UPLOAD_LIMIT);
      });

      it.each([
        ['gzip', Buffer.from(CHAT)],
        ['gzip', zlib.gzipSync(CHAT).subarray(0, 20)],
        ['deflate', Buffer.from('not deflate')],
        ['br', Buffer.from(CHAT)],
        ['zstd', Buffer.from(CHAT)],
      ])('answers a body that is not valid %s data with that, and the fix', async (encoding, body) => {
        const response = await send(encoding, body);
        expect(response.status).toBe(400);
        expect(JSON.parse(response.body.toString())).toEqual(
          invalid(
            `the body is not valid ${encoding} data (Content-Encoding: ${encoding}); send it compressed as that header says, or uncompressed without Content-Encoding`,
          ),
        );
      });
    });

    it.each(['[1,2,3]', 'null', '"str"', '42', 'true'])(
      'answers 400 "must be a JSON object" for %s, valid JSON that is not an object',
      async (body) => {
        const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        expect(response.status).toBe(400);
        expect(JSON.parse(response.body.toString())).toEqual({
          error: {
            message: 'the request body must be a JSON object',
            type: 'invalid_request_error',
            code: 'invalid_request',
            param: null,
          },
        });
      },
    );

    it.each([
      ['a string', '"hi"', 'messages must be an array of message objects'],
      ['an object', '{"role":"user","content":"hi"}', 'messages must be an array of message objects'],
      ['null', 'null', 'messages must be an array of message objects'],
      ['an empty array', '[]', 'messages must contain at least one message'],
    ])('answers messages as %s with what messages must be', async (_name, messages, message) => {
      const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"model":"gpt-5.6-sol","messages":${messages}}`,
      });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body.toString())).toEqual({
        error: { message, type: 'invalid_request_error', code: 'invalid_request', param: 'messages' },
      });
    });

    it('answers 404 model_not_found in the OpenAI shape for a model outside the catalog', async () => {
      const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(404);
      expect(JSON.parse(response.body.toString())).toMatchObject({
        error: { type: 'invalid_request_error', code: 'model_not_found', param: null },
      });
    });
  });

  describe('GET /v1/models (docs/design/decisions.md §3)', () => {
    it('lists the catalog in the OpenAI list shape', async () => {
      const body = JSON.parse((await rawRequest(`${gateway.url}/v1/models`)).body.toString());
      expect(body.object).toBe('list');
      expect(body.data).toEqual(
        expect.arrayContaining([
          // The contract's fields, plus the metadata agents configure themselves with (docs/chat.md).
          {
            id: 'gpt-5.6-sol',
            object: 'model',
            created: expect.any(Number),
            owned_by: 'provider_a',
            family: 'gpt-5.6-sol',
            context_window: 272000,
            input_modalities: ['text', 'image'],
            reasoning_effort: 'low',
            supported_reasoning_efforts: ['low', 'medium', 'high', 'xhigh', 'max'],
          },
        ]),
      );
      const owners = new Set(body.data.map((entry: { owned_by: string }) => entry.owned_by));
      expect(owners).toEqual(new Set(['provider_a', 'provider_b', 'provider_c']));
    });
  });

  describe("GET /v1/models/{id} (the openai SDK's client.models.retrieve)", () => {
    const NOT_FOUND_MODEL = {
      error: {
        message: 'the model does not exist or is not enabled; GET /v1/models lists the models this gateway serves',
        type: 'invalid_request_error',
        code: 'model_not_found',
        param: null,
      },
    };
    let listed: Map<string, unknown>;

    beforeAll(async () => {
      const body = JSON.parse((await rawRequest(`${gateway.url}/v1/models`)).body.toString());
      listed = new Map(body.data.map((entry: { id: string }) => [entry.id, entry]));
    });

    it.each(['gpt-5.6-sol', 'sol-high', 'api/claude-sonnet-5', 'api%2Fclaude-sonnet-5'])(
      'answers %s with the object the list gives for it',
      async (id) => {
        const response = await rawRequest(`${gateway.url}/v1/models/${id}`);
        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        // Compression is set up as on the list (this small body stays below its threshold).
        expect(response.headers.vary).toMatch(/accept-encoding/i);
        const model = JSON.parse(response.body.toString());
        expect(model).toEqual(listed.get(decodeURIComponent(id)));
        expect(model).toMatchObject({ id: decodeURIComponent(id), object: 'model' });
      },
    );

    it('answers a provider_x/<model> passthrough id of an enabled family with what the gateway knows of it', async () => {
      const response = await rawRequest(`${gateway.url}/v1/models/provider_a/gpt-9-preview`);
      expect(response.status).toBe(200);
      expect(JSON.parse(response.body.toString())).toEqual({
        id: 'provider_a/gpt-9-preview',
        object: 'model',
        created: expect.any(Number),
        owned_by: 'provider_a',
        family: 'gpt-9-preview',
      });
    });

    it.each(['no-such-model', 'provider_z/gpt-9', 'provider_a/', 'a/b/c'])(
      'answers %s with 404 model_not_found naming GET /v1/models',
      async (id) => {
        const response = await rawRequest(`${gateway.url}/v1/models/${id}`);
        expect(response.status).toBe(404);
        expect(JSON.parse(response.body.toString())).toEqual(NOT_FOUND_MODEL);
      },
    );

    it.each(['%E0%A4%A', 'sol%', 'SECRET%ZZ'])(
      'answers a malformed percent-encoding (%s) with 400 and the fix',
      async (id) => {
        const response = await rawRequest(`${gateway.url}/v1/models/${id}`);
        expect(response.status).toBe(400);
        expect(JSON.parse(response.body.toString())).toEqual({
          error: {
            message:
              'the request path is not valid percent-encoding (each % takes two hex digits, and the bytes must be UTF-8); encode the id with encodeURIComponent',
            type: 'invalid_request_error',
            code: 'invalid_request',
            param: null,
          },
        });
      },
    );

    it('is what the real openai SDK retrieves, an id with a slash included', async () => {
      const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'any', maxRetries: 0 });
      for (const id of ['gpt-5.6-sol', 'api/claude-sonnet-5']) {
        expect(await client.models.retrieve(id)).toEqual(listed.get(id));
      }
      await expect(client.models.retrieve('no-such-model')).rejects.toMatchObject({
        status: 404,
        code: 'model_not_found',
      });
    });
  });

  it('says nothing about the default model at startup while its family is enabled', () => {
    expect(gateway.logs.text).not.toContain('default_model_not_served');
  });
});

describe('GET /v1/models filtered by GATEWAY_PROVIDERS', () => {
  const gateway = useGateway(() => ({ GATEWAY_PROVIDERS: 'gemini,claude' }));

  it('lists only the enabled families', async () => {
    const body = JSON.parse((await rawRequest(`${gateway.url}/v1/models`)).body.toString());
    const owners = new Set(body.data.map((entry: { owned_by: string }) => entry.owned_by));
    expect(owners).toEqual(new Set(['provider_b', 'provider_c']));
    expect(body.data.some((entry: { id: string }) => entry.id === 'gpt-5.6-sol')).toBe(false);
  });

  it('answers GET /v1/models/{id} of a family it does not enable with the same 404', async () => {
    for (const id of ['gpt-5.6-sol', 'provider_a/gpt-9']) {
      const response = await rawRequest(`${gateway.url}/v1/models/${id}`);
      expect(response.status).toBe(404);
      expect(JSON.parse(response.body.toString())).toEqual({
        error: {
          message:
            'the model belongs to provider_a, which this gateway does not enable (GATEWAY_PROVIDERS); GET /v1/models lists the models it serves',
          type: 'invalid_request_error',
          code: 'model_not_found',
          param: null,
        },
      });
    }
  });

  it('answers a model of a family it does not enable with 404 naming the family and the setting', async () => {
    const ask = async (model: string) => {
      const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(404);
      return JSON.parse(response.body.toString()).error;
    };
    for (const model of ['gpt-5.6-sol', 'provider_a/gpt-9']) {
      expect(await ask(model)).toEqual({
        message:
          'the model belongs to provider_a, which this gateway does not enable (GATEWAY_PROVIDERS); GET /v1/models lists the models it serves',
        type: 'invalid_request_error',
        code: 'model_not_found',
        param: null,
      });
    }
    expect((await ask('no-such-model')).message).toBe(
      'the model does not exist or is not enabled; GET /v1/models lists the models this gateway serves',
    );
  });

  it("answers the disabled family's tier ids (sol, sol-high, any <tier>-…) naming the family, chat and GET alike", async () => {
    const familyMessage =
      'the model belongs to provider_a, which this gateway does not enable (GATEWAY_PROVIDERS); GET /v1/models lists the models it serves';
    for (const id of ['sol-high', 'terra', 'luna-fast-low', 'sol-nothing', 'GPT-6.2-SOL']) {
      const chat = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: id, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const retrieved = await rawRequest(`${gateway.url}/v1/models/${id}`);
      for (const response of [chat, retrieved]) {
        expect([id, response.status, JSON.parse(response.body.toString()).error.message]).toEqual([
          id,
          404,
          familyMessage,
        ]);
      }
    }
  });

  it('answers a body without model (the default, sol) naming the family and what fixes it, as it warned once at startup', async () => {
    const defaultMessage =
      "the model belongs to provider_a, which this gateway does not enable (GATEWAY_PROVIDERS), and it is the gateway's default model (a request without model asks for it): send a model from GET /v1/models, or have the operator enable provider_a or name another default_model (GATEWAY_MODEL_CATALOG)";
    for (const body of [{}, { model: null }, { model: 'sol' }]) {
      const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(404);
      expect(JSON.parse(response.body.toString()).error).toMatchObject({
        code: 'model_not_found',
        message: defaultMessage,
      });
    }
    const warnings = gateway.logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.event === 'default_model_not_served');
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        default_model: 'sol',
        family: 'provider_a',
        fix: expect.stringMatching(
          /^add provider_a to GATEWAY_PROVIDERS, or name a default_model .*GATEWAY_MODEL_CATALOG/,
        ),
      }),
    ]);
  });
});

describe('HTTP server timeouts from their settings', () => {
  const gateway = useGateway(() => ({
    GATEWAY_KEEP_ALIVE_TIMEOUT: '620s',
    GATEWAY_HEADERS_TIMEOUT: '20s',
    GATEWAY_REQUEST_TIMEOUT: '10m',
  }));

  it('applies GATEWAY_KEEP_ALIVE_TIMEOUT, GATEWAY_HEADERS_TIMEOUT and GATEWAY_REQUEST_TIMEOUT to the server', async () => {
    const server = gateway.app.getHttpServer();
    expect({
      keepAlive: server.keepAliveTimeout,
      headers: server.headersTimeout,
      request: server.requestTimeout,
    }).toEqual({ keepAlive: 620_000, headers: 20_000, request: 600_000 });
    const response = await rawRequest(`${gateway.url}/health`, { headers: { connection: 'keep-alive' } });
    expect(response.headers['keep-alive']).toBe('timeout=620');
  });
});

describe('a request whose body does not finish arriving (docs/error-codes.md canceled and request_timeout)', () => {
  // The default timeouts: a pause of a busy machine cannot turn a client that leaves into a 408.
  const gateway = useGateway(() => ({ STRUCTURED_INFERENCE_ENABLED: 'true' }));
  const CHAT = JSON.stringify({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'x'.repeat(600) }] });
  const STRUCTURED = JSON.stringify({ request_id: 'r-upload', model: 'gpt-6.1-terra', input: 'x'.repeat(600) });
  // Every gateway of this process records into prom-client's default registry, so the counts are
  // scraped from this one, whose timeouts no scrape on a busy machine can reach.
  const chatCount = async (status: string) =>
    metricValue(gateway, 'gateway_chat_api_requests_total', { provider: 'none', status });
  let ids = 0;

  // However its body ended, a request gives back what it held of the body budget.
  afterEach(() =>
    eventually(() => gateway.app.get(BodyBudget).heldBytes === 0, undefined, 'the body budget back to 0'),
  );

  /**
   * Sends half of `body` to `path` under a request id of its own, lets `end` end the upload (the
   * client leaves, or the gateway's request timeout passes), and returns what the client received
   * and every line logged meanwhile, once the request's access line (its last) and `routeEvent`
   * line are written.
   */
  async function halfAnUpload(
    path: string,
    body: string | Buffer,
    routeEvent: string,
    end: 'leave' | 'reset' | 'wait',
    options: { chunked?: boolean; headers?: Record<string, string>; to?: TestGateway } = {},
  ): Promise<{ id: string; answer: RawAnswer; records: Record<string, unknown>[] }> {
    const target = options.to ?? gateway;
    const id = `upload-${++ids}`;
    const before = target.logs.lines.length;
    const port = Number(new URL(target.url).port);
    const half = await postHalfABody(port, path, body, { 'x-request-id': id, ...options.headers }, options);
    if (end !== 'wait') half[end]();
    const answer = await half.answer;
    const records = () => target.logs.lines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>);
    const ours = (record: Record<string, unknown>) => record.reqId === id;
    await target.logs.waitForLine((line) => line.includes(`"req":{"id":"${id}"`));
    await target.logs.waitForLine(() => records().some((record) => ours(record) && record.event === routeEvent));
    return { id, answer, records: records() };
  }

  describe.each([
    ['Content-Length', 'leaves', 'leave', {}],
    ['Content-Length', 'resets the connection', 'reset', {}],
    ['chunked', 'leaves', 'leave', { chunked: true }],
    ['chunked', 'resets the connection', 'reset', { chunked: true }],
  ] as const)('a %s body whose client %s halfway', (_framing, _how, end, options) => {
    it.each([
      ['plain', (text: string) => Buffer.from(text), {}],
      ['gzip', (text: string) => zlib.gzipSync(text), { 'content-encoding': 'gzip' }],
    ] as const)(
      '(%s) is recorded once, by the chat route, as canceled 499, and nothing is answered',
      async (_encoding, encode, headers) => {
        const [canceled, refused] = [await chatCount('499'), await chatCount('400')];
        const { id, answer, records } = await halfAnUpload(
          '/v1/chat/completions',
          encode(CHAT),
          'chat_completion',
          end,
          {
            ...options,
            headers,
          },
        );
        expect(answer.raw).not.toMatch(/HTTP\/1\.1 [2-5]\d\d /);
        const completions = records.filter((record) => record.event === 'chat_completion');
        expect(completions).toEqual([expect.objectContaining({ reqId: id, status: 499, error_code: 'canceled' })]);
        expect(records.filter((record) => record.event === 'http_request_rejected')).toEqual([]);
        expect(records.filter((record) => Number(record.level) >= 40)).toEqual([]);
        expect([await chatCount('499'), await chatCount('400')]).toEqual([canceled + 1, refused]);
      },
    );

    it.each([
      ['plain', (text: string) => Buffer.from(text), {}],
      ['gzip', (text: string) => zlib.gzipSync(text), { 'content-encoding': 'gzip' }],
    ] as const)(
      '(%s) is recorded once, by the structured route, as structured_canceled 499',
      async (_encoding, encode, headers) => {
        const { id, answer, records } = await halfAnUpload(
          '/v1/structured/inference',
          encode(STRUCTURED),
          'structured_canceled',
          end,
          { ...options, headers },
        );
        expect(answer.raw).not.toMatch(/HTTP\/1\.1 [2-5]\d\d /);
        const audit = records.filter((record) => String(record.event).startsWith('structured_'));
        expect(audit).toEqual([expect.objectContaining({ reqId: id, event: 'structured_canceled', status: 499 })]);
        expect(records.filter((record) => record.event === 'http_request_rejected')).toEqual([]);
        expect(records.filter((record) => Number(record.level) >= 40)).toEqual([]);
      },
    );
  });

  describe('GATEWAY_REQUEST_TIMEOUT passing while the body arrives', () => {
    const timing = useGateway(() => ({
      STRUCTURED_INFERENCE_ENABLED: 'true',
      GATEWAY_HEADERS_TIMEOUT: '1s',
      GATEWAY_REQUEST_TIMEOUT: '1s',
    }));

    it('is answered 408 by the chat route, under the request id, and recorded once as that 408', async () => {
      const timedOut = await chatCount('408');
      const refused = await chatCount('400');
      const { id, answer, records } = await halfAnUpload('/v1/chat/completions', CHAT, 'chat_completion', 'wait', {
        to: timing,
      });
      expect([answer.status, answer.headers['x-request-id'], answer.headers.connection]).toEqual([408, id, 'close']);
      expect(JSON.parse(answer.body).error.code).toBe('request_timeout');
      const completions = records.filter((record) => record.event === 'chat_completion');
      expect(completions).toEqual([
        expect.objectContaining({ reqId: id, status: 408, error_code: 'request_timeout', level: 40 }),
      ]);
      expect(records.filter((record) => record.event === 'http_request_rejected')).toEqual([]);
      expect([await chatCount('408'), await chatCount('400')]).toEqual([timedOut + 1, refused]);
    });

    it('is answered 408 by the structured route, under the request id, and recorded once as that 408', async () => {
      const { id, answer, records } = await halfAnUpload(
        '/v1/structured/inference',
        STRUCTURED,
        'structured_failure',
        'wait',
        { to: timing },
      );
      expect([answer.status, answer.headers['x-request-id'], answer.headers.connection]).toEqual([408, id, 'close']);
      expect(JSON.parse(answer.body).error.code).toBe('request_timeout');
      const audit = records.filter((record) => String(record.event).startsWith('structured_'));
      expect(audit).toEqual([
        expect.objectContaining({ reqId: id, event: 'structured_failure', code: 'request_timeout' }),
      ]);
      expect(records.filter((record) => record.event === 'http_request_rejected')).toEqual([]);
    });
  });
});

describe('the body budget: GATEWAY_MAX_BODY_BYTES_IN_FLIGHT (docs/deployment.md "Memory budget")', () => {
  // The smallest budget structured inference allows (its 4 MiB cap), with a 64 KiB chat cap, so a
  // held structured body leaves room for small chats only.
  const gateway = useGateway(() => ({
    STRUCTURED_INFERENCE_ENABLED: 'true',
    GATEWAY_MAX_BODY_BYTES: '65536',
    GATEWAY_MAX_BODY_BYTES_IN_FLIGHT: '4194304',
  }));
  const port = () => Number(new URL(gateway.url).port);
  const heldBytes = () => gateway.app.get(BodyBudget).heldBytes;
  /** What a held body leaves: two 16 KiB chunks fit, a third does not (the 64 KiB cap is two chunks further). */
  const ROOM = 40_000;
  const padded = (prefix: string, suffix: string, length: number) =>
    prefix + 'x'.repeat(length - prefix.length - suffix.length) + suffix;
  /** Held but for its last byte, which is not sent until the case says: the budget less ROOM. */
  const HOLDER = padded('{"request_id":"r-held","model":"gpt-6.1-terra","input":"', '"}', 4_194_304 - ROOM + 1);
  const chatOf = (length: number) =>
    padded('{"model":"no-such-model","messages":[{"role":"user","content":"', '"}]}', length);
  const BUSY = {
    message:
      'the gateway holds as many request bodies in memory as GATEWAY_MAX_BODY_BYTES_IN_FLIGHT (4194304 bytes) allows; retry in 5 s, or have the gateway\'s operator raise GATEWAY_MAX_BODY_BYTES_IN_FLIGHT together with the container\'s memory limit (docs/deployment.md "Memory budget")',
    type: 'service_unavailable',
    code: 'service_unavailable',
    param: null,
  };
  let ids = 0;

  /** A request whose body is held: its head and all of its body but the last byte sent, that byte to come. */
  async function holdABody() {
    const holder = await postHalfABody(
      port(),
      '/v1/structured/inference',
      HOLDER,
      {},
      { sentBytes: HOLDER.length - 1 },
    );
    await eventually(() => heldBytes() === HOLDER.length - 1, undefined, 'the body held as it arrived');
    return holder;
  }

  // No case leaves a byte held once its requests ended, whatever ended them.
  afterEach(() => eventually(() => heldBytes() === 0, undefined, 'the body budget back to 0'));

  /** The body budget's series, scraped now: bytes held, the limit, and refusals by route. */
  async function budgetSeries() {
    const text = await scrapeMetrics(gateway);
    return {
      held: sampleValue(text, 'gateway_chat_api_body_budget_held_bytes'),
      limit: sampleValue(text, 'gateway_chat_api_body_budget_limit_bytes'),
      chat: sampleValue(text, 'gateway_chat_api_body_budget_refusals_total', { route: 'chat' }),
      structured: sampleValue(text, 'gateway_chat_api_body_budget_refusals_total', { route: 'structured' }),
    };
  }

  it('refuses a body whose Content-Length does not fit beside a held one with 503 before reading it, and takes it once the first ended', async () => {
    const before = await budgetSeries();
    const holder = await holdABody();
    // A scrape shows what the half-sent body holds, against the limit.
    expect(await budgetSeries()).toEqual({ ...before, held: HOLDER.length - 1, limit: 4_194_304 });
    const id = `budget-${++ids}`;
    const chat = chatOf(ROOM + 1);
    const head = (requestId: string) =>
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `x-request-id: ${requestId}\r\nContent-Length: ${chat.length}\r\n\r\n`;
    // Only the head is sent: the answer cannot wait for the body.
    const refused = await sendRawBytes(port(), Buffer.from(head(id)), { halfClose: false });
    expect(refused.status).toBe(503);
    expect([refused.headers['retry-after'], refused.headers['x-should-retry'], refused.headers.connection]).toEqual([
      '5',
      'true',
      'close',
    ]);
    expect(JSON.parse(refused.body)).toEqual({ error: BUSY });
    await gateway.logs.failureLine(id, 50, { status: 503, error_code: 'body_budget_full' });
    expect(await budgetSeries()).toMatchObject({ held: HOLDER.length - 1, chat: before.chat! + 1 });
    // A body that fits what is left is served meanwhile.
    const small = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chatOf(ROOM),
    });
    expect(JSON.parse(small.body.toString()).error.code).toBe('model_not_found');
    holder.rest();
    await holder.answer;
    await eventually(() => heldBytes() === 0);
    expect(await budgetSeries()).toEqual({ ...before, held: 0, limit: 4_194_304, chat: before.chat! + 1 });
    const taken = await sendRawBytes(port(), Buffer.from(head(`budget-${++ids}`) + chat), { halfClose: false });
    expect(JSON.parse(taken.body).error.code).toBe('model_not_found');
  });

  it('holds a declared body only as its bytes arrive: a request whose body has not come yet keeps no other from being served', async () => {
    // Its head arrived and its body was invited (100 Continue), but not a byte of it sent: the
    // whole budget declared, nothing in memory.
    const stalled = await postHalfABody(
      port(),
      '/v1/structured/inference',
      padded('{"request_id":"r-stalled","model":"gpt-6.1-terra","input":"', '"}', 4_194_304),
      {},
      { sentBytes: 0 },
    );
    try {
      expect(heldBytes()).toBe(0);
      const small = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chatOf(100),
      });
      expect(JSON.parse(small.body.toString()).error.code).toBe('model_not_found');
    } finally {
      stalled.reset();
      await stalled.answer;
    }
  });

  it('refuses a structured body that does not fit in the contract shape', async () => {
    const holder = await holdABody();
    const response = await rawRequest(`${gateway.url}/v1/structured/inference`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: padded('{"request_id":"r-busy","model":"gpt-6.1-terra","input":"', '"}', ROOM + 1),
    });
    expect([response.status, response.headers['retry-after'], response.headers['x-should-retry']]).toEqual([
      503,
      '5',
      'true',
    ]);
    expect(JSON.parse(response.body.toString()).error).toEqual({ code: 'unavailable', message: BUSY.message });
    holder.leave();
    // Counted for its route.
    expect((await budgetSeries()).structured).toBe(1);
  });

  it.each([
    ['plain', {}, Buffer.alloc(16384, 'x')],
    ['gzip, counted as it inflates', { 'content-encoding': 'gzip' }, zlib.gzipSync(Buffer.alloc(16384, 'x'))],
  ] as const)(
    'answers a chunked body (%s) with 503 the moment it outgrows the room left, and closes the connection',
    async (_label, headers, chunk) => {
      const holder = await holdABody();
      const { answer, chunksSent } = await sendChunkedUntilAnswered(
        gateway.url,
        '/v1/chat/completions',
        headers,
        chunk,
      );
      // Past the room at the third 16 KiB chunk, before the 64 KiB cap: the budget's answer, not a 413.
      expect(answer).toMatch(/^HTTP\/1\.1 503 /);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(answer).toMatch(/\r\nretry-after: 5\r\n/i);
      expect(answer).toContain(JSON.stringify({ error: BUSY }));
      expect(chunksSent).toBeLessThan(CHUNKED_UPLOAD_LIMIT);
      holder.reset();
    },
  );

  it.each([
    ['Content-Length', 'leaves', 'leave', {}],
    ['Content-Length', 'resets the connection', 'reset', {}],
    ['chunked', 'leaves', 'leave', { chunked: true }],
    ['chunked', 'resets the connection', 'reset', { chunked: true }],
  ] as const)('gives back a %s body whose client %s halfway', async (_framing, _how, end, options) => {
    const half = await postHalfABody(port(), '/v1/chat/completions', chatOf(ROOM), {}, options);
    // Held: the half that arrived, whatever the framing.
    await eventually(() => heldBytes() === ROOM / 2, undefined, 'the body held');
    half[end]();
    await half.answer;
    await eventually(() => heldBytes() === 0, undefined, 'the body budget back to 0');
  });
});
