import { CODEX_OAUTH_CLIENT_ID, TOKEN_REFRESH_TIMEOUT_MS, TOKEN_RESPONSE_MAX_BYTES } from './provider-a.constants';
import { parseJsonOrUndefined, readBodyCapped } from './provider-a.http-body';
import { decodeJwtClaims, RefreshedTokens } from './provider-a.login-file';

/** A failed refresh; `errorCode` is the endpoint's `error` field (logged), never its description. */
export class TokenRefreshError extends Error {
  constructor(
    readonly errorCode: string | undefined,
    readonly status: number | undefined,
  ) {
    super(`token refresh failed${status !== undefined ? ` (HTTP ${status})` : ''}`);
    this.name = 'TokenRefreshError';
  }
}

const nonEmptyString = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * One OAuth refresh-token grant against the Codex token endpoint (provider_a.md §1.5). It is not
 * tied to any caller's signal: refresh tokens are single use, so once sent the answer must be
 * read and persisted even when the request that triggered it went away.
 */
export async function requestTokenRefresh(tokenUrl: string, refreshToken: string, now: () => number = Date.now): Promise<RefreshedTokens> {
  let response: Response;
  try {
    response = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CODEX_OAUTH_CLIENT_ID }).toString(),
      signal: AbortSignal.timeout(TOKEN_REFRESH_TIMEOUT_MS),
    });
  } catch {
    throw new TokenRefreshError('network_error', undefined);
  }
  const body = parseJsonOrUndefined(await readBodyCapped(response, TOKEN_RESPONSE_MAX_BYTES).catch(() => '')) as Record<string, unknown> | undefined;
  const accessToken = nonEmptyString(body?.access_token);
  if (response.status !== 200 || !accessToken) {
    throw new TokenRefreshError(nonEmptyString(body?.error), response.status);
  }
  const expiresIn = body?.expires_in;
  const exp = decodeJwtClaims(accessToken)?.exp;
  const expiresAt =
    typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0
      ? now() + expiresIn * 1000
      : typeof exp === 'number' && exp > 0
        ? exp * 1000
        : undefined;
  return {
    accessToken,
    refreshToken: nonEmptyString(body?.refresh_token),
    idToken: nonEmptyString(body?.id_token),
    expiresAt,
  };
}
