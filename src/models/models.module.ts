import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { ModelCatalog } from './model-catalog';
import { ModelsController } from './models.controller';

/**
 * The model catalog and the model list route. The catalog is loaded and validated while the app
 * is built, so a bad GATEWAY_MODEL_CATALOG fails startup with one ConfigError line.
 */
@Module({
  controllers: [ModelsController],
  providers: [
    {
      provide: ModelCatalog,
      useFactory: (config: AppConfig) => ModelCatalog.load(config.modelCatalogPath, config.enabledProviders),
      inject: [APP_CONFIG],
    },
  ],
  exports: [ModelCatalog],
})
export class ModelsModule {}
