import { GatewayError } from '../../core/gateway.error';
import { isJsonObject } from '../../common/json';
import { sanitizeUpstreamMessage } from '../../common/logging/request-log';
import { transportFailure } from '../shared/turn-runner';
import { UpstreamErrorEvent, UpstreamRefusal } from '../shared/upstream-failure';
import type { QuotaErrorFacts } from './provider-b.quota';
import { classifyQuota, QUOTA_STATUSES } from './provider-b.quota';

/**
 * Any failure of a Code Assist turn as our error (docs/upstream/provider-b.md §10.2), at `atMs`
 * (epoch ms): a refusal by its status and body, an error payload inside the stream by its body (the
 * quota read against that time), a `GatewayError` as it is, anything else a transport error,
 * retried before output.
 */
export function classifyProviderBFailure(failure: unknown, atMs: number): GatewayError {
  if (failure instanceof GatewayError) return failure;
  if (failure instanceof UpstreamRefusal) return classifyProviderBError(failure.status, failure.body, atMs);
  if (failure instanceof UpstreamErrorEvent) return classifyProviderBError(undefined, failure.payload, atMs);
  return transportFailure('provider_b', failure);
}

/** What we read from a Code Assist error body (docs/upstream/provider-b.md §10.1); message text stays internal. */
export interface ProviderBErrorInfo extends QuotaErrorFacts {
  readonly code?: number;
  readonly status?: string;
}

/** `"34.5s"`, `"900ms"` → seconds; anything else → undefined. */
export function parseRetryDelay(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)\s*$/.exec(value);
  if (!match) return undefined;
  const amount = Number(match[1]);
  return match[2] === 'ms' ? amount / 1000 : amount;
}

/** Reads `{"error":{…}}` or an array whose first element has that shape; typed `details[]` by `@type`. */
export function parseProviderBError(body: unknown): ProviderBErrorInfo {
  const root = Array.isArray(body) ? body[0] : body;
  const error = isJsonObject(root) && isJsonObject(root.error) ? root.error : undefined;
  const quotaIds: string[] = [];
  const reasons: string[] = [];
  const errorInfos: { reason: string; domain?: string; quotaLimit?: string }[] = [];
  let retryDelaySeconds: number | undefined;
  const details = Array.isArray(error?.details) ? error.details : [];
  for (const detail of details) {
    if (!isJsonObject(detail)) continue;
    const type = typeof detail['@type'] === 'string' ? detail['@type'] : '';
    if (type.endsWith('google.rpc.RetryInfo')) {
      retryDelaySeconds = parseRetryDelay(detail.retryDelay) ?? retryDelaySeconds;
    } else if (type.endsWith('google.rpc.QuotaFailure') && Array.isArray(detail.violations)) {
      for (const violation of detail.violations) {
        if (isJsonObject(violation) && typeof violation.quotaId === 'string') quotaIds.push(violation.quotaId);
      }
    } else if (type.endsWith('google.rpc.ErrorInfo') && typeof detail.reason === 'string') {
      reasons.push(detail.reason);
      const quotaLimit =
        isJsonObject(detail.metadata) && typeof detail.metadata.quota_limit === 'string'
          ? detail.metadata.quota_limit
          : undefined;
      errorInfos.push({
        reason: detail.reason,
        ...(typeof detail.domain === 'string' ? { domain: detail.domain } : {}),
        ...(quotaLimit ? { quotaLimit } : {}),
      });
    }
  }
  return {
    code: typeof error?.code === 'number' ? error.code : undefined,
    status: typeof error?.status === 'string' ? error.status : undefined,
    message: typeof error?.message === 'string' ? error.message : undefined,
    retryDelaySeconds,
    quotaIds,
    reasons,
    errorInfos,
    detailCount: details.length,
  };
}

/** gRPC status names → the HTTP status they travel with (for error frames inside a 200 stream). */
const GRPC_STATUS_TO_HTTP: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

const RETRY_STATUSES = new Set([408, 500, 502, 503, 504]);
const CONTEXT_WINDOW_MESSAGE = /input token count|maximum number of tokens/i;

/**
 * Classifies an upstream failure (docs/upstream/provider-b.md §10.2). `httpStatus` is the response status, or
 * undefined for an error frame inside a 2xx stream (then the body's own code/status decides).
 * The result carries retryability and the Retry-After hint; `detail` names only statuses,
 * reasons and quota ids, never the upstream message (which only the log's `upstream_message` carries, sanitized).
 */
export function classifyProviderBError(
  httpStatus: number | undefined,
  body: unknown,
  now: number = Date.now(),
): GatewayError {
  const info = parseProviderBError(body);
  const status = httpStatus ?? info.code ?? (info.status ? GRPC_STATUS_TO_HTTP[info.status] : undefined) ?? 500;
  const detail = describe(status, info);
  const upstream = { type: info.status, code: info.reasons[0], message: sanitizeUpstreamMessage(info.message) };
  const base = { detail, upstreamStatus: status, upstream };
  if (status === 401 || status === 403) return new GatewayError('auth', base);
  if (status === 404) return new GatewayError('not_found', base);
  if (QUOTA_STATUSES.has(status) || info.status === 'RESOURCE_EXHAUSTED') {
    const quota = classifyQuota(status, info, now);
    // A Code Assist quota is a bucket per model: spending it rests that model on the login, not the login.
    if (quota?.kind === 'terminal')
      return new GatewayError('usage_limit', {
        ...base,
        retryAfterSeconds: quota.retryAfterSeconds,
        limitsModel: true,
      });
    if (quota?.kind === 'retryable')
      return new GatewayError('rate_limited', { ...base, retryable: true, retryAfterSeconds: quota.retryAfterSeconds });
    // The model is busy for everyone: retried like the CLI's silent retries, no login at fault.
    if (quota?.kind === 'capacity')
      return new GatewayError('provider_model_at_capacity', {
        ...base,
        retryable: true,
        retryAfterSeconds: quota.retryAfterSeconds,
      });
  }
  if (status === 400) {
    return CONTEXT_WINDOW_MESSAGE.test(info.message ?? '')
      ? new GatewayError('context_window', base)
      : new GatewayError('bad_request', base);
  }
  if (status >= 400 && status < 500 && !RETRY_STATUSES.has(status)) return new GatewayError('bad_request', base);
  return new GatewayError('upstream', { ...base, retryable: RETRY_STATUSES.has(status) || status >= 500 });
}
function describe(status: number, info: ProviderBErrorInfo): string {
  const parts = [`provider_b upstream status ${status}`];
  if (info.status) parts.push(info.status);
  if (info.reasons.length > 0) parts.push(`reasons=${info.reasons.join(',')}`);
  if (info.quotaIds.length > 0) parts.push(`quotas=${info.quotaIds.join(',')}`);
  return parts.join(' ');
}
