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
