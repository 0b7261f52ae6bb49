import type { EventLogger } from '../../core/event-logger';
import type { GatewayError } from '../../core/gateway.error';
import { sanitizeUpstreamMessage } from '../../common/logging/request-log';

/**
 * The fields of the `upstream_*` log lines (docs/endpoints.md "Log records"). The family, the
 * login's alias and the attempt come from the runner; the cause from the failure: our code, the
 * upstream's status or the child's exit, its error type/code and a bounded, sanitized message.
 * Never prompt text, tool arguments or output, tokens or e-mail addresses.
 */
export type UpstreamLogFields = Record<string, string | number | boolean | null | undefined>;

/**
 * A failure's cause as log fields: the gateway's own account of it (`detail`, which tells apart
 * what one code covers, such as the idle bound and the turn's deadline for `timeout`; `fix`, when
 * the failure's fix is not the family's usual one, such as a login file it may not read), and the
 * upstream's own words only as `sanitizeUpstreamMessage` left them (`detail` passes it too: some
 * carry the error codes a CLI printed), and for a connection that never reached the upstream its
 * errno, host, proxy and fix (connection-failure.ts).
 */
export function upstreamCauseFields(failure: GatewayError): UpstreamLogFields {
  const cause = failure.upstream;
  return {
    error_code: failure.code,
    detail: sanitizeUpstreamMessage(failure.detail),
    retryable: failure.retryable,
    upstream_status: failure.upstreamStatus,
    upstream_type: cause?.type,
    upstream_code: cause?.code,
    upstream_message: cause?.message,
    exit_code: cause?.exitCode,
    exit_signal: cause?.exitSignal,
    upstream_errno: cause?.errno,
    upstream_host: cause?.host,
    proxy_host: cause?.proxyHost,
    // The gateway's own words, whole (a fix cut short is of no use): the failure's own, else the connection's.
    fix: failure.fix ?? cause?.fix,
  };
}

/** One `upstream_*` line; absent fields are left out rather than written as null. */
export function logUpstream(
  logger: EventLogger,
  level: 'info' | 'warn',
  event: string,
  fields: UpstreamLogFields,
): void {
  const record: Record<string, unknown> = { event };
  for (const key in fields) if (fields[key] !== undefined) record[key] = fields[key];
  logger[level](record, event);
}
