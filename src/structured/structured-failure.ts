import type { Request, Response } from 'express';
import { writeErrorResponse } from '../common/errors/error-writer';
import { toGatewayError } from '../common/errors/to-gateway-error';
import { structuredHttpStatus } from '../core/error-codes';
import type { GatewayError } from '../core/gateway.error';
import { isCanceled } from '../core/gateway.error';
import type { StructuredAllowlist } from './structured-allowlist';
import type { AuditSubject, StructuredTelemetry } from './structured-telemetry';

/** The audit subject of a request from its raw body (which may be anything, or missing). */
export function auditSubjectOf(raw: unknown, caller: string, allowlist: StructuredAllowlist): AuditSubject {
  const body = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const model = body.model;
  return {
    requestId: body.request_id,
    model,
    operation: body.operation,
    caller,
    modelLabel: typeof model === 'string' && allowlist.has(model) ? model : 'other',
  };
}

/**
 * Answers a failure in the structured error shape (`{"error":{code,message,details?}, "request_id"?,
 * "contract_version"}` with Retry-After on 429/503, written by the error writer) and records
 * it once. The raw `request_id` is echoed whenever the body carried a usable one (a non-blank
 * string within its 128-character bound), so a client can correlate the answer; an over-long one is
 * never sent back. A client that already left (or whose body ended by its leaving: `canceled`)
 * gets nothing and is recorded as canceled.
 */
export function answerStructuredFailure(
  request: Request,
  response: Response,
  thrown: unknown,
  clientGone: boolean,
  telemetry: StructuredTelemetry,
): void {
  if (clientGone || isCanceled(thrown) || response.headersSent || response.destroyed) {
    telemetry.canceled();
    return;
  }
  writeErrorResponse(request, response, recordStructuredFailure(thrown, telemetry));
}

/** Records a structured failure once (audit line, metrics) and returns it as a GatewayError to answer. */
export function recordStructuredFailure(thrown: unknown, telemetry: StructuredTelemetry): GatewayError {
  const error = toGatewayError(thrown);
  // A bug, not an upstream failure: the client sees upstream_error, the request's line keeps the cause.
  telemetry.failed(
    error,
    structuredHttpStatus(error.spec),
    error.code === 'internal' ? (error.cause ?? error) : undefined,
  );
  return error;
}
