import { readJsonCapped } from '../common/egress/http-body';
import type { UpstreamProxy } from '../common/egress/upstream-proxy';
import { nonEmptyString, type JsonObject } from '../common/json';
import { GatewayError } from '../core/gateway.error';
import { sanitizeIdentifier } from '../common/logging/request-log';

/** Bound on a token endpoint's answer (docs/upstream/provider-a.md §1.5); a larger body is a failed refresh. */
const TOKEN_RESPONSE_MAX_BYTES = 1024 * 1024;

/** The token endpoint's answer to a refresh-token grant. */
export type RefreshGrantAnswer =
  | {
      readonly ok: true;
      readonly accessToken: string;
      /** The whole JSON body; providers read their optional fields from it. */
      readonly body: JsonObject;
      /** `expires_in` when it is a positive number of seconds. */
      readonly expiresInSeconds?: number;
    }
  | {
      readonly ok: false;
      readonly status: number;
      /** The endpoint's `error` code (loggable after sanitizing), never its description. */
      readonly errorCode?: string;
    };

/** A grant the endpoint answered without a token: a refusal (`grantRefused`) or a failure of its own. */
export type FailedRefreshGrant = Extract<RefreshGrantAnswer, { readonly ok: false }>;

/** `error` as a string (RFC 6749), or the `code` of an `error` object (the Codex endpoint's shape). */
function errorCodeOf(body: JsonObject | undefined): string | undefined {
  const error = body?.error;
  if (typeof error === 'object' && error !== null && !Array.isArray(error))
    return nonEmptyString((error as JsonObject).code);
  return nonEmptyString(error) ?? nonEmptyString(body?.code);
}

/**
 * One OAuth refresh-token grant (docs/upstream/provider-a.md §1.5, docs/upstream/provider-b.md §2.2): a form POST bounded by
 * `timeoutMs` and by the 1 MiB body cap. Success = HTTP 200 with a non-empty `access_token`. It is
 * not tied to any caller's signal: refresh tokens may be single use, so once sent the answer must
 * be read and persisted even when the request that triggered it went away. Rejects only when the
 * endpoint could not be reached (the caller decides what that means). `proxy`: the egress proxy
 * (HTTPS_PROXY / HTTP_PROXY / NO_PROXY) when the caller has one.
 */
export async function postRefreshGrant(
  tokenUrl: string,
  form: Record<string, string>,
  timeoutMs: number,
  proxy?: UpstreamProxy,
  /** How the grant is sent: a form (RFC 6749, the Codex and Gemini CLIs) or JSON (the Claude Code CLI). */
  encoding: 'form' | 'json' = 'form',
  /**
   * The headers the family's CLI sends with its grant, in place of the plain ones (the content
   * type of `encoding`, `accept: application/json`). The form's fields go in `form`'s order.
   */
  headers?: Readonly<Record<string, string>>,
): Promise<RefreshGrantAnswer> {
  const send = proxy ? proxy.fetch.bind(proxy) : fetch;
  const response = await send(tokenUrl, {
    method: 'POST',
    headers: headers ?? {
      'content-type': encoding === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: encoding === 'json' ? JSON.stringify(form) : new URLSearchParams(form).toString(),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const parsed = await readJsonCapped(response, TOKEN_RESPONSE_MAX_BYTES);
  const body =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as JsonObject) : undefined;
  const accessToken = nonEmptyString(body?.access_token);
  if (response.status !== 200 || !body || !accessToken) {
    return { ok: false, status: response.status, errorCode: errorCodeOf(body) };
  }
  const expiresIn = body.expires_in;
  const expiresInSeconds =
    typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : undefined;
  return { ok: true, accessToken, body, expiresInSeconds };
}

/**
 * What to do when the token endpoint (its URL's `setting`) gave no answer: not a login problem.
 * `then`: what happens meanwhile, for a family whose requests do not refresh the login themselves.
 */
export function tokenEndpointFix(setting: string, then = 'the next request refreshes again'): string {
  return `the token endpoint (${setting}) did not answer: check the network and HTTPS_PROXY / NO_PROXY; ${then}`;
}

/**
 * What to do when the token endpoint (its URL's `setting`) answered `status` without a token and
 * without refusing the grant (a 5xx, a 429, a body that is not JSON: `failedGrantError`): the
 * endpoint's problem, not the login's. `then` as for `tokenEndpointFix`.
 */
export function tokenEndpointFailedFix(
  setting: string,
  status: number,
  then = 'the next request refreshes again',
): string {
  return `the token endpoint (${setting}) answered HTTP ${status} without a token, not a refusal of the login: nothing to do if it passes, else check the endpoint, the network and HTTPS_PROXY / NO_PROXY; ${then}`;
}

/**
 * What a refresh grant that never got an answer means, the same for every family (docs/error-codes.md):
 * not a login problem, so never `auth` ("log in again" would send the user to fix the wrong thing).
 * The endpoint's own time bound passing is `timeout` (504), like the turn and idle clocks that may
 * cut the same wait; any other failure to reach it (refused, reset, DNS, TLS) is a retryable
 * `upstream` error (502), retried before output like any upstream connect error.
 */
export function tokenEndpointFailure(provider: string, error: unknown): GatewayError {
  // By name: fetch rejects with a DOMException, which is not an `Error` of every realm.
  if ((error as { name?: unknown } | null)?.name === 'TimeoutError') {
    return new GatewayError('timeout', { detail: `${provider} token endpoint did not answer in time`, cause: error });
  }
  return new GatewayError('upstream', {
    detail: `${provider} token endpoint unreachable`,
    retryable: true,
    cause: error,
  });
}

/**
 * Whether the endpoint refused the grant itself: 400 (RFC 6749 section 5.2: `invalid_grant` for a
 * revoked or expired refresh token, `invalid_client`, …) or 401 (a client it does not know). Only
 * these are the login's problem, which a new login mends.
 */
export function grantRefused(answer: FailedRefreshGrant): boolean {
  return answer.status === 400 || answer.status === 401;
}

/**
 * What a grant the endpoint answered without a token means (docs/error-codes.md), one rule for
 * the families that use it: a refusal (`grantRefused`) is `auth`, and the pool takes the login
 * out until its file changes; any other answer (5xx, 429, a 200 without a token or whose body is
 * not JSON) is the endpoint failing, not the login: a retryable `upstream` error (502), retried
 * before output like an endpoint that gave no answer, with `fix`.
 */
export function failedGrantError(provider: string, answer: FailedRefreshGrant, fix?: string): GatewayError {
  const said = `${answer.status}${answer.errorCode !== undefined ? ` ${sanitizeIdentifier(answer.errorCode)}` : ''}`;
  if (grantRefused(answer))
    return new GatewayError('auth', { detail: `${provider} token refresh refused (${said})`, refreshRefused: true });
  return new GatewayError('upstream', {
    detail: `${provider} token endpoint failed (${said})`,
    upstreamStatus: answer.status,
    retryable: true,
    fix,
  });
}
