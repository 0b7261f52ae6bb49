import { callerHash } from '../common/auth/bearer-auth.guard';
import { loggedModelId, sanitizeIdentifier } from '../common/logging/request-log';
import { clientErrorLogFields } from '../common/errors/error-writer';
import { answerLogLevel } from '../core/error-codes';
import type { EventLogger } from '../core/event-logger';
import type { GatewayError } from '../core/gateway.error';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { failureLogFields } from '../providers/shared/upstream-log';

/** What the audit record knows about a request before (or without) a parsed envelope. */
export interface AuditSubject {
  /** `request_id` and `model` as sent (any type; sanitized when logged). */
  readonly requestId?: unknown;
  readonly model?: unknown;
  readonly operation?: unknown;
  readonly caller: string;
  /** Allowlisted id, or `other`. */
  readonly modelLabel: string;
}

/**
 * One structured request's audit record and metrics, written exactly once when it is answered
 * (docs/design/behaviours.md §6.10, §8): `structured_success`, `structured_replay`,
 * `structured_conflict` or `structured_failure`, with sanitized identifiers, the caller hash,
 * latency and code. Never input, schema, output or tokens.
 */
export class StructuredTelemetry {
  private recorded = false;

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly logger: EventLogger,
    private readonly subject: AuditSubject,
    /** Epoch ms the request arrived (arrivalOf): latency counts from there, as the deadline does. */
    private readonly arrivedAt: number,
  ) {}

  get latencyMs(): number {
    return Math.max(0, Date.now() - this.arrivedAt);
  }

  /** A success body was written; `replay` for stored replays and joiners. */
  succeeded(replay: boolean): void {
    if (!this.claim()) return;
    const event = replay ? 'structured_replay' : 'structured_success';
    this.metrics.structuredCompleted(this.subject.modelLabel, 'success', this.latencyMs / 1000);
    this.logger.info({ ...this.fields(event), status: 200 }, event);
  }

  /**
   * An error body was written with `status`. The line is the request's one warning (docs/
   * troubleshooting.md "One line per failure"): its code, and what the failure was and its fix
   * (`failureLogFields`: the upstream's words, the setting or login command); a bug's own `err`.
   */
  failed(error: GatewayError, status: number, bug?: unknown): void {
    if (!this.claim()) return;
    // An error the table answers in the OpenAI shape on every path has no contract code: its own.
    const code = error.spec.structuredCode ?? error.code;
    const event = code === 'idempotency_conflict' ? 'structured_conflict' : 'structured_failure';
    this.metrics.structuredFailure(code);
    this.metrics.structuredCompleted(this.subject.modelLabel, code, this.latencyMs / 1000);
    // A refusal the client can fix: the line says why, as the client was told.
    const reason = status >= 400 && status < 500 ? clientErrorLogFields(error) : undefined;
    const record = {
      ...this.fields(event),
      code,
      status,
      error_code: error.code,
      ...reason,
      // The upstream may quote the schema or echo the input, which structured logs never carry.
      ...failureLogFields(error, { omitMessage: true }),
      ...(bug === undefined ? {} : { err: bug }),
    };
    this.logger[answerLogLevel(status, error.code)](record, event);
  }

  /** The client left before its answer: not an error, nothing written (docs/design/decisions.md §4). */
  canceled(): void {
    if (!this.claim()) return;
    this.logger.info({ ...this.fields('structured_canceled'), status: 499 }, 'structured_canceled');
  }

  private claim(): boolean {
    if (this.recorded) return false;
    this.recorded = true;
    return true;
  }

  private fields(event: string): Record<string, unknown> {
    const { requestId, model, operation, caller } = this.subject;
    return {
      event,
      request_id: sanitizeIdentifier(typeof requestId === 'string' ? requestId : ''),
      caller_hash: callerHash(caller),
      // The allowlisted id is one the gateway serves; any other may hold a key pasted as the model.
      model: loggedModelId(typeof model === 'string' ? model : '', model === this.subject.modelLabel),
      operation: sanitizeIdentifier(typeof operation === 'string' ? operation : ''),
      latency_ms: this.latencyMs,
    };
  }
}
