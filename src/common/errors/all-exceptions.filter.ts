import { ArgumentsHost, Catch, ExceptionFilter, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { EventLogger } from '../../core/event-logger';
import { ROOT_LOGGER } from '../logging/logging.module';
import { requestLoggerOf } from '../logging/request-log';
import { sendErrorResponse } from './error-response';
import { toGatewayError } from './to-gateway-error';

/**
 * The one global filter. After SSE headers went out, the stream's own error path owns the
 * response, so this filter never touches headers again (style.md B.5 #7).
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(@Inject(ROOT_LOGGER) private readonly rootLogger: EventLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const error = toGatewayError(exception);
    if (error.code === 'internal') {
      requestLoggerOf(request, this.rootLogger).error({ event: 'unhandled_error', err: exception }, 'unhandled_error');
    }
    if (response.headersSent) {
      if (!response.writableEnded) response.end();
      return;
    }
    sendErrorResponse(request, response, error);
  }
}
