import { Controller, DynamicModule, Module } from '@nestjs/common';
import {
  makeCounterProvider,
  makeGaugeProvider,
  makeHistogramProvider,
  PrometheusController,
  PrometheusModule,
} from '@willsoto/nestjs-prometheus';
import { CompressJson } from '../common/http/compression.interceptor';
import { DrainService } from '../common/lifecycle/drain.service';
import { LifecycleModule } from '../common/lifecycle/lifecycle.module';
import { GatewayMetrics } from './gateway-metrics';
import { METRIC } from './metric-names';
import { registerProcessMetrics } from './process-metrics';
import { registerReadinessGauge } from './readiness-metric';

const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

const instruments = [
  makeCounterProvider({
    name: METRIC.requests,
    help: 'Chat and models requests by provider, model and HTTP status (499 = client canceled).',
    labelNames: ['provider', 'model', 'status'],
  }),
  makeHistogramProvider({
    name: METRIC.requestDuration,
    help: 'Chat request duration until the response or stream ended.',
    labelNames: ['provider', 'stream'],
    buckets: LATENCY_BUCKETS,
  }),
  makeHistogramProvider({
    name: METRIC.timeToFirstToken,
    help: 'Arrival to the first text, reasoning or tool-call event.',
    labelNames: ['provider'],
    buckets: LATENCY_BUCKETS,
  }),
  makeCounterProvider({ name: METRIC.tokens, help: 'Tokens reported by upstreams.', labelNames: ['provider', 'kind'] }),
  makeHistogramProvider({
    name: METRIC.queueWait,
    help: 'Time spent waiting for an agent, structured or process slot.',
    labelNames: ['provider', 'result'],
    buckets: [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
  }),
  makeGaugeProvider({
    name: METRIC.queueDepth,
    help: 'Requests currently waiting for a slot.',
    labelNames: ['provider'],
  }),
  makeCounterProvider({
    name: METRIC.upstreamErrors,
    help: 'Upstream failures by internal code.',
    labelNames: ['provider', 'code'],
  }),
  makeCounterProvider({
    name: METRIC.upstreamRetries,
    help: 'Retries before any output, by the internal code of the failure that caused them.',
    labelNames: ['provider', 'code'],
  }),
  makeCounterProvider({
    name: METRIC.fastTierRequests,
    help: 'Requests for -fast (priority tier) models.',
    labelNames: ['model'],
  }),
  makeHistogramProvider({
    name: METRIC.structuredLatency,
    help: 'Structured inference latency by model and result.',
    labelNames: ['model', 'result'],
    buckets: LATENCY_BUCKETS,
  }),
  makeCounterProvider({
    name: METRIC.structuredTokens,
    help: 'Structured inference tokens.',
    labelNames: ['model', 'kind'],
  }),
  makeCounterProvider({
    name: METRIC.structuredFailures,
    help: 'Structured inference error responses by contract code.',
    labelNames: ['code'],
  }),
  makeCounterProvider({
    name: METRIC.structuredValidation,
    help: 'Structured output validation results.',
    labelNames: ['result'],
  }),
  makeCounterProvider({
    name: METRIC.structuredIdempotency,
    help: 'Idempotency store outcomes.',
    labelNames: ['result'],
  }),
  makeGaugeProvider({ name: METRIC.structuredInflight, help: 'Structured requests being answered.' }),
  makeGaugeProvider({
    name: METRIC.upstreamSessionsKept,
    help: 'provider_a WebSocket connections kept open between the turns of a chat.',
  }),
  makeCounterProvider({
    name: METRIC.upstreamSessionTurns,
    help: 'provider_a chat turns on a kept connection (reused), sent as a continuation (incremental), or sent again in full after a broken chain or dead connection (fallback).',
    labelNames: ['result'],
  }),
  // Account pools (docs/accounts.md): labels are the family and the operator-given alias only.
  makeGaugeProvider({
    name: METRIC.accountState,
    help: '1 for the state each login is in (ready, cooling, login_dead, plan_spent), 0 for the others.',
    labelNames: ['provider', 'account', 'state'],
  }),
  makeGaugeProvider({
    name: METRIC.accountCoolingUntil,
    help: 'Unix time a cooling login, or one resting on a spent plan (plan_spent), becomes ready again; 0 otherwise.',
    labelNames: ['provider', 'account'],
  }),
  makeGaugeProvider({
    name: METRIC.accountInFlight,
    help: 'Turns running on each login.',
    labelNames: ['provider', 'account'],
  }),
  makeGaugeProvider({
    name: METRIC.accountPinnedChats,
    help: 'Chats pinned to each login.',
    labelNames: ['provider', 'account'],
  }),
  makeCounterProvider({
    name: METRIC.accountSelections,
    help: 'Turns given to each login: pinned (the chat stays), new (a new or moved chat), moved (a retry from another login).',
    labelNames: ['provider', 'account', 'kind'],
  }),
  makeCounterProvider({
    name: METRIC.accountCooldowns,
    help: 'Cooldowns each login entered, by reason (usage_limit, rate_limited).',
    labelNames: ['provider', 'account', 'reason'],
  }),
  makeCounterProvider({
    name: METRIC.accountMovedAway,
    help: 'Turns that failed on this login before any output and were retried on another.',
    labelNames: ['provider', 'account'],
  }),
  makeGaugeProvider({
    name: METRIC.accountQuotaUsed,
    help: 'Last used share (0..1) of each usage window the upstream reported.',
    labelNames: ['provider', 'account', 'window'],
  }),
  makeGaugeProvider({
    name: METRIC.loginState,
    help: '1 for what the gateway can tell about each configured login without asking the upstream (usable, expired_refreshable, missing, unusable, refresh_refused, account_unsupported, cli_missing), 0 for the others.',
    labelNames: ['provider', 'account', 'state'],
  }),
  makeGaugeProvider({
    name: METRIC.accountQuotaReset,
    help: 'Unix time the usage window resets, as last reported.',
    labelNames: ['provider', 'account', 'window'],
  }),
  makeGaugeProvider({
    name: METRIC.accountQuotaWindow,
    help: 'Length in seconds of each usage window the upstream reported.',
    labelNames: ['provider', 'account', 'window'],
  }),
  makeGaugeProvider({
    name: METRIC.accountPaidAvailable,
    help: "1 when the upstream said the login can draw paid usage once its plan is spent (Claude's extra usage, Codex credits); 0 otherwise or unknown.",
    labelNames: ['provider', 'account'],
  }),
  makeGaugeProvider({
    name: METRIC.accountPaidInUse,
    help: "1 when the upstream's latest report said the login is drawing paid usage.",
    labelNames: ['provider', 'account'],
  }),
  makeGaugeProvider({
    name: METRIC.accountPlanSpent,
    help: "1 when the login's plan is spent (a window at 100 % until its reset, or the upstream said so).",
    labelNames: ['provider', 'account'],
  }),
  makeGaugeProvider({
    name: METRIC.accountNeedsExtraUsage,
    help: "1 while the upstream refuses the login's requests as third-party use that needs extra usage (extra_usage_required), until its next successful turn.",
    labelNames: ['provider', 'account'],
  }),
  makeCounterProvider({
    name: METRIC.paidTurns,
    help: 'Turns the upstream reported as paid usage (served past the plan, from extra usage or credits).',
    labelNames: ['provider', 'account'],
  }),
];

/**
 * The named instruments over one registry shared by every module (prom-client's default).
 * Imported by each module that records metrics. The instruments exist whether or not the
 * `/metrics` route is served, so services need no branches.
 */
@Module({ providers: [...instruments, GatewayMetrics], exports: [GatewayMetrics] })
export class MetricsModule {
  constructor() {
    registerProcessMetrics();
  }
}

const READINESS_GAUGE = Symbol('READINESS_GAUGE');

/** The library's `GET /metrics` controller, with compression like every other JSON or text answer. */
@CompressJson()
@Controller()
class MetricsController extends PrometheusController {}

/**
 * `GET /metrics`, registered only when METRICS_ENABLED, and the readiness gauge (it needs the
 * app's drain switch). Imported once, by the app module.
 */
@Module({})
export class MetricsEndpointModule {
  static forRoot(options: { serveEndpoint: boolean }): DynamicModule {
    return {
      module: MetricsEndpointModule,
      imports: [
        LifecycleModule,
        ...(options.serveEndpoint
          ? [
              PrometheusModule.register({
                path: '/metrics',
                controller: MetricsController,
                defaultMetrics: { enabled: false },
              }),
            ]
          : []),
      ],
      providers: [{ provide: READINESS_GAUGE, useFactory: registerReadinessGauge, inject: [DrainService] }],
    };
  }
}
