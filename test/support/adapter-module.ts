import type { Provider, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { PinoLogger } from 'nestjs-pino';
import { ACCOUNT_CLOCK, AccountPools } from '../../src/accounts/account-pools';
import { ownSystemClock } from '../../src/accounts/account-pool';
import type { AppConfig } from '../../src/config/app-config';
import { APP_CONFIG } from '../../src/config/config.tokens';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics';
import { LiveModelLists } from '../../src/models/live-model-lists';
import { ModelCatalog } from '../../src/models/model-catalog';
import { ownRetryClock, RETRY_CLOCK } from '../../src/providers/shared/retry-policy';

/** An adapter built by Nest's testing module with the application's wiring of its dependencies. */
export interface AdapterModule<T> {
  readonly adapter: T;
  /** Runs every `onModuleDestroy` (the adapter's, the pools'): nothing it started outlives the test. */
  close(): Promise<void>;
}

/** What a spec gives in place of the metrics registry and the logger (recorders, or silence). */
export interface AdapterDoubles {
  readonly metrics?: Partial<GatewayMetrics>;
  readonly logger?: Partial<PinoLogger>;
  /** More providers, or replacements of the defaults. */
  readonly providers?: Provider[];
  /**
   * Read the vendors' usage endpoints from bootstrap as the application does (off by default, as
   * for every test gateway in gateway-environment.ts: a spec's upstream fake sees only its turns).
   */
  readonly readUsage?: boolean;
}

const quiet = (): Partial<PinoLogger> => ({
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  fatal: () => undefined,
});

/** Metrics that record nothing: every method of GatewayMetrics, as a no-op. */
function silentMetrics(): Partial<GatewayMetrics> {
  const methods = Object.getOwnPropertyNames(GatewayMetrics.prototype).filter((name) => name !== 'constructor');
  return Object.fromEntries(methods.map((name) => [name, () => undefined]));
}

/** The application's wiring of what adapters and the account pools need, with the spec's doubles. */
function gatewayProviders(config: AppConfig, doubles: AdapterDoubles): Provider[] {
  return [
    AccountPools,
    {
      provide: APP_CONFIG,
      useValue: doubles.readUsage ? config : { ...config, accounts: { ...config.accounts, usageRefreshIntervalMs: 0 } },
    },
    { provide: ACCOUNT_CLOCK, useFactory: ownSystemClock },
    { provide: RETRY_CLOCK, useFactory: ownRetryClock },
    { provide: GatewayMetrics, useValue: { ...silentMetrics(), ...doubles.metrics } },
    { provide: PinoLogger, useValue: { ...quiet(), ...doubles.logger } },
    LiveModelLists,
    {
      provide: ModelCatalog,
      useFactory: (app: AppConfig, live: LiveModelLists) =>
        ModelCatalog.load(app.modelCatalogPath, app.enabledProviders, live),
      inject: [APP_CONFIG, LiveModelLists],
    },
    ...(doubles.providers ?? []),
  ];
}

/**
 * Compiles a testing module of `providers`, runs its lifecycle hooks as the application's start
 * does (file reads and timers begin there, never in a constructor), and keeps it for
 * `closeAdapterModules`.
 */
async function compiled<T>(token: Type<T>, providers: Provider[]): Promise<AdapterModule<T>> {
  const module = await Test.createTestingModule({ providers }).compile();
  await module.init();
  let closing: Promise<void> | undefined;
  const opened = { adapter: module.get(token), close: () => (closing ??= module.close()) };
  open.push(opened);
  return opened;
}

/**
 * Builds `adapter` the way the application does (its constructor's dependencies injected, the
 * account pools included), with `config` and the spec's doubles for metrics and the logger.
 */
export function adapterModule<T>(
  adapter: Type<T>,
  config: AppConfig,
  doubles: AdapterDoubles = {},
): Promise<AdapterModule<T>> {
  return compiled(adapter, [adapter, ...gatewayProviders(config, doubles)]);
}

/** The account pools alone, built by Nest as the application builds them; closed by `closeAdapterModules`. */
export async function accountPools(config: AppConfig, doubles: AdapterDoubles = {}): Promise<AccountPools> {
  return (await compiled(AccountPools, gatewayProviders(config, doubles))).adapter;
}

/** Every module built and not yet closed. */
const open: AdapterModule<unknown>[] = [];

/** Closes every module built here so far (adapters, pools); a spec's `afterEach` calls it, whatever the test asserted. */
export async function closeAdapterModules(): Promise<void> {
  for (const module of open.splice(0)) await module.close();
}
