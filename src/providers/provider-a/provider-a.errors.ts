import { GatewayError } from '../../core/gateway.error';
import type { PlanWindow } from '../../core/plan-usage';
import { MODEL_REFUSAL_FIX } from './provider-a.error-table';
import { exhaustedWindowResetSeconds } from './provider-a.rate-limits';
import { isJsonObject, type JsonObject } from '../../common/json';
import { sanitizeUpstreamMessage } from '../../common/logging/request-log';
import type { ConnectionTarget } from '../shared/connection-failure';
import { connectionCause } from '../shared/connection-failure';
import { errnoOf } from '../../common/errno';
import { retryAfterHeaderSeconds } from '../shared/retry-policy';
import { quoted } from '../../core/quoted';

/** Everything known about one upstream failure (docs/upstream/provider-a.md §10). */
export interface UpstreamFailure {
  /** HTTP status of a failed upgrade/POST. */
  readonly status?: number;
  /** Response headers (lower-case names) of a failed upgrade/POST. */
  readonly headers?: Readonly<Record<string, string | undefined>>;
  /** The parsed error body, or the whole error event frame. */
  readonly payload?: unknown;
  /** The login's latest plan windows: the fallback reset for usage limits (docs/upstream/provider-a.md §4.3). */
  readonly planWindows?: readonly PlanWindow[];
  readonly now?: number;
}

const USAGE_LIMIT_CODES = new Set(['usage_limit_reached', 'usage_not_included', 'insufficient_quota']);
const SECONDS_KEYS = new Set(['retry_after', 'retry_after_seconds', 'resets_in_seconds']);
const RESET_AT_KEYS = new Set(['resets_at', 'reset_at']);
const TRY_AGAIN = /try again in\s+(\d+(?:\.\d+)?)\s*(ms|s)\b/i;
const SAFE_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

const numeric = (value: unknown): number | undefined => {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
};

/** The error object of a frame or body: `error`, else `response.error`, else the frame itself. */
function errorObject(payload: unknown): JsonObject {
  if (!isJsonObject(payload)) return {};
  if (isJsonObject(payload.error)) return payload.error;
  if (isJsonObject(payload.response) && isJsonObject(payload.response.error)) return payload.response.error;
  return payload;
}

/** A numeric `status` / `status_code` of the event (or its error object). */
function eventStatus(payload: unknown, error: JsonObject): number | undefined {
  const candidates = isJsonObject(payload)
    ? [payload.status, payload.status_code, error.status, error.status_code]
    : [];
  for (const candidate of candidates)
    if (typeof candidate === 'number' && Number.isInteger(candidate)) return candidate;
  return undefined;
}

/** Seconds from now until an absolute reset: unix s, unix ms (≥ 1e12), RFC 3339 or HTTP date. */
function secondsUntil(value: unknown, now: number): number | undefined {
  const number = numeric(value);
  const at =
    number !== undefined
      ? number >= 1e12
        ? number
        : number * 1000
      : typeof value === 'string'
        ? Date.parse(value)
        : NaN;
  return Number.isFinite(at) ? Math.max(0, (at - now) / 1000) : undefined;
}

/** Every retry hint found anywhere in the frame, in seconds from now (docs/upstream/provider-a.md §10). */
export function retryHints(payload: unknown, headers: UpstreamFailure['headers'], now: number): number[] {
  const hints: number[] = [];
  const header = retryAfterHeaderSeconds(headers?.['retry-after'], now);
  if (header !== undefined) hints.push(header);
  const visit = (value: unknown, depth: number): void => {
    if (depth > 8) return;
    if (Array.isArray(value)) return value.forEach((item) => visit(item, depth + 1));
    if (!isJsonObject(value)) return;
    for (const [rawKey, entry] of Object.entries(value)) {
      const key = rawKey.toLowerCase().replace(/-/g, '_');
      if (SECONDS_KEYS.has(key)) {
        const seconds = numeric(entry);
        if (seconds !== undefined && seconds >= 0) hints.push(seconds);
      } else if (RESET_AT_KEYS.has(key)) {
        const seconds = secondsUntil(entry, now);
        if (seconds !== undefined) hints.push(seconds);
      } else if (key === 'message' && typeof entry === 'string') {
        const match = TRY_AGAIN.exec(entry);
        if (match) hints.push(Number(match[1]) / (match[2].toLowerCase() === 'ms' ? 1000 : 1));
      }
      visit(entry, depth + 1);
    }
  };
  visit(payload, 0);
  return hints;
}

/** The upstream code, if it is a plain identifier (logged; never a message text). */
function safeCode(code: unknown): string | undefined {
  return typeof code === 'string' && SAFE_CODE.test(code) ? code : undefined;
}

/**
 * Classifies an upstream failure into our error table (docs/upstream/provider-a.md §10, first matching row wins). Only the
 * status and the upstream's error *code* reach `detail`; the message only reaches the log's
 * `upstream_message`, sanitized and bounded (never a client).
 */
