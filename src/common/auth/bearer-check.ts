import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { sha256Digest } from '../hashing';

/** The token of `Authorization: Bearer <token>`; `undefined` when absent, malformed or empty. */
export function bearerToken(header: string | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+(.+)$/i.exec(header.trim());
  const token = match?.[1].trim();
  return token ? token : undefined;
}

/**
 * Whether a request's bearer is refused (docs/endpoints.md "Authentication"). With a secret:
 * anything but exactly `Bearer <secret>`, compared in constant time. Without: only a malformed
 * `Authorization` header. The one rule of the global guard, and of the body readers, which ask it
 * before reading a byte of a body (a refused client never gets its body read, inflated or parsed).
 */
export class BearerCheck {
  private readonly secretDigest?: Buffer;

  constructor(secret: string | undefined) {
    if (secret !== undefined) this.secretDigest = sha256Digest(secret);
  }

  refuses(headers: IncomingHttpHeaders, token: string | undefined = bearerToken(headers.authorization)): boolean {
    // Hashing both sides gives equal lengths, so timingSafeEqual never leaks the secret's length.
    if (this.secretDigest) return token === undefined || !timingSafeEqual(sha256Digest(token), this.secretDigest);
    return headers.authorization !== undefined && token === undefined;
  }
}
