import type { EventLogger } from '../../core/event-logger';
import type { GatewayError } from '../../core/gateway.error';
import { isFamilyId } from '../../core/family-registry';
import { loginFix } from '../../core/login-state';
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
 * errno, host, proxy and fix (connection-failure.ts). `omitMessage` leaves the upstream's words
 * out (CallContext.omitUpstreamMessage).
 */
export function upstreamCauseFields(failure: GatewayError, options: { omitMessage?: boolean } = {}): UpstreamLogFields {
  const cause = failure.upstream;
  return {
    error_code: failure.code,
    detail: sanitizeUpstreamMessage(failure.detail),
    retryable: failure.retryable,
    upstream_status: failure.upstreamStatus,
    upstream_type: cause?.type,
    upstream_code: cause?.code,
    upstream_message: options.omitMessage ? undefined : cause?.message,
    exit_code: cause?.exitCode,
    exit_signal: cause?.exitSignal,
    upstream_errno: cause?.errno,
    upstream_host: cause?.host,
    proxy_host: cause?.proxyHost,
    // The gateway's own words, whole (a fix cut short is of no use): the failure's own, else the connection's.
    fix: failure.fix ?? cause?.fix,
  };
}

/**
 * What the one line of a failed request (`chat_completion`, `structured_failure`) says of its
 * failure, beside its own code: the cause fields of the turn's last failure (what happened: the
 * gateway's detail, the upstream's status and words, the connection's errno) and its fix, whole:
 * the failure's own (a setting to raise, a login's own command, a file's permissions), the
 * connection's, else for a login the upstream or its file refused the family's login command.
 */
export function failureLogFields(failure: GatewayError, options: { omitMessage?: boolean } = {}): UpstreamLogFields {
  // The line has its own code; whether an attempt could be retried is the attempts' story.
  const { error_code: _code, retryable: _retryable, ...cause } = upstreamCauseFields(failure, options);
  const provider = failure.provider;
  if (cause.fix === undefined && failure.code === 'auth' && provider !== undefined && isFamilyId(provider))
    cause.fix = loginFix(provider, 'refresh_refused');
  return cause;
}

/**
 * One `upstream_*` line, at info: the turn's story. What the request's failure comes to is said
 * once, at warn or error, by its summary line (docs/troubleshooting.md "One line per failure").
 * Absent fields are left out rather than written as null.
 */
export function logUpstream(logger: EventLogger, event: string, fields: UpstreamLogFields): void {
  const record: Record<string, unknown> = { event };
  for (const key in fields) if (fields[key] !== undefined) record[key] = fields[key];
  logger.info(record, event);
}
