import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import type { DestinationStream } from 'pino';
import { ChatModule } from './chat/chat.module';
import { BearerAuthGuard } from './common/auth/bearer-auth.guard';
import { BUILD_INFO, resolveBuildInfo } from './common/build/build-info';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter';
import { DrainService } from './common/lifecycle/drain.service';
import { LoggingModule } from './common/logging/logging.module';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { ModelCatalog } from './models/model-catalog';
import { ModelsModule } from './models/models.module';
import { ProvidersModule } from './providers/providers.module';
import { QueueModule } from './queue/queue.module';
import { StructuredModule } from './structured/structured.module';

export interface AppModuleOptions {
  readonly config: AppConfig;
  readonly catalog: ModelCatalog;
  /** Where log lines go (stdout by default); tests capture them here. */
  readonly logStream?: DestinationStream;
}

/** Process-wide services every module may inject. */
@Global()
@Module({})
class CoreModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CoreModule,
      providers: [DrainService, { provide: BUILD_INFO, useValue: resolveBuildInfo(config.buildOverrides) }],
      exports: [DrainService, BUILD_INFO],
    };
  }
}

@Module({})
export class AppModule {
  static forRoot({ config, catalog, logStream }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        CoreModule.forRoot(config),
        LoggingModule.forRoot({ level: config.logLevel, stream: logStream }),
        MetricsModule.forRoot({ serveEndpoint: config.metricsEnabled }),
        HealthModule,
        ModelsModule.forRoot(catalog),
        ProvidersModule.forRoot(config.enabledProviders),
        QueueModule,
        ChatModule,
        // Registered only when enabled: otherwise its path is a 404 like any unknown route.
        ...(config.structured.enabled ? [StructuredModule] : []),
      ],
      providers: [
        { provide: APP_GUARD, useClass: BearerAuthGuard },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
    };
  }
}
