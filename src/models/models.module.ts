import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { ROOT_LOGGER } from '../common/logging/logging.module';
import type { EventLogger } from '../core/event-logger';
import { LiveModelLists } from './live-model-lists';
import { ModelCatalog } from './model-catalog';
import { ModelsController } from './models.controller';

/**
 * A default model of a family the gateway does not enable fails every chat body without `model`
 * (404 naming the family): said once at startup, with the settings that fix it.
 */
function warnUnservedDefault(catalog: ModelCatalog, logger: EventLogger): void {
  const family = catalog.familyOfModel(catalog.defaultModel);
  if (family === undefined || catalog.isEnabled(family)) return;
  logger.warn(
    {
      event: 'default_model_not_served',
      default_model: catalog.defaultModel,
      family,
      fix: `add ${family} to GATEWAY_PROVIDERS, or name a default_model of an enabled family in a GATEWAY_MODEL_CATALOG file; until then a chat request without model is answered 404`,
    },
    'default_model_not_served',
  );
}

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
      useFactory: (config: AppConfig, live: LiveModelLists, logger: EventLogger) => {
        const catalog = ModelCatalog.load(config.modelCatalogPath, config.enabledProviders, live);
        warnUnservedDefault(catalog, logger);
        return catalog;
      },
      inject: [APP_CONFIG, LiveModelLists, ROOT_LOGGER],
    },
  ],
  exports: [ModelCatalog, LiveModelLists],
})
export class ModelsModule {}
