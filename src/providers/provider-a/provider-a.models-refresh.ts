import type { AccountPool } from '../../accounts/account-pool';
import type { EventLogger } from '../../core/event-logger';
import { GatewayError } from '../../core/gateway.error';
import type { LiveModelLists } from '../../models/live-model-lists';
import type { ModelCatalog } from '../../models/model-catalog';
import type { TierModel } from '../../models/model-tiers';
import { tierWordOf } from '../../models/model-tiers';
import type { UpstreamModelInfo } from '../../models/upstream-model-info';
import { readJsonCapped } from '../../common/egress/http-body';
import { errnoAlong } from '../../common/errno';
import { timeoutOrNever } from '../../common/async/timer-range';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { loginFix } from '../../core/login-state';
import type { ProviderACredentials } from '../../accounts/provider-a/provider-a.auth';
import { LoginTokenTurn } from '../shared/login-rejection';
import type { ProviderALogin } from './provider-a.accounts';
import type { CodexClient } from './provider-a.client';
import { classifyUpstreamFailure } from './provider-a.errors';
import { modelsListHeaders, modelsListUrl, parseModelsList } from './provider-a.models-list';

/** `{sol: "gpt-6.2-sol", …}`: which model each tier alias reaches. */
const tierMap = (tiers: readonly TierModel[]) =>
  Object.fromEntries(tiers.map(({ tier, upstreamModel }) => [tier, upstreamModel]));

/** The tier ids `/v1/models` lists now (`sol`, `sol-high`, `luna-fast-low`, …). */
const listedTierIds = (catalog: ModelCatalog) =>
  catalog.listed.filter((entry) => catalog.aliasOf(entry.id) !== undefined).map((entry) => entry.id);

/** A list is a few hundred KiB at most (the CLI's bundled one, prompts included, is ~200 KiB). */
const MAX_LIST_BYTES = 4 * 1024 * 1024;
/** Bound on one fetch, token refresh included; the list is never on a request's path. */
const FETCH_TIMEOUT_MS = 30_000;
/** After a failed fetch the next try comes sooner than the period (a login may appear any time). */
const RETRY_AFTER_FAILURE_MS = 60_000;

/** A list the gateway cannot read does not pass by itself; the bundled list is the way out. */
const UNREADABLE_LIST_FIX =
  'the backend changed the shape of its model list: update the gateway, or set PROVIDER_A_MODELS_REFRESH=0 to use the bundled list; the last good list stays in use meanwhile';

/**
 * setTimeout/clearTimeout, injectable so specs drive the schedule without waiting. A delay longer
 * than a timer holds arms nothing (timer-range.ts): the fetch at startup is then the only one.
 */
export interface RefreshTimers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const NODE_TIMERS: RefreshTimers = {
  set: (callback, ms) => timeoutOrNever(callback, ms)?.unref(),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};

export interface ModelsRefreshOptions {
  readonly responsesUrl: string;
  /** The client version the list is asked for (the backend shapes the list by it). */
  readonly client: CodexClient;
  /** PROVIDER_A_MODELS_REFRESH; 0 = never fetched (the bundled catalog only); longer than a timer holds = at startup only. */
  readonly periodMs: number;
  /** Read for the log lines: what the list added and which tiers it leads. */
  readonly catalog: ModelCatalog;
  /** Where the fetched list is published; the catalog reads it from there. */
  readonly live: LiveModelLists;
  readonly accounts: AccountPool<ProviderALogin>;
  readonly proxy: UpstreamProxy;
  readonly logger: EventLogger;
  readonly timers?: RefreshTimers;
}

/**
 * Keeps the catalog's provider_a part following the backend's live model list (docs/design/decisions.md §3):
 * a first fetch right after startup, in the background (readiness never waits for it), then one
 * per period. A failed fetch keeps the last good list and logs why; it never fails anything else.
 */
export class ProviderAModelsRefresh {
  private timer?: unknown;
  private inFlight?: AbortController;
  private stopped = false;
  private readonly timers: RefreshTimers;
  private readonly url: string;
  /** The tier ids the bundled catalog lists (no live list is held yet): what clients were configured with. */
  private readonly bundledTierIds: readonly string[];

  constructor(private readonly options: ModelsRefreshOptions) {
    this.timers = options.timers ?? NODE_TIMERS;
    this.url = modelsListUrl(options.responsesUrl, options.client);
    this.bundledTierIds = listedTierIds(options.catalog);
  }

