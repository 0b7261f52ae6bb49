import { DynamicModule, Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino, { DestinationStream, Logger } from 'pino';

/** Injection token of the root pino logger (request-log.ts derives each request's logger from it). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * pino JSON lines: one line per real event and never headers or bodies. nestjs-pino provides the
 * injectable `PinoLogger` / `Logger` over our root logger; its per-request middleware (pino-http
 * plus an AsyncLocalStorage binding) is switched off (`forRoutes: []`), because request-log.ts
 * writes the request id and access line itself and hands each request its logger explicitly.
 */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(options: { level: string; stream?: DestinationStream }): DynamicModule {
    // stdout without a synchronous write per line: lines written while a write is in flight go
    // out together, so under load the event loop is not blocked by one syscall per log line.
    // pino flushes what is left synchronously when the process exits.
    const stream = options.stream ?? pino.destination({ dest: 1, sync: false });
    const root: Logger = pino({ level: options.level }, stream);
    return {
      module: LoggingModule,
      imports: [LoggerModule.forRoot({ pinoHttp: { logger: root }, useExisting: true, forRoutes: [] })],
      providers: [{ provide: ROOT_LOGGER, useValue: root }],
      exports: [ROOT_LOGGER],
    };
  }
}
