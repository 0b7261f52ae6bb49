import { DynamicModule, Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino, { DestinationStream, Logger } from 'pino';
import type { LogFormat } from '../../config/settings';
import { logDestination } from './log-destination';

/** Injection token of the root pino logger (request-log.ts derives each request's logger from it). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * pino lines (JSON, or readable at a terminal: log-destination.ts): one line per real event and
 * never headers or bodies. nestjs-pino provides the
 * injectable `PinoLogger` / `Logger` over our root logger; its per-request middleware (pino-http
 * plus an AsyncLocalStorage binding) is switched off (`forRoutes: []`), because request-log.ts
 * writes the request id and access line itself and hands each request its logger explicitly.
 */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(options: { level: string; format: LogFormat; stream?: DestinationStream }): DynamicModule {
    const stream = options.stream ?? logDestination(options.format);
    const root: Logger = pino({ level: options.level }, stream);
    return {
      module: LoggingModule,
      imports: [LoggerModule.forRoot({ pinoHttp: { logger: root }, useExisting: true, forRoutes: [] })],
      providers: [{ provide: ROOT_LOGGER, useValue: root }],
      exports: [ROOT_LOGGER],
    };
  }
}
