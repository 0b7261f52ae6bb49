import type { EventLogger } from '../../core/event-logger';
import type { GatewayError } from '../../core/gateway.error';

/**
 * The fields of the `upstream_*` log lines (docs/endpoints.md "Log records"). The family, the
 * login's alias and the attempt come from the runner; the cause from the failure: our code, the
 * upstream's status or the child's exit, its error type/code and a bounded, sanitized message.
 * Never prompt text, tool arguments or output, tokens or e-mail addresses.
 */
export type UpstreamLogFields = Record<string, string | number | boolean | null | undefined>;

/** A failure's cause as log fields (the upstream's own words only as `sanitizeUpstreamMessage` left them). */
export function upstreamCauseFields(failure: GatewayError): UpstreamLogFields {
  const cause = failure.upstream;
  return {
    error_code: failure.code,
    retryable: failure.retryable,
    upstream_status: failure.upstreamStatus,
    upstream_type: cause?.type,
    upstream_code: cause?.code,
    upstream_message: cause?.message,
    exit_code: cause?.exitCode,
    exit_signal: cause?.exitSignal,
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
