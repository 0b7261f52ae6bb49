import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import type { ProviderId } from '../core/provider-id';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { AccountClock, AccountPool, PoolAccountSpec } from './account-pool';
import { RefreshLogin, startBackgroundRefresh } from './background-refresh';
import type { PlanUsageRead } from '../core/plan-usage';
import { readLoginUsage, readPoolUsage } from './plan-usage-refresh';
import { intervalOrNever } from '../common/async/timer-range';

/** Injection token of the pools' clock (a plain `{ now() }`; e2e specs move it forward). */
export const ACCOUNT_CLOCK = Symbol('ACCOUNT_CLOCK');

/** How often every pool heals due states and forgets silent chats without waiting for a request. */
const SWEEP_INTERVAL_MS = 1000;

/**
 * Builds the account pool of each family with the shared settings, clock, metrics and logger,
 * and runs their timers (sweep, background refresh, usage-endpoint reads) from application
 * bootstrap until shutdown: building a pool is memory only, so an adapter asks for its pool while
 * Nest constructs it. The adapters take it from Nest, in specs too (test/support/adapter-module.ts).
 */
@Injectable()
export class AccountPools implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly stops: Array<() => void> = [];
  /** Every pool built, with its background refresh: their timers start at application bootstrap. */
  private readonly built: Array<{ readonly pool: AccountPool<unknown>; readonly refresh?: RefreshLogin<unknown> }> = [];
  /** The usage-endpoint reader of each family that has one, run from `onApplicationBootstrap`. */
  private readonly usageReaders: Array<(first: boolean) => Promise<void>> = [];
  private usageRound?: Promise<void>;
  /** The pool of each family, for the login report (docs/accounts.md). */
  private readonly byFamily = new Map<ProviderId, AccountPool<unknown>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: GatewayMetrics,
    private readonly logger: PinoLogger,
    @Inject(ACCOUNT_CLOCK) private readonly clock: AccountClock,
  ) {}

  /**
   * @param readUsage the family's reader of its vendor's usage endpoint (docs/accounts.md "What each
   *   login has left"): read at startup and every ACCOUNT_USAGE_REFRESH_INTERVAL, never per request.
   * @param quotaBucketOf the family's model ids that share one quota (AccountPoolOptions).
   */
  create<T>(
    family: ProviderId,
    specs: readonly PoolAccountSpec<T>[],
    refresh?: RefreshLogin<T>,
    readUsage?: PlanUsageRead<T>,
    quotaBucketOf?: (model: string) => string,
  ): AccountPool<T> {
    const { accounts } = this.config;
    const pool = new AccountPool(
      family,
      specs,
      {
        maxInFlight: accounts.maxInFlight,
        cooldownDefaultMs: accounts.cooldownDefaultMs,
        pinnedChatsMax: accounts.pinnedChatsMax,
        paidUsage: accounts.paidUsage,
        quotaBucketOf,
      },
      { clock: this.clock, logger: this.logger, metrics: this.metrics },
    );
    this.byFamily.set(family, pool);
    this.built.push({ pool, refresh } as (typeof this.built)[number]);
    if (readUsage) this.usageReaders.push((first) => readPoolUsage(pool, readUsage, this.logger, undefined, first));
    // A new login written over a login's file is read at once (ACCOUNT_USAGE_REFRESH_INTERVAL=0: never).
    if (readUsage && accounts.usageRefreshIntervalMs > 0)
      pool.readsUsageWith((alias, handle) => readLoginUsage(pool, readUsage, this.logger, alias, handle));
    return pool;
  }

  /**
   * Starts each pool's sweep and background refresh (the pools are built while Nest constructs the
   * adapters), then the first read of every login's usage endpoint, beside startup (never awaited
   * by the boot; under `plan_only` a turn on a login waits for that login's first read, see
   * readPoolUsage), and one round every ACCOUNT_USAGE_REFRESH_INTERVAL (0 = no reads; longer than
   * a timer holds = the startup read only, timer-range.ts). A round still running when the next is
   * due is not doubled.
   */
  onApplicationBootstrap(): void {
    this.built.forEach(({ pool, refresh }) => this.startTimers(pool, refresh));
    const intervalMs = this.config.accounts.usageRefreshIntervalMs;
    if (this.usageReaders.length === 0 || intervalMs <= 0) return;
    this.readUsageRound(true);
    const usageTimer = intervalOrNever(() => this.readUsageRound(false), intervalMs)?.unref();
    this.stops.push(() => clearInterval(usageTimer));
  }

  /** Resolves once the current usage round (the startup one at first) is over (specs and `--live` wait on it). */
  async usageSettled(): Promise<void> {
    await this.usageRound;
  }

  private readUsageRound(first: boolean): void {
    if (this.usageRound) return;
    this.usageRound = Promise.all(this.usageReaders.map((read) => read(first))).then(
      () => (this.usageRound = undefined),
      () => (this.usageRound = undefined),
    );
  }

  private startTimers(pool: AccountPool<unknown>, refresh: RefreshLogin<unknown> | undefined): void {
    const { accounts } = this.config;
    // The first reading of the login files, before the first request.
    pool.sweep();
    const sweep = setInterval(() => pool.sweep(), SWEEP_INTERVAL_MS);
    sweep.unref();
    this.stops.push(() => clearInterval(sweep));
    if (refresh) {
      this.stops.push(
        startBackgroundRefresh(
          pool,
          refresh,
          { intervalMs: accounts.refreshIntervalMs, aheadMs: accounts.refreshAheadMs },
          this.logger,
        ),
      );
    }
  }

  /** The family's pool once its adapter built it. */
  poolOf(family: ProviderId): AccountPool<unknown> | undefined {
    return this.byFamily.get(family);
  }

  onModuleDestroy(): void {
    this.stops.splice(0).forEach((stop) => stop());
  }
}
