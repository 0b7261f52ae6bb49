import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { LiveModelLists } from './live-model-lists';
import { ModelCatalog } from './model-catalog';
import { ModelsController } from './models.controller';

/**
 * The model catalog, the live model lists it reads, and the model list route. The catalog is
 * loaded and validated while the app is built, so a bad GATEWAY_MODEL_CATALOG fails startup with
 * one ConfigError line.
 */
@Module({
  controllers: [ModelsController],
  providers: [
    LiveModelLists,
    {
      provide: ModelCatalog,
      useFactory: (config: AppConfig, live: LiveModelLists) =>
        ModelCatalog.load(config.modelCatalogPath, config.enabledProviders, live),
      inject: [APP_CONFIG, LiveModelLists],
    },
  ],
  exports: [ModelCatalog, LiveModelLists],
})
export class ModelsModule {}
