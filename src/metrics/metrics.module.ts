import { Controller, DynamicModule, Module } from '@nestjs/common';
import {
  getToken,
  makeCounterProvider,
  makeGaugeProvider,
  makeHistogramProvider,
  PrometheusController,
  PrometheusModule,
} from '@willsoto/nestjs-prometheus';
import { CompressJson } from '../common/http/compression.interceptor';
import { BodyBudget } from '../common/lifecycle/body-budget';
import { DrainService } from '../common/lifecycle/drain.service';
import { LifecycleModule } from '../common/lifecycle/lifecycle.module';
import { GatewayMetrics, METRIC_INSTRUMENTS } from './gateway-metrics';
import { METRICS } from './metric-declarations';
import { registerBodyBudgetMetrics } from './body-budget-metrics';
import { registerProcessMetrics } from './process-metrics';
import { registerReadinessGauge } from './readiness-metric';

type ProvidedKey = {
  [K in keyof typeof METRICS]: (typeof METRICS)[K] extends { readonly collected: true } ? never : K;
}[keyof typeof METRICS];

/** The metrics `GatewayMetrics` records: every declaration but those read by their own collectors. */
const PROVIDED_KEYS = (Object.keys(METRICS) as (keyof typeof METRICS)[]).filter(
  (key): key is ProvidedKey => !('collected' in METRICS[key]),
);

/** One Nest provider per declaration, by its kind, with its name, help, labels and buckets. */
const instruments = PROVIDED_KEYS.map((key) => {
  const declaration = METRICS[key];
  const options = { name: declaration.name, help: declaration.help, labelNames: [...declaration.labelNames] };
  switch (declaration.kind) {
    case 'counter':
      return makeCounterProvider(options);
    case 'gauge':
      return makeGaugeProvider(options);
    case 'histogram':
      return makeHistogramProvider({ ...options, buckets: [...declaration.buckets] });
  }
});

/** Every provided instrument by its key in the table, for `GatewayMetrics`. */
const instrumentsByKey = {
  provide: METRIC_INSTRUMENTS,
  useFactory: (...created: unknown[]) => Object.fromEntries(PROVIDED_KEYS.map((key, index) => [key, created[index]])),
  inject: PROVIDED_KEYS.map((key) => getToken(METRICS[key].name)),
};

/**
 * The named instruments over one registry shared by every module (prom-client's default).
 * Imported by each module that records metrics. The instruments exist whether or not the
 * `/metrics` route is served, so services need no branches.
 */
@Module({ providers: [...instruments, instrumentsByKey, GatewayMetrics], exports: [GatewayMetrics] })
export class MetricsModule {
  constructor() {
    registerProcessMetrics();
  }
}

const READINESS_GAUGE = Symbol('READINESS_GAUGE');
const BODY_BUDGET_METRICS = Symbol('BODY_BUDGET_METRICS');

/** The library's `GET /metrics` controller, with compression like every other JSON or text answer. */
@CompressJson()
@Controller()
class MetricsController extends PrometheusController {}

/**
 * `GET /metrics`, registered only when METRICS_ENABLED, the readiness gauge (it needs the app's
 * drain switch) and the body budget's series (its budget). Imported once, by the app module.
 */
@Module({})
export class MetricsEndpointModule {
  static forRoot(options: { serveEndpoint: boolean }): DynamicModule {
    return {
      module: MetricsEndpointModule,
      imports: [
        LifecycleModule,
        ...(options.serveEndpoint
          ? [
              PrometheusModule.register({
                path: '/metrics',
                controller: MetricsController,
                defaultMetrics: { enabled: false },
              }),
            ]
          : []),
      ],
      providers: [
        { provide: READINESS_GAUGE, useFactory: registerReadinessGauge, inject: [DrainService] },
        { provide: BODY_BUDGET_METRICS, useFactory: registerBodyBudgetMetrics, inject: [BodyBudget] },
      ],
    };
  }
}
