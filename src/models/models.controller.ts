import { Controller, Get } from '@nestjs/common';
import { CATALOG_CREATED, ModelCatalog } from './model-catalog';

/** `GET /v1/models` (design.md §3): the catalog, filtered by GATEWAY_PROVIDERS. */
@Controller('v1/models')
export class ModelsController {
  private readonly body: unknown;

  constructor(catalog: ModelCatalog) {
    // The catalog is fixed at boot, so the list is built once.
    this.body = {
      object: 'list',
      data: catalog.entries.map((entry) => ({ id: entry.id, object: 'model', created: CATALOG_CREATED, owned_by: entry.provider })),
    };
  }

  @Get()
  list() {
    return this.body;
  }
}
