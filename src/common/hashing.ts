import { hash } from 'node:crypto';

/**
 * SHA-256 as lower-case hex. Node's one-shot `crypto.hash` (Node ≥ 20.12) skips the Hash object
 * `createHash` builds: a chat turn hashes its caller, chat identity and upstream keys, and on
 * short strings the object was most of the cost.
 */
export function sha256Hex(value: string | Buffer): string {
  return hash('sha256', value, 'hex');
}

/** SHA-256 as raw bytes (for `timingSafeEqual`, which compares equal-length buffers). */
export function sha256Digest(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

/**
 * The first 32 hex characters of a digest formatted `8-4-4-4-12`: how provider_a's session and
 * cache keys and provider_b's session id are derived from a seed (docs/upstream/provider-a.md §3, docs/upstream/provider-b.md §5.3).
 */
export function uuidFromHex(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
