import { Module, Type } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { ModuleRef } from '@nestjs/core';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import type { ProviderId } from '../core/provider-id';
import { MetricsModule } from '../metrics/metrics.module';
import { ModelsModule } from '../models/models.module';
import { ProviderAAdapter } from './provider-a/provider-a.adapter';
import { ProviderBAdapter } from './provider-b/provider-b.adapter';
import { ProviderCAdapter } from './provider-c/provider-c.adapter';
import type { ProviderAdapter } from './shared/provider-adapter';
import { ProviderRegistry } from './provider-registry';
import { LoginReport } from '../accounts/login-report';
import { PROVIDER_ADAPTERS } from './provider.tokens';

const ADAPTER_CLASSES: Record<ProviderId, Type<ProviderAdapter>> = {
  provider_a: ProviderAAdapter,
  provider_b: ProviderBAdapter,
  provider_c: ProviderCAdapter,
};

/**
 * The adapters of the enabled families and the registry that routes model ids to them. Only
 * the enabled families are constructed (through the module's injector, so they get their
 * dependencies like any provider): a disabled provider_c never spawns, injects its tool protocol
 * or parses fences (contract chat rule 9). The registry closes them on shutdown.
 */
@Module({
  imports: [ModelsModule, MetricsModule, AccountsModule],
  providers: [
    {
      provide: PROVIDER_ADAPTERS,
      useFactory: (config: AppConfig, moduleRef: ModuleRef) =>
        Promise.all(config.enabledProviders.map((id) => moduleRef.create(ADAPTER_CLASSES[id]))),
      inject: [APP_CONFIG, ModuleRef],
    },
    ProviderRegistry,
    LoginReport,
  ],
  exports: [ProviderRegistry],
})
export class ProvidersModule {}