  start(): void {
    if (this.options.periodMs > 0) this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.inFlight?.abort(new Error('provider_a model list refresh stopped'));
  }

  /** One fetch now; resolves true when a list was applied. Never rejects. */
  async refresh(): Promise<boolean> {
    const controller = new AbortController();
    this.inFlight = controller;
    const timeout = setTimeout(
      () => controller.abort(new Error('provider_a model list fetch timed out')),
      FETCH_TIMEOUT_MS,
    );
    timeout.unref();
    try {
      const outcome = await this.fetchWithSomeLogin(controller.signal);
      if ('reason' in outcome) {
        const record = { event: 'provider_a_models_refresh_failed', reason: outcome.reason, fix: this.fixFor(outcome) };
        // No login to ask with, as the login report tells by itself (its line, the fix): the detail only.
        if (outcome.quiet) this.options.logger.debug(record, 'provider_a_models_refresh_failed');
        else this.options.logger.warn(record, 'provider_a_models_refresh_failed');
        return false;
      }
      const before = new Set(this.options.catalog.entries.map((entry) => entry.id));
      const tierIdsBefore = new Set([...this.bundledTierIds, ...listedTierIds(this.options.catalog)]);
      this.options.live.publish('provider_a', outcome.infos);
      const added = this.options.catalog.entries.filter((entry) => !before.has(entry.id)).length;
      this.options.logger.info(
        {
          event: 'provider_a_models_refreshed',
          account: outcome.account,
          models: outcome.infos.length,
          hidden: outcome.infos.filter((info) => info.listed === false).length,
          ids_added: added,
          tiers: tierMap(this.options.catalog.tiers),
        },
        'provider_a_models_refreshed',
      );
      this.warnMissingTiers();
      this.warnGoneTierIds(tierIdsBefore);
      return true;
    } finally {
      clearTimeout(timeout);
      if (this.inFlight === controller) this.inFlight = undefined;
    }
  }

  /** What the operator does about a failed fetch: only a passing failure needs nothing. */
  private fixFor(failure: FetchFailure): string {
    switch (failure.kind) {
      case 'login':
        return failure.account !== undefined
          ? this.options.accounts.loginFixOf(failure.account)
          : (loginFix('provider_a', 'refresh_refused') ?? 'log in again');
      case 'not_found':
        return 'check PROVIDER_A_URL: the model list is read at its path with /models in place of /responses, and nothing answers there (404); PROVIDER_A_MODELS_REFRESH=0 uses the bundled list';
      case 'unreadable':
        return UNREADABLE_LIST_FIX;
      case 'transient': {
        const retryMs = Math.min(this.options.periodMs, RETRY_AFTER_FAILURE_MS);
        return `nothing, if it passes: the list is fetched again in ${Math.ceil(retryMs / 1000)} s`;
      }
    }
  }

  /**
   * A tier the live list lacks keeps its bundled model (docs/chat.md "Model ids"); said once per
   * refresh so an operator sees why `sol` did not move.
   */
  private warnMissingTiers(): void {
    const missing = this.options.catalog.tiers.filter(({ source }) => source === 'bundled_catalog');
    if (missing.length === 0) return;
    this.options.logger.warn(
      {
        event: 'provider_a_tier_not_in_live_list',
        tiers: tierMap(missing),
        fix: 'nothing while the bundled model still answers; a client that wants another model names its id (GET /v1/models)',
      },
      'provider_a_tier_not_in_live_list',
    );
  }

  /**
   * A tier whose model moved to one without some suffix (`luna` now a model with only low and
   * medium efforts and no priority tier) loses those ids: a client configured with `luna-high`
   * gets a 404 naming the tier's ids (docs/chat.md "Model ids"). Said once per fetch while ids the
   * bundled catalog lists, or the previous list listed, are gone, so the operator knows before the
   * clients complain.
   */
  private warnGoneTierIds(before: ReadonlySet<string>): void {
    const catalog = this.options.catalog;
    const gone = [...before].filter((id) => catalog.get(id) === undefined);
    if (gone.length === 0) return;
    const moved = catalog.tiers.filter(({ tier }) => gone.some((id) => tierWordOf(id) === tier));
    this.options.logger.warn(
      {
        event: 'provider_a_tier_ids_gone',
        ids: gone,
        tiers: tierMap(moved),
        fix: 'clients configured with these ids get 404 naming the ids their tier offers now: switch them to one of those (GET /v1/models); a GATEWAY_MODEL_CATALOG file with a row of that id keeps it meaning a model of your choice',
      },
      'provider_a_tier_ids_gone',
    );
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.timers.set(() => {
      void this.refresh().then((ok) =>
        this.schedule(ok ? this.options.periodMs : Math.min(this.options.periodMs, RETRY_AFTER_FAILURE_MS)),
      );
    }, ms);
  }

