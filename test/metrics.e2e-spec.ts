import { gunzipSync } from 'node:zlib';
import { DrainService } from '../src/common/lifecycle/drain.service';
import type { AppConfig } from '../src/config/app-config';
import { APP_CONFIG } from '../src/config/config.tokens';
import { upstreamErrorCodes } from '../src/core/error-codes';
import { sampleValue } from './support/prometheus-text';
import { rawRequest } from './support/raw-http';
import type { TestGateway } from './support/create-test-app';
import { startGateway, useGateway } from './support/create-test-app';

/** docs/design/decisions.md §8 and the contract's "Metrics" table, with the types of docs/design/behaviours.md §8. */
const SERIES: Record<string, 'counter' | 'histogram' | 'gauge'> = {
  gateway_chat_api_requests_total: 'counter',
  gateway_chat_api_request_duration_seconds: 'histogram',
  gateway_chat_api_time_to_first_token_seconds: 'histogram',
  gateway_chat_api_tokens_total: 'counter',
  gateway_chat_api_queue_wait_seconds: 'histogram',
  gateway_chat_api_queue_depth: 'gauge',
  gateway_chat_api_upstream_errors_total: 'counter',
  gateway_chat_api_upstream_retries_total: 'counter',
  gateway_chat_api_fast_tier_requests_total: 'counter',
  gateway_chat_api_structured_latency_seconds: 'histogram',
  gateway_chat_api_structured_tokens_total: 'counter',
  gateway_chat_api_structured_failures_total: 'counter',
  gateway_chat_api_structured_validation_total: 'counter',
  gateway_chat_api_structured_idempotency_total: 'counter',
  gateway_chat_api_structured_inflight: 'gauge',
  gateway_chat_api_upstream_sessions_kept: 'gauge',
  gateway_chat_api_upstream_session_turns_total: 'counter',
  gateway_chat_api_body_budget_held_bytes: 'gauge',
  gateway_chat_api_body_budget_limit_bytes: 'gauge',
  gateway_chat_api_body_budget_refusals_total: 'counter',
};

/** prom-client's default metrics the dashboard and alerts use (docs/endpoints.md "Process metrics"). */
const PROCESS_SERIES: Record<string, 'counter' | 'histogram' | 'gauge'> = {
  gateway_chat_api_process_cpu_seconds_total: 'counter',
  gateway_chat_api_process_resident_memory_bytes: 'gauge',
  gateway_chat_api_process_start_time_seconds: 'gauge',
  gateway_chat_api_nodejs_eventloop_lag_p99_seconds: 'gauge',
  gateway_chat_api_nodejs_heap_size_used_bytes: 'gauge',
  gateway_chat_api_nodejs_gc_duration_seconds: 'histogram',
  gateway_chat_api_process_memory_limit_bytes: 'gauge',
  gateway_chat_api_container_memory_working_set_bytes: 'gauge',
  gateway_chat_api_ready: 'gauge',
};

/** The type a `# TYPE` line declares for `name`. */
function declaredType(text: string, name: string): string | undefined {
  return new RegExp(`^# TYPE ${name} (\\w+)$`, 'm').exec(text)?.[1];
}

