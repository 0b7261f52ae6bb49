import { GatewayError } from '../../core/gateway.error';
import { CODEX_PIN } from '../../../test/support/oracle-pins';
import { codexClient } from './provider-a.client';
import { familyIds } from '../../core/family-registry';
import { ModelCatalog } from '../../models/model-catalog';
import { TIERS } from '../../models/model-tiers';
import type { RefreshTimers } from './provider-a.models-refresh';
import { ProviderAModelsRefresh } from './provider-a.models-refresh';

type Json = Record<string, unknown>;

/** Timers that run only when the spec says so: the schedule is checked without waiting. */
function manualTimers() {
  const pending: Array<{ callback: () => void; ms: number }> = [];
  const timers: RefreshTimers = {
    set: (callback, ms) => {
      const entry = { callback, ms };
      pending.push(entry);
      return entry;
    },
    clear: (handle) => {
      const index = pending.indexOf(handle as never);
      if (index >= 0) pending.splice(index, 1);
    },
  };
  return { timers, pending, runNext: () => pending.shift()!.callback() };
}

function harness(
  /** `'hang'`: no answer until the fetch is aborted. */
  answers: Array<{ status: number; body?: unknown } | Error | 'hang'>,
  logins = [{ alias: 'default', token: 'at' }],
  periodMs = 15 * 60_000,
  /** What a login without a token fails with when asked for one. */
  options: { rejectWith?: Error } = {},
) {
  const catalog = ModelCatalog.load(undefined, familyIds());
  const records: Json[] = [];
  const calls: Array<{ url: string; headers: Record<string, string>; signal?: AbortSignal }> = [];
  const at = (level: string) => (fields: Json) => records.push({ level, ...fields });
  const logger = { info: at('info'), warn: at('warn'), debug: at('debug'), error: at('error') };
  const proxy = {
    fetch: async (url: string, init: RequestInit) => {
      const signal = init.signal ?? undefined;
      calls.push({ url, headers: init.headers as Record<string, string>, signal });
      const answer = answers.shift() ?? { status: 500 };
      if (answer instanceof Error) throw answer;
      if (answer === 'hang')
        return new Promise<Response>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
      return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), { status: answer.status });
    },
  };
  const failures: string[] = [];
  const accounts = {
    stateOf: (alias: string) => ({ kind: alias === 'cooling' ? 'cooling' : 'ready' }),
    applyFailure: (alias: string) => failures.push(alias),
    // The login's own command, as the pool names it (a login not in the Codex CLI's default home).
    loginFixOf: (alias: string) => `run \`CODEX_HOME=/logins/${alias} codex login\``,
    liveAccounts: () =>
      logins.map(({ alias, token }) => ({
        alias,
        handle: {
          auth: {
            current: async () =>
              token
                ? { accessToken: token, accountId: `acc-${alias}` }
                : Promise.reject(options.rejectWith ?? new Error('no login')),
            // The forced refresh after a 401: another token of the same login.
            afterRejection: async () => ({ accessToken: `${token}-refreshed`, accountId: `acc-${alias}` }),
          },
        },
      })),
  };
  const timers = manualTimers();
  const refresh = new ProviderAModelsRefresh({
    responsesUrl: 'wss://upstream.test/backend-api/codex/responses',
    client: codexClient(),
    periodMs,
    catalog,
    live: catalog.live,
    accounts: accounts as never,
    proxy: proxy as never,
    logger,
    timers: timers.timers,
  });
  return { catalog, records, calls, refresh, timers, failures };
}

const LIST = {
  models: [
    {
      slug: 'gpt-7-sol',
      visibility: 'list',
      supported_reasoning_levels: [{ effort: 'low' }],
      service_tiers: [],
      use_responses_lite: true,
    },
  ],
};

