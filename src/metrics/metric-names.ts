import type { ProviderId } from '../core/provider-id';

/** Every series the gateway exports starts with this, prom-client's process metrics included. */
export const METRIC_PREFIX = 'gateway_chat_api_';

/** Metric names (docs/design/decisions.md §8, docs/endpoints.md "Metrics"). Noun first, then unit. */
export const METRIC = {
  requests: 'gateway_chat_api_requests_total',
  requestDuration: 'gateway_chat_api_request_duration_seconds',
  timeToFirstToken: 'gateway_chat_api_time_to_first_token_seconds',
  tokens: 'gateway_chat_api_tokens_total',
  queueWait: 'gateway_chat_api_queue_wait_seconds',
  queueDepth: 'gateway_chat_api_queue_depth',
  upstreamErrors: 'gateway_chat_api_upstream_errors_total',
  upstreamRetries: 'gateway_chat_api_upstream_retries_total',
  fastTierRequests: 'gateway_chat_api_fast_tier_requests_total',
  structuredLatency: 'gateway_chat_api_structured_latency_seconds',
  structuredTokens: 'gateway_chat_api_structured_tokens_total',
  structuredFailures: 'gateway_chat_api_structured_failures_total',
  structuredValidation: 'gateway_chat_api_structured_validation_total',
  structuredIdempotency: 'gateway_chat_api_structured_idempotency_total',
  structuredInflight: 'gateway_chat_api_structured_inflight',
  upstreamSessionsKept: 'gateway_chat_api_upstream_sessions_kept',
  upstreamSessionTurns: 'gateway_chat_api_upstream_session_turns_total',
  memoryLimit: 'gateway_chat_api_process_memory_limit_bytes',
  ready: 'gateway_chat_api_ready',
  accountState: 'gateway_chat_api_account_state',
  accountCoolingUntil: 'gateway_chat_api_account_cooling_until_seconds',
  accountInFlight: 'gateway_chat_api_account_in_flight',
  accountPinnedChats: 'gateway_chat_api_account_pinned_chats',
  accountSelections: 'gateway_chat_api_account_selections_total',
  accountCooldowns: 'gateway_chat_api_account_cooldowns_total',
  accountMovedAway: 'gateway_chat_api_account_turns_moved_away_total',
  accountQuotaUsed: 'gateway_chat_api_account_quota_used_ratio',
  accountQuotaReset: 'gateway_chat_api_account_quota_reset_seconds',
  accountQuotaWindow: 'gateway_chat_api_account_quota_window_seconds',
  accountPaidAvailable: 'gateway_chat_api_account_paid_usage_available',
  accountPaidInUse: 'gateway_chat_api_account_paid_usage_in_use',
  accountPlanSpent: 'gateway_chat_api_account_plan_spent',
  accountNeedsExtraUsage: 'gateway_chat_api_account_needs_extra_usage',
  paidTurns: 'gateway_chat_api_paid_turns_total',
  loginState: 'gateway_chat_api_login_state',
} as const;

/** Queue label values (docs/design/behaviours.md §8): the three families, provider_c's process slots, structured. */
export type QueueLabel = ProviderId | 'provider_c_processes' | 'structured';
export type QueueResult = 'acquired' | 'bypassed' | 'full' | 'timeout' | 'canceled';
export type ValidationResult = 'valid' | 'invalid' | 'unparsable' | 'unknown';
export type IdempotencyResult = 'local_hit' | 'miss' | 'conflict' | 'capacity';
export type UpstreamSessionTurn = 'reused' | 'incremental' | 'fallback';