export function classifyUpstreamFailure(failure: UpstreamFailure): GatewayError {
  const now = failure.now ?? Date.now();
  const error = errorObject(failure.payload);
  const status = failure.status ?? eventStatus(failure.payload, error);
  const codes = [error.code, error.type].filter((value): value is string => typeof value === 'string');
  const code = safeCode(codes[0]);
  const detail = `upstream${status !== undefined ? ` status ${status}` : ''}${code ? ` code ${code}` : ''}`;
  const upstream = {
    type: safeCode(error.type),
    code: safeCode(error.code),
    message: sanitizeUpstreamMessage(error.message),
  };
  const base = { detail, upstreamStatus: status, upstream };
  // Every branch reads the hints the same way: the latest moment any of them names.
  const hints = retryHints(failure.payload, failure.headers, now);
  const latestHint = hints.length > 0 ? Math.max(...hints) : undefined;

  if (codes.some((value) => USAGE_LIMIT_CODES.has(value))) {
    const fallback = exhaustedWindowResetSeconds(failure.planWindows, now);
    return new GatewayError('usage_limit', { ...base, retryAfterSeconds: latestHint ?? fallback });
  }
  if (codes.includes('context_length_exceeded')) return new GatewayError('context_window', base);
  if (status === 429 || codes.includes('rate_limit_exceeded')) {
    return new GatewayError('rate_limited', { ...base, retryable: true, retryAfterSeconds: latestHint });
  }
  if (status === 401) return new GatewayError('auth', base);
  // A 403 is a Cloudflare challenge, a region block or a deactivated workspace far more often than
  // a bad token: an upstream error, not "log in again", unless the body says the token is invalid.
  // Neither is fixed by a refresh (the Codex CLI refreshes only on 401).
  if (status === 403) {
    return saysTokenInvalid(codes, error.message)
      ? new GatewayError('auth', base)
      : new GatewayError('upstream', { ...base, publicMessage: 'the upstream refused access (HTTP 403)' });
  }
  // The backend's 404 body is `{"detail": "Model not found"}`.
  const refusal = modelRefusal(
    status,
    codes,
    error.message ?? (isJsonObject(failure.payload) ? failure.payload.detail : undefined),
  );
  if (refusal) return new GatewayError(refusal, base);
  if (status === 400 || status === 404 || status === 422) return new GatewayError('bad_request', base);
  return new GatewayError('upstream', { ...base, retryable: true, retryAfterSeconds: latestHint });
}

/**
 * Connect errors, early closes and protocol errors: `upstream`, retried before output (docs/upstream/provider-a.md §10 row 6).
 * With the `target` the connection was for, the log line names its errno, host and proxy and the fix.
 */
export function connectionFailure(
  detail: string,
  cause?: unknown,
  target?: Omit<ConnectionTarget, 'setting'>,
): GatewayError {
  const upstream =
    target && cause !== undefined ? connectionCause(cause, { ...target, setting: 'PROVIDER_A_URL' }) : undefined;
  return new GatewayError('upstream', { detail, retryable: true, cause: sanitizeCause(cause), upstream });
}

/**
 * A connection kept from the chat's last turn that turned out stale at the turn's first event: the
 * server closed it, or answered the continuation with a chain error (`code`). Nothing reached the
 * client; the turn is sent again in full on a fresh connection (`ChatTurnLease.reopenAfter`).
 */
export function staleSessionFailure(code?: string): GatewayError {
  return code === undefined
    ? connectionFailure('kept connection closed before its first event')
    : new GatewayError('upstream', {
        detail: 'kept connection: the server no longer knows its chain',
        retryable: true,
        upstream: { code },
      });
}

/** Keeps only the error class and errno code of a network failure (messages may echo upstream text). */
function sanitizeCause(cause: unknown): unknown {
  if (!(cause instanceof Error)) return undefined;
  const code = errnoOf(cause) ?? errnoOf(cause.cause);
  return { name: cause.name, code };
}

const TOKEN_INVALID_CODES = /^(invalid_token|token_invalid|token_invalidated|token_expired|token_revoked)$/i;
const TOKEN_INVALID_MESSAGE =
  /\btoken\b[^.]*\b(invalid|invalidated|expired|revoked)\b|\b(invalid|expired|revoked)\b[^.]*\btoken\b/i;

/** A 403 body that blames the access token (read to classify, never copied anywhere). */
function saysTokenInvalid(codes: readonly string[], message: unknown): boolean {
  return (
    codes.some((code) => TOKEN_INVALID_CODES.test(code)) ||
    (typeof message === 'string' && TOKEN_INVALID_MESSAGE.test(message))
  );
}

const NEWER_CLIENT = /requires a newer version of codex/i;
const NOT_FOR_ACCOUNT = /not supported when using codex with a chatgpt account/i;
const MODEL_NOT_FOUND = /\bmodel not found\b/i;

/**
 * The backend's refusals of the model itself (read to classify, never copied anywhere): "The
 * '<model>' model requires a newer version of Codex…", "…is not supported when using Codex with
 * a ChatGPT account" (both 400) and 404 "Model not found". Never retried, never a token refresh;
 * the adapter names the model in the message and drops it from the live list.
 */
function modelRefusal(
  status: number | undefined,
  codes: readonly string[],
  message: unknown,
): 'model_requires_newer_client' | 'model_not_entitled' | 'not_found' | undefined {
  const text = typeof message === 'string' ? message : '';
  if (NEWER_CLIENT.test(text)) return 'model_requires_newer_client';
  if (NOT_FOR_ACCOUNT.test(text)) return 'model_not_entitled';
  if (status === 404 && (MODEL_NOT_FOUND.test(text) || codes.includes('model_not_found'))) return 'not_found';
  return undefined;
}

/** The internal codes that mean "this model is not served to this login" (see `modelRefusal`). */
export const MODEL_REFUSAL_CODES: ReadonlySet<string> = new Set(Object.keys(MODEL_REFUSAL_FIX));

const isModelRefusal = (code: string): code is keyof typeof MODEL_REFUSAL_FIX => MODEL_REFUSAL_CODES.has(code);

/**
 * A model refusal with the model named in its message (the id the gateway sent upstream, cut at
 * 128 characters); any other error as it is.
 */
export function namingModel(error: unknown, upstreamModel: string): unknown {
  if (!(error instanceof GatewayError) || !isModelRefusal(error.code)) return error;
  const what = MODEL_REFUSAL_FIX[error.code];
  return error.with({ publicMessage: `model ${quoted(upstreamModel, 128)}: ${what}` });
}
