/** Every series the gateway exports starts with this, prom-client's process metrics included. */
export const METRIC_PREFIX = 'gateway_chat_api_';

/**
 * One metric as declared: its name, kind, help and label names (and buckets for a histogram). The
 * label names are a type parameter, so the instrument `GatewayMetrics` reads is typed by them.
 */
export interface MetricDeclaration<K extends 'counter' | 'gauge' | 'histogram', L extends string> {
  readonly kind: K;
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** Histograms only: the bucket upper bounds, in seconds. */
  readonly buckets?: readonly number[];
  /**
   * Registered by its own collector (it reads its value at each scrape) rather than provided to
   * `GatewayMetrics` through Nest.
   */
  readonly collected?: true;
}

const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
  ({ kind: 'counter', name, help, labelNames }) as const satisfies MetricDeclaration<'counter', L>;
const gauge = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
  ({ kind: 'gauge', name, help, labelNames }) as const satisfies MetricDeclaration<'gauge', L>;
const histogram = <L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: readonly number[],
) => ({ kind: 'histogram', name, help, labelNames, buckets }) as const satisfies MetricDeclaration<'histogram', L>;
/** A gauge whose value is read at each scrape by its own collector. */
const collectedGauge = (name: string, help: string) => ({ ...gauge(name, help), collected: true }) as const;
/** A counter whose values are read at each scrape from the count its owner keeps. */
const collectedCounter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
  ({ ...counter(name, help, labelNames), collected: true }) as const;

const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * THE table of metrics (docs/design/decisions.md §8, docs/endpoints.md "Metrics"): each metric is
 * declared here once, names noun first, then unit. `MetricsModule` makes the Nest providers from
 * it and `GatewayMetrics` reads each instrument by its key, typed by its label names.
 */
