import { ArgumentsHost, Catch, ExceptionFilter, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { EventLogger } from '../../core/event-logger';
import { GatewayError } from '../../core/gateway.error';
import { ROOT_LOGGER } from '../logging/logging.module';
import { requestLoggerOf } from '../logging/request-log';
import { writeErrorResponse } from './error-writer';
import { toGatewayError } from './to-gateway-error';

/**
 * The OpenAI Responses API's paths. They are not served (docs/endpoints.md), but a client that
 * chose them by itself gets the way back to Chat Completions instead of a bare "no such route".
 */
const RESPONSES_API_PATH = /^\/v1\/responses(\/|$)/;

/**
 * The one global filter: logs a bug once and answers through the error writer, which never
 * touches headers that already went out (the stream's own error path owns them; docs/design/code-shape.md B.5 item 7).
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(@Inject(ROOT_LOGGER) private readonly rootLogger: EventLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    let error = toGatewayError(exception);
    if (error.code === 'route_not_found' && RESPONSES_API_PATH.test(request.path)) {
      error = new GatewayError('responses_api_not_served');
    }
    if (error.code === 'internal') {
      requestLoggerOf(request, this.rootLogger).error({ event: 'unhandled_error', err: exception }, 'unhandled_error');
    }
    writeErrorResponse(request, response, error);
  }
}
