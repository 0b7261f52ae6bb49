import * as fs from 'node:fs';
import * as path from 'node:path';
import { GatewayError } from '../src/core/gateway.error';
import { loadConfig } from '../src/config/app-config';
import type { CallContext } from '../src/providers/shared/provider-adapter';
import type { ChatEvent } from '../src/core/chat-event';
import type { EventLogger } from '../src/core/event-logger';
import { ProviderBAdapter } from '../src/providers/provider-b/provider-b.adapter';
import type { FakeCodeAssist } from './support/fake-provider-b';
import { useFakeProviderB } from './support/provider-b-harness';
import {
  callFrame,
  errorFrame,
  finishFrame,
  providerBChatRequest as chatRequest,
  providerBSettings,
  quotaFailure,
  retryInfo,
  textFrame,
  writeCredsFile,
} from './support/provider-b-fixtures';
import type { AdapterModule } from './support/adapter-module';
import { adapterModule } from './support/adapter-module';
import { FIRING_BOUND, PAST_FIRING_BOUND_MS } from './support/timer-bounds';

const CLIENT_ID = '681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com';
const CLIENT_SECRET = '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';

/** Records event names only, like the real logger would see them. */
class RecordingLogger implements EventLogger {
  readonly records: Record<string, unknown>[] = [];
  info = (fields: Record<string, unknown>) => void this.records.push(fields);
  warn = (fields: Record<string, unknown>) => void this.records.push(fields);
  debug = (fields: Record<string, unknown>) => void this.records.push(fields);
  error = (fields: Record<string, unknown>) => void this.records.push(fields);
  events(): unknown[] {
    return this.records.map((record) => record.event);
  }
}

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const result: ChatEvent[] = [];
  for await (const event of events) result.push(event);
  return result;
}

