import { DynamicModule, Global, Module } from '@nestjs/common';
import { ModelCatalog } from './model-catalog';
import { ModelsController } from './models.controller';

/** The model catalog (loaded and validated before Nest boots) and the model list route. */
@Global()
@Module({})
export class ModelsModule {
  static forRoot(catalog: ModelCatalog): DynamicModule {
    return {
      module: ModelsModule,
      controllers: [ModelsController],
      providers: [{ provide: ModelCatalog, useValue: catalog }],
      exports: [ModelCatalog],
    };
  }
}
