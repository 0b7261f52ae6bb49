import { createHash } from 'node:crypto';

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * The first 32 hex characters of a digest formatted `8-4-4-4-12`: how provider_a's session and
 * cache keys and provider_b's session id are derived from a seed (provider_a.md §3, provider_b.md §5.3).
 */
export function uuidFromHex(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
