import { Module } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import { BUILD_INFO, resolveBuildInfo } from '../build/build-info';
import { BodyBudget } from './body-budget';
import { DrainService } from './drain.service';

/**
 * Process-wide state a few modules read: the drain switch (health, structured, the in-flight
 * middleware), the request-body budget (the body readers) and the build stamp (health, structured audit). Imported where used, not global.
 */
@Module({
  providers: [
    DrainService,
    {
      provide: BodyBudget,
      useFactory: (config: AppConfig) => new BodyBudget(config.server.maxBodyBytesInFlight),
      inject: [APP_CONFIG],
    },
    {
      provide: BUILD_INFO,
      useFactory: (config: AppConfig) => resolveBuildInfo(config.buildOverrides),
      inject: [APP_CONFIG],
    },
  ],
  exports: [DrainService, BodyBudget, BUILD_INFO],
})
export class LifecycleModule {}
