import { Module } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { LifecycleModule } from '../common/lifecycle/lifecycle.module';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { MetricsModule } from '../metrics/metrics.module';
import { ModelCatalog } from '../models/model-catalog';
import { ModelsModule } from '../models/models.module';
import { ProvidersModule } from '../providers/providers.module';
import { IDEMPOTENCY_CLOCK, IdempotencyStore, monotonicClock } from './idempotency-store';
import { STRUCTURED_FAILURE_ANSWER } from '../common/errors/all-exceptions.filter';
import { OutputValidator } from '../common/json-schema/output-validator';
import { StructuredAllowlist } from './structured-allowlist';
import { StructuredFailureAnswer } from './structured-failure-answer';
import { StructuredExtractor } from './structured-extractor';
import { StructuredQueue } from '../queue/structured-queue';
import type { SharedAnswer } from './structured-response';
import { StructuredController } from './structured.controller';
import { StructuredOrchestrator } from './structured-orchestrator';

/**
 * The allowlist is built at boot: an id outside the catalog fails startup (ConfigError naming
 * STRUCTURED_MODELS); ids that cannot serve strict schemas, or whose family is disabled, are
 * dropped with one warning. It looks at every catalog row, disabled families included, so a
 * disabled id is told from an unknown one. Its families are the ones whose structured-route
 * upstream errors the metrics list from start-up.
 */
function allowlistFactory(
  config: AppConfig,
  catalog: ModelCatalog,
  logger: PinoLogger,
  metrics: GatewayMetrics,
): StructuredAllowlist {
  const allowlist = StructuredAllowlist.build({
    requested: config.structured.models,
    catalog: catalog.bundledEntries(),
    enabledProviders: config.enabledProviders,
  });
  metrics.structuredProviders(allowlist.providers);
  if (allowlist.dropped.length > 0) {
    logger.warn(
      {
        event: 'structured_models_dropped',
        models: allowlist.dropped.map(({ id, reason }) => `${id} (${reason})`),
        allowed: allowlist.ids.length,
      },
      'structured_models_dropped',
    );
  }
  logger.info(
    { event: 'structured_enabled', models: allowlist.ids.length, model_policy_version: allowlist.policyVersion },
    'structured_enabled',
  );
  return allowlist;
}

/** POST /v1/structured/inference; imported only when STRUCTURED_INFERENCE_ENABLED. */
@Module({
  imports: [ProvidersModule, ModelsModule, MetricsModule, LifecycleModule],
  controllers: [StructuredController],
  providers: [
    {
      provide: StructuredAllowlist,
      useFactory: allowlistFactory,
      inject: [APP_CONFIG, ModelCatalog, PinoLogger, GatewayMetrics],
    },
    { provide: IDEMPOTENCY_CLOCK, useFactory: () => ({ now: monotonicClock }) },
    {
      provide: IdempotencyStore,
      useFactory: (config: AppConfig, clock: { now(): number }) =>
        new IdempotencyStore<SharedAnswer>(
          { capacity: config.structured.idempotencyCapacity, ttlMs: config.structured.idempotencyTtlMs },
          () => clock.now(),
        ),
      inject: [APP_CONFIG, IDEMPOTENCY_CLOCK],
    },
    OutputValidator,
    StructuredQueue,
    StructuredExtractor,
    StructuredOrchestrator,
    { provide: STRUCTURED_FAILURE_ANSWER, useClass: StructuredFailureAnswer },
  ],
  // For the global exception filter: the route's failures answered in its own shape.
  exports: [STRUCTURED_FAILURE_ANSWER],
})
export class StructuredModule {}
