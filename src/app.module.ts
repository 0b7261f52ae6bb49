import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import type { DestinationStream } from 'pino';
import { ChatModule } from './chat/chat.module';
import { BearerAuthGuard } from './common/auth/bearer-auth.guard';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter';
import { LifecycleModule } from './common/lifecycle/lifecycle.module';
import { LoggingModule } from './common/logging/logging.module';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { HealthModule } from './health/health.module';
import { MetricsEndpointModule } from './metrics/metrics.module';
import { ModelsModule } from './models/models.module';

export interface AppModuleOptions {
  readonly config: AppConfig;
  /** Where log lines go (stdout by default); tests capture them here. */
  readonly logStream?: DestinationStream;
}

@Module({})
export class AppModule {
  static forRoot({ config, logStream }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // The only global modules: the validated settings and the root logger.
        ConfigModule.forRoot(config),
        LoggingModule.forRoot({ level: config.logLevel, format: config.logFormat, stream: logStream }),
        // Feature modules import what they use; these are here for their routes (and the drain
        // switch the in-flight middleware reads). Express tries routes in the order they were
        // registered, which follows this list: the chat route, nearly every request, first.
        ChatModule,
        LifecycleModule,
        MetricsEndpointModule.forRoot({ serveEndpoint: config.metricsEnabled }),
        HealthModule,
        ModelsModule,
        // Registered only when enabled: otherwise its path is a 404 like any unknown route. Loaded
        // only then too: its JSON-schema validator (Ajv) is about 8 MiB of resident memory.
        ...(config.structured.enabled ? [loadStructuredModule()] : []),
      ],
      providers: [
        // Every route is a Nest route: the bearer guard and the one exception filter apply to each
        // (the health probes opt out of the guard with @Public). Compression is per controller
        // (@CompressJson; the chat controller applies it itself): see CompressionInterceptor.
        { provide: APP_GUARD, useClass: BearerAuthGuard },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
    };
  }
}

function loadStructuredModule(): DynamicModule['module'] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- synchronous load on use, only when structured output is enabled
  return (require('./structured/structured.module') as typeof import('./structured/structured.module'))
    .StructuredModule;
}
