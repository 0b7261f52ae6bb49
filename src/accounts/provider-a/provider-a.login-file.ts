import { isJsonObject, nonEmptyString } from '../../common/json';

/** What one read of the Codex login file gives us (docs/upstream/provider-a.md §1.2). */
export interface LoginState {
  readonly accessToken: string;
  readonly accountId: string;
  readonly refreshToken?: string;
  readonly idToken?: string;
  /** Epoch ms, or `undefined` when neither `expires_at` nor the JWT `exp` says. */
  readonly expiresAt?: number;
}

/** Why a login file cannot be used; the reason goes to logs only (never token values). */
export class LoginFileError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'LoginFileError';
  }
}

const AUTH_CLAIM = 'https://api.openai.com/auth';

/** The JWT payload (second segment, base64url JSON); signatures are never verified. */
export function decodeJwtClaims(token: string | undefined): Record<string, unknown> | undefined {
  const segment = token?.split('.')[1];
  if (!segment) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isJsonObject(claims) ? claims : undefined;
  } catch {
    return undefined;
  }
}

/** `chatgpt_account_id` from the `https://api.openai.com/auth` claim object of a JWT. */
export function accountIdFromJwt(token: string | undefined): string | undefined {
  const auth = decodeJwtClaims(token)?.[AUTH_CLAIM];
  return isJsonObject(auth) ? nonEmptyString(auth.chatgpt_account_id) : undefined;
}

/** Expiry in epoch ms: positive `expires_at` (unix s) first, else the access token's `exp` (docs/upstream/provider-a.md §1.3). */
export function tokenExpiry(expiresAtSeconds: unknown, accessToken: string): number | undefined {
  if (typeof expiresAtSeconds === 'number' && Number.isFinite(expiresAtSeconds) && expiresAtSeconds > 0)
    return expiresAtSeconds * 1000;
  const exp = decodeJwtClaims(accessToken)?.exp;
  return typeof exp === 'number' && Number.isFinite(exp) && exp > 0 ? exp * 1000 : undefined;
}

/** Parses the generic JSON object of the login file; missing pieces are LoginFileErrors. */
export function parseLoginFile(document: Record<string, unknown>): LoginState {
  const tokens = document.tokens;
  if (!isJsonObject(tokens)) throw new LoginFileError('no tokens object');
  const accessToken = nonEmptyString(tokens.access_token);
  if (!accessToken) throw new LoginFileError('no access token');
  const idToken = nonEmptyString(tokens.id_token);
  const accountId = nonEmptyString(tokens.account_id) ?? accountIdFromJwt(idToken) ?? accountIdFromJwt(accessToken);
  if (!accountId) throw new LoginFileError('no account id');
  return {
    accessToken,
    accountId,
    refreshToken: nonEmptyString(tokens.refresh_token),
    idToken,
    expiresAt: tokenExpiry(tokens.expires_at, accessToken),
  };
}

/** The new token set a refresh returned (docs/upstream/provider-a.md §1.5). */
export interface RefreshedTokens {
  readonly accessToken: string;
  /** Only when a new non-empty one came back (rotation). */
  readonly refreshToken?: string;
  readonly idToken?: string;
  /** Epoch ms. */
  readonly expiresAt?: number;
}

/**
 * The login document after a refresh (docs/upstream/provider-a.md §1.6): the file as it is now with the new tokens, a new
 * `last_refresh`, `expires_at` only when the file already had it, and no other key added.
 */
export function applyRefresh(
  document: Record<string, unknown>,
  refreshed: RefreshedTokens,
  now: Date,
): Record<string, unknown> {
  const tokens: Record<string, unknown> = isJsonObject(document.tokens) ? { ...document.tokens } : {};
  tokens.access_token = refreshed.accessToken;
  if (refreshed.refreshToken) tokens.refresh_token = refreshed.refreshToken;
  if (refreshed.idToken) tokens.id_token = refreshed.idToken;
  if ('expires_at' in tokens && refreshed.expiresAt !== undefined)
    tokens.expires_at = Math.floor(refreshed.expiresAt / 1000);
  return { ...document, tokens, last_refresh: now.toISOString() };
}
