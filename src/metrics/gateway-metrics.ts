import { Inject, Injectable } from '@nestjs/common';
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { upstreamErrorCodes } from '../core/error-codes';
import type { PaidUsage, PlanWindow } from '../core/plan-usage';
import { LOGIN_STATES, LoginStateKind } from '../core/login-state';
import { families, familyOf, isFamilyId } from '../core/family-registry';
import type {
  IdempotencyResult,
  MetricDeclaration,
  QueueLabel,
  QueueResult,
  UpstreamRoute,
  UpstreamSessionTurn,
  ValidationResult,
} from './metric-declarations';
import type { METRICS } from './metric-declarations';

/** The prom-client instrument of a declaration, typed by its label names. */
type InstrumentOf<D> =
  D extends MetricDeclaration<'counter', infer L>
    ? Counter<L>
    : D extends MetricDeclaration<'gauge', infer L>
      ? Gauge<L>
      : D extends MetricDeclaration<'histogram', infer L>
        ? Histogram<L>
        : never;

/** Every metric `GatewayMetrics` records, by its key in `METRICS` (the collected gauges are not among them). */
export type MetricInstruments = {
  readonly [
    K in keyof typeof METRICS as (typeof METRICS)[K] extends { readonly collected: true } ? never : K
  ]: InstrumentOf<(typeof METRICS)[K]>;
};

/** Nest token of the `MetricInstruments` object, provided by `MetricsModule`. */
export const METRIC_INSTRUMENTS = Symbol('METRIC_INSTRUMENTS');

const QUEUE_RESULTS = new Set<string>(['acquired', 'bypassed', 'full', 'timeout', 'canceled', 'draining']);
const VALIDATION_RESULTS = new Set<string>(['valid', 'invalid', 'unparsable']);
const IDEMPOTENCY_RESULTS = new Set<string>(['local_hit', 'miss', 'conflict', 'capacity']);
const TOKEN_KINDS = new Set(['prompt', 'completion', 'cached', 'reasoning']);
const ACCOUNT_STATES = ['ready', 'cooling', 'login_dead', 'plan_spent', 'usage_paused'] as const;
type AccountStateLabel = (typeof ACCOUNT_STATES)[number];
/** A window name is the upstream's (Codex primary/secondary, Claude five_hour, a Gemini model id): a short identifier, else `other`. */
const WINDOW_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,95}$/;
const windowLabel = (name: string) => (WINDOW_NAME.test(name) ? name : 'other');

const providerLabel = (provider: string | undefined) => (isFamilyId(provider) ? provider : 'none');
const closed = (value: string, allowed: ReadonlySet<string>, fallback: string) =>
  allowed.has(value) ? value : fallback;
// The part of a family's declaration the queue metrics read.
declare module '../core/family' {
  interface Family {
    /**
     * Queues of the family's own beside its family queue (a CLI family's process slots): each name
     * is a `provider` label value of the queue metrics, as the family's id is.
     */
    readonly queues?: readonly string[];
  }
}

/** A family's queue, a queue a family declares of its own (its `queues`), or `structured`. */
const queueLabel = (queue: string) =>
  isFamilyId(queue) || families().some((family) => family.queues?.includes(queue)) ? queue : 'structured';

/** The queue results that turn a request away (429): what the queue-saturation alert reads. */
const REFUSING_QUEUE_RESULTS = ['full', 'timeout'] as const satisfies readonly QueueResult[];

/** The settings that decide which closed label sets exist at all: the enabled families and structured. */
export type MetricsScope = Pick<AppConfig, 'enabledProviders'> & {
  readonly structured: Pick<AppConfig['structured'], 'enabled'>;
};

/**
 * Named instruments over the shared registry. Every label is mapped into a closed set here,
 * so caller values can never become label values (docs/design/behaviours.md §8).
 * `model` labels must already be a catalog id or `other` (see `modelLabel`).
 */
@Injectable()
export class GatewayMetrics {
  /** The window labels each login's quota gauges carry (`accountPlan`), by family and alias. */
  private readonly windowsShown = new Map<string, readonly string[]>();

