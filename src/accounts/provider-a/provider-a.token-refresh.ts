import type { FailedRefreshGrant } from '../refresh-grant';
import { postRefreshGrant, tokenEndpointFailure } from '../refresh-grant';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import type { RefreshedTokens } from './provider-a.login-file';
import { decodeJwtClaims } from './provider-a.login-file';
import { nonEmptyString } from '../../common/json';

/** The public OAuth client id of the Codex CLI (docs/upstream/provider-a.md §1.5). */
export const CODEX_OAUTH_CLIENT_ID = 'app_EMoamEEZ73f0CkXaXp7hrann';

/** The token endpoint is not bounded by any caller's turn (the rotated token must be saved). */
export const TOKEN_REFRESH_TIMEOUT_MS = 30_000;

/**
 * The endpoint answered without a token: a refusal of the grant or a failure of its own, which
 * `answer` tells apart (`grantRefused`). Its `errorCode` is the endpoint's `error` field (logged),
 * never its description.
 */
export class TokenRefreshError extends Error {
  constructor(readonly answer: FailedRefreshGrant) {
    super(`token refresh failed (HTTP ${answer.status})`);
    this.name = 'TokenRefreshError';
  }
}

/**
 * One OAuth refresh-token grant against the Codex token endpoint (docs/upstream/provider-a.md §1.5). The new
 * expiry is `now + expires_in`, else the new access token's JWT `exp`. An endpoint that gives no
 * answer at all rejects with the shared `tokenEndpointFailure` (a GatewayError, not a login
 * problem); an answer without a token rejects with TokenRefreshError.
 */
export async function requestTokenRefresh(
  tokenUrl: string,
  refreshToken: string,
  now: () => number = Date.now,
  proxy?: UpstreamProxy,
): Promise<RefreshedTokens> {
  let answer: Awaited<ReturnType<typeof postRefreshGrant>>;
  try {
    answer = await postRefreshGrant(
      tokenUrl,
      { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CODEX_OAUTH_CLIENT_ID },
      TOKEN_REFRESH_TIMEOUT_MS,
      proxy,
    );
  } catch (error) {
    throw tokenEndpointFailure('provider_a', error);
  }
  if (!answer.ok) throw new TokenRefreshError(answer);
  const { accessToken, body, expiresInSeconds } = answer;
  const exp = decodeJwtClaims(accessToken)?.exp;
  const expiresAt =
    expiresInSeconds !== undefined
      ? now() + expiresInSeconds * 1000
      : typeof exp === 'number' && exp > 0
        ? exp * 1000
        : undefined;
  return {
    accessToken,
    refreshToken: nonEmptyString(body.refresh_token),
    idToken: nonEmptyString(body.id_token),
    expiresAt,
  };
}
