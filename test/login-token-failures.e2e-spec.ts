import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { writeAuthFile } from './support/provider-a-fixtures';
import { writeCredsFile } from './support/provider-b-fixtures';
import { bundledTierModel } from './support/bundled-tiers';
import { postChatBody } from './support/chat-sse';

/**
 * A token endpoint that gives no answer is the same honest answer on provider_a and provider_b
 * (a network failure is not a login problem), and waiting for it counts against the
 * turn's deadline and the idle timeout like any upstream wait.
 */
const MODELS = [
  ['provider_a', 'gpt-5.6-sol'],
  ['provider_b', 'gemini-2.5-flash'],
] as const;

/** The chat answer says what to do and where the operator finds the cause. */
const UPSTREAM_ERROR = {
  error: {
    message:
      "the upstream failed to answer; retry in a few seconds. If it keeps failing, the gateway's operator finds the cause in the gateway log under this response's x-request-id",
    type: 'upstream_error',
    code: 'upstream_error',
    param: null,
  },
};
/** The chat answer names the family's own turn timeout and the idle bound, the two an operator can raise. */
const timeoutAnswer = (provider: string) => ({
  error: {
    message: `${provider}: the upstream did not answer in time; retry, and if it keeps timing out, the gateway's operator can raise ${provider.toUpperCase()}_TIMEOUT (the longest a turn may take) or GATEWAY_STREAM_IDLE_TIMEOUT (the longest wait for the upstream's next event)`,
    type: 'timeout',
    code: 'timeout',
    param: null,
  },
});

/** A loopback port nothing listens on: a server bound to it, then closed. */
async function refusingPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A token endpoint that accepts the request and never answers (until closed). */
async function hungEndpoint(): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server = http.createServer(() => void hits++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/token`,
    hits: () => hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Both families enabled, each with an expired login (so the first request must refresh) and `tokenUrl`. */
async function gatewayWithExpiredLogins(
  tokenUrl: string,
  settings: Record<string, string>,
): Promise<{ gateway: TestGateway; dir: string; files: Record<string, string> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'login-token-failures-'));
  const unreachable = `http://127.0.0.1:${await refusingPort()}`;
  const codex = writeAuthFile(path.join(dir, '.codex'), { exp: Math.floor(Date.now() / 1000) - 3600 });
  const gemini = writeCredsFile(path.join(dir, '.gemini'), { expiryDateMs: Date.now() - 3_600_000 });
  const gateway = await startGateway({
    GATEWAY_PROVIDERS: 'provider_a,provider_b',
    PROVIDER_A_AUTH_FILE: codex.path,
    PROVIDER_A_TOKEN_URL: tokenUrl,
    PROVIDER_A_URL: `${unreachable}/backend-api/codex/responses`,
    PROVIDER_B_AUTH_FILE: gemini,
    PROVIDER_B_TOKEN_URL: tokenUrl,
    PROVIDER_B_URL: `${unreachable}/v1internal`,
    PROVIDER_B_PROJECT: 'fake-project',
    STRUCTURED_INFERENCE_ENABLED: 'true',
    // No live model list: its startup fetch would start the (single-flight) refresh itself, and a
    // request joining that refresh never asks the token endpoint, which these specs count.
    PROVIDER_A_MODELS_REFRESH: '0',
    ...settings,
  });
  return { gateway, dir, files: { provider_a: codex.path, provider_b: gemini } };
}

async function chat(
  gateway: TestGateway,
  model: string,
  stream: boolean,
): Promise<{ status: number; body: unknown; ms: number }> {
  const started = Date.now();
  const response = await postChatBody(gateway, { model, stream, messages: [{ role: 'user', content: 'hi' }] });
  return { status: response.status, body: await response.json(), ms: Date.now() - started };
}

