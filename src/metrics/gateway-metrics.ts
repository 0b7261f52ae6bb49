import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { PaidUsage, PlanWindow } from '../core/plan-usage';
import { LOGIN_STATES, LoginStateKind } from '../core/login-state';
import { PROVIDER_IDS } from '../core/provider-id';
import {
  IdempotencyResult,
  METRIC,
  QueueLabel,
  QueueResult,
  UpstreamSessionTurn,
  ValidationResult,
} from './metric-names';

const PROVIDERS = new Set<string>(PROVIDER_IDS);
const QUEUE_LABELS = new Set<string>([...PROVIDER_IDS, 'provider_c_processes', 'structured']);
const QUEUE_RESULTS = new Set<string>(['acquired', 'bypassed', 'full', 'timeout', 'canceled']);
const VALIDATION_RESULTS = new Set<string>(['valid', 'invalid', 'unparsable']);
const IDEMPOTENCY_RESULTS = new Set<string>(['local_hit', 'miss', 'conflict', 'capacity']);
const TOKEN_KINDS = new Set(['prompt', 'completion', 'cached', 'reasoning']);
const ACCOUNT_STATES = ['ready', 'cooling', 'login_dead', 'plan_spent'] as const;
type AccountStateLabel = (typeof ACCOUNT_STATES)[number];
/** A window name is the upstream's (Codex primary/secondary, Claude five_hour, a Gemini model id): a short identifier, else `other`. */
const WINDOW_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,95}$/;
const windowLabel = (name: string) => (WINDOW_NAME.test(name) ? name : 'other');

const providerLabel = (provider: string | undefined) => (provider && PROVIDERS.has(provider) ? provider : 'none');
const closed = (value: string, allowed: ReadonlySet<string>, fallback: string) =>
  allowed.has(value) ? value : fallback;

/**
 * Named instruments over the shared registry. Every label is mapped into a closed set here,
 * so caller values can never become label values (docs/design/behaviours.md §8).
 * `model` labels must already be a catalog id or `other` (see `modelLabel`).
 */
@Injectable()
export class GatewayMetrics {
  constructor(
    @InjectMetric(METRIC.requests) private readonly requests: Counter<string>,
    @InjectMetric(METRIC.requestDuration) private readonly requestDuration: Histogram<string>,
    @InjectMetric(METRIC.timeToFirstToken) private readonly timeToFirstToken: Histogram<string>,
    @InjectMetric(METRIC.tokens) private readonly tokens: Counter<string>,
    @InjectMetric(METRIC.queueWait) private readonly queueWait: Histogram<string>,
    @InjectMetric(METRIC.queueDepth) private readonly queueDepth: Gauge<string>,
    @InjectMetric(METRIC.upstreamErrors) private readonly upstreamErrors: Counter<string>,
    @InjectMetric(METRIC.upstreamRetries) private readonly upstreamRetries: Counter<string>,
    @InjectMetric(METRIC.fastTierRequests) private readonly fastTierRequests: Counter<string>,
    @InjectMetric(METRIC.structuredLatency) private readonly structuredLatency: Histogram<string>,
    @InjectMetric(METRIC.structuredTokens) private readonly structuredTokens: Counter<string>,
    @InjectMetric(METRIC.structuredFailures) private readonly structuredFailures: Counter<string>,
    @InjectMetric(METRIC.structuredValidation) private readonly structuredValidation: Counter<string>,
    @InjectMetric(METRIC.structuredIdempotency) private readonly structuredIdempotency: Counter<string>,
    @InjectMetric(METRIC.structuredInflight) private readonly structuredInflight: Gauge<string>,
    @InjectMetric(METRIC.upstreamSessionsKept) private readonly upstreamSessionsKept: Gauge<string>,
    @InjectMetric(METRIC.upstreamSessionTurns) private readonly upstreamSessionTurns: Counter<string>,
    @InjectMetric(METRIC.accountState) private readonly accountStates: Gauge<string>,
    @InjectMetric(METRIC.accountCoolingUntil) private readonly accountCoolingUntil: Gauge<string>,
    @InjectMetric(METRIC.accountInFlight) private readonly accountInFlights: Gauge<string>,
    @InjectMetric(METRIC.accountPinnedChats) private readonly accountPins: Gauge<string>,
    @InjectMetric(METRIC.accountSelections) private readonly accountSelections: Counter<string>,
    @InjectMetric(METRIC.accountCooldowns) private readonly accountCooldowns: Counter<string>,
    @InjectMetric(METRIC.accountMovedAway) private readonly accountMoves: Counter<string>,
    @InjectMetric(METRIC.accountQuotaUsed) private readonly accountQuotaUsed: Gauge<string>,
    @InjectMetric(METRIC.accountQuotaReset) private readonly accountQuotaReset: Gauge<string>,
    @InjectMetric(METRIC.accountQuotaWindow) private readonly accountQuotaWindow: Gauge<string>,
    @InjectMetric(METRIC.accountPaidAvailable) private readonly accountPaidAvailable: Gauge<string>,
    @InjectMetric(METRIC.accountPaidInUse) private readonly accountPaidInUse: Gauge<string>,
    @InjectMetric(METRIC.accountPlanSpent) private readonly accountPlanSpent: Gauge<string>,
    @InjectMetric(METRIC.accountNeedsExtraUsage) private readonly accountNeedsExtraUsage: Gauge<string>,
    @InjectMetric(METRIC.paidTurns) private readonly paidTurns: Counter<string>,
    @InjectMetric(METRIC.loginState) private readonly loginStates: Gauge<string>,
  ) {
    // Closed label sets start at zero so dashboards see every series from boot.
    for (const result of ['valid', 'invalid', 'unparsable', 'unknown']) this.structuredValidation.inc({ result }, 0);
    for (const result of IDEMPOTENCY_RESULTS) this.structuredIdempotency.inc({ result }, 0);
    this.structuredInflight.set(0);
    this.upstreamSessionsKept.set(0);
    for (const result of ['reused', 'incremental', 'fallback']) this.upstreamSessionTurns.inc({ result }, 0);
  }

