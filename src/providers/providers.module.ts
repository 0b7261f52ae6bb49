import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { ModuleRef } from '@nestjs/core';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { familyOf } from '../core/family-registry';
import { MetricsModule } from '../metrics/metrics.module';
import { ModelsModule } from '../models/models.module';
import { ProviderRegistry } from './provider-registry';
import { LoginReport } from '../accounts/login-report';
import { PROVIDER_ADAPTERS } from './provider.tokens';
import { ownRetryClock, RETRY_CLOCK } from './shared/retry-policy';

/**
 * The adapters of the enabled families and the registry that routes model ids to them. Only
 * the enabled families' adapters are loaded and constructed (through the module's injector, so
 * they get their dependencies like any provider): a disabled family never starts a process, injects
 * a tool protocol or parses its output (contract chat rule 9). The registry closes them on shutdown.
 */
@Module({
  imports: [ModelsModule, MetricsModule, AccountsModule],
  providers: [
    {
      provide: PROVIDER_ADAPTERS,
      useFactory: (config: AppConfig, moduleRef: ModuleRef) =>
        Promise.all(config.enabledProviders.map(async (id) => moduleRef.create(await familyOf(id).adapter()))),
      inject: [APP_CONFIG, ModuleRef],
    },
    // A fresh clock object per application, so a spec changing one gateway's waits changes no other.
    { provide: RETRY_CLOCK, useFactory: ownRetryClock },
    ProviderRegistry,
    LoginReport,
  ],
  exports: [ProviderRegistry],
})
export class ProvidersModule {}
