import { GatewayError } from '../../core/gateway.error';
import { isJsonObject } from '../../common/json';
import { sanitizeUpstreamMessage } from '../../common/logging/request-log';
import { retryAfterHeaderSeconds } from '../shared/retry-policy';
import { transportFailure } from '../shared/turn-runner';
import { UpstreamErrorEvent, UpstreamRefusal } from '../shared/upstream-failure';
import type { EventLogger } from '../../core/event-logger';
import type { QuotaErrorFacts } from './provider-b.quota';
import { classifyQuota, QUOTA_STATUSES, withHeaderHint } from './provider-b.quota';
import type { ForbiddenFacts, RefusedLogin } from './provider-b.refusals';
import { PROVIDER_B_FIXES, readRefusedLogin, REFUSED_LOGIN_DOC } from './provider-b.refusals';

/**
 * Any failure of a Code Assist turn as our error (docs/upstream/provider-b.md §10.2), at `atMs`
 * (epoch ms): a refusal by its status and body, an error payload inside the stream by its body (the
 * quota read against that time), a `GatewayError` as it is, anything else a transport error,
 * retried before output. A 403 that a new login does not fix is logged on `logger` with its fix.
 */
export function classifyProviderBFailure(failure: unknown, atMs: number, logger?: EventLogger): GatewayError {
  if (failure instanceof GatewayError) return failure;
  if (failure instanceof UpstreamRefusal)
    return classifyProviderBError(failure.status, failure.body, atMs, logger, failure.headers['retry-after']);
  if (failure instanceof UpstreamErrorEvent) return classifyProviderBError(undefined, failure.payload, atMs, logger);
  return transportFailure('provider_b', failure);
}

/** What we read from a Code Assist error body (docs/upstream/provider-b.md §10.1); message text stays internal. */
export interface ProviderBErrorInfo extends QuotaErrorFacts, ForbiddenFacts {
  readonly code?: number;
  readonly status?: string;
  readonly errorInfos: readonly (QuotaErrorFacts['errorInfos'][number] & ForbiddenFacts['errorInfos'][number])[];
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
  const errorInfos: { reason: string; domain?: string; quotaLimit?: string; metadata: Record<string, string> }[] = [];
  const helpLinks: string[] = [];
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
      const metadata = stringMembers(detail.metadata);
      const quotaLimit = metadata.quota_limit;
      errorInfos.push({
        reason: detail.reason,
        ...(typeof detail.domain === 'string' ? { domain: detail.domain } : {}),
        ...(quotaLimit ? { quotaLimit } : {}),
        metadata,
      });
    } else if (type.endsWith('google.rpc.Help') && Array.isArray(detail.links)) {
      for (const link of detail.links) if (isJsonObject(link) && typeof link.url === 'string') helpLinks.push(link.url);
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
    helpLinks,
    detailCount: details.length,
  };
}

/** The string-valued members of an object (an `ErrorInfo`'s `metadata`); anything else reads as none. */
function stringMembers(value: unknown): Record<string, string> {
  const members: Record<string, string> = {};
  if (!isJsonObject(value)) return members;
  for (const [key, member] of Object.entries(value)) if (typeof member === 'string') members[key] = member;
  return members;
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
 * A 403 about the account or its project rather than its token is logged on `logger`
 * (`provider_b_login_refused`, with its fix and Google's link) and leaves the login usable.
 * `retryAfter` is the reply's `Retry-After` header: a hint like the body's delay, the later of
 * the two counting (docs/providers.md "Retries").
 */
export function classifyProviderBError(
  httpStatus: number | undefined,
  body: unknown,
  now: number = Date.now(),
  logger?: EventLogger,
  retryAfter?: string,
): GatewayError {
  const info = parseProviderBError(body);
  const headerSeconds = retryAfterHeaderSeconds(retryAfter, now);
  const status = httpStatus ?? info.code ?? (info.status ? GRPC_STATUS_TO_HTTP[info.status] : undefined) ?? 500;
  const detail = describe(status, info);
  const upstream = { type: info.status, code: info.reasons[0], message: sanitizeUpstreamMessage(info.message) };
  const base = { detail, upstreamStatus: status, upstream };
  const refusal = status === 403 ? readRefusedLogin(info) : undefined;
  if (refusal) return refusedLogin(refusal, base, logger);
  if (status === 401 || status === 403) return new GatewayError('auth', base);
  // Code Assist answers 404 to a login without access to a model (a preview model, say) that
  // another login of the pool may well have: about the login and this model, not the model alone.
  if (status === 404) return new GatewayError('not_found', { ...base, limitsModel: true });
  if (QUOTA_STATUSES.has(status) || info.status === 'RESOURCE_EXHAUSTED') {
    const quota = withHeaderHint(classifyQuota(status, info, now), headerSeconds);
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
  return new GatewayError('upstream', {
    ...base,
    retryable: RETRY_STATUSES.has(status) || status >= 500,
    ...(headerSeconds !== undefined ? { retryAfterSeconds: headerSeconds } : {}),
  });
}

/**
 * A 403 that a new login does not fix: an account Google suspended is refused like one Code
 * Assist does not serve (parked until its login file changes); the others, which the project or
 * a one-time validation fixes, leave the login as it is. The client's message names the fix, the
 * log line the fix and Google's link.
 */
function refusedLogin(
  refusal: RefusedLogin,
  base: { detail: string; upstreamStatus: number; upstream: GatewayError['upstream'] },
  logger: EventLogger | undefined,
): GatewayError {
  const fix = PROVIDER_B_FIXES[refusal.reason];
  // At info: the request's own line carries the same fix and link, as its one warning.
  logger?.info(
    { event: 'provider_b_login_refused', reason: refusal.reason, fix, ...(refusal.link ? { link: refusal.link } : {}) },
    'provider_b_login_refused',
  );
  const code =
    refusal.reason === 'provider_b_account_suspended' ? 'provider_account_unsupported' : 'provider_project_required';
  return new GatewayError(code, {
    ...base,
    detail: `${refusal.reason}: ${base.detail}`,
    publicMessage: `provider_b: ${fix}; see ${REFUSED_LOGIN_DOC}`,
    fix: refusal.link ? `${fix} (Google's page: ${refusal.link})` : fix,
    provider: 'provider_b',
  });
}

function describe(status: number, info: ProviderBErrorInfo): string {
  const parts = [`provider_b upstream status ${status}`];
  if (info.status) parts.push(info.status);
  if (info.reasons.length > 0) parts.push(`reasons=${info.reasons.join(',')}`);
  if (info.quotaIds.length > 0) parts.push(`quotas=${info.quotaIds.join(',')}`);
  return parts.join(' ');
}
