import { rawRequest } from './support/raw-http';
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
  });
});
