import './families';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { markStructuredRoute, STRUCTURED_ROUTE, writeErrorResponse } from './common/errors/error-writer';
import type { RouteFailureAnswer } from './common/errors/all-exceptions.filter';
import { STRUCTURED_FAILURE_ANSWER } from './common/errors/all-exceptions.filter';
import { ChatOrchestrator } from './chat/chat-orchestrator';
import type { EventLogger } from './core/event-logger';
import { installClientErrorHandler } from './common/http/client-error.handler';
import {
  entryMiddleware,
  jsonBodyMiddleware,
  onPostToMountPath,
  requireHostHeader,
  trackInFlight,
} from './common/http/http-middleware';
import { DrainService } from './common/lifecycle/drain.service';
import { applyServerTimeouts } from './common/lifecycle/server-timeouts';
import { FrameworkLogger } from './common/logging/framework-logger';
import { ROOT_LOGGER } from './common/logging/logging.module';
import { arrivalOf, requestLoggerOf, startRequestLog } from './common/logging/request-log';
import type { AppConfig } from './config/app-config';
import { STRUCTURED_MAX_BODY_BYTES } from './config/settings';
import type { BodyRoute } from './common/lifecycle/body-budget';
import { BodyBudget } from './common/lifecycle/body-budget';
import { BearerCheck } from './common/auth/bearer-check';

const CHAT_ROUTE = '/v1/chat/completions';

export interface GatewayAppOptions {
  readonly logStream?: DestinationStream;
}

/**
 * Builds the gateway (not listening yet). Shared by main.ts, the e2e suite and the demo, so
 * they all run exactly the same middleware chain. Throws ConfigError for bad startup data.
 */
export async function createGatewayApp(
  config: AppConfig,
  options: GatewayAppOptions = {},
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot({ config, logStream: options.logStream }),
    // autoFlushLogs off: when boot fails (e.g. a ConfigError thrown by a provider's constructor),
    // Nest would otherwise dump its buffered boot lines and a stack to the console, and a bad
    // setting must print exactly one line (docs/design/decisions.md §2). On success we flush into pino below.
    { bodyParser: false, bufferLogs: true, autoFlushLogs: false, abortOnError: false },
  );
  app.useLogger(new FrameworkLogger(app.get(Logger)));
  app.flushLogs();
  installClientErrorHandler(app.getHttpServer(), app.get(Logger));
  // Every entry point listens after this, so each connection gets the configured timeouts.
  applyServerTimeouts(app.getHttpServer(), config.server);
  app.disable('x-powered-by');
  // An ETag would hash every JSON body for a header no client of a POST API revalidates with.
  app.set('etag', false);
  // The request log first, so every request, including one refused by a later step or
  // middleware, has its id and line.
  app.use(
    entryMiddleware([startRequestLog(app.get(ROOT_LOGGER)), requireHostHeader, trackInFlight(app.get(DrainService))]),
  );
  // Only the routes that take a body parse one, and only on POST to exactly their path: parsing
  // elsewhere would turn an unknown route's 404 into a 400 (bad JSON) or 413 (too big), and any
  // other method or sub-path must be the plain 404 of an unknown route (docs/endpoints.md). A
  // client the bearer guard will refuse gets no byte of its body read (the guard's own rule).
  const bearer = new BearerCheck(config.server.bearerSecret);
  // One budget for the bodies of both routes: they share the process's memory (0: no bound, nothing counted).
  const bodyBudget = app.get(BodyBudget, { strict: false });
  const budgetOf = (route: BodyRoute) => (bodyBudget.limitBytes > 0 ? { of: bodyBudget, route } : undefined);
  if (config.structured.enabled) {
    const structuredFailure = app.get<RouteFailureAnswer>(STRUCTURED_FAILURE_ANSWER, { strict: false });
    app.use(
      STRUCTURED_ROUTE,
      onPostToMountPath(markStructuredRoute()),
      onPostToMountPath(
        jsonBodyMiddleware(STRUCTURED_MAX_BODY_BYTES, {
          deferErrors: true,
          bearer,
          budget: budgetOf('structured'),
          // Recorded like every structured error (audit line, failure metric).
          answer: (request, response, error) => structuredFailure.answer(request, response, error),
        }),
      ),
    );
  }
  const chat = app.get(ChatOrchestrator, { strict: false });
  const rootLogger = app.get<EventLogger>(ROOT_LOGGER);
  app.use(
    CHAT_ROUTE,
    onPostToMountPath(
      jsonBodyMiddleware(config.server.maxBodyBytes, {
        bearer,
        budget: budgetOf('chat'),
        limitSetting: 'GATEWAY_MAX_BODY_BYTES',
        // Counted in the chat metrics like every other refused chat request.
        answer: (request, response, error) =>
          writeErrorResponse(
            request,
            response,
            chat.rejected(error, requestLoggerOf(request, rootLogger), arrivalOf(request)),
          ),
      }),
    ),
  );
  // Then Nest's router: every route, chat included, is a controller behind the global guard and
  // exception filter (app.module.ts).
  return app;
}
