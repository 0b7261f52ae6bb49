import type { IncomingHttpHeaders } from 'node:http';
import { sha256Hex } from '../hashing';

/** The token of `Authorization: Bearer <token>`; `undefined` when absent, malformed or empty. */
export function bearerToken(header: string | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+(.+)$/i.exec(header.trim());
  const token = match?.[1].trim();
  return token ? token : undefined;
}

/**
 * The caller (design.md §5, gateway-behaviours.md §3.1): `header:<value>` of
 * GATEWAY_CALLER_HEADER when set and non-blank, else `bearer:<sha256 of the bearer>`, else
 * `anonymous`. The raw value is never logged; use `callerHash` in logs.
 */
export function resolveCaller(
  headers: IncomingHttpHeaders,
  callerHeader: string | undefined,
  token: string | undefined = bearerToken(headers.authorization),
): string {
  if (callerHeader) {
    const raw = headers[callerHeader];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (typeof value === 'string' && value.trim() !== '') return `header:${value}`;
  }
  if (token !== undefined) return `bearer:${sha256Hex(token)}`;
  return 'anonymous';
}

const CALLER = Symbol('caller');
type RequestWithCaller = { [CALLER]?: string };

/** Keeps the caller the bearer guard resolved on the request, so nothing parses the bearer again. */
export function attachCaller(request: object, caller: string): void {
  (request as RequestWithCaller)[CALLER] = caller;
}

/** The caller the guard attached; resolved from the headers for a request the guard did not see. */
export function callerOf(request: { readonly headers: IncomingHttpHeaders }, callerHeader: string | undefined): string {
  return (request as RequestWithCaller)[CALLER] ?? resolveCaller(request.headers, callerHeader);
}

/** What logs may show of a caller: the first 16 hex characters of SHA-256 of the caller string. */
export function callerHash(caller: string): string {
  return sha256Hex(caller).slice(0, 16);
}
