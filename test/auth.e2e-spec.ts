import { createHash } from 'node:crypto';
import { useGateway } from './support/create-test-app';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';
import { CHUNKED_UPLOAD_LIMIT, parseRawAnswer, sendChunkedUntilAnswered } from './support/raw-http';

/**
 * docs/endpoints.md "Authentication", docs/design/decisions.md §5, docs/design/behaviours.md §3.1 and §10 items 11–14.
 */
const OPENAI_AUTH_ERROR = {
  error: { message: expect.any(String), type: 'authentication_error', code: 'invalid_api_key', param: null },
};

async function call(
  url: string,
  init: { method?: string; authorization?: string; headers?: Record<string, string>; body?: unknown } = {},
) {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.authorization !== undefined) headers.authorization = init.authorization;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

const chatBody = { model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'hello' }] };

/** The 401's words: what to send, and where the gateway's key is set. */
const WRONG_BEARER =
  "missing or invalid bearer token: send `Authorization: Bearer <the gateway's key>`, the value of GATEWAY_BEARER_SECRET on the gateway";
const MALFORMED_HEADER =
  'malformed Authorization header: send `Authorization: Bearer <any token>`, or no Authorization header (this gateway sets no GATEWAY_BEARER_SECRET, so it takes any bearer)';

describe('inbound bearer authentication', () => {
  describe('with GATEWAY_BEARER_SECRET set', () => {
    const SECRET = 'e2e-secret-Zq81-long';
    const TENANT = 'tenant-acme-raw-value';
    const gateway = useGateway(() => ({
      GATEWAY_BEARER_SECRET: SECRET,
      GATEWAY_CALLER_HEADER: 'X-Tenant',
      PRIMARY_AGENT_QUEUE_KEY_MODE: 'caller',
      STRUCTURED_INFERENCE_ENABLED: 'true',
      LOG_LEVEL: 'debug',
    }));

    const refusedChats = async () =>
      sampleValue(
        await scrapeMetrics(gateway, { authorization: `Bearer ${SECRET}` }),
        'gateway_chat_api_requests_total',
        { provider: 'none', model: 'other', status: '401' },
      ) ?? 0;

    const rejected = [
      ['no Authorization header', undefined],
      ['a wrong bearer', 'Bearer not-the-secret'],
      ['Bearer with nothing after it', 'Bearer'],
      ['another scheme carrying the secret', `Basic ${SECRET}`],
      ['the secret without a scheme', SECRET],
    ] as const;

    it.each(rejected)('GET /v1/models answers 401 in the OpenAI error shape for %s', async (_name, authorization) => {
      const response = await call(`${gateway.url}/v1/models`, { authorization });
      expect(response.status).toBe(401);
      expect(response.json).toEqual(OPENAI_AUTH_ERROR);
      expect((response.json as typeof OPENAI_AUTH_ERROR).error.message).toBe(WRONG_BEARER);
    });

    it.each(rejected)('GET /v1/models/{id} answers 401 as the list does for %s', async (_name, authorization) => {
      for (const id of ['gpt-5.6-sol', 'no-such-model']) {
        const response = await call(`${gateway.url}/v1/models/${id}`, { authorization });
        expect(response.status).toBe(401);
        expect(response.json).toEqual(OPENAI_AUTH_ERROR);
      }
      const allowed = await call(`${gateway.url}/v1/models/gpt-5.6-sol`, { authorization: `Bearer ${SECRET}` });
      expect([allowed.status, (allowed.json as { id?: string }).id]).toEqual([200, 'gpt-5.6-sol']);
    });

    it.each(rejected)('GET /metrics answers 401 for %s', async (_name, authorization) => {
      const response = await call(`${gateway.url}/metrics`, { authorization });
      expect(response.status).toBe(401);
      expect(response.json).toEqual(OPENAI_AUTH_ERROR);
      expect(response.text).not.toContain('gateway_chat_api');
    });

    it('POST /v1/chat/completions answers 401 in the OpenAI shape with a wrong bearer, counted and logged as a refused chat request', async () => {
      const refusedBefore = await refusedChats();
      const response = await call(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        authorization: 'Bearer nope',
        body: chatBody,
        headers: { 'x-request-id': 'auth-refused-chat' },
      });
      expect(response.status).toBe(401);
      expect(response.json).toEqual(OPENAI_AUTH_ERROR);
      // Before the model is known, as any other refused chat request: provider none, model other.
      expect(await refusedChats()).toBe(refusedBefore + 1);
      // Its one warning; the access line after it is not a second one.
      await gateway.logs.failureLine('auth-refused-chat', 40, {
        status: 401,
        error_code: 'invalid_api_key',
        error_message: WRONG_BEARER,
      });
    });

    it('POST /v1/structured/inference answers auth_error 401 in its contract shape', async () => {
      const response = await call(`${gateway.url}/v1/structured/inference`, {
        method: 'POST',
        authorization: 'Bearer nope',
        body: {
          request_id: 'auth-1',
          model: 'gpt-5.6-sol',
          input: 'x',
          schema: { type: 'object', properties: {}, required: [], additionalProperties: false },
        },
      });
      expect(response.status).toBe(401);
      expect(response.json).toMatchObject({
        error: { code: 'auth_error', message: WRONG_BEARER },
        contract_version: '2.0.0',
      });
    });

    it.each(['/v1/chat/completions', '/v1/structured/inference'])(
      'POST %s refuses a wrong bearer before reading its body: 401 while the upload goes on, and the connection closed',
      async (route) => {
        const { answer, chunksSent } = await sendChunkedUntilAnswered(gateway.url, route, {
          authorization: 'Bearer nope',
        });
        const parsed = parseRawAnswer(answer);
        expect(parsed.status).toBe(401);
        expect(parsed.headers.connection).toBe('close');
        expect(chunksSent).toBeLessThan(CHUNKED_UPLOAD_LIMIT);
      },
    );

    it('lets exactly "Bearer <secret>" through on models and metrics', async () => {
      const models = await call(`${gateway.url}/v1/models`, { authorization: `Bearer ${SECRET}` });
      expect(models.status).toBe(200);
      expect((models.json as { data: unknown[] }).data.length).toBeGreaterThan(0);
      const metrics = await call(`${gateway.url}/metrics`, { authorization: `Bearer ${SECRET}` });
      expect(metrics.status).toBe(200);
      expect(metrics.text).toContain('gateway_chat_api_requests_total');
    });

    it('keeps every health endpoint open without a bearer', async () => {
      for (const route of ['/health', '/health/live', '/health/ready']) {
        expect((await call(`${gateway.url}${route}`)).status).toBe(200);
      }
    });

    it('never writes the bearer, its hash or the raw caller header to any log line (docs/design/behaviours.md §10 item 14)', async () => {
      const authorization = `Bearer ${SECRET}`;
      const headers = { 'x-tenant': TENANT, 'x-conversation-id': 'conv-auth-1' };
      await call(`${gateway.url}/v1/models`, { authorization, headers });
      await call(`${gateway.url}/v1/models`, { authorization: 'Bearer wrong-bearer-Q7', headers });
      await call(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        authorization,
        headers,
        body: { ...chatBody, model: 'no-such-model' },
      });
      // A tool turn in `caller` queue mode: the caller (from X-Tenant) keys the queue and is logged only as a hash.
      await call(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        authorization,
        headers,
        body: {
          ...chatBody,
          tools: [
            {
              type: 'function',
              function: { name: 'read_file', description: 'read', parameters: { type: 'object', properties: {} } },
            },
          ],
        },
      });
      await call(`${gateway.url}/v1/structured/inference`, {
        method: 'POST',
        authorization,
        headers,
        body: {
          request_id: 'auth-log-1',
          model: 'sonnet',
          input: 'x',
          schema: { type: 'object', properties: {}, required: [], additionalProperties: false },
        },
      });
      await call(`${gateway.url}/nowhere`, { authorization, headers });

      const logs = gateway.logs.text;
      expect(gateway.logs.lines.length).toBeGreaterThan(3);
      for (const secretish of [SECRET, 'wrong-bearer-Q7', TENANT, createHash('sha256').update(SECRET).digest('hex')]) {
        expect(logs).not.toContain(secretish);
      }
      // No header dumped and no bearer value; the 401's own words (`Authorization: Bearer <the
      // gateway's key>`), logged as the refusal's error_message, name the header but carry no value.
      expect(logs).not.toMatch(/"authorization"\s*:/i);
      expect(logs).not.toMatch(/Bearer (?!<the gateway's key>)/);
    });
  });

  describe('without a secret', () => {
    const gateway = useGateway();

    it.each(['/v1/models', '/metrics'])('accepts %s without an Authorization header', async (route) => {
      expect((await call(`${gateway.url}${route}`)).status).toBe(200);
    });

    it.each(['/v1/models', '/metrics'])('accepts any non-empty bearer on %s', async (route) => {
      expect((await call(`${gateway.url}${route}`, { authorization: 'Bearer whatever-the-client-has' })).status).toBe(
        200,
      );
    });

    it.each([
      ['Bearer with nothing after it', 'Bearer'],
      ['another scheme', 'Basic Zm9vOmJhcg=='],
      ['a bare token', 'sk-something'],
    ])('rejects a malformed header (%s) with 401', async (_name, authorization) => {
      for (const route of ['/v1/models', '/metrics']) {
        const response = await call(`${gateway.url}${route}`, { authorization });
        expect(response.status).toBe(401);
        expect(response.json).toEqual(OPENAI_AUTH_ERROR);
        expect((response.json as typeof OPENAI_AUTH_ERROR).error.message).toBe(MALFORMED_HEADER);
      }
      const chat = await call(`${gateway.url}/v1/chat/completions`, { method: 'POST', authorization, body: chatBody });
      expect(chat.status).toBe(401);
      expect(chat.json).toEqual(OPENAI_AUTH_ERROR);
      expect((chat.json as typeof OPENAI_AUTH_ERROR).error.message).toBe(MALFORMED_HEADER);
    });
  });
});