describe('an unreachable token endpoint', () => {
  let gateway: TestGateway;
  let dir: string;
  let files: Record<string, string>;

  beforeAll(async () => {
    ({ gateway, dir, files } = await gatewayWithExpiredLogins(`http://127.0.0.1:${await refusingPort()}/token`, {}));
  });

  afterAll(async () => {
    await gateway.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each(MODELS.flatMap(([provider, model]) => [false, true].map((stream) => [provider, model, stream] as const)))(
    '%s (%s, stream %s) answers 502 upstream_error after its retries, never "log in again"',
    async (provider, model, stream) => {
      const before = gateway.logs.lines.length;
      const answer = await chat(gateway, model, stream);
      expect(answer.body).toEqual(UPSTREAM_ERROR);
      expect(answer.status).toBe(502);
      const records = gateway.logs.lines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>);
      const refreshFailures = records.filter(
        (record) =>
          record.event === `${provider}_token_refresh_failed` || record.event === `${provider}_auth_refresh_failed`,
      );
      // Retried like any connect error before output: three attempts, three refreshes.
      expect(refreshFailures).toHaveLength(3);
      expect(
        refreshFailures.every((record) => record.error_code === 'unreachable' || record.reason === 'unreachable'),
      ).toBe(true);
      // Each line says which login, which file, and what to do: not a login problem.
      for (const record of refreshFailures)
        expect(record).toMatchObject({
          provider,
          account: 'default',
          path: files[provider],
          fix: expect.stringMatching(
            /^the token endpoint \(PROVIDER_[AB]_TOKEN_URL\) did not answer: check the network/,
          ),
        });
      expect(JSON.stringify(refreshFailures)).not.toMatch(/rt-initial|fake-refresh-token/);
    },
  );

  it('is upstream_error 502 on the structured route too, not auth_error', async () => {
    const response = await fetch(`${gateway.url}/v1/structured/inference`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        request_id: 'r-token',
        // On the default structured allowlist (docs/structured.md "Models").
        model: bundledTierModel('sol').model,
        input: 'x',
        schema: { type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'string' } } },
      }),
    });
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({
      error: { code: 'upstream_error', message: 'upstream error' },
      request_id: 'r-token',
      contract_version: '2.0.0',
    });
  });
});

describe('a token endpoint that never answers', () => {
  let hung: Awaited<ReturnType<typeof hungEndpoint>>;

  beforeAll(async () => {
    hung = await hungEndpoint();
  });

  afterAll(() => hung.close());

  it.each([
    [
      'the idle timeout (turn timeout at its 10-minute default)',
      { GATEWAY_STREAM_IDLE_TIMEOUT: '1s' },
      () => /no upstream event for 1000 ms \(GATEWAY_STREAM_IDLE_TIMEOUT\)/,
    ],
    [
      'the turn timeout (idle timeout off)',
      { GATEWAY_STREAM_IDLE_TIMEOUT: '0', PROVIDER_A_TIMEOUT: '1s', PROVIDER_B_TIMEOUT: '1s' },
      // The log line names the setting that ended the turn, not "the family's timeout setting".
      (provider: string) => new RegExp(`the turn's deadline passed \\(${provider.toUpperCase()}_TIMEOUT, 1000 ms\\)`),
    ],
  ])('holds a request no longer than %s, on both families: 504 timeout', async (_name, settings, detail) => {
    const { gateway, dir } = await gatewayWithExpiredLogins(hung.url, settings);
    try {
      for (const [provider, model] of MODELS) {
        const hitsBefore = hung.hits();
        const answer = await chat(gateway, model, false);
        expect(answer.body).toEqual(timeoutAnswer(provider));
        const failed = gateway.logs.records('upstream_turn_failed').filter((record) => record.provider === provider);
        expect(String(failed.at(-1)?.detail)).toMatch(detail(provider));
        expect(answer.status).toBe(504);
        expect(hung.hits()).toBeGreaterThan(hitsBefore);
        // The refresh's own bound is 30 s; the request ends at the 1 s clock (the bound is half of 30 s).
        expect(answer.ms).toBeLessThan(15_000);
      }
    } finally {
      await gateway.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
