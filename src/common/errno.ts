/**
 * A failure's system error code (`EACCES`, `ECONNREFUSED`, `EAI_AGAIN`…) or undici's
 * (`UND_ERR_CONNECT_TIMEOUT`) when it has one; never its message, which quotes paths, hosts or
 * content. What does not look like a code is not one, so nothing else reaches a log line.
 */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { readonly code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && ERROR_CODE.test(code) ? code : undefined;
}

const ERROR_CODE = /^(E[A-Z0-9_]{1,24}|UND_ERR_[A-Z0-9_]{1,40})$/;
