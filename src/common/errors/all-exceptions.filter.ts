import { ArgumentsHost, Catch, ExceptionFilter, Inject, Optional } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { EventLogger } from '../../core/event-logger';
import { ClientDisconnectedError, GatewayError } from '../../core/gateway.error';
import { DrainService } from '../lifecycle/drain.service';
import { ROOT_LOGGER } from '../logging/logging.module';
import { requestLoggerOf } from '../logging/request-log';
import { isStructuredRoute, writeErrorResponse } from './error-writer';
import { toGatewayError } from './to-gateway-error';

/**
 * The OpenAI Responses API's paths. They are not served (docs/endpoints.md), but a client that
 * chose them by itself gets the way back to Chat Completions instead of a bare "no such route".
 */
const RESPONSES_API_PATH = /^\/v1\/responses(\/|$)/;

/** How a route that records its own failures answers one the filter caught. */
export interface RouteFailureAnswer {
  answer(request: Request, response: Response, exception: unknown): void;
}

/**
 * The structured route's RouteFailureAnswer: its contract's error shape, plus the audit record and
 * failure metric every structured error gets, the bearer's refusal included
 * (docs/design/behaviours.md §8). Provided by StructuredModule, so only while the route is enabled.
 */
export const STRUCTURED_FAILURE_ANSWER = Symbol('StructuredFailureAnswer');

/**
 * The one exception filter, for every route: what a handler, a guard or Nest's router throws is
 * answered through the error writer, from the one error table (docs/design/code-shape.md B.5 item 7).
 * The structured route's requests go to its RouteFailureAnswer; all others are answered in the
 * OpenAI shape, here. A bug (anything but a GatewayError, which was recorded where it was raised) is
 * logged once. A client that left gets nothing: the chat turn recorded it as canceled. The writer
 * never touches headers that already went out (the stream's own error path owns them).
 *
 * From the drain deadline on, no route answers "no such route": the entry step (trackInFlight)
 * lets a POST through for its route's body reader to refuse and record, and a POST no route
 * takes (an unknown path, a path served only to GET) gets the same `draining` 503 every other
 * new request gets, with the `Retry-After` and `Connection: close` it set. The router answers in
 * the tick the request arrived, so the deadline as it is now is the one the request met.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(
    @Inject(ROOT_LOGGER) private readonly rootLogger: EventLogger,
    @Optional() @Inject(STRUCTURED_FAILURE_ANSWER) private readonly structured?: RouteFailureAnswer,
    @Optional() private readonly drain?: DrainService,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    if (this.structured !== undefined && isStructuredRoute(request)) {
      this.structured.answer(request, response, exception);
      return;
    }
    if (exception instanceof ClientDisconnectedError) return;
    let error = toGatewayError(exception);
    if (error.code === 'route_not_found' && this.drain?.pastDeadline) {
      error = new GatewayError('draining');
    } else if (error.code === 'route_not_found' && RESPONSES_API_PATH.test(request.path)) {
      error = new GatewayError('responses_api_not_served');
    }
    if (error.code === 'internal' && !(exception instanceof GatewayError)) {
      // The request's one failure line (its access line then stays info): what the client got, as
      // every failure line says it, and the bug with its stack to report.
      requestLoggerOf(request, this.rootLogger).error(
        { event: 'unhandled_error', status: error.spec.status, error_code: error.code, err: exception },
        'unhandled_error',
      );
    }
    if (response.destroyed) return;
    writeErrorResponse(request, response, error);
  }
}