  constructor(
    @Inject(METRIC_INSTRUMENTS) private readonly metric: MetricInstruments,
    @Inject(APP_CONFIG) scope: MetricsScope,
  ) {
    // Closed label sets start at zero so dashboards see every series from boot, and so an alert on
    // `increase()` sees the first failure after a start: a series born at 1 has no earlier sample
    // to increase from.
    for (const provider of scope.enabledProviders) {
      this.upstreamErrorsListed(provider, 'chat');
      for (const queue of [provider, ...(familyOf(provider).queues ?? [])])
        for (const result of REFUSING_QUEUE_RESULTS) this.metric.queueWait.zero({ provider: queue, result });
    }
    if (scope.structured.enabled)
      for (const result of REFUSING_QUEUE_RESULTS) this.metric.queueWait.zero({ provider: 'structured', result });
    for (const result of ['valid', 'invalid', 'unparsable', 'unknown'])
      this.metric.structuredValidation.inc({ result }, 0);
    for (const result of IDEMPOTENCY_RESULTS) this.metric.structuredIdempotency.inc({ result }, 0);
    this.metric.structuredInflight.set(0);
    this.metric.upstreamSessionsKept.set(0);
    for (const result of ['reused', 'incremental', 'fallback']) this.metric.upstreamSessionTurns.inc({ result }, 0);
  }

  chatRequest(fields: {
    provider?: string;
    model: string;
    status: number;
    stream: boolean;
    durationSeconds: number;
  }): void {
    const provider = providerLabel(fields.provider);
    this.metric.requests.inc({ provider, model: fields.model, status: String(fields.status) });
    this.metric.requestDuration.observe({ provider, stream: String(fields.stream) }, fields.durationSeconds);
  }

  firstToken(provider: string, seconds: number): void {
    this.metric.timeToFirstToken.observe({ provider: providerLabel(provider) }, seconds);
  }

  tokensUsed(provider: string, kind: string, count: number): void {
    if (count > 0 && TOKEN_KINDS.has(kind)) this.metric.tokens.inc({ provider: providerLabel(provider), kind }, count);
  }

  queueWaited(queue: QueueLabel, result: QueueResult, seconds: number): void {
    this.metric.queueWait.observe(
      { provider: queueLabel(queue), result: closed(result, QUEUE_RESULTS, 'canceled') },
      seconds,
    );
  }

  queueDepthChanged(queue: QueueLabel, depth: number): void {
    this.metric.queueDepth.set({ provider: queueLabel(queue) }, depth);
  }

  upstreamError(provider: string, code: string, route: UpstreamRoute): void {
    if (code !== 'canceled') this.metric.upstreamErrors.inc({ provider: providerLabel(provider), code, route });
  }

  /**
   * The families structured inference calls (those of its allowlist), told once at start-up: their
   * upstream error codes on the structured route start at 0, as the chat route's do.
   */
  structuredProviders(providers: readonly string[]): void {
    for (const provider of providers) if (isFamilyId(provider)) this.upstreamErrorsListed(provider, 'structured');
  }

  private upstreamErrorsListed(provider: string, route: UpstreamRoute): void {
    for (const code of upstreamErrorCodes(provider)) this.metric.upstreamErrors.inc({ provider, code, route }, 0);
  }

  /** A retry before any output; `code` is the internal code of the failure retried. */
  upstreamRetry(provider: string, code: string): void {
    this.metric.upstreamRetries.inc({ provider: providerLabel(provider), code });
  }

  fastTierRequest(model: string): void {
    this.metric.fastTierRequests.inc({ model });
  }

  structuredCompleted(model: string, result: string, seconds: number): void {
    this.metric.structuredLatency.observe({ model, result }, seconds);
  }

  structuredTokensUsed(model: string, kind: 'prompt' | 'completion', count: number): void {
    if (count > 0) this.metric.structuredTokens.inc({ model, kind }, count);
  }

  structuredFailure(code: string): void {
    this.metric.structuredFailures.inc({ code });
  }

  structuredValidated(result: ValidationResult): void {
    this.metric.structuredValidation.inc({ result: closed(result, VALIDATION_RESULTS, 'unknown') });
  }

  structuredIdempotencyResult(result: IdempotencyResult): void {
    this.metric.structuredIdempotency.inc({ result: closed(result, IDEMPOTENCY_RESULTS, 'miss') });
  }

  structuredInflightChanged(delta: 1 | -1): void {
    this.metric.structuredInflight.inc(delta);
  }

  upstreamSessionsKeptChanged(count: number): void {
    this.metric.upstreamSessionsKept.set(count);
  }

  upstreamSessionTurn(result: UpstreamSessionTurn): void {
    this.metric.upstreamSessionTurns.inc({ result });
  }

  // ── Account pools: `account` is an operator-given alias (a closed set from the settings) ────

  accountRegistered(provider: string, account: string): void {
    const labels = { provider: providerLabel(provider), account };
    for (const kind of ['pinned', 'new', 'moved']) this.metric.accountSelections.inc({ ...labels, kind }, 0);
    for (const reason of ['usage_limit', 'rate_limited']) this.metric.accountCooldowns.inc({ ...labels, reason }, 0);
    this.metric.accountMovedAway.inc(labels, 0);
    this.metric.paidTurns.inc(labels, 0);
  }