describe('GET /metrics', () => {
  describe('enabled (the default) with a bearer secret', () => {
    const SECRET = 'metrics-secret-0123';
    let gateway: TestGateway;
    const scrape = async () => {
      const response = await rawRequest(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${SECRET}` } });
      expect(response.status).toBe(200);
      return { text: response.body.toString(), type: response.headers['content-type'] };
    };

    beforeAll(async () => {
      gateway = await startGateway({ GATEWAY_BEARER_SECRET: SECRET });
    });

    afterAll(() => gateway.close());

    it('serves Prometheus text with HELP and TYPE for every series of docs/design/decisions.md §8 and the contract', async () => {
      const { text, type } = await scrape();
      expect(type).toMatch(/^text\/plain/);
      for (const [name, kind] of Object.entries(SERIES)) {
        expect(text).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
        expect(declaredType(text, name)).toBe(kind);
      }
    });

    it('gzips the scrape for a scraper that accepts it, and sends it plain to one that does not', async () => {
      const headers = { authorization: `Bearer ${SECRET}` };
      const gzipped = await rawRequest(`${gateway.url}/metrics`, {
        headers: { ...headers, 'accept-encoding': 'gzip' },
      });
      expect(gzipped.status).toBe(200);
      expect(gzipped.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gzipped.body).toString()).toMatch(/^# HELP gateway_chat_api_requests_total /m);
      const plain = await rawRequest(`${gateway.url}/metrics`, { headers });
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.toString()).toMatch(/^# HELP gateway_chat_api_requests_total /m);
    });

    it('exposes the closed structured label sets at zero from boot', async () => {
      const { text } = await scrape();
      for (const result of ['valid', 'invalid', 'unparsable', 'unknown']) {
        expect(sampleValue(text, 'gateway_chat_api_structured_validation_total', { result })).toBe(0);
      }
      for (const result of ['local_hit', 'miss', 'conflict', 'capacity']) {
        expect(sampleValue(text, 'gateway_chat_api_structured_idempotency_total', { result })).toBe(0);
      }
      expect(sampleValue(text, 'gateway_chat_api_structured_inflight')).toBe(0);
    });

    it('lists every upstream error code of each enabled family and the refused queue waits at zero before any request, so an alert on increase() sees the first one', async () => {
      const { text } = await scrape();
      const config = gateway.app.get<AppConfig>(APP_CONFIG);
      expect(config.enabledProviders).toEqual(['provider_a', 'provider_b', 'provider_c']);
      const missing: string[] = [];
      const expectZero = (name: string, labels: Record<string, string>) => {
        if (sampleValue(text, name, labels) !== 0) missing.push(`${name}${JSON.stringify(labels)}`);
      };
      for (const provider of config.enabledProviders) {
        for (const code of upstreamErrorCodes(provider))
          expectZero('gateway_chat_api_upstream_errors_total', { provider, code });
      }
      for (const provider of [...config.enabledProviders, 'provider_c_processes'])
        for (const result of ['full', 'timeout'])
          expectZero('gateway_chat_api_queue_wait_seconds_count', { provider, result });
      expect(missing).toEqual([]);
      // The codes the login alerts read, by name.
      for (const [provider, code] of [
        ['provider_a', 'auth'],
        ['provider_b', 'provider_account_unsupported'],
        ['provider_b', 'provider_project_required'],
      ])
        expect(sampleValue(text, 'gateway_chat_api_upstream_errors_total', { provider, code })).toBe(0);
      expect(text).not.toMatch(/gateway_chat_api_upstream_errors_total\{[^}]*code="canceled"/);
    });

    it('counts a chat request for a model outside the catalog as model="other", never the raw id (docs/design/behaviours.md §10 item 58)', async () => {
      const before =
        sampleValue((await scrape()).text, 'gateway_chat_api_requests_total', {
          provider: 'none',
          model: 'other',
          status: '404',
        }) ?? 0;
      const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'caller-typed-model-xyz', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(404);
      const { text } = await scrape();
      expect(
        sampleValue(text, 'gateway_chat_api_requests_total', { provider: 'none', model: 'other', status: '404' }),
      ).toBe(before + 1);
      expect(text).not.toContain('caller-typed-model-xyz');
      expect(text).not.toContain(SECRET);
    });

    it('counts a chat request refused for its body (not JSON, too deep) like every other refused chat request', async () => {
      const count = async () =>
        sampleValue((await scrape()).text, 'gateway_chat_api_requests_total', {
          provider: 'none',
          model: 'other',
          status: '400',
        }) ?? 0;
      const before = await count();
      for (const body of ['{"model":', `${'['.repeat(300)}${']'.repeat(300)}`]) {
        const response = await rawRequest(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
          body,
        });
        expect(response.status).toBe(400);
      }
      expect(await count()).toBe(before + 2);
    });

    it("includes prom-client's process metrics under the gateway prefix, the memory limit and the memory charged against it", async () => {
      const { text } = await scrape();
      for (const [name, kind] of Object.entries(PROCESS_SERIES)) expect(declaredType(text, name)).toBe(kind);
      expect(sampleValue(text, 'gateway_chat_api_process_resident_memory_bytes')).toBeGreaterThan(0);
      const limit = sampleValue(text, 'gateway_chat_api_process_memory_limit_bytes') ?? 0;
      expect(limit).toBeGreaterThanOrEqual(sampleValue(text, 'gateway_chat_api_process_resident_memory_bytes')!);
      // The cgroup's working set (this process and its children), or the RSS outside a cgroup v2.
      const used = sampleValue(text, 'gateway_chat_api_container_memory_working_set_bytes') ?? 0;
      expect(used).toBeGreaterThan(0);
      expect(used).toBeLessThanOrEqual(limit);
      // Every series the gateway exports carries the prefix: no bare process_* or nodejs_* names.
      const names = [...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]);
      expect(names.filter((name) => !name.startsWith('gateway_chat_api_'))).toEqual([]);
    });

    it('reports the body budget at idle: nothing held, its limit, and both routes at 0 refusals from boot', async () => {
      const { text } = await scrape();
      expect([
        sampleValue(text, 'gateway_chat_api_body_budget_held_bytes'),
        sampleValue(text, 'gateway_chat_api_body_budget_limit_bytes'),
        sampleValue(text, 'gateway_chat_api_body_budget_refusals_total', { route: 'chat' }),
        sampleValue(text, 'gateway_chat_api_body_budget_refusals_total', { route: 'structured' }),
      ]).toEqual([0, 67_108_864, 0, 0]);
    });

    it('reports readiness as gateway_chat_api_ready: 1 while serving, 0 once draining, like /health/ready', async () => {
      expect(sampleValue((await scrape()).text, 'gateway_chat_api_ready')).toBe(1);
      gateway.app.get(DrainService).startDraining();
      expect((await rawRequest(`${gateway.url}/health/ready`)).status).toBe(503);
      expect(sampleValue((await scrape()).text, 'gateway_chat_api_ready')).toBe(0);
    });

    it('is behind the bearer', async () => {
      expect((await rawRequest(`${gateway.url}/metrics`)).status).toBe(401);
      expect((await rawRequest(`${gateway.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(
        401,
      );
    });
  });

  describe('METRICS_ENABLED=false', () => {
    const gateway = useGateway(() => ({ METRICS_ENABLED: 'false' }));

    it('answers 404 exactly like an unknown route', async () => {
      const metrics = await rawRequest(`${gateway.url}/metrics`);
      const unknown = await rawRequest(`${gateway.url}/no-such-route`);
      expect(metrics.status).toBe(404);
      expect(metrics.body.equals(unknown.body)).toBe(true);
      expect(metrics.body.toString()).not.toContain('gateway_chat_api');
    });

    it('still serves everything else', async () => {
      expect((await rawRequest(`${gateway.url}/v1/models`)).status).toBe(200);
    });
  });
});