describe(ProviderBAdapter.name, () => {
  let fake: FakeCodeAssist;
  let home: string;
  let logger: RecordingLogger;
  let requestCounter = 0;

  const context = (signal: AbortSignal = new AbortController().signal): CallContext => ({
    signal,
    requestId: `req-${++requestCounter}`,
    logger,
  });
  const modules: AdapterModule<ProviderBAdapter>[] = [];
  afterEach(async () => {
    for (const module of modules.splice(0)) await module.close();
  });
  const adapterWith = async (options: { project?: string; env?: Record<string, string> } = {}) => {
    const settings = providerBSettings(fake, home, { project: options.project });
    const config = loadConfig({ HOME: home, GATEWAY_STREAM_IDLE_TIMEOUT: '5s', ...settings, ...options.env });
    const module = await adapterModule(ProviderBAdapter, config);
    modules.push(module);
    return module.adapter;
  };
  const authFile = () => path.join(home, '.gemini', 'oauth_creds.json');

  const harness = useFakeProviderB({ homePrefix: 'provider-b-adapter-' });
  beforeEach(() => {
    fake = harness.fake();
    home = harness.home();
    logger = new RecordingLogger();
  });

  describe('project discovery', () => {
    it('calls :loadCodeAssist once with GEMINI metadata, then reuses the project (docs/upstream/provider-b.md §13.1)', async () => {
      const adapter = await adapterWith();
      const first = await collect(await adapter.stream(chatRequest(), context()));
      await collect(await adapter.stream(chatRequest(), context()));
      expect(first).toEqual([
        { type: 'text-delta', text: 'ok' },
        { type: 'usage', usage: { promptTokens: 3, completionTokens: 1, totalTokens: 4 } },
        { type: 'finish', reason: 'stop' },
      ]);
      const discovery = fake.requests('loadCodeAssist');
      expect(discovery).toHaveLength(1);
      expect(discovery[0].body).toEqual({
        metadata: { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI' },
      });
      const generate = fake.requests('streamGenerateContent');
      expect(generate).toHaveLength(2);
      expect(generate.map((request) => request.body.project)).toEqual(['fake-project', 'fake-project']);
      expect(generate[0].query).toEqual({ alt: 'sse' });
      expect(generate[0].headers).toMatchObject({
        authorization: 'Bearer fake-access-initial',
        accept: '*/*',
        'content-type': 'application/json',
        'x-goog-api-client': `gl-node/${process.versions.node}`,
      });
      expect(generate[0].headers['user-agent']).toMatch(
        /^GeminiCLI-tui\/0\.61\.0\/gemini-2\.5-pro \([a-z0-9]+; [a-z0-9_]+; terminal\) google-api-nodejs-client\/10\.9\.0$/,
      );
      expect(discovery[0].headers['user-agent']).toBe(generate[0].headers['user-agent']);
      expect(discovery[0].headers.accept).toBe('application/json');
    });

    it('accepts the object form of cloudaicompanionProject (docs/upstream/provider-b.md §13.2)', async () => {
      fake.enqueue('loadCodeAssist', {
        body: { currentTier: { id: 'standard-tier' }, cloudaicompanionProject: { id: 'p-9', name: 'nine' } },
      });
      await collect(await (await adapterWith()).stream(chatRequest(), context()));
      expect(fake.requests('streamGenerateContent')[0].body.project).toBe('p-9');
    });

    it('onboards with the default tier and polls the long-running operation with GET until done (docs/upstream/provider-b.md §13.3)', async () => {
      fake.enqueue('loadCodeAssist', {
        body: { allowedTiers: [{ id: 'legacy-tier' }, { id: 'free-tier', isDefault: true }] },
      });
      fake.enqueue('onboardUser', { body: { name: 'operations/7', done: false } });
      fake.enqueue(
        'getOperation',
        { body: { name: 'operations/7', done: false } },
        { body: { name: 'operations/7', done: true, response: { cloudaicompanionProject: { id: 'onboarded-1' } } } },
      );
      await collect(
        await (
          await adapterWith({ env: { PROVIDER_B_ONBOARDING_POLL_INTERVAL: '20ms' } })
        ).stream(chatRequest(), context()),
      );
      const onboard = fake.requests('onboardUser');
      expect(onboard).toHaveLength(1);
      expect(onboard[0].body).toEqual({
        tierId: 'free-tier',
        metadata: { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI' },
      });
      const polls = fake.requests('getOperation');
      expect(polls.map((request) => [request.method, request.path])).toEqual([
        ['GET', '/v1internal/operations/7'],
        ['GET', '/v1internal/operations/7'],
      ]);
      expect(polls[1].receivedAt - polls[0].receivedAt).toBeGreaterThanOrEqual(15);
      expect(fake.requests('streamGenerateContent')[0].body.project).toBe('onboarded-1');
    });

    it('gives up onboarding with a timeout, without polling, when the next poll would come after PROVIDER_B_TIMEOUT', async () => {
      fake.enqueue('loadCodeAssist', { body: { allowedTiers: [{ id: 'free-tier', isDefault: true }] } });
      fake.enqueue('onboardUser', { body: { name: 'operations/9', done: false } });
      fake.enqueue('getOperation', {
        body: { name: 'operations/9', done: true, response: { cloudaicompanionProject: { id: 'too-late' } } },
      });
      const adapter = await adapterWith({
        env: { PROVIDER_B_ONBOARDING_POLL_INTERVAL: '1h', PROVIDER_B_TIMEOUT: '10s' },
      });
      await expect(adapter.stream(chatRequest(), context())).rejects.toMatchObject({
        code: 'timeout',
        detail: 'provider_b onboarding outlived the turn deadline',
      });
      expect(fake.requests('onboardUser')).toHaveLength(1);
      expect(fake.requests('getOperation')).toHaveLength(0);
      expect(fake.requests('streamGenerateContent')).toHaveLength(0);
    });

    it('onboards a configured project the CLI never onboarded to standard-tier, naming the project (docs/upstream/provider-b.md §4.3)', async () => {
      fake.enqueue('loadCodeAssist', {
        body: { allowedTiers: [{ id: 'standard-tier', isDefault: true, userDefinedCloudaicompanionProject: true }] },
      });
      fake.enqueue('onboardUser', { body: { name: 'operations/8', done: true, response: {} } });
      await collect(await (await adapterWith({ project: 'licensed-1' })).stream(chatRequest(), context()));
      const metadata = {
        ideType: 'IDE_UNSPECIFIED',
        platform: 'PLATFORM_UNSPECIFIED',
        pluginType: 'GEMINI',
        duetProject: 'licensed-1',
      };
      expect(fake.requests('loadCodeAssist')[0].body).toEqual({ cloudaicompanionProject: 'licensed-1', metadata });
      expect(fake.requests('onboardUser')[0].body).toEqual({
        tierId: 'standard-tier',
        cloudaicompanionProject: 'licensed-1',
        metadata,
      });
      expect(fake.requests('streamGenerateContent')[0].body.project).toBe('licensed-1');
    });

    it('answers an UNSUPPORTED_CLIENT account with provider_account_unsupported: no onboarding, no retry, cached (docs/upstream/provider-b.md §4.2, §4.4)', async () => {
      const ineligible = {
        ineligibleTiers: [
          {
            reasonCode: 'UNSUPPORTED_CLIENT',
            tierId: 'free-tier',
            tierName: 'Gemini Code Assist for individuals',
            reasonMessage: 'UPSTREAM-SECRET text',
          },
        ],
      };
      fake.enqueue('loadCodeAssist', { body: ineligible }, { body: ineligible });
      const adapter = await adapterWith();
      await expect(adapter.stream(chatRequest(), context())).rejects.toMatchObject({
        code: 'provider_account_unsupported',
        retryable: false,
      });
      await expect(adapter.stream(chatRequest(), context())).rejects.toMatchObject({
        code: 'provider_account_unsupported',
      });
      expect(fake.requests('loadCodeAssist')).toHaveLength(1);
      expect(fake.requests('onboardUser')).toHaveLength(0);
      expect(fake.requests('streamGenerateContent')).toHaveLength(0);
      expect(JSON.stringify(logger.records)).not.toContain('UPSTREAM-SECRET');
    });

    it('fails the request on a failed discovery and tries again on the next one (docs/upstream/provider-b.md §13.4)', async () => {
      const adapter = await adapterWith();
      const failure = { status: 500, body: errorFrame(500, 'INTERNAL') };
      fake.enqueue('loadCodeAssist', failure, failure, failure);
      await expect(adapter.stream(chatRequest(), context())).rejects.toMatchObject({ code: 'upstream' });
      expect(fake.requests('loadCodeAssist')).toHaveLength(3);
      expect(fake.requests('streamGenerateContent')).toHaveLength(0);
      await collect(await adapter.stream(chatRequest(), context()));
      expect(fake.requests('loadCodeAssist')).toHaveLength(4);
      expect(fake.requests('streamGenerateContent')).toHaveLength(1);
    });

    it('fails naming PROVIDER_B_PROJECT when an onboarded account has no project, and so does the log line', async () => {
      fake.enqueue('loadCodeAssist', { body: { currentTier: { id: 'standard-tier' } } });
      const failure = (await adapterWith()).stream(chatRequest(), context());
      await expect(failure).rejects.toMatchObject({ code: 'provider_project_required' });
      await expect(failure).rejects.toHaveProperty('publicMessage', expect.stringContaining('set PROVIDER_B_PROJECT'));
      expect(logger.records).toContainEqual(
        expect.objectContaining({
          event: 'provider_b_project_unavailable',
          reason: 'provider_b_project_required',
          fix: expect.stringContaining('set PROVIDER_B_PROJECT'),
        }),
      );
    });

    it('asks :loadCodeAssist about PROVIDER_B_PROJECT too, as the CLI does, and sends it (docs/upstream/provider-b.md §13.5)', async () => {
      const adapter = await adapterWith({ project: 'proj-x' });
      await collect(await adapter.stream(chatRequest(), context()));
      await collect(await adapter.stream(chatRequest(), context()));
      expect(fake.requests('loadCodeAssist').map((request) => request.body.cloudaicompanionProject)).toEqual([
        'proj-x',
      ]);
      expect(fake.requests('onboardUser')).toHaveLength(0);
      expect(fake.requests('streamGenerateContent').map((request) => request.body.project)).toEqual([
        'proj-x',
        'proj-x',
      ]);
    });

    it('shares one discovery between concurrent requests', async () => {
      fake.enqueue('loadCodeAssist', {
        delayMs: 150,
        body: { currentTier: { id: 'free-tier' }, cloudaicompanionProject: 'slow-project' },
      });
      const adapter = await adapterWith();
      const results = await Promise.all(
        [1, 2, 3].map(async () => collect(await adapter.stream(chatRequest(), context()))),
      );
      expect(results).toHaveLength(3);
      expect(fake.requests('loadCodeAssist')).toHaveLength(1);
      expect(fake.requests('streamGenerateContent').map((request) => request.body.project)).toEqual([
        'slow-project',
        'slow-project',
        'slow-project',
      ]);
    });
  });

  describe('tokens', () => {
    it('refreshes an expired token once with the Gemini CLI client and uses the new one (docs/upstream/provider-b.md §13.6)', async () => {
      const adapter = await adapterWith({ project: 'p' });
      writeCredsFile(path.join(home, '.gemini'), { expiryDateMs: Date.now() - 1000 });
      await collect(await adapter.stream(chatRequest(), context()));
      const refresh = fake.requests('token');
      expect(refresh).toHaveLength(1);
      // The pinned CLI's refresh (google-auth-library 10.9.0 in its bundle, captured by the oracle):
      // its headers and its field order. Node's fetch adds accept-language and sec-fetch-mode on top.
      const { host, connection, 'content-length': length, ...headers } = refresh[0].headers;
      expect(headers).toEqual({
        accept: '*/*',
        'accept-encoding': 'gzip, deflate, br',
        'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
        'user-agent': 'google-api-nodejs-client/10.9.0',
        'x-goog-api-client': `gl-node/${process.versions.node}`,
        'accept-language': '*',
        'sec-fetch-mode': 'cors',
      });
      expect([host, connection, length]).toEqual([expect.any(String), 'keep-alive', expect.any(String)]);
      expect(Object.entries(refresh[0].body)).toEqual([
        ['refresh_token', 'fake-refresh-token'],
        ['client_id', CLIENT_ID],
        ['client_secret', CLIENT_SECRET],
        ['grant_type', 'refresh_token'],
      ]);
      expect(fake.requests('streamGenerateContent')[0].headers.authorization).toBe('Bearer fake-access-1');
    });

    it('writes the new token back keeping unknown keys, mode 0600 and no temp file (docs/upstream/provider-b.md §13.7)', async () => {
      const adapter = await adapterWith({ project: 'p' });
      writeCredsFile(path.join(home, '.gemini'), {
        expiryDateMs: Date.now() - 1000,
        extra: { id_token: 'old-id', custom_cli_field: { keep: true } },
      });
      const before = Date.now();
      await collect(await adapter.stream(chatRequest(), context()));
      const saved = JSON.parse(fs.readFileSync(authFile(), 'utf8'));
      expect(saved).toMatchObject({
        access_token: 'fake-access-1',
        refresh_token: 'fake-refresh-token',
        id_token: 'old-id',
        custom_cli_field: { keep: true },
      });
      expect(saved.expiry_date).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
      expect(saved.expiry_date).toBeLessThanOrEqual(Date.now() + 3_600_000);
      expect(fs.statSync(authFile()).mode & 0o777).toBe(0o600);
      expect(fs.readdirSync(path.join(home, '.gemini'))).toEqual(['oauth_creds.json']);
    });

    it('refreshes a file that only has a refresh token, and keeps a rotated refresh token', async () => {
      const adapter = await adapterWith({ project: 'p' });
      writeCredsFile(path.join(home, '.gemini'), { accessToken: null, expiryDateMs: null });
      fake.enqueue('token', {
        body: { access_token: 'rotated-access', refresh_token: 'rotated-refresh', expires_in: 3600 },
      });
      await collect(await adapter.stream(chatRequest(), context()));
      expect(fake.requests('streamGenerateContent')[0].headers.authorization).toBe('Bearer rotated-access');
      expect(JSON.parse(fs.readFileSync(authFile(), 'utf8')).refresh_token).toBe('rotated-refresh');
    });

    it('refreshes once for concurrent requests', async () => {
      const adapter = await adapterWith({ project: 'p' });
      writeCredsFile(path.join(home, '.gemini'), { expiryDateMs: Date.now() - 1000 });
      fake.enqueue('token', { delayMs: 100, body: { access_token: 'shared-access', expires_in: 3600 } });
      await Promise.all([1, 2, 3].map(async () => collect(await adapter.stream(chatRequest(), context()))));
      expect(fake.requests('token')).toHaveLength(1);
      expect(fake.requests('streamGenerateContent').map((request) => request.headers.authorization)).toEqual(
        Array(3).fill('Bearer shared-access'),
      );
    });

    it('retries a 401 once after a forced refresh (docs/upstream/provider-b.md §13.8)', async () => {
      fake.enqueue('streamGenerateContent', { status: 401, body: errorFrame(401, 'UNAUTHENTICATED') });
      const events = await collect(await (await adapterWith({ project: 'p' })).stream(chatRequest(), context()));
      expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
      const generate = fake.requests('streamGenerateContent');
      expect(generate.map((request) => request.headers.authorization)).toEqual([
        'Bearer fake-access-initial',
        'Bearer fake-access-1',
      ]);
      expect(fake.requests('token')).toHaveLength(1);
    });

    it('uses a token the CLI wrote meanwhile instead of refreshing after a 401', async () => {
      const adapter = await adapterWith({ project: 'p' });
      await collect(await adapter.stream(chatRequest(), context()));
      writeCredsFile(path.join(home, '.gemini'), { accessToken: 'cli-relogin' });
      fake.enqueue('streamGenerateContent', { status: 401, body: errorFrame(401, 'UNAUTHENTICATED') });
      await collect(await adapter.stream(chatRequest(), context()));
      expect(fake.requests('streamGenerateContent').map((request) => request.headers.authorization)).toEqual([
        'Bearer fake-access-initial',
        'Bearer fake-access-initial',
        'Bearer cli-relogin',
      ]);
      expect(fake.requests('token')).toHaveLength(0);
    });

    it('gives up with auth after two 401s and exactly one refresh (docs/upstream/provider-b.md §13.9)', async () => {
      const unauthorized = { status: 401, body: errorFrame(401, 'UNAUTHENTICATED') };
      fake.enqueue('streamGenerateContent', unauthorized, unauthorized);
      await expect((await adapterWith({ project: 'p' })).stream(chatRequest(), context())).rejects.toMatchObject({
        code: 'auth',
      });
      expect(fake.requests('streamGenerateContent')).toHaveLength(2);
      expect(fake.requests('token')).toHaveLength(1);
    });

    it('applies the 401 refresh-and-retry to discovery too', async () => {
      fake.enqueue('loadCodeAssist', { status: 401, body: errorFrame(401, 'UNAUTHENTICATED') });
      await collect(await (await adapterWith()).stream(chatRequest(), context()));
      expect(fake.requests('loadCodeAssist').map((request) => request.headers.authorization)).toEqual([
        'Bearer fake-access-initial',
        'Bearer fake-access-1',
      ]);
    });

    it('does not retry a 403 and makes no refresh call (docs/upstream/provider-b.md §13.10)', async () => {
      fake.enqueue('streamGenerateContent', {
        status: 403,
        body: errorFrame(403, 'PERMISSION_DENIED', 'VALIDATION_REQUIRED'),
      });
      await expect((await adapterWith({ project: 'p' })).stream(chatRequest(), context())).rejects.toMatchObject({
        code: 'auth',
      });
      expect(fake.requests('streamGenerateContent')).toHaveLength(1);
      expect(fake.requests('token')).toHaveLength(0);
    });

    it('fails with auth when the refresh is refused, logging only the error code', async () => {
      const adapter = await adapterWith({ project: 'p' });
      writeCredsFile(path.join(home, '.gemini'), { expiryDateMs: Date.now() - 1000 });
      fake.enqueue('token', {
        status: 400,
        body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' },
      });
      await expect(adapter.stream(chatRequest(), context())).rejects.toMatchObject({ code: 'auth' });
      expect(logger.records).toContainEqual({
        event: 'provider_b_auth_refresh_failed',
        provider: 'provider_b',
        account: 'default',
        path: authFile(),
        status: 400,
        error: 'invalid_grant',
        // The login is the CLI's default one (under HOME): the family's plain command.
        fix: 'run `gemini` on the gateway\'s machine and choose "Login with Google"',
      });
      expect(JSON.stringify(logger.records)).not.toMatch(/revoked|fake-refresh-token|fake-access/);
    });

    it('fails with auth and names the path when the login file is missing', async () => {
      const adapter = await adapterWith({ project: 'p' });
      fs.rmSync(authFile());
      await expect(adapter.stream(chatRequest(), context())).rejects.toMatchObject({ code: 'auth' });
      expect(logger.records).toContainEqual({
        event: 'provider_b_auth_unavailable',
        provider: 'provider_b',
        account: 'default',
        path: authFile(),
        reason: 'missing',
        // The login is the CLI's default one (under HOME): the family's plain command.
        fix: 'run `gemini` on the gateway\'s machine and choose "Login with Google"',
      });
      expect(fake.requests()).toHaveLength(0);
    });
  });

  describe('turns', () => {
    it('returns non-streaming thoughts, text and calls through :generateContent (docs/upstream/provider-b.md §13.18)', async () => {
      fake.enqueue('generateContent', {
        body: {
          response: {
            candidates: [
              {
                content: {
                  role: 'model',
                  parts: [
                    { text: 'hmm', thought: true },
                    { text: 'answer' },
                    { functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'sig-n' },
                  ],
                },
                finishReason: 'STOP',
              },
            ],
            responseId: 'r-n',
          },
        },
      });
      const events = await collect(await (await adapterWith({ project: 'p' })).complete(chatRequest(), context()));
      expect(events).toEqual([
        { type: 'reasoning-delta', text: 'hmm' },
        { type: 'text-delta', text: 'answer' },
        {
          type: 'tool-call',
          call: { id: 'call_r-n_0', name: 'f', kind: 'function', arguments: '{"a":1}', thoughtSignature: 'sig-n' },
        },
        { type: 'finish', reason: 'stop' },
      ]);
      expect(fake.requests('generateContent')[0].headers.accept).toBe('application/json');
    });

    it('remembers a thought signature and replays it when the client dropped extra_content (docs/upstream/provider-b.md §13.19)', async () => {
      const adapter = await adapterWith({ project: 'p' });
      fake.enqueue('streamGenerateContent', {
        frames: [
          { json: callFrame('read_file', { path: 'a' }, { id: 'fc-77', signature: 'sig-1' }) },
          { json: finishFrame() },
        ],
      });
      await collect(await adapter.stream(chatRequest(), context()));
      const continuation = chatRequest({
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'fc-77', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }],
          },
          { role: 'tool', tool_call_id: 'fc-77', content: 'data' },
        ],
      });
      await collect(await adapter.stream(continuation, context()));
      const replayed = fake.requests('streamGenerateContent')[1].body.request.contents[1].parts[0];
      expect(replayed).toEqual({
        functionCall: { id: 'fc-77', name: 'read_file', args: { path: 'a' } },
        thoughtSignature: 'sig-1',
      });
    });

    it('retries a 429 after its RetryInfo delay and succeeds on the second reply (docs/upstream/provider-b.md §13.22)', async () => {
      fake.enqueue('streamGenerateContent', {
        status: 429,
        body: errorFrame(429, 'RESOURCE_EXHAUSTED', 'slow down', [retryInfo('2s')]),
      });
      const events = await collect(await (await adapterWith({ project: 'p' })).stream(chatRequest(), context()));
      expect(events[0]).toEqual({ type: 'text-delta', text: 'ok' });
      const [first, second] = fake.requests('streamGenerateContent');
      expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(1900);
      // The hint, not some much longer sleep; generous, because a busy machine adds its own delay.
      expect(second.receivedAt - first.receivedAt).toBeLessThan(15_000);
    });

    it('retries a 2xx stream that ends without a single frame, and succeeds on the next reply', async () => {
      fake.enqueue('streamGenerateContent', { frames: [] });
      const events = await collect(await (await adapterWith({ project: 'p' })).stream(chatRequest(), context()));
      expect(events[0]).toEqual({ type: 'text-delta', text: 'ok' });
      expect(fake.requests('streamGenerateContent')).toHaveLength(2);
    });

    it('retries a non-JSON :generateContent answer, and succeeds on the next reply', async () => {
      // An empty 200 body: what a proxy cutting the answer short leaves.
      fake.enqueue('generateContent', { status: 200 });
      const events = await collect(await (await adapterWith({ project: 'p' })).complete(chatRequest(), context()));
      expect(events).toContainEqual({ type: 'text-delta', text: 'ok' });
      expect(fake.requests('generateContent')).toHaveLength(2);
    });

    it('retries an error frame that arrives before any output', async () => {
      fake.enqueue('streamGenerateContent', { frames: [{ json: errorFrame(503, 'UNAVAILABLE') }] });
      const events = await collect(await (await adapterWith({ project: 'p' })).stream(chatRequest(), context()));
      expect(events[0]).toEqual({ type: 'text-delta', text: 'ok' });
      expect(fake.requests('streamGenerateContent')).toHaveLength(2);
    });

    it('fails a daily-quota 429 at once as usage_limit without retrying (docs/upstream/provider-b.md §13.23)', async () => {
      fake.enqueue('streamGenerateContent', {
        status: 429,
        body: errorFrame(429, 'RESOURCE_EXHAUSTED', 'daily', [quotaFailure('GenerateRequestsPerDayPerUser')]),
      });
      const error = await (
        await adapterWith({ project: 'p' })
      )
        .stream(chatRequest(), context())
        .catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ code: 'usage_limit', retryable: false });
      expect((error as GatewayError).retryAfterHeader).toBeGreaterThanOrEqual(1);
      expect(fake.requests('streamGenerateContent')).toHaveLength(1);
    });

    it('turns a 503 after output into a terminal error event without a second call (docs/upstream/provider-b.md §13.24)', async () => {
      fake.enqueue('streamGenerateContent', {
        frames: [{ json: textFrame('partial') }, { json: errorFrame(503, 'UNAVAILABLE') }],
      });
      const events = await collect(await (await adapterWith({ project: 'p' })).stream(chatRequest(), context()));
      expect(events).toEqual([
        { type: 'text-delta', text: 'partial' },
        { type: 'error', error: expect.objectContaining({ code: 'upstream' }) },
      ]);
      expect(fake.requests('streamGenerateContent')).toHaveLength(1);
    });

    it('turns an upstream disconnect after output into a terminal error event', async () => {
      fake.enqueue('streamGenerateContent', { frames: [{ json: textFrame('partial') }, { disconnect: true }] });
      const events = await collect(await (await adapterWith({ project: 'p' })).stream(chatRequest(), context()));
      expect(events.map((event) => event.type)).toEqual(['text-delta', 'error']);
    });

    it('closes the upstream response within 1 s when the client aborts mid-stream (docs/upstream/provider-b.md §13.27)', async () => {
      fake.enqueue('streamGenerateContent', { frames: [{ json: textFrame('first') }], holdOpen: true });
      const abort = new AbortController();
      const iterator = (await (await adapterWith({ project: 'p' })).stream(chatRequest(), context(abort.signal)))[
        Symbol.asyncIterator
      ]();
      expect(await iterator.next()).toEqual({ done: false, value: { type: 'text-delta', text: 'first' } });
      const pending = iterator.next();
      abort.abort(new Error('client gone'));
      await expect(pending).rejects.toThrow('client gone');
      await fake.waitUntil(() => fake.requests('streamGenerateContent')[0].closedByClient, 1000, 'the upstream close');
    });

    it('closes the upstream response when an accepted turn is closed before its first event is read', async () => {
      fake.enqueue('streamGenerateContent', { frames: [{ json: textFrame('first') }], holdOpen: true });
      const events = await (await adapterWith({ project: 'p' })).stream(chatRequest(), context());
      await events[Symbol.asyncIterator]().return!();
      await fake.waitUntil(() => fake.requests('streamGenerateContent')[0].closedByClient, 1000, 'the upstream close');
    });

    it('rejects at once when aborted during a retry sleep', async () => {
      fake.enqueue('streamGenerateContent', {
        status: 429,
        body: errorFrame(429, 'RESOURCE_EXHAUSTED', 'wait', [retryInfo('20s')]),
      });
      const abort = new AbortController();
      const started = Date.now();
      const pending = (await adapterWith({ project: 'p' })).stream(chatRequest(), context(abort.signal));
      await fake.waitForRequests('streamGenerateContent', 1);
      setTimeout(() => abort.abort(new Error('client gone')), 50);
      await expect(pending).rejects.toThrow('client gone');
      // Not after sleeping out the 20 s retry hint (the bound is half of it).
      expect(Date.now() - started).toBeLessThan(10_000);
    });

    it('rejects at once when aborted while waiting for response headers', async () => {
      fake.enqueue('streamGenerateContent', { delayMs: 3000 });
      const abort = new AbortController();
      const pending = (await adapterWith({ project: 'p' })).stream(chatRequest(), context(abort.signal));
      await fake.waitForRequests('streamGenerateContent', 1);
      abort.abort(new Error('client gone'));
      await expect(pending).rejects.toThrow('client gone');
      await fake.waitUntil(() => fake.requests('streamGenerateContent')[0].closedByClient, 1000, 'the upstream close');
    });

    it('times out a silent stream with the idle timeout', async () => {
      fake.enqueue('streamGenerateContent', { frames: [{ json: textFrame('first') }], holdOpen: true });
      const adapter = await adapterWith({ project: 'p', env: { GATEWAY_STREAM_IDLE_TIMEOUT: FIRING_BOUND } });
      const events = await collect(await adapter.stream(chatRequest(), context()));
      expect(events).toEqual([
        { type: 'text-delta', text: 'first' },
        { type: 'error', error: expect.objectContaining({ code: 'timeout' }) },
      ]);
      await fake.waitUntil(() => fake.requests('streamGenerateContent')[0].closedByClient, 1000, 'the upstream close');
    });

    it('bounds the wait for response headers with the idle timeout', async () => {
      fake.enqueue('streamGenerateContent', { delayMs: PAST_FIRING_BOUND_MS });
      const adapter = await adapterWith({ project: 'p', env: { GATEWAY_STREAM_IDLE_TIMEOUT: FIRING_BOUND } });
      await expect(adapter.stream(chatRequest(), context())).rejects.toMatchObject({ code: 'timeout' });
      expect(fake.requests('streamGenerateContent')).toHaveLength(1);
    });

    it('fails with timeout when PROVIDER_B_TIMEOUT passes', async () => {
      fake.enqueue('streamGenerateContent', {
        frames: [{ json: textFrame('first') }, { json: textFrame('late'), delayMs: PAST_FIRING_BOUND_MS }],
      });
      const adapter = await adapterWith({ project: 'p', env: { PROVIDER_B_TIMEOUT: FIRING_BOUND } });
      const events = await collect(await adapter.stream(chatRequest(), context()));
      expect(events).toEqual([
        { type: 'text-delta', text: 'first' },
        { type: 'error', error: expect.objectContaining({ code: 'timeout' }) },
      ]);
    });
  });
});