  accountState(provider: string, account: string, state: AccountStateLabel, coolingUntilMs: number | undefined): void {
    for (const candidate of ACCOUNT_STATES)
      this.metric.accountState.set(
        { provider: providerLabel(provider), account, state: candidate },
        candidate === state ? 1 : 0,
      );
    this.metric.accountCoolingUntil.set(
      { provider: providerLabel(provider), account },
      coolingUntilMs === undefined ? 0 : Math.ceil(coolingUntilMs / 1000),
    );
  }

  /** The login report's state of one login (docs/accounts.md "Login report"): 1 for `state`, 0 for every other. */
  loginState(provider: string, account: string, state: LoginStateKind): void {
    for (const candidate of LOGIN_STATES)
      this.metric.loginState.set(
        { provider: providerLabel(provider), account, state: candidate },
        candidate === state ? 1 : 0,
      );
  }

  accountInFlight(provider: string, account: string, count: number): void {
    this.metric.accountInFlight.set({ provider: providerLabel(provider), account }, count);
  }

  accountPinnedChats(provider: string, account: string, count: number): void {
    this.metric.accountPinnedChats.set({ provider: providerLabel(provider), account }, count);
  }

  accountSelected(provider: string, account: string, kind: 'pinned' | 'new' | 'moved'): void {
    this.metric.accountSelections.inc({ provider: providerLabel(provider), account, kind });
  }

  accountCooldown(provider: string, account: string, reason: 'usage_limit' | 'rate_limited'): void {
    this.metric.accountCooldowns.inc({ provider: providerLabel(provider), account, reason });
  }

  accountMovedAway(provider: string, account: string): void {
    this.metric.accountMovedAway.inc({ provider: providerLabel(provider), account });
  }

  /** What a login's plan has left and its paid usage (docs/accounts.md "What each login has left, and paid usage"). */
  accountPlan(
    provider: string,
    account: string,
    plan: {
      readonly windows: readonly PlanWindow[];
      readonly paid?: PaidUsage;
      readonly planSpent: boolean;
      readonly needsExtraUsageSince?: number;
    },
  ): void {
    const labels = { provider: providerLabel(provider), account };
    // A window the plan no longer has (its login was replaced, and the new one has not reported
    // it) leaves the gauges instead of showing the previous login's figures.
    const key = `${labels.provider}:${account}`;
    const shown = plan.windows.map((window) => windowLabel(window.name));
    for (const window of this.windowsShown.get(key) ?? [])
      if (!shown.includes(window))
        for (const gauge of [
          this.metric.accountQuotaUsed,
          this.metric.accountQuotaReset,
          this.metric.accountQuotaWindow,
        ])
          gauge.remove({ ...labels, window });
    this.windowsShown.set(key, shown);
    // A figure the latest report lacks leaves its gauge, as /v1/accounts shows it as null: the
    // gauge never keeps an earlier report's value beside the new ones.
    for (const window of plan.windows) {
      const windowLabels = { ...labels, window: windowLabel(window.name) };
      setOrRemove(this.metric.accountQuotaUsed, windowLabels, window.usedRatio);
      setOrRemove(
        this.metric.accountQuotaReset,
        windowLabels,
        window.resetsAt === undefined ? undefined : Math.ceil(window.resetsAt / 1000),
      );
      setOrRemove(this.metric.accountQuotaWindow, windowLabels, window.windowSeconds);
    }
    this.metric.accountPaidAvailable.set(labels, plan.paid?.available === true ? 1 : 0);
    this.metric.accountPaidInUse.set(labels, plan.paid?.inUse === true ? 1 : 0);
    this.metric.accountPlanSpent.set(labels, plan.planSpent ? 1 : 0);
    this.metric.accountNeedsExtraUsage.set(labels, plan.needsExtraUsageSince !== undefined ? 1 : 0);
  }

  accountPaidTurn(provider: string, account: string): void {
    this.metric.paidTurns.inc({ provider: providerLabel(provider), account });
  }
}

/** Sets a gauge's series to `value`, or removes the series when there is no value to show. */
function setOrRemove<T extends string>(
  gauge: Gauge<T>,
  labels: Partial<Record<T, string>>,
  value: number | undefined,
): void {
  if (value === undefined) gauge.remove(labels);
  else gauge.set(labels, value);
}

/** A model label from a closed set: the catalog id when the id is in the catalog, else `other`. */
export function modelLabel(catalogId: string | null | undefined): string {
  return catalogId ?? 'other';
}
