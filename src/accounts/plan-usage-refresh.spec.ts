import type { EventLogger } from '../core/event-logger';
import type { PlanReport } from '../core/plan-usage';
import { GatewayError } from '../core/gateway.error';
import type { AccountPool } from './account-pool';
import { LoginNotReadable, readPoolUsage, usageReadFailure } from './plan-usage-refresh';
import { PROVIDER_C_FIX } from '../providers/provider-c/provider-c.fix';

/** A pool of one login as far as the usage round sees it. */
function onePool(): AccountPool<string> {
  return {
    family: 'provider_c',
    liveAccounts: () => [{ alias: 'default', handle: 'login' }],
    firstUsageReadStarted: () => undefined,
    loginFileOf: () => undefined,
    loginCommandOf: () => undefined,
    ruledOutBy: () => undefined,
    loginGeneration: () => 0,
    reportPlan: () => undefined,
    planView: () => ({ state: 'ready', windows: [], planSpent: false }),
  } as unknown as AccountPool<string>;
}

function recorder(): EventLogger & { lines: Array<[string, Record<string, unknown>]> } {
  const lines: Array<[string, Record<string, unknown>]> = [];
  const at = (level: string) => (record: object) => void lines.push([level, record as Record<string, unknown>]);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Answers the reads as they start until `count` started (a round reading one login after another). */
async function eventuallyStarted(started: string[], count: number, answers: Array<() => void>): Promise<void> {
  while (started.length < count) {
    await new Promise((resolve) => setImmediate(resolve));
    answers.splice(0).forEach((answer) => answer());
  }
}

describe('readPoolUsage', () => {
  it('warns once about a login it cannot read, then only at debug, until a read gets further', async () => {
    const pool = onePool();
    const logger = recorder();
    let failure: Error = new LoginNotReadable();
    const read = () => Promise.reject(failure);
    await readPoolUsage(pool, read, logger);
    await readPoolUsage(pool, read, logger);
    failure = new GatewayError('auth', { upstreamStatus: 401 });
    await readPoolUsage(pool, read, logger);
    failure = new LoginNotReadable();
    await readPoolUsage(pool, read, logger);
    expect(logger.lines.map(([level, record]) => [level, record.reason])).toEqual([
      ['warn', 'not readable'],
      ['debug', 'not readable'],
      ['warn', 'status 401'],
      ['warn', 'not readable'],
    ]);
    expect(logger.lines.every(([, record]) => record.event === 'plan_usage_read_failed')).toBe(true);
    // A login that cannot be read or was refused needs a new login; each line says so.
    expect(logger.lines.map(([, record]) => record.fix)).toEqual(Array(4).fill(PROVIDER_C_FIX.login));
  });

  it("names the CLI's install for a login whose CLI is missing, as its login_state line does, which is the one to warn", async () => {
    const logger = recorder();
    await readPoolUsage(onePool(), () => Promise.reject(new LoginNotReadable('cli_missing')), logger);
    expect(logger.lines).toEqual([
      ['debug', expect.objectContaining({ reason: 'cli missing', fix: PROVIDER_C_FIX.install })],
    ]);
  });

  it('leaves a login file that cannot serve, or a login the check ruled out, to the login report: at debug', async () => {
    const logger = recorder();
    const missingFile = new GatewayError('auth', { detail: 'provider_a login file missing', loginFileCause: true });
    await readPoolUsage(onePool(), () => Promise.reject(missingFile), logger);
    const ruledOut = { ...onePool(), ruledOutBy: () => ({ state: 'missing' }) } as unknown as AccountPool<string>;
    await readPoolUsage(ruledOut, () => Promise.reject(new LoginNotReadable()), logger);
    expect(logger.lines.map(([level, record]) => [level, record.reason])).toEqual([
      ['debug', 'auth'],
      ['debug', 'not readable'],
    ]);
  });

  it("starts every login's read at once in the first round and tells the pool of each; later rounds read one after another", async () => {
    const started: string[] = [];
    const told: string[] = [];
    const answers: Array<() => void> = [];
    const pool = {
      ...onePool(),
      liveAccounts: () => [
        { alias: 'one', handle: 'login-one' },
        { alias: 'two', handle: 'login-two' },
      ],
      firstUsageReadStarted: (alias: string) => void told.push(alias),
    } as unknown as AccountPool<string>;
    const read = (handle: string) => {
      started.push(handle);
      return new Promise<undefined>((resolve) => answers.push(() => resolve(undefined)));
    };
    const first = readPoolUsage(pool, read, recorder(), 60_000, true);
    expect(started).toEqual(['login-one', 'login-two']);
    expect(told).toEqual(['one', 'two']);
    answers.splice(0).forEach((answer) => answer());
    await first;
    started.length = 0;
    const later = readPoolUsage(pool, read, recorder(), 60_000);
    await Promise.resolve();
    expect(started).toEqual(['login-one']);
    answers.splice(0).forEach((answer) => answer());
    await eventuallyStarted(started, 2, answers);
    await later;
    expect(told).toEqual(['one', 'two']);
  });

  it('drops a read that was running when the login file came to hold another login: it is the old login', async () => {
    let generation = 0;
    const reported: unknown[] = [];
    const pool = {
      ...onePool(),
      loginGeneration: () => generation,
      reportPlan: (_alias: string, report: unknown) => void reported.push(report),
    } as unknown as AccountPool<string>;
    const logger = recorder();
    const spent: PlanReport = { source: 'usage_endpoint', windows: [], planSpent: true };
    await readPoolUsage(
      pool,
      async () => {
        generation++;
        return spent;
      },
      logger,
    );
    await readPoolUsage(
      pool,
      async () => {
        generation++;
        throw new GatewayError('upstream', { upstreamStatus: 503 });
      },
      logger,
    );
    expect(reported).toEqual([]);
    expect(logger.lines).toEqual([]);
    await readPoolUsage(pool, async () => spent, logger);
    expect(reported).toEqual([spent]);
  });

  it('ends a read the family does not end at its timeout: logged, and the round goes on', async () => {
    const logger = recorder();
    await readPoolUsage(onePool(), () => new Promise(() => undefined), logger, 5, true);
    expect(logger.lines).toEqual([['warn', expect.objectContaining({ reason: 'timeout' })]]);
  });

  it.each([401, 403])(
    'asks for a new login when the usage endpoint refuses the login (HTTP %i), not for a wait',
    async (status) => {
      const logger = recorder();
      const refused = new GatewayError('auth', { upstreamStatus: status });
      await readPoolUsage(onePool(), () => Promise.reject(refused), logger);
      expect(logger.lines).toEqual([
        ['warn', expect.objectContaining({ reason: `status ${status}`, fix: PROVIDER_C_FIX.login })],
      ]);
    },
  );

  it('says a failure that passes by itself needs nothing but the next read', async () => {
    const pool = onePool();
    const logger = recorder();
    await readPoolUsage(pool, () => Promise.reject(new GatewayError('upstream', { upstreamStatus: 503 })), logger);
    expect(logger.lines.map(([, record]) => record.fix)).toEqual([
      'nothing, if it passes: the next read comes after ACCOUNT_USAGE_REFRESH_INTERVAL',
    ]);
  });
});

describe(usageReadFailure.name, () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });

  it('names the status, else the errno of a connection that never reached the endpoint, else the error code', () => {
    expect(usageReadFailure(new GatewayError('upstream', { upstreamStatus: 503 }))).toBe('status 503');
    // The usage endpoint unreachable: the family's connection cause holds the errno.
    expect(usageReadFailure(new GatewayError('upstream', { upstream: { errno: 'EAI_AGAIN', host: 'x:443' } }))).toBe(
      'EAI_AGAIN',
    );
    // The token endpoint unreachable on the way: fetch's TypeError wraps the socket's error.
    const fetchFailed = new TypeError('fetch failed', { cause: refused });
    expect(usageReadFailure(new GatewayError('upstream', { cause: fetchFailed }))).toBe('ECONNREFUSED');
    expect(usageReadFailure(new GatewayError('upstream'))).toBe('upstream');
    // A login file's errno behind another code keeps that code, whose fix is the login's.
    expect(usageReadFailure(new GatewayError('auth', { cause: refused }))).toBe('auth');
    expect(usageReadFailure(refused)).toBe('ECONNREFUSED');
  });
});