  chatRequest(fields: {
    provider?: string;
    model: string;
    status: number;
    stream: boolean;
    durationSeconds: number;
  }): void {
    const provider = providerLabel(fields.provider);
    this.requests.inc({ provider, model: fields.model, status: String(fields.status) });
    this.requestDuration.observe({ provider, stream: String(fields.stream) }, fields.durationSeconds);
  }

  firstToken(provider: string, seconds: number): void {
    this.timeToFirstToken.observe({ provider: providerLabel(provider) }, seconds);
  }

  tokensUsed(provider: string, kind: string, count: number): void {
    if (count > 0 && TOKEN_KINDS.has(kind)) this.tokens.inc({ provider: providerLabel(provider), kind }, count);
  }

  queueWaited(queue: QueueLabel, result: QueueResult, seconds: number): void {
    this.queueWait.observe(
      { provider: closed(queue, QUEUE_LABELS, 'structured'), result: closed(result, QUEUE_RESULTS, 'canceled') },
      seconds,
    );
  }

  queueDepthChanged(queue: QueueLabel, depth: number): void {
    this.queueDepth.set({ provider: closed(queue, QUEUE_LABELS, 'structured') }, depth);
  }

  upstreamError(provider: string, code: string): void {
    if (code !== 'canceled') this.upstreamErrors.inc({ provider: providerLabel(provider), code });
  }

  /** A retry before any output; `code` is the internal code of the failure retried. */
  upstreamRetry(provider: string, code: string): void {
    this.upstreamRetries.inc({ provider: providerLabel(provider), code });
  }

  fastTierRequest(model: string): void {
    this.fastTierRequests.inc({ model });
  }

  structuredCompleted(model: string, result: string, seconds: number): void {
    this.structuredLatency.observe({ model, result }, seconds);
  }

  structuredTokensUsed(model: string, kind: 'prompt' | 'completion', count: number): void {
    if (count > 0) this.structuredTokens.inc({ model, kind }, count);
  }

  structuredFailure(code: string): void {
    this.structuredFailures.inc({ code });
  }

