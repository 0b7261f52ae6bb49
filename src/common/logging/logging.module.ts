import { DynamicModule, Global, Module, Scope } from '@nestjs/common';
import { Logger as NestPinoLoggerService, PinoLogger } from 'nestjs-pino';
import type { Params } from 'nestjs-pino';
import pino, { DestinationStream, Logger } from 'pino';
import type { LogFormat } from '../../config/settings';
import { logDestination } from './log-destination';

/** Injection token of the root pino logger (request-log.ts derives each request's logger from it). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * nestjs-pino's `PinoLogger`, bound to one app's root logger. The package's own `logger` getter
 * reads a root it keeps once per process (the first app's), or the logger its request middleware
 * stored for the request; the gateway mounts neither that middleware nor any other store
 * (request-log.ts hands each request its logger), so every line goes to this app's root, and two
 * apps in one process never write into each other's stream. Everything else (context field,
 * argument shapes, the level methods) is the package's.
 */
export class AppPinoLogger extends PinoLogger {
  constructor(
    private readonly root: Logger,
    params: Params,
  ) {
    // The base constructor still records the first root it is given as its process-wide one;
    // nothing here reads that record.
    super(params);
  }

  override get logger(): Logger {
    return this.root;
  }
}

/**
 * pino lines (JSON, or readable at a terminal: log-destination.ts): one line per real event and
 * never headers or bodies. The injectable loggers are nestjs-pino's classes, provided here over
 * this app's root: `PinoLogger` (as `AppPinoLogger`; transient like the package's own provider, so
 * each injection keeps its own context) and `Logger`, nestjs-pino's Nest `LoggerService` over a
 * `PinoLogger` (framework-logger.ts, main.ts). nestjs-pino's `LoggerModule` is not imported: what
 * it adds is its per-request middleware (pino-http plus an AsyncLocalStorage binding), which
 * request-log.ts replaces, and providers whose `logger` is the process-wide root.
 */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(options: { level: string; format: LogFormat; stream?: DestinationStream }): DynamicModule {
    const stream = options.stream ?? logDestination(options.format);
    const root: Logger = pino({ level: options.level }, stream);
    const params: Params = { pinoHttp: { logger: root }, useExisting: true };
    return {
      module: LoggingModule,
      providers: [
        { provide: ROOT_LOGGER, useValue: root },
        { provide: PinoLogger, useFactory: () => new AppPinoLogger(root, params), scope: Scope.TRANSIENT },
        {
          provide: NestPinoLoggerService,
          useFactory: (logger: PinoLogger) => new NestPinoLoggerService(logger, params),
          inject: [PinoLogger],
        },
      ],
      exports: [ROOT_LOGGER, PinoLogger, NestPinoLoggerService],
    };
  }
}
