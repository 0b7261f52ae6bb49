import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { GatewayError } from '../core/gateway.error';
import { ModelCatalog, ResolveOverrides } from '../models/model-catalog';
import type { ProviderAdapter } from './shared/provider-adapter';
import type { ProviderId } from '../core/provider-id';
import type { ResolvedModel } from '../core/resolved-model';
import { PROVIDER_ADAPTERS } from './provider.tokens';

export interface ResolvedRoute {
  readonly model: ResolvedModel;
  readonly adapter: ProviderAdapter;
}

/** Resolves a model id to the adapter of its (enabled) family; misses are `model_not_found`. */
@Injectable()
export class ProviderRegistry implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly adapters: ReadonlyMap<ProviderId, ProviderAdapter>;

  constructor(
    @Inject(PROVIDER_ADAPTERS) adapters: ProviderAdapter[],
    private readonly catalog: ModelCatalog,
  ) {
    this.adapters = new Map(adapters.map((adapter) => [adapter.id, adapter]));
  }

  /**
   * Throws `model_not_found` for an unknown id or a disabled family, before any upstream call; for
   * a model of a family the gateway does not enable, the message names the family and the setting.
   */
  resolve(modelId: string, overrides: ResolveOverrides = {}): ResolvedRoute {
    const model = this.catalog.resolve(modelId, overrides);
    const adapter = model && this.adapters.get(model.provider);
    if (!model || !adapter) throw this.notFound(modelId);
    return { model, adapter };
  }

  private notFound(modelId: string): GatewayError {
    return this.catalog.notFound(modelId, (family) => this.adapters.has(family));
  }

  adapter(provider: ProviderId): ProviderAdapter | undefined {
    return this.adapters.get(provider);
  }

  /** Adapters are created by the providers module's factory, which Nest does not shut down: their own hooks run here. */
  /**
   * The adapters are built through `ModuleRef.create`, outside Nest's own list of providers, so
   * their lifecycle hooks (file reads, timers) run from here.
   */
  async onModuleInit(): Promise<void> {
    await Promise.all(
      [...this.adapters.values()].map((adapter) => (adapter as Partial<OnModuleInit>).onModuleInit?.()),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    await Promise.all(
      [...this.adapters.values()].map((adapter) =>
        (adapter as Partial<OnApplicationBootstrap>).onApplicationBootstrap?.(),
      ),
    );
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(
      [...this.adapters.values()].map((adapter) => (adapter as Partial<OnModuleDestroy>).onModuleDestroy?.()),
    );
  }
}