  structuredValidated(result: ValidationResult): void {
    this.structuredValidation.inc({ result: closed(result, VALIDATION_RESULTS, 'unknown') });
  }

  structuredIdempotencyResult(result: IdempotencyResult): void {
    this.structuredIdempotency.inc({ result: closed(result, IDEMPOTENCY_RESULTS, 'miss') });
  }

  structuredInflightChanged(delta: 1 | -1): void {
    this.structuredInflight.inc(delta);
  }

  upstreamSessionsKeptChanged(count: number): void {
    this.upstreamSessionsKept.set(count);
  }

  upstreamSessionTurn(result: UpstreamSessionTurn): void {
    this.upstreamSessionTurns.inc({ result });
  }

  // ── Account pools: `account` is an operator-given alias (a closed set from the settings) ────

  accountRegistered(provider: string, account: string): void {
    const labels = { provider: providerLabel(provider), account };
    for (const kind of ['pinned', 'new', 'moved']) this.accountSelections.inc({ ...labels, kind }, 0);
    for (const reason of ['usage_limit', 'rate_limited']) this.accountCooldowns.inc({ ...labels, reason }, 0);
    this.accountMoves.inc(labels, 0);
    this.paidTurns.inc(labels, 0);
  }

  accountState(provider: string, account: string, state: AccountStateLabel, coolingUntilMs: number | undefined): void {
    for (const candidate of ACCOUNT_STATES)
      this.accountStates.set(
        { provider: providerLabel(provider), account, state: candidate },
        candidate === state ? 1 : 0,
      );
    this.accountCoolingUntil.set(
      { provider: providerLabel(provider), account },
      coolingUntilMs === undefined ? 0 : Math.ceil(coolingUntilMs / 1000),
    );
  }

  /** The login report's state of one login (docs/accounts.md "Login report"): 1 for `state`, 0 for every other. */
  loginState(provider: string, account: string, state: LoginStateKind): void {
    for (const candidate of LOGIN_STATES)
      this.loginStates.set(
        { provider: providerLabel(provider), account, state: candidate },
        candidate === state ? 1 : 0,
      );
  }

  accountInFlight(provider: string, account: string, count: number): void {
    this.accountInFlights.set({ provider: providerLabel(provider), account }, count);
  }

  accountPinnedChats(provider: string, account: string, count: number): void {
    this.accountPins.set({ provider: providerLabel(provider), account }, count);
  }

  accountSelected(provider: string, account: string, kind: 'pinned' | 'new' | 'moved'): void {
    this.accountSelections.inc({ provider: providerLabel(provider), account, kind });
  }

  accountCooldown(provider: string, account: string, reason: 'usage_limit' | 'rate_limited'): void {
    this.accountCooldowns.inc({ provider: providerLabel(provider), account, reason });
  }

  accountMovedAway(provider: string, account: string): void {
    this.accountMoves.inc({ provider: providerLabel(provider), account });
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
    for (const window of plan.windows) {
      const windowLabels = { ...labels, window: windowLabel(window.name) };
      if (window.usedRatio !== undefined) this.accountQuotaUsed.set(windowLabels, window.usedRatio);
      if (window.resetsAt !== undefined) this.accountQuotaReset.set(windowLabels, Math.ceil(window.resetsAt / 1000));
      if (window.windowSeconds !== undefined) this.accountQuotaWindow.set(windowLabels, window.windowSeconds);
    }
    this.accountPaidAvailable.set(labels, plan.paid?.available === true ? 1 : 0);
    this.accountPaidInUse.set(labels, plan.paid?.inUse === true ? 1 : 0);
    this.accountPlanSpent.set(labels, plan.planSpent ? 1 : 0);
    this.accountNeedsExtraUsage.set(labels, plan.needsExtraUsageSince !== undefined ? 1 : 0);
  }

  accountPaidTurn(provider: string, account: string): void {
    this.paidTurns.inc({ provider: providerLabel(provider), account });
  }
}

/** A model label from a closed set: the catalog id when the id is in the catalog, else `other`. */
export function modelLabel(catalogId: string | null | undefined): string {
  return catalogId ?? 'other';
}
