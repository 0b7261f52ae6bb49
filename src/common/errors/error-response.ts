import type { Request, RequestHandler, Response } from 'express';
import { CONTRACT_VERSION } from '../build/build-info';
import { familyMessage, structuredHttpStatus } from '../../core/error-codes';
import type { GatewayError } from '../../core/gateway.error';
import { codePointLength } from '../text';

export const STRUCTURED_ROUTE = '/v1/structured/inference';

/** The contract's bound on a structured `request_id`, in code points (contract "Limits"). */
export const MAX_REQUEST_ID_CHARS = 128;

/**
 * The `request_id` a structured answer may echo: a string with a non-whitespace character within
 * its bound. An id that breaks its own bound is not an id, and echoing it would send a megabyte of
 * the client's input back in a 400 (docs/structured.md).
 */
export function echoableRequestId(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/\S/u.test(value)) return undefined;
  return codePointLength(value) <= MAX_REQUEST_ID_CHARS ? value : undefined;
}

const STRUCTURED_ROUTE_MARK = Symbol('structuredRoute');
type MarkedRequest = Request & { [STRUCTURED_ROUTE_MARK]?: boolean };

/**
 * Marks requests of the structured route. Mounted only while the route is enabled, and only for a
 * POST to exactly its path: a disabled route, another method or a sub-path must answer exactly
 * like an unknown route (contract "Endpoints"), OpenAI shape included.
 */
export function markStructuredRoute(): RequestHandler {
  return (request, _response, next) => {
    (request as MarkedRequest)[STRUCTURED_ROUTE_MARK] = true;
    next();
  };
}

/** Structured inference answers in its contract's error shape; everything else in OpenAI's. */
export function isStructuredRoute(request: Request): boolean {
  return (request as MarkedRequest)[STRUCTURED_ROUTE_MARK] === true;
}

/** The JSON body and status for an error, in the shape of the route that failed. */
export function errorResponseBody(
  error: GatewayError,
  structured: boolean,
  requestId?: unknown,
): { status: number; body: unknown } {
  const spec = error.spec;
  const message = error.publicMessage ?? familyMessage(error.code, error.provider, error.resetsAt) ?? spec.message;
  if (structured) {
    const status = structuredHttpStatus(spec);
    const body: Record<string, unknown> = {
      error: { code: spec.structuredCode, message, ...(error.details ? { details: error.details } : {}) },
    };
    const echoed = echoableRequestId(requestId);
    if (echoed !== undefined) body.request_id = echoed;
    body.contract_version = CONTRACT_VERSION;
    return { status, body };
  }
  return {
    status: spec.status,
    body: { error: { message, type: spec.type, code: spec.openaiCode, param: error.param ?? null } },
  };
}

/** Writes `error` as JSON (with Retry-After on 429/503) unless headers were already sent. */
export function sendErrorResponse(request: Request, response: Response, error: GatewayError): number {
  const requestId = (request.body as { request_id?: unknown } | undefined)?.request_id;
  const { status, body } = errorResponseBody(error, isStructuredRoute(request), requestId);
  if (response.headersSent) return status;
  if (status === 429 || status === 503) response.setHeader('Retry-After', String(error.retryAfterHeader ?? 5));
  response.status(status).json(body);
  return status;
}
