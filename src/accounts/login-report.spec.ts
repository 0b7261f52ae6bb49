import type { PinoLogger } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config';
import type { LoginCheck, LoginStateKind } from '../core/login-state';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { AccountPools } from './account-pools';
import type { ConfiguredLogin } from './configured-logins';
import { LoginReport } from './login-report';

const reportsMade: LoginReport[] = [];

/** One configured login whose check answers what `answers` holds now (an Error: it fails so), counting the checks. */
function login(
  account: string,
  answers: { check: LoginCheck | Error },
  options: Partial<Pick<ConfiguredLogin, 'spawnsCli' | 'loginFile' | 'loginCommand'>> = {},
): ConfiguredLogin & { checks: number } {
  const entry = {
    provider: 'provider_a',
    account,
    spawnsCli: false,
    ...options,
    checks: 0,
    check: () => {
      entry.checks += 1;
      const { check } = answers;
      return check instanceof Error ? Promise.reject(check) : Promise.resolve(check);
    },
  };
  return entry;
}

/** A report over `logins`, with a logger, metrics and a pool that record what they are told. */
function report(logins: ConfiguredLogin[], verdicts: Record<string, LoginStateKind> = {}) {
  const lines: Array<[level: 'info' | 'warn', fields: Record<string, unknown>, message: string]> = [];
  const logger = {
    info: (fields: Record<string, unknown>, message: string) => lines.push(['info', fields, message]),
    warn: (fields: Record<string, unknown>, message: string) => lines.push(['warn', fields, message]),
  } as unknown as PinoLogger;
  const gauge: Array<[string, string, LoginStateKind]> = [];
  const metrics = {
    loginState: (provider: string, account: string, state: LoginStateKind) => gauge.push([provider, account, state]),
  } as unknown as GatewayMetrics;
  const checked: Array<[string, LoginCheck]> = [];
  const pools = {
    poolOf: () => ({
      loginChecked: (alias: string, check: LoginCheck) => checked.push([alias, check]),
      loginVerdict: (alias: string) => verdicts[alias],
    }),
  } as unknown as AccountPools;
  const loginReport = new LoginReport({ enabledProviders: [] } as unknown as AppConfig, logger, metrics, pools);
  reportsMade.push(loginReport);
  (loginReport as unknown as { entries: ConfiguredLogin[] }).entries.push(...logins);
  let started = false;
  /** Runs the startup round (the first time), then `rounds` later ones 10 s apart. */
  const run = async (rounds = 0) => {
    if (!started) {
      started = true;
      loginReport.onApplicationBootstrap();
      await loginReport.settled();
    }
    for (let round = 0; round < rounds; round++) {
      await jest.advanceTimersByTimeAsync(10_000);
      await loginReport.settled();
    }
  };
  return { lines, gauge, checked, run };
}

const events = (lines: ReturnType<typeof report>['lines']) =>
  lines.map(([level, fields]) => [level, fields.event, fields.account, fields.state]);