  /**
   * The list as the first login that can get a token sees it, or why none could (a reason, never
   * a token or body text). A 401 gets the one forced refresh and second ask a turn gets
   * (LoginTokenTurn): a token the backend stopped taking before its expiry is no login to redo.
   */
  private async fetchWithSomeLogin(
    signal: AbortSignal,
  ): Promise<{ account: string; infos: UpstreamModelInfo[] } | FetchFailure> {
    // A login that is cooling (usage limit) or dead is left alone; an expired token is refreshed as for a turn.
    const logins = this.options.accounts
      .liveAccounts()
      .filter(({ alias }) => this.options.accounts.stateOf(alias).kind === 'ready');
    let failure: FetchFailure = { reason: 'no ready login', kind: 'login', quiet: true };
    for (const { alias, handle } of logins) {
      const login = new LoginTokenTurn<ProviderACredentials>('provider_a', this.options.logger);
      for (;;) {
        let credentials;
        try {
          credentials = await login.token(handle.auth, signal);
        } catch (error) {
          // A login file that cannot serve is the login report's to find and tell (it rules the login
          // out, with its fix); what a failed refresh says about the login counts, as for a turn (a
          // revoked login is dead).
          const fileCause = error instanceof GatewayError && error.loginFileCause;
          if (!fileCause) this.options.accounts.applyFailure(alias, error);
          failure = { reason: `login ${alias} has no usable token`, kind: 'login', account: alias, quiet: fileCause };
          break;
        }
        const outcome = await this.fetchList(credentials, alias, signal);
        // The refusal classified as a turn's is: a 401 asks for the forced refresh, once.
        if (
          'status' in outcome &&
          outcome.status === 401 &&
          login.reopenAfter(classifyUpstreamFailure({ status: 401 }))
        )
          continue;
        return outcome;
      }
    }
    return failure;
  }

  /** One GET of the list with `credentials`: the list, or why not (a refusal with its status). */
  private async fetchList(
    credentials: ProviderACredentials,
    alias: string,
    signal: AbortSignal,
  ): Promise<{ account: string; infos: UpstreamModelInfo[] } | FetchFailure> {
    try {
      const response = await this.options.proxy.fetch(this.url, {
        method: 'GET',
        headers: modelsListHeaders(credentials, this.options.client),
        signal,
      });
      if (!response.ok) {
        void response.body?.cancel().catch(() => undefined);
        const status = response.status;
        return { reason: `upstream status ${status}`, kind: statusKind(status), account: alias, status };
      }
      const infos = parseModelsList(await readJsonCapped(response, MAX_LIST_BYTES));
      if (infos === 'not_a_model_list') return { reason: 'the answer is not a model list', kind: 'unreadable' };
      if (infos === 'no_readable_entry')
        return { reason: 'no entry of the model list has a readable slug', kind: 'unreadable' };
      return { account: alias, infos };
    } catch (error) {
      // fetch() wraps the socket error; only its errno code is logged (never a message).
      const code = errnoAlong(error);
      return {
        reason: signal.aborted ? 'timed out or stopped' : `connection failed (${code ?? 'network'})`,
        kind: 'transient',
      };
    }
  }
}

/**
 * Why a fetch failed (`reason`, for the log) and what kind of failure it is, which decides the
 * fix: only a transient one passes by itself; the others come back at every retry until fixed.
 */
interface FetchFailure {
  readonly reason: string;
  readonly kind: 'login' | 'not_found' | 'unreadable' | 'transient';
  /** The login it was tried with, when one was: a refusal's fix is that login's. */
  readonly account?: string;
  /** No login could be asked for what the login report tells by itself: logged at debug. */
  readonly quiet?: boolean;
  /** The HTTP status of the backend's refusal, when it answered one. */
  readonly status?: number;
}

/** 401/403: the backend refuses the login; 404: nothing answers at that URL; else it may pass. */
function statusKind(status: number): FetchFailure['kind'] {
  if (status === 401 || status === 403) return 'login';
  if (status === 404) return 'not_found';
  return 'transient';
}
