import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { callerOf } from '../common/auth/bearer-auth.guard';
import type { RouteFailureAnswer } from '../common/errors/all-exceptions.filter';
import { ROOT_LOGGER } from '../common/logging/logging.module';
import { arrivalOf, requestLoggerOf } from '../common/logging/request-log';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import type { EventLogger } from '../core/event-logger';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { StructuredAllowlist } from './structured-allowlist';
import { answerStructuredFailure, auditSubjectOf } from './structured-failure';
import { StructuredTelemetry } from './structured-telemetry';

/**
 * How the exception filter answers a structured request that failed outside the orchestrator,
 * chiefly on the bearer guard's `auth_error`: the same structured body, `structured_failure` record
 * and failure metric as every other structured error (docs/design/behaviours.md §8: "every
 * structured error response, incl. auth").
 */
@Injectable()
export class StructuredFailureAnswer implements RouteFailureAnswer {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly allowlist: StructuredAllowlist,
    private readonly metrics: GatewayMetrics,
    @Inject(ROOT_LOGGER) private readonly rootLogger: EventLogger,
  ) {}

  answer(request: Request, response: Response, exception: unknown): void {
    const caller = callerOf(request, this.config.server.callerHeader);
    const logger = requestLoggerOf(request, this.rootLogger);
    const telemetry = new StructuredTelemetry(
      this.metrics,
      logger,
      auditSubjectOf(request.body, caller, this.allowlist),
      arrivalOf(request),
    );
    answerStructuredFailure(request, response, exception, false, telemetry);
  }
}