export const METRICS = {
  requests: counter(
    'gateway_chat_api_requests_total',
    'Chat requests by provider, model and HTTP status, refusals included (499 = client canceled).',
    ['provider', 'model', 'status'],
  ),
  requestDuration: histogram(
    'gateway_chat_api_request_duration_seconds',
    'Chat request duration until the response or stream ended.',
    ['provider', 'stream'],
    LATENCY_BUCKETS,
  ),
  timeToFirstToken: histogram(
    'gateway_chat_api_time_to_first_token_seconds',
    'Arrival to the first text, reasoning or tool-call event the client is given.',
    ['provider'],
    LATENCY_BUCKETS,
  ),
  tokens: counter(
    'gateway_chat_api_tokens_total',
    'Tokens upstreams reported for every attempt they billed, delivered or not.',
    ['provider', 'kind'],
  ),
  queueWait: histogram(
    'gateway_chat_api_queue_wait_seconds',
    'Time spent waiting for an agent, structured or process slot.',
    ['provider', 'result'],
    [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
  ),
  queueDepth: gauge('gateway_chat_api_queue_depth', 'Requests currently waiting for a slot.', ['provider']),
  upstreamErrors: counter(
    'gateway_chat_api_upstream_errors_total',
    'Upstream failures by internal code and the route that met them (chat or structured).',
    ['provider', 'code', 'route'],
  ),
  upstreamRetries: counter(
    'gateway_chat_api_upstream_retries_total',
    'Retries before any output, by the internal code of the failure that caused them.',
    ['provider', 'code'],
  ),
  fastTierRequests: counter('gateway_chat_api_fast_tier_requests_total', 'Requests for -fast (priority tier) models.', [
    'model',
  ]),
  structuredLatency: histogram(
    'gateway_chat_api_structured_latency_seconds',
    'Structured inference latency by model and result.',
    ['model', 'result'],
    LATENCY_BUCKETS,
  ),
  structuredTokens: counter('gateway_chat_api_structured_tokens_total', 'Structured inference tokens.', [
    'model',
    'kind',
  ]),
  structuredFailures: counter(
    'gateway_chat_api_structured_failures_total',
    'Structured inference error responses by contract code.',
    ['code'],
  ),
  structuredValidation: counter(
    'gateway_chat_api_structured_validation_total',
    'Structured output validation results.',
    ['result'],
  ),
  structuredIdempotency: counter('gateway_chat_api_structured_idempotency_total', 'Idempotency store outcomes.', [
    'result',
  ]),
  structuredInflight: gauge('gateway_chat_api_structured_inflight', 'Structured requests being answered.'),
  upstreamSessionsKept: gauge(
    'gateway_chat_api_upstream_sessions_kept',
    'provider_a WebSocket connections kept open between the turns of a chat.',
  ),
  upstreamSessionTurns: counter(
    'gateway_chat_api_upstream_session_turns_total',
    'provider_a chat turns on a kept connection (reused), sent as a continuation (incremental), or sent again in full after a broken chain or dead connection (fallback).',
    ['result'],
  ),
  // Account pools (docs/accounts.md): labels are the family and the operator-given alias only.
  accountState: gauge(
    'gateway_chat_api_account_state',
    '1 for the state each login is in (ready, cooling, login_dead, plan_spent, usage_paused), 0 for the others.',
    ['provider', 'account', 'state'],
  ),
  accountCoolingUntil: gauge(
    'gateway_chat_api_account_cooling_until_seconds',
    'Unix time a cooling login, one resting on a spent plan (plan_spent) or one paused by its organization (usage_paused) becomes ready again; 0 otherwise.',
    ['provider', 'account'],
  ),
  accountInFlight: gauge('gateway_chat_api_account_in_flight', 'Turns running on each login.', ['provider', 'account']),
  accountPinnedChats: gauge('gateway_chat_api_account_pinned_chats', 'Chats pinned to each login.', [
    'provider',
    'account',
  ]),
  accountSelections: counter(
    'gateway_chat_api_account_selections_total',
    'Turns given to each login: pinned (the chat stays), new (a new or moved chat), moved (a retry from another login).',
    ['provider', 'account', 'kind'],
  ),
  accountCooldowns: counter(
    'gateway_chat_api_account_cooldowns_total',
    'Cooldowns each login entered, by reason (usage_limit, rate_limited).',
    ['provider', 'account', 'reason'],
  ),
  accountMovedAway: counter(
    'gateway_chat_api_account_turns_moved_away_total',
    'Turns that failed on this login before any output and were retried on another.',
    ['provider', 'account'],
  ),
  accountQuotaUsed: gauge(
    'gateway_chat_api_account_quota_used_ratio',
    'Last used share (0..1) of each usage window the upstream reported.',
    ['provider', 'account', 'window'],
  ),
  loginState: gauge(
    'gateway_chat_api_login_state',
    '1 for what the gateway can tell about each configured login without asking the upstream (usable, expired_refreshable, missing, unusable, refresh_refused, login_refused, account_unsupported, cli_missing), 0 for the others.',
    ['provider', 'account', 'state'],
  ),
  accountQuotaReset: gauge(
    'gateway_chat_api_account_quota_reset_seconds',
    'Unix time the usage window resets, as last reported.',
    ['provider', 'account', 'window'],
  ),
  accountQuotaWindow: gauge(
    'gateway_chat_api_account_quota_window_seconds',
    'Length in seconds of each usage window the upstream reported.',
    ['provider', 'account', 'window'],
  ),
  accountPaidAvailable: gauge(
    'gateway_chat_api_account_paid_usage_available',
    "1 when the upstream said the login can draw paid usage once its plan is spent (Claude's extra usage, Codex credits); 0 otherwise or unknown.",
    ['provider', 'account'],
  ),
  accountPaidInUse: gauge(
    'gateway_chat_api_account_paid_usage_in_use',
    "1 when the upstream's latest report said the login is drawing paid usage.",
    ['provider', 'account'],
  ),
  accountPlanSpent: gauge(
    'gateway_chat_api_account_plan_spent',
    "1 when the login's plan is spent (a window at 100 % until its reset, or the upstream said so).",
    ['provider', 'account'],
  ),
  accountNeedsExtraUsage: gauge(
    'gateway_chat_api_account_needs_extra_usage',
    "1 while the upstream refuses the login's requests as third-party use that needs extra usage (extra_usage_required), until its next successful turn.",
    ['provider', 'account'],
  ),
  paidTurns: counter(
    'gateway_chat_api_paid_turns_total',
    'Turns the upstream reported as paid usage (served past the plan, from extra usage or credits).',
    ['provider', 'account'],
  ),
  // Read at each scrape by their own collectors (process-metrics.ts, readiness-metric.ts,
  // body-budget-metrics.ts).
  memoryLimit: collectedGauge(
    'gateway_chat_api_process_memory_limit_bytes',
    'Memory limit of the process: the container (cgroup) limit, else the machine total.',
  ),
  containerMemory: collectedGauge(
    'gateway_chat_api_container_memory_working_set_bytes',
    "Memory charged against that limit: the working set of the process's cgroup v2 (the gateway and its child processes, less inactive file cache), else the process's resident memory.",
  ),
  ready: collectedGauge(
    'gateway_chat_api_ready',
    'Readiness: 1 while serving, 0 while draining (GET /health/ready answers 503).',
  ),
  bodyBudgetHeld: collectedGauge(
    'gateway_chat_api_body_budget_held_bytes',
    'Request-body bytes the requests in flight hold now, counted against GATEWAY_MAX_BODY_BYTES_IN_FLIGHT.',
  ),
  bodyBudgetLimit: collectedGauge(
    'gateway_chat_api_body_budget_limit_bytes',
    'GATEWAY_MAX_BODY_BYTES_IN_FLIGHT: the request-body bytes all requests together may hold (0: no bound).',
  ),
  bodyBudgetRefusals: collectedCounter(
    'gateway_chat_api_body_budget_refusals_total',
    'Requests refused with 503 body_budget_full: their body did not fit beside the bodies held.',
    ['route'],
  ),
} as const;

/**
 * Queue label values (docs/design/behaviours.md §8): each family's queue (its id), the queues a
 * family declares of its own (its `queues`, e.g. a CLI family's process slots), and `structured`.
 */
export type QueueLabel = string;
export type QueueResult = 'acquired' | 'bypassed' | 'full' | 'timeout' | 'canceled' | 'draining';
export type ValidationResult = 'valid' | 'invalid' | 'unparsable' | 'unknown';
export type IdempotencyResult = 'local_hit' | 'miss' | 'conflict' | 'capacity';
export type UpstreamSessionTurn = 'reused' | 'incremental' | 'fallback';
/**
 * The route an upstream failure met: the chat ratio alert divides chat failures by chat requests,
 * while the login alerts count both (a structured call uses the same logins).
 */
export type UpstreamRoute = 'chat' | 'structured';
