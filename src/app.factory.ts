import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { STRUCTURED_ROUTE } from './common/errors/error-response';
import {
  compressionMiddleware,
  inFlightMiddleware,
  jsonBodyMiddleware,
  requestIdMiddleware,
} from './common/http/http-middleware';
import { DrainService } from './common/lifecycle/drain.service';
import { FrameworkLogger } from './common/logging/framework-logger';
import type { AppConfig } from './config/app-config';
import { ModelCatalog } from './models/model-catalog';

/** Structured bodies are capped at 4 MiB (gateway-behaviours.md §6.1 step 3). */
const STRUCTURED_MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface GatewayAppOptions {
  readonly logStream?: DestinationStream;
}

/**
 * Builds the gateway (not listening yet). Shared by main.ts, the e2e suite and the demo, so
 * they all run exactly the same middleware chain. Throws ConfigError for bad startup data.
 */
export async function createGatewayApp(config: AppConfig, options: GatewayAppOptions = {}): Promise<NestExpressApplication> {
  const catalog = ModelCatalog.load(config.modelCatalogPath, config.enabledProviders);
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot({ config, catalog, logStream: options.logStream }),
    { bodyParser: false, bufferLogs: true, abortOnError: false },
  );
  app.useLogger(new FrameworkLogger(app.get(Logger)));
  app.disable('x-powered-by');
  app.use(requestIdMiddleware());
  app.use(inFlightMiddleware(app.get(DrainService)));
  app.use(STRUCTURED_ROUTE, jsonBodyMiddleware(STRUCTURED_MAX_BODY_BYTES, { deferErrors: true }));
  app.use(jsonBodyMiddleware(config.server.maxBodyBytes));
  app.use(compressionMiddleware());
  return app;
}
