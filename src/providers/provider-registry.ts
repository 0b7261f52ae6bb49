import { Inject, Injectable } from '@nestjs/common';
import { GatewayError } from '../common/errors/gateway.error';
import { ModelCatalog, ResolveOverrides } from '../models/model-catalog';
import type { ProviderAdapter, ProviderId, ResolvedModel } from './provider-adapter';
import { PROVIDER_ADAPTERS } from './provider.tokens';

export interface ResolvedRoute {
  readonly model: ResolvedModel;
  readonly adapter: ProviderAdapter;
}

/** Resolves a model id to the adapter of its (enabled) family; misses are `model_not_found`. */
@Injectable()
export class ProviderRegistry {
  private readonly adapters: ReadonlyMap<ProviderId, ProviderAdapter>;

  constructor(
    @Inject(PROVIDER_ADAPTERS) adapters: ProviderAdapter[],
    private readonly catalog: ModelCatalog,
  ) {
    this.adapters = new Map(adapters.map((adapter) => [adapter.id, adapter]));
  }

  /** Throws `model_not_found` for an unknown id or a disabled family, before any upstream call. */
  resolve(modelId: string, overrides: ResolveOverrides = {}): ResolvedRoute {
    const model = this.catalog.resolve(modelId, overrides);
    const adapter = model && this.adapters.get(model.provider);
    if (!model || !adapter) throw new GatewayError('model_not_found');
    return { model, adapter };
  }

  adapter(provider: ProviderId): ProviderAdapter | undefined {
    return this.adapters.get(provider);
  }
}
