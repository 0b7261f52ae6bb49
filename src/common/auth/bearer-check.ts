import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../core/gateway.error';
import { sha256Digest } from '../hashing';

/** The token of `Authorization: Bearer <token>`; `undefined` when absent, malformed or empty. */
export function bearerToken(header: string | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+(.+)$/i.exec(header.trim());
  const token = match?.[1].trim();
  return token ? token : undefined;
}

/** What the bearer is read from: a request's headers (the Node request, one object for its life). */
export interface BearerRequest {
  readonly headers: IncomingHttpHeaders;
}

const DIGEST = Symbol('bearerDigest');
type RequestWithDigest = { [DIGEST]?: Buffer | null };

/**
 * SHA-256 of the request's bearer token, `undefined` without one. Hashed at most once per request
 * and kept on it, so the body reader's check, the guard's check and the caller share one digest;
 * only the digest is kept, the token lives no longer than this call.
 */
export function bearerDigest(request: BearerRequest): Buffer | undefined {
  const kept = (request as RequestWithDigest)[DIGEST];
  if (kept !== undefined) return kept ?? undefined;
  const token = bearerToken(request.headers.authorization);
  const digest = token === undefined ? null : sha256Digest(token);
  (request as RequestWithDigest)[DIGEST] = digest;
  return digest ?? undefined;
}

/**
 * Whether a request's bearer is refused (docs/endpoints.md "Authentication"). With a secret:
 * anything but exactly `Bearer <secret>`, compared in constant time. Without: only a malformed
 * `Authorization` header, and nothing is hashed. The one rule of the global guard, and of the body
 * readers, which ask it before reading a byte of a body (a refused client never gets its body
 * read, inflated or parsed).
 */
export class BearerCheck {
  private readonly secretDigest?: Buffer;

  constructor(secret: string | undefined) {
    if (secret !== undefined) this.secretDigest = sha256Digest(secret);
  }

  /** Whether a secret is set (else only a malformed header is refused). */
  get hasSecret(): boolean {
    return this.secretDigest !== undefined;
  }

  /**
   * The answer to a refused request: 401 `invalid_api_key`. Without a secret only a malformed header
   * is refused, and the table's words (about the key) would mislead.
   */
  refusal(): GatewayError {
    return new GatewayError('invalid_api_key', this.hasSecret ? {} : { publicMessage: MALFORMED_HEADER });
  }

  refuses(request: BearerRequest): boolean {
    if (this.secretDigest) {
      // Digests on both sides have equal lengths, so timingSafeEqual never leaks the secret's length.
      const digest = bearerDigest(request);
      return digest === undefined || !timingSafeEqual(digest, this.secretDigest);
    }
    const { authorization } = request.headers;
    return authorization !== undefined && bearerToken(authorization) === undefined;
  }
}

const MALFORMED_HEADER =
  'malformed Authorization header: send `Authorization: Bearer <any token>`, or no Authorization header (this gateway sets no GATEWAY_BEARER_SECRET, so it takes any bearer)';
