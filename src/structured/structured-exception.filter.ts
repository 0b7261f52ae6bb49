import { ArgumentsHost, Catch, ExceptionFilter, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import { callerOf } from '../common/auth/bearer-auth.guard';
import { ROOT_LOGGER } from '../common/logging/logging.module';
import { requestLoggerOf } from '../common/logging/request-log';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import type { EventLogger } from '../core/event-logger';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { StructuredAllowlist } from './structured-allowlist';
import { answerStructuredFailure, auditSubjectOf } from './structured-failure';
import { StructuredTelemetry } from './structured-telemetry';

/**
 * Route-scoped (it runs before the global filter): failures raised before the handler, chiefly
 * the bearer guard's `auth_error`, get the same structured body, `structured_failure` record and
 * failure metric as every other structured error (docs/design/behaviours.md §8: "every structured
 * error response, incl. auth").
 */
@Catch()
export class StructuredExceptionFilter implements ExceptionFilter {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly allowlist: StructuredAllowlist,
    private readonly metrics: GatewayMetrics,
    @Inject(ROOT_LOGGER) private readonly rootLogger: EventLogger,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const caller = callerOf(request, this.config.server.callerHeader);
    const logger = requestLoggerOf(request, this.rootLogger);
    const telemetry = new StructuredTelemetry(
      this.metrics,
      logger,
      auditSubjectOf(request.body, caller, this.allowlist),
    );
    answerStructuredFailure(request, response, exception, false, telemetry, logger);
  }
}
