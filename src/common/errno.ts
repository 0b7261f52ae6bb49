/**
 * A failure's error code when it has one: a system error's (`EACCES`, `ECONNREFUSED`,
 * `EAI_AGAIN`…), undici's (`UND_ERR_CONNECT_TIMEOUT`), Node's (`ERR_…`) or TLS's
 * (`CERT_HAS_EXPIRED`, `DEPTH_ZERO_SELF_SIGNED_CERT`); never its message, which quotes paths,
 * hosts or content. What does not look like a code (one word of capitals, digits and `_`) is not
 * one, so nothing else reaches a log line.
 */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { readonly code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && ERROR_CODE.test(code) ? code : undefined;
}

const ERROR_CODE = /^[A-Z][A-Z0-9_]{1,63}$/;

/**
 * The first error code along a failure's `cause` chain (fetch wraps the socket's error) or in an
 * AggregateError's first error (a connection tried on several addresses). Read by shape, not
 * `instanceof`: Node's own errors may come from another realm than this module's `Error`.
 */
export function errnoAlong(error: unknown): string | undefined {
  let current = error as ErrorShape | undefined;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = errnoOf(current) ?? (Array.isArray(current.errors) ? errnoOf(current.errors[0]) : undefined);
    if (code !== undefined) return code;
    current = current.cause as ErrorShape | undefined;
  }
  return undefined;
}

interface ErrorShape {
  readonly code?: unknown;
  readonly cause?: unknown;
  readonly errors?: unknown;
}
