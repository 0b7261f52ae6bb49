import { DynamicModule, Module } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import pino, { DestinationStream, LevelWithSilent } from 'pino';
import type { Options } from 'pino-http';
import { sanitizeIdentifier } from './sanitize';

type RequestWithId = IncomingMessage & { id?: unknown };

/**
 * pino JSON lines via nestjs-pino: one line per real event, the request id on every line
 * (quietReqLogger binds only `reqId`), and never headers or bodies: the request serializer keeps
 * method and a sanitized path, so Authorization, caller headers and prompts cannot reach a log.
 */
@Module({})
export class LoggingModule {
  static forRoot(options: { level: string; stream?: DestinationStream }): DynamicModule {
    const httpOptions: Options = {
      level: options.level,
      quietReqLogger: true,
      genReqId: (request: IncomingMessage) => String((request as RequestWithId).id ?? 'unknown'),
      autoLogging: { ignore: (request: IncomingMessage) => (request.url ?? '').startsWith('/health') },
      serializers: {
        req: (request: RequestWithId) => ({
          id: request.id,
          method: request.method,
          path: sanitizeIdentifier((request.url ?? '').split('?')[0]),
        }),
        res: (response: ServerResponse) => ({ statusCode: response.statusCode }),
      },
      customLogLevel: (_request: IncomingMessage, response: ServerResponse, error?: Error): LevelWithSilent =>
        error || response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info',
    };
    // stdout without a synchronous write per line: lines written while a write is in flight go
    // out together, so under load the event loop is not blocked by one syscall per log line.
    // pino flushes what is left synchronously when the process exits.
    const stream = options.stream ?? pino.destination({ dest: 1, sync: false });
    return {
      module: LoggingModule,
      imports: [LoggerModule.forRoot({ pinoHttp: [httpOptions, stream] })],
    };
  }
}
