import { Controller, Get, Param } from '@nestjs/common';
import { CompressJson } from '../common/http/compression.interceptor';
import { GatewayError } from '../core/gateway.error';
import { ModelCatalog } from './model-catalog';
import { modelListEntry } from './model-list-entry';

type ModelObject = Record<string, unknown> & { readonly id: string };

/**
 * `GET /v1/models` (docs/design/decisions.md §3): the catalog (bundled + live), filtered by
 * GATEWAY_PROVIDERS; and `GET /v1/models/{id}`, one entry of that list (the openai SDK's
 * `client.models.retrieve`).
 */
@CompressJson()
@Controller('v1/models')
export class ModelsController {
  private cached?: { revision: number; body: { object: 'list'; data: ModelObject[] }; byId?: Map<string, ModelObject> };

  constructor(private readonly catalog: ModelCatalog) {}

  @Get()
  list() {
    return this.current().body;
  }

  /**
   * The list's object for a listed id; for a `provider_x/<model>` passthrough id of an enabled
   * family (chat serves any, the list names none), what the gateway knows of that upstream model.
   * Anything else is chat's 404 `model_not_found`. The id may hold slashes, sent as they are (the
   * openai SDK before v5) or as `%2F` (since then): `*id` takes every segment, each decoded.
   */
  @Get('*id')
  retrieve(@Param('id') segments: string[] | string): ModelObject {
    const id = Array.isArray(segments) ? segments.join('/') : segments;
    const cached = this.current();
    cached.byId ??= new Map(cached.body.data.map((entry) => [entry.id, entry]));
    const model = cached.byId.get(id) ?? this.passthrough(id);
    if (model === undefined) throw this.catalog.notFound(id);
    return model;
  }

  /** The list body, rebuilt only when the catalog changed (a live list arrived). */
  private current() {
    if (this.cached?.revision !== this.catalog.revision) {
      const data = this.catalog.listed.map(
        (entry) =>
          modelListEntry(
            entry,
            this.catalog.upstreamInfo(entry.upstream_model),
            this.catalog.aliasOf(entry.id),
          ) as ModelObject,
      );
      this.cached = { revision: this.catalog.revision, body: { object: 'list', data } };
    }
    return this.cached;
  }

  /** A passthrough id as the list would show it: its family and upstream model, and what is known of that model. */
  private passthrough(id: string): ModelObject | undefined {
    // A catalog row that is not listed (hidden, or refused upstream) is not served here.
    if (this.catalog.get(id) !== undefined) return undefined;
    let resolved;
    try {
      resolved = this.catalog.resolve(id);
    } catch (error) {
      // An upstream model name no upstream could take: not a model of this gateway either.
      if (error instanceof GatewayError) return undefined;
      throw error;
    }
    if (resolved === undefined) return undefined;
    const row = { id, provider: resolved.provider, upstream_model: resolved.upstreamModel };
    return modelListEntry(
      { ...row, reasoning_effort: null, verbosity: null, service_tier: null, structured: false },
      this.catalog.upstreamInfo(resolved.upstreamModel),
    ) as ModelObject;
  }
}
