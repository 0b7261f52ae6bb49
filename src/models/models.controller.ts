import { Controller, Get } from '@nestjs/common';
import { CompressJson } from '../common/http/compression.interceptor';
import { ModelCatalog } from './model-catalog';
import { modelListEntry } from './model-list-entry';

/** `GET /v1/models` (docs/design/decisions.md §3): the catalog (bundled + live), filtered by GATEWAY_PROVIDERS. */
@CompressJson()
@Controller('v1/models')
export class ModelsController {
  private cached?: { revision: number; body: unknown };

  constructor(private readonly catalog: ModelCatalog) {}

  @Get()
  list() {
    // The catalog changes only when a live list arrives: the body is rebuilt once per revision.
    if (this.cached?.revision !== this.catalog.revision) {
      const data = this.catalog.listed.map((entry) =>
        modelListEntry(entry, this.catalog.upstreamInfo(entry.upstream_model), this.catalog.aliasOf(entry.id)),
      );
      this.cached = { revision: this.catalog.revision, body: { object: 'list', data } };
    }
    return this.cached.body;
  }
}
