import { DynamicModule, Module, Type } from '@nestjs/common';
import type { ProviderId } from '../config/app-config';
import { ProviderAAdapter } from './provider-a/provider-a.adapter';
import { ProviderBAdapter } from './provider-b/provider-b.adapter';
import { ProviderCAdapter } from './provider-c/provider-c.adapter';
import type { ProviderAdapter } from './provider-adapter';
import { ProviderRegistry } from './provider-registry';
import { PROVIDER_ADAPTERS } from './provider.tokens';

const ADAPTER_CLASSES: Record<ProviderId, Type<ProviderAdapter>> = {
  provider_a: ProviderAAdapter,
  provider_b: ProviderBAdapter,
  provider_c: ProviderCAdapter,
};

/**
 * Only the enabled families are constructed: a disabled provider_c never spawns, injects its
 * tool protocol or parses fences (contract chat rule 9).
 */
@Module({})
export class ProvidersModule {
  static forRoot(enabled: readonly ProviderId[]): DynamicModule {
    const adapterClasses = enabled.map((id) => ADAPTER_CLASSES[id]);
    return {
      module: ProvidersModule,
      // Global: chat and structured inference both resolve models through the registry.
      global: true,
      providers: [
        ...adapterClasses,
        { provide: PROVIDER_ADAPTERS, useFactory: (...adapters: ProviderAdapter[]) => adapters, inject: adapterClasses },
        ProviderRegistry,
      ],
      exports: [ProviderRegistry],
    };
  }
}