describe(ProviderAModelsRefresh.name, () => {
  it('fetches at once on start (in the background), then every period; the list lands in the catalog', async () => {
    const { catalog, calls, refresh, timers, records } = harness([{ status: 200, body: LIST }]);
    refresh.start();
    expect(timers.pending.map((entry) => entry.ms)).toEqual([0]);
    expect(calls).toEqual([]);
    expect(await refresh.refresh()).toBe(true);
    expect(calls[0]).toMatchObject({
      url: `https://upstream.test/backend-api/codex/models?client_version=${CODEX_PIN}`,
      headers: expect.objectContaining({ authorization: 'Bearer at', 'chatgpt-account-id': 'acc-default' }),
    });
    expect(catalog.resolve('gpt-7-sol-low')).toMatchObject({
      provider: 'provider_a',
      upstreamModel: 'gpt-7-sol',
      reasoningEffort: 'low',
    });
    expect(records).toContainEqual(
      expect.objectContaining({ event: 'provider_a_models_refreshed', models: 1, ids_added: 2 }),
    );
    expect(JSON.stringify(records)).not.toContain('Bearer');
  });

  it('counts the hidden models of the list on its refreshed line', async () => {
    const hidden = { slug: 'gpt-7-secret', visibility: 'hide', supported_reasoning_levels: [], service_tiers: [] };
    const { refresh, records } = harness([{ status: 200, body: { models: [...LIST.models, hidden] } }]);
    expect(await refresh.refresh()).toBe(true);
    expect(records).toContainEqual(
      expect.objectContaining({ event: 'provider_a_models_refreshed', models: 2, hidden: 1 }),
    );
  });

  it('warns about tiers the live list lacks, and says nothing when it has a model of every tier', async () => {
    const tierModel = (tier: string) => ({ ...LIST.models[0], slug: `gpt-7-${tier}` });
    const partial = harness([{ status: 200, body: { models: [tierModel('sol')] } }]);
    expect(await partial.refresh.refresh()).toBe(true);
    const warning = partial.records.find((record) => record.event === 'provider_a_tier_not_in_live_list');
    expect(Object.keys(warning?.tiers as Json).sort()).toEqual(['luna', 'terra']);
    const complete = harness([{ status: 200, body: { models: TIERS.map(tierModel) } }]);
    expect(await complete.refresh.refresh()).toBe(true);
    expect(complete.records).toContainEqual(expect.objectContaining({ event: 'provider_a_models_refreshed' }));
    expect(complete.records.map((record) => record.event)).not.toContain('provider_a_tier_not_in_live_list');
  });

  it('aborts a fetch in flight when stopped, which then fails as stopped', async () => {
    const { refresh, calls, records } = harness(['hang']);
    const outcome = refresh.refresh();
    while (calls.length === 0) await new Promise((resolve) => setImmediate(resolve));
    refresh.stop();
    expect(calls[0].signal?.aborted).toBe(true);
    expect(await outcome).toBe(false);
    expect(records).toContainEqual(
      expect.objectContaining({ event: 'provider_a_models_refresh_failed', reason: 'timed out or stopped' }),
    );
  });

  it('keeps the last good list when a fetch fails, logs why, and tries again sooner than the period', async () => {
    const { catalog, refresh, timers, records } = harness([
      { status: 200, body: LIST },
      { status: 503 },
      { status: 200, body: { nope: true } },
      new TypeError('fetch failed'),
    ]);
    refresh.start();
    timers.runNext();
    await new Promise((resolve) => setImmediate(resolve));
    expect(timers.pending.map((entry) => entry.ms)).toEqual([15 * 60_000]);
    for (const _ of [1, 2, 3]) {
      timers.runNext();
      await new Promise((resolve) => setImmediate(resolve));
      expect(timers.pending.map((entry) => entry.ms)).toEqual([60_000]);
    }
    expect(catalog.resolve('gpt-7-sol')).toMatchObject({ provider: 'provider_a', upstreamModel: 'gpt-7-sol' });
    expect(
      records.filter((record) => record.event === 'provider_a_models_refresh_failed').map((record) => record.reason),
    ).toEqual(['upstream status 503', 'the answer is not a model list', expect.stringMatching(/^connection failed/)]);
    refresh.stop();
    expect(timers.pending).toEqual([]);
  });

  it('gives each failure its own fix: only a passing one needs nothing, and it says when the next try comes', async () => {
    const { refresh, records } = harness([
      { status: 503 },
      // A 401, and a 401 again after the forced refresh.
      { status: 401 },
      { status: 401 },
      { status: 403 },
      { status: 404 },
      { status: 200, body: { nope: true } },
      { status: 200, body: { models: [{ id: 'gpt-6.2-sol' }] } },
      new TypeError('fetch failed'),
    ]);
    for (const _ of [1, 2, 3, 4, 5, 6, 7]) expect(await refresh.refresh()).toBe(false);
    const fixes = records
      .filter((record) => record.event === 'provider_a_models_refresh_failed')
      .map((record) => [record.reason, record.fix]);
    expect(fixes).toEqual([
      ['upstream status 503', 'nothing, if it passes: the list is fetched again in 60 s'],
      ['upstream status 401', 'run `CODEX_HOME=/logins/default codex login`'],
      ['upstream status 403', 'run `CODEX_HOME=/logins/default codex login`'],
      ['upstream status 404', expect.stringMatching(/^check PROVIDER_A_URL: .*PROVIDER_A_MODELS_REFRESH=0/)],
      [
        'the answer is not a model list',
        expect.stringMatching(/update the gateway, or set PROVIDER_A_MODELS_REFRESH=0/),
      ],
      [
        'no entry of the model list has a readable slug',
        expect.stringMatching(/update the gateway, or set PROVIDER_A_MODELS_REFRESH=0/),
      ],
      [expect.stringMatching(/^connection failed/), 'nothing, if it passes: the list is fetched again in 60 s'],
    ]);
  });

  it('skips logins that are not ready, reports a failed token to the pool, and says so when no login is ready', async () => {
    const some = harness(
      [{ status: 200, body: LIST }],
      [
        { alias: 'cooling', token: 't0' },
        { alias: 'dead', token: '' },
        { alias: 'team', token: 't2' },
      ],
    );
    expect(await some.refresh.refresh()).toBe(true);
    expect(some.calls).toHaveLength(1);
    expect(some.calls[0].headers['chatgpt-account-id']).toBe('acc-team');
    expect(some.failures).toEqual(['dead']);
    const none = harness([], []);
    expect(await none.refresh.refresh()).toBe(false);
    // No login to ask with: the login report and the pool's states tell that, so this is detail.
    expect(none.records).toContainEqual(
      expect.objectContaining({
        level: 'debug',
        event: 'provider_a_models_refresh_failed',
        reason: 'no ready login',
        fix: "run `codex login` on the gateway's machine",
      }),
    );
  });

  it('leaves a login whose file cannot serve to the login report: no state change, the detail at debug', async () => {
    const { refresh, records, failures } = harness([], [{ alias: 'default', token: '' }], undefined, {
      rejectWith: new GatewayError('auth', { detail: 'provider_a login file missing', loginFileCause: true }),
    });
    expect(await refresh.refresh()).toBe(false);
    expect(failures).toEqual([]);
    expect(records.filter((record) => record.event === 'provider_a_models_refresh_failed')).toEqual([
      expect.objectContaining({ level: 'debug', reason: 'login default has no usable token' }),
    ]);
  });

  it('never schedules anything with a period of 0', () => {
    const { refresh, timers } = harness([], undefined, 0);
    refresh.start();
    expect(timers.pending).toEqual([]);
  });
});