describe(LoginReport.name, () => {
  beforeEach(() => jest.useFakeTimers({ now: Date.UTC(2030, 0, 1) }));
  afterEach(() => {
    for (const each of reportsMade.splice(0)) each.onModuleDestroy();
    jest.useRealTimers();
  });

  it('tells every login at startup at info, with the file a missing one was looked for, and warns once for a family with none usable', async () => {
    const file = '/home/gateway/.codex/auth.json';
    const { lines, gauge, checked, run } = report([
      login('work', { check: { state: 'missing' } }, { loginFile: file }),
      login('home', { check: { state: 'unusable', reason: 'no tokens' } }, { loginFile: '/elsewhere/auth.json' }),
    ]);
    await run();
    expect(lines.map(([level, fields]) => [level, fields])).toEqual([
      [
        'info',
        {
          event: 'login_state',
          provider: 'provider_a',
          account: 'work',
          state: 'missing',
          reason: undefined,
          cli_version: undefined,
          fix: expect.stringContaining('codex login'),
          path: file,
        },
      ],
      [
        'info',
        {
          event: 'login_state',
          provider: 'provider_a',
          account: 'home',
          state: 'unusable',
          reason: 'no tokens',
          cli_version: undefined,
          fix: expect.stringContaining('codex login'),
          path: undefined,
        },
      ],
      [
        'warn',
        { event: 'login_none_usable', provider: 'provider_a', accounts: ['work', 'home'], fix: expect.any(String) },
      ],
    ]);
    expect(lines[0][2]).toBe(
      `provider_a login "work" (Codex CLI): missing (at ${file}); to fix: ${String(lines[0][1].fix)}`,
    );
    expect(gauge).toEqual([
      ['provider_a', 'work', 'missing'],
      ['provider_a', 'home', 'unusable'],
    ]);
    expect(checked).toEqual([
      ['work', { state: 'missing' }],
      ['home', { state: 'unusable', reason: 'no tokens' }],
    ]);
  });

  it("keeps a check's own fix and the CLI's version on the line", async () => {
    const { lines, run } = report([
      login('work', { check: { state: 'unusable', reason: 'EACCES', fix: 'chmod it', cliVersion: '1.2.3' } }),
    ]);
    await run();
    expect(lines[0][1]).toMatchObject({ fix: 'chmod it', cli_version: '1.2.3' });
  });

  it('warns no family that has a usable login, even with another login of it missing', async () => {
    const { lines, run } = report([
      login('work', { check: { state: 'missing' } }),
      login('home', { check: { state: 'usable' } }),
    ]);
    await run();
    expect(events(lines)).toEqual([
      ['info', 'login_state', 'work', 'missing'],
      ['info', 'login_state', 'home', 'usable'],
    ]);
  });

  it('tells a later change once (a login gone bad at warn, one come back at info), and nothing while it stays', async () => {
    const answers: { check: LoginCheck } = { check: { state: 'usable' } };
    const { lines, gauge, run } = report([login('work', answers)]);
    await run(1);
    answers.check = { state: 'missing' };
    await run(2);
    answers.check = { state: 'usable' };
    await run(1);
    expect(events(lines)).toEqual([
      ['info', 'login_state', 'work', 'usable'],
      ['warn', 'login_state', 'work', 'missing'],
      ['warn', 'login_none_usable', undefined, undefined],
      ['info', 'login_state', 'work', 'usable'],
    ]);
    expect(gauge.map(([, , state]) => state)).toEqual(['usable', 'missing', 'usable']);
  });

  it('tells a new reason for the same state as a change', async () => {
    const answers: { check: LoginCheck } = { check: { state: 'unusable', reason: 'no tokens' } };
    const { lines, run } = report([login('work', answers)]);
    await run();
    answers.check = { state: 'unusable', reason: 'not JSON' };
    await run(1);
    expect(lines.filter(([, fields]) => fields.event === 'login_state').map(([, fields]) => fields.reason)).toEqual([
      'no tokens',
      'not JSON',
    ]);
  });

  it('warns once that a family has no usable login, not at every round it still has none', async () => {
    const answers: { check: LoginCheck } = { check: { state: 'missing' } };
    const { lines, run } = report([login('work', answers)]);
    await run(3);
    expect(lines.filter(([, fields]) => fields.event === 'login_none_usable')).toHaveLength(1);
  });

  it('reads a login file at every round, and asks a CLI again only each minute while its login is not usable', async () => {
    const file = login('file', { check: { state: 'usable' } });
    const cliUsable = login('cli-usable', { check: { state: 'usable' } }, { spawnsCli: true });
    const cliMissing = login('cli-missing', { check: { state: 'missing' } }, { spawnsCli: true });
    const { run } = report([file, cliUsable, cliMissing]);
    await run(5);
    expect([file.checks, cliUsable.checks, cliMissing.checks]).toEqual([6, 1, 1]);
    await run(1);
    expect([file.checks, cliUsable.checks, cliMissing.checks]).toEqual([7, 1, 2]);
  });

  it('tells a check that failed as unusable, and warns with its error code only', async () => {
    const failing = Object.assign(new Error('EACCES: permission denied, open /secret/path'), { code: 'EACCES' });
    const { lines, checked, run } = report([login('work', { check: failing })]);
    await run();
    expect(lines[0]).toEqual([
      'warn',
      { event: 'login_check_failed', provider: 'provider_a', account: 'work', errno: 'EACCES' },
      'login_check_failed',
    ]);
    expect(lines[1][1]).toMatchObject({ event: 'login_state', state: 'unusable', reason: 'check failed' });
    expect(checked).toEqual([['work', { state: 'unusable', reason: 'check failed' }]]);
  });

  it('tells what requests learned over a login that looks fine, keeping its CLI version, but not over a file that is itself the cause', async () => {
    const { lines, gauge, run } = report(
      [
        login('refused', { check: { state: 'usable', cliVersion: '2.0.1' } }),
        login('gone', { check: { state: 'missing' } }),
      ],
      { refused: 'login_refused', gone: 'login_refused' },
    );
    await run();
    expect(lines.slice(0, 2).map(([, fields]) => [fields.account, fields.state, fields.cli_version])).toEqual([
      ['refused', 'login_refused', '2.0.1'],
      ['gone', 'missing', undefined],
    ]);
    expect(gauge.map(([, account, state]) => [account, state])).toEqual([
      ['refused', 'login_refused'],
      ['gone', 'missing'],
    ]);
  });
});
