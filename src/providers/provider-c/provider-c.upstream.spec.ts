import { recordingAccountMetrics, recordingLogger } from '../../../test/support/recorders';
import { AccountPool } from '../../accounts/account-pool';
import type { ProviderCAccount } from '../../accounts/provider-c/provider-c.accounts';
import { GatewayError } from '../../core/gateway.error';
import type { PlanReport } from '../../core/plan-usage';
import { runFamilyTurn } from '../shared/family-turn';
import { ClaudeChild } from './provider-c.process';
import type { ClaudeRun } from './provider-c.upstream';
import { ProviderCUpstream } from './provider-c.upstream';

/** A turn's report of extra usage drawn on a spent plan that resets in an hour. */
const PAID_REPORT: PlanReport = {
  source: 'turn',
  windows: [{ name: 'five_hour', usedRatio: 1, resetsAt: Date.now() + 3_600_000 }],
  planSpent: true,
  paid: { kind: 'extra_usage', available: true, inUse: true },
};

/** A login whose background refresh is in flight until `refreshed()`; `started` and `ended` count its children. */
function login(alias: string, refreshing: boolean) {
  let refreshed!: () => void;
  let refresh: Promise<void> | undefined = refreshing
    ? new Promise<void>((resolve) => (refreshed = resolve)).then(() => void (refresh = undefined))
    : undefined;
  const account = {
    started: 0,
    ended: 0,
    childEnv: () => ({ GATEWAY_TEST_LOGIN: alias, CLAUDE_CONFIG_DIR: `/logins/${alias}` }),
    loginFileChanged: () => undefined,
    refreshInFlight: () => refresh,
    childStarting: () => {
      account.started++;
      return () => void account.ended++;
    },
    refreshAhead: () => Promise.resolve(undefined),
    oauthToken: () => Promise.resolve('token'),
  } satisfies ProviderCAccount & { started: number; ended: number };
  return { account, refreshed: () => refreshed() };
}

function setup(aliases: readonly string[], baseEnv: Record<string, string> = {}) {
  const logins = new Map(aliases.map((alias, index) => [alias, login(alias, index === 0)]));
  const logger = recordingLogger();
  const pool = new AccountPool<ProviderCAccount>(
    'provider_c',
    aliases.map((alias) => ({ alias, handle: logins.get(alias)!.account })),
    { maxInFlight: 0, cooldownDefaultMs: 60_000, pinnedChatsMax: 10 },
    { clock: { now: () => Date.now() }, logger, metrics: recordingAccountMetrics().metrics },
  );
  const run: ClaudeRun = {
    command: 'claude',
    baseEnv,
    request: {
      model: { upstreamModel: 'claude-fable-5' } as never,
      messages: [{ role: 'user', content: 'hi' }] as never,
      normalizedTools: [],
    },
    toolPlan: { callsAllowed: false },
    streamOptions: { toolKinds: new Map() },
    logger,
    live: new Set(),
  };
  const context = { signal: new AbortController().signal, requestId: 'req-1', logger };
  const turn = () =>
    runFamilyTurn(new ProviderCUpstream(run), { pool, chat: 'chat-1', timeoutMs: 0, idleTimeoutMs: 0, context });
  return { pool, logins, turn };
}

describe('ProviderCUpstream: a turn that waited for its login to be refreshed', () => {
  /** The logins a child was started for; a start ends the turn (no process in a unit spec). */
  let spawnedFor: string[];
  /** The environment of every child started. */
  let spawnedEnv: Record<string, string>[];
  beforeEach(() => {
    spawnedFor = [];
    spawnedEnv = [];
    jest.spyOn(ClaudeChild, 'start').mockImplementation((options) => {
      spawnedFor.push(options.env.GATEWAY_TEST_LOGIN);
      spawnedEnv.push({ ...options.env });
      return Promise.reject(new GatewayError('bad_request', { detail: 'no process in a unit spec' }));
    });
  });
  afterEach(() => jest.restoreAllMocks());

  it("starts no child on a login the paid-usage guard rested meanwhile: the turn runs on the pool's choice", async () => {
    const { pool, logins, turn } = setup(['one', 'two']);
    const running = turn();
    // While the turn waits for the refresh, another turn on `one` reports extra usage drawn.
    pool.reportPlan('one', PAID_REPORT);
    logins.get('one')!.refreshed();
    await expect(running).rejects.toMatchObject({ code: 'bad_request' });
    expect(spawnedFor).toEqual(['two']);
    expect(logins.get('one')!.account.started).toBe(0);
  });

  it("refuses with the pool's paid-usage answer when the rested login is the family's only one, with no child", async () => {
    const { pool, logins, turn } = setup(['only']);
    const running = turn();
    pool.reportPlan('only', PAID_REPORT);
    logins.get('only')!.refreshed();
    await expect(running).rejects.toMatchObject({ code: 'paid_usage_not_allowed' });
    expect(spawnedFor).toEqual([]);
    expect(logins.get('only')!.account.started).toBe(0);
  });

  it('starts the child on its login once the refresh is over when the pool still gives it the turn', async () => {
    const { logins, turn } = setup(['one', 'two']);
    const running = turn();
    logins.get('one')!.refreshed();
    await expect(running).rejects.toMatchObject({ code: 'bad_request' });
    expect(spawnedFor).toEqual(['one']);
  });

  it('a spawn refused outright counts no child on the login: it does not look busy for later turns', async () => {
    const { logins, turn } = setup(['one', 'two']);
    const running = turn();
    logins.get('one')!.refreshed();
    await expect(running).rejects.toMatchObject({ code: 'bad_request' });
    const { account } = logins.get('one')!;
    expect(account.started).toBe(1);
    expect(account.ended).toBe(1);
  });

  it("runs the child on the login's own config dir even when the gateway's environment names another", async () => {
    const { logins, turn } = setup(['one', 'two'], { CLAUDE_CONFIG_DIR: '/gateway/config', PATH: '/usr/bin' });
    const running = turn();
    logins.get('one')!.refreshed();
    await expect(running).rejects.toMatchObject({ code: 'bad_request' });
    expect(spawnedEnv).toEqual([
      expect.objectContaining({ CLAUDE_CONFIG_DIR: '/logins/one', GATEWAY_TEST_LOGIN: 'one', PATH: '/usr/bin' }),
    ]);
  });
});
