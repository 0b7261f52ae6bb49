import { Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { callerOf } from '../common/auth/bearer-auth.guard';
import { writeErrorResponse } from '../common/errors/error-writer';
import { CompressJson } from '../common/http/compression.interceptor';
import { abortOnClientDisconnect, arrivedWhileDraining, deferredBodyError } from '../common/http/http-middleware';
import { ROOT_LOGGER } from '../common/logging/logging.module';
import { arrivalOf, requestLoggerOf } from '../common/logging/request-log';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import type { EventLogger } from '../core/event-logger';
import { StructuredOrchestrator } from './structured-orchestrator';

/** body-parser's default JSON type: `application/json`, parameters allowed. */
const JSON_CONTENT_TYPE = /^application\/json[ \t]*(;|$)/i;

/**
 * `POST /v1/structured/inference` (docs/endpoints.md): everything HTTP — the body as parsed
 * (a parser failure is deferred to its place in the admission order), the caller, the client's
 * connection — goes into a StructuredCommand; the answer is written in the contract's shape.
 * A participant whose client left gets nothing. What fails before the handler runs, such as a
 * rejected bearer, reaches the global exception filter, which answers it through
 * StructuredFailureAnswer: in the structured shape, recorded like every other structured failure.
 */
@CompressJson()
@Controller('v1/structured')
export class StructuredController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly structured: StructuredOrchestrator,
    @Inject(ROOT_LOGGER) private readonly rootLogger: EventLogger,
  ) {}

  @Post('inference')
  @HttpCode(200)
  async infer(@Req() request: Request, @Res() response: Response): Promise<void> {
    const client = abortOnClientDisconnect(response);
    const outcome = await this.structured.run({
      // The deadline clock starts when the request arrives (docs/design/behaviours.md §6.1), not
      // once its body was read: a slow upload spends the deadline too.
      arrivedAt: arrivalOf(request),
      arrivedWhileDraining: arrivedWhileDraining(request),
      caller: callerOf(request, this.config.server.callerHeader),
      body: request.body,
      contentTypeIsJson: JSON_CONTENT_TYPE.test(request.headers['content-type'] ?? ''),
      bodyError: deferredBodyError(request),
      logger: requestLoggerOf(request, this.rootLogger),
      signal: client.signal,
    });
    if (outcome.kind === 'success') response.status(200).json(outcome.body);
    else if (outcome.kind === 'failure' && !response.destroyed) writeErrorResponse(request, response, outcome.error);
  }
}
