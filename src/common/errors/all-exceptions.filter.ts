import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { sendErrorResponse } from './error-response';
import { toGatewayError } from './to-gateway-error';

/**
 * The one global filter. After SSE headers went out, the stream's own error path owns the
 * response, so this filter never touches headers again (style.md B.5 #7).
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly logger: PinoLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const error = toGatewayError(exception);
    if (error.code === 'internal') {
      this.logger.error({ event: 'unhandled_error', err: exception }, 'unhandled_error');
    }
    if (response.headersSent) {
      if (!response.writableEnded) response.end();
      return;
    }
    sendErrorResponse(request, response, error);
  }
}
