import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Test } from '@nestjs/testing';
import { register } from 'prom-client';
import { loadConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { GatewayMetrics } from './gateway-metrics';
import { METRIC_PREFIX, METRICS } from './metric-declarations';
import { MetricsModule } from './metrics.module';

const declarations = Object.values(METRICS);

describe('METRICS', () => {
  it('names each metric once, under the gateway prefix, with help and label names that Prometheus accepts', () => {
    const names = declarations.map((declaration) => declaration.name);
    expect(new Set(names).size).toBe(names.length);
    for (const declaration of declarations) {
      expect(declaration.name.startsWith(METRIC_PREFIX)).toBe(true);
      expect(declaration.name).toMatch(/^[a-z_][a-z0-9_]*$/);
      expect(declaration.help.trim()).not.toBe('');
      for (const label of declaration.labelNames) expect(label).toMatch(/^[a-z][a-z_]*$/);
    }
  });

  it('gives each histogram ascending buckets and no other kind any', () => {
    for (const declaration of declarations) {
      const buckets: readonly number[] | undefined = 'buckets' in declaration ? declaration.buckets : undefined;
      if (declaration.kind !== 'histogram') expect(buckets).toBeUndefined();
      else expect([...buckets!].sort((a, b) => a - b)).toEqual(buckets);
    }
  });

  it('gives each histogram the buckets docs/endpoints.md lists for it (what dashboards and alerts read)', () => {
    const docs = readFileSync(path.join(__dirname, '../../docs/endpoints.md'), 'utf8');
    // A list item of metric names, a colon and numbers: the buckets of each histogram it names.
    const documented = new Map<string, number[]>();
    for (const [, names, bounds] of docs.matchAll(/^- ((?:`gateway_chat_api_\w+`(?:, )?)+): ([\d., ]+)$/gm))
      for (const [, name] of names.matchAll(/`(\w+)`/g)) documented.set(name, bounds.split(', ').map(Number));
    const histograms = declarations.filter((declaration) => declaration.kind === 'histogram');
    expect(histograms.length).toBeGreaterThan(0);
    for (const declaration of histograms)
      expect({ name: declaration.name, buckets: declaration.buckets }).toEqual({
        name: declaration.name,
        buckets: documented.get(declaration.name),
      });
  });
});

describe('MetricsModule', () => {
  it('registers every declared metric that is not collected with its kind, help and labels, and gives them to GatewayMetrics', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadConfig({})), MetricsModule],
    }).compile();
    expect(moduleRef.get(GatewayMetrics)).toBeInstanceOf(GatewayMetrics);
    for (const declaration of declarations) {
      if ('collected' in declaration) continue;
      const metric = register.getSingleMetric(declaration.name) as unknown as {
        help: string;
        labelNames: readonly string[];
        upperBounds?: readonly number[];
        constructor: { name: string };
      };
      expect(metric).toBeDefined();
      expect(metric.constructor.name.toLowerCase()).toBe(declaration.kind);
      expect(metric.help).toBe(declaration.help);
      expect([...metric.labelNames]).toEqual(declaration.labelNames);
      if (declaration.kind === 'histogram') expect(metric.upperBounds).toEqual(declaration.buckets);
    }
    await moduleRef.close();
  });
});
