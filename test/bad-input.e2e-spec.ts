import type { AddressInfo } from 'node:net';
import { rawRequest, sendRawBytes } from './support/raw-http';
import { startGateway, TestGateway } from './support/create-test-app';

/**
 * Issue 14: bad input never becomes a 5xx or an unreadable answer. The findings of the original
 * fuzzing run, each pinned as a plain regression case.
 */
const CHAT_PATH = '/v1/chat/completions';
const nest = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

describe('bad input (issue 14)', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway({
      // Only provider_a, and no login: a request that passes every check ends at the missing login
      // (401) before any connection, so no case can reach a real program or address.
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_URL: 'http://127.0.0.1:9/backend-api/codex/responses',
      PROVIDER_A_TOKEN_URL: 'http://127.0.0.1:9/oauth/token',
      GATEWAY_MAX_BODY_BYTES: String(1024 * 1024),
      STRUCTURED_INFERENCE_ENABLED: 'true',
    });
  });

  afterAll(() => gateway.close());

  const port = () => (gateway.app.getHttpServer().address() as AddressInfo).port;
  const chatHead = (extra: string) => `POST ${CHAT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}`;
  const CHAT_BODY = '{"model":"gpt-5.6-sol","messages":[{"role":"user","content":"hi"}]}';

  describe('the findings', () => {
    it('1: 3,000 levels of nesting in a field the gateway ignores is a 400, not a 500', async () => {
      const body = `{"model":"gpt-5.6-sol","messages":[{"role":"user","content":"SECRET-PROMPT"}],"x":${nest(3000)}}`;
      const response = await rawRequest(`${gateway.url}${CHAT_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(JSON.parse(response.body.toString())).toEqual({
        error: { message: 'the request body nests arrays and objects deeper than 256 levels', type: 'invalid_request_error', code: 'invalid_request', param: null },
      });
      expect(response.status).toBe(400);
      // At the bound the request goes on (here to the missing login).
      const atBound = `{"model":"no-such-model","messages":[{"role":"user","content":"hi"}],"x":${nest(255)}}`;
      const accepted = await rawRequest(`${gateway.url}${CHAT_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: atBound });
      expect(JSON.parse(accepted.body.toString()).error.code).toBe('model_not_found');
    });

    it.each([
      ['a 70 KB header', `${chatHead(`X-Big: ${'b'.repeat(70_000)}\r\n`)}Content-Length: 2\r\n\r\n{}`, 431, 'request_header_fields_too_large'],
      ['a bare CR in a header value', `${chatHead('X-A: one\rtwo\r\n')}Content-Length: 2\r\n\r\n{}`, 400, 'invalid_request'],
      ['a bare LF in a header value', `${chatHead('X-A: one\ntwo: x\r\n')}Content-Length: 2\r\n\r\n{}`, 400, 'invalid_request'],
      ['a NUL in a header value', `${chatHead('X-A: one\u0000two\r\n')}Content-Length: 2\r\n\r\n{}`, 400, 'invalid_request'],
      ['a folded header', `${chatHead('X-A: one\r\n  two\r\n')}Content-Length: 2\r\n\r\n{}`, 400, 'invalid_request'],
      ['a space in a header name', `${chatHead('X A: one\r\n')}Content-Length: 2\r\n\r\n{}`, 400, 'invalid_request'],
      ['both Content-Length and Transfer-Encoding', `${chatHead('Transfer-Encoding: chunked\r\n')}Content-Length: 5\r\n\r\n0\r\n\r\n`, 400, 'invalid_request'],
      ['a bad chunk size', `${chatHead('Transfer-Encoding: chunked\r\n')}\r\nzz\r\n${CHAT_BODY}\r\n0\r\n\r\n`, 400, 'invalid_request'],
    ])('3: %s gets a JSON body in the chat shape and Connection: close', async (_name, request, status, code) => {
      const answer = await sendRawBytes(port(), Buffer.from(request, 'latin1'));
      expect(answer.status).toBe(status);
      expect(answer.headers).toMatchObject({ connection: 'close', 'content-type': 'application/json; charset=utf-8' });
      expect(JSON.parse(answer.body)).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code, param: null } });
      expect(answer.body).not.toContain('bbbbbbbb');
      expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
    });

    it('3: logs one line per rejected connection, naming only Node\'s reason', async () => {
      const before = gateway.logs.records('http_request_rejected').length;
      await sendRawBytes(port(), Buffer.from(`${chatHead(`X-Big: ${'SECRET'.repeat(12_000)}\r\n`)}Content-Length: 2\r\n\r\n{}`, 'latin1'));
      const records = gateway.logs.records('http_request_rejected').slice(before);
      expect(records).toEqual([expect.objectContaining({ reason: 'HPE_HEADER_OVERFLOW', status: 431 })]);
      expect(JSON.stringify(records)).not.toContain('SECRET');
    });
  });
});
