import { GatewayError } from '../../core/gateway.error';
import type { ProviderId } from '../../core/provider-id';
/**
 * Reads at most `maxBytes` of a fetch response body as text and cancels the rest: error bodies
 * and token answers are bounded (docs/upstream/provider-a.md §1.5, §4.2), so a hostile or broken upstream
 * cannot make us buffer without limit.
 */
export async function readBodyCapped(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - total;
      chunks.push(value.byteLength > room ? value.subarray(0, room) : value);
      total += Math.min(value.byteLength, room);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The whole body as text when it is at most `maxBytes`, else `undefined` (the rest is cancelled):
 * for success bodies that must be complete, where a silent cut would change their meaning.
 */
export async function readBodyWithin(response: Response, maxBytes: number): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return Buffer.concat(chunks).toString('utf8');
      total += value.byteLength;
      if (total > maxBytes) return undefined;
      chunks.push(value);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** JSON.parse that returns `undefined` instead of throwing. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * At most `maxBytes` of the body parsed as JSON; `undefined` when it cannot be read or parsed
 * (a body cut at the cap does not parse either).
 */
export async function readJsonCapped(response: Response, maxBytes: number): Promise<unknown> {
  return parseJsonOrUndefined(await readBodyCapped(response, maxBytes).catch(() => ''));
}

/**
 * Lower-cases header names and joins repeated values (node and fetch header shapes). A fetch
 * `Headers` is told by its methods, not by `instanceof`: the proxy's fetch is the `undici`
 * package's, whose `Headers` is another class than the built-in fetch's.
 */
export function lowerCaseHeaders(
  headers: Headers | Record<string, string | string[] | undefined>,
): Record<string, string> {
  const result: Record<string, string> = {};
  if (isFetchHeaders(headers)) {
    headers.forEach((value, name) => (result[name.toLowerCase()] = value));
    return result;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

/** A node header record holds strings and arrays; only a fetch `Headers` has a `forEach` method. */
function isFetchHeaders(headers: Headers | Record<string, string | string[] | undefined>): headers is Headers {
  return typeof headers.forEach === 'function';
}

/**
 * The failure of a vendor's usage-endpoint read that answered other than 2xx (docs/accounts.md
 * "What each login has left"): its body is left unread, a refused login (401, 403) is `auth`, any
 * other status `upstream`; only the status is kept, never the body.
 */
export function usageReadRefused(response: Response, provider: ProviderId): GatewayError {
  void response.body?.cancel().catch(() => undefined);
  const code = response.status === 401 || response.status === 403 ? 'auth' : 'upstream';
  return new GatewayError(code, {
    provider,
    upstreamStatus: response.status,
    detail: `usage endpoint status ${response.status}`,
  });
}
