import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { register } from 'prom-client';
import { parse, stringify } from 'yaml';
import { BODY_ROUTES } from '../src/common/lifecycle/body-budget';
import { parseDuration } from '../src/config/setting-parsers';
import { errorTable } from '../src/core/error-codes';
import type { LoginStateKind } from '../src/core/login-state';
import { isUsable, LOGIN_STATES } from '../src/core/login-state';
import { REPO_ROOT } from './support/child-gateway';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import type { LabelMatcher, Selector } from './support/promql-selectors';
import { parsePromQL } from './support/promql-selectors';
import { samples, sampleValue } from './support/prometheus-text';
import { rawRequest } from './support/raw-http';
import { fakeUpstream } from './support/client-scenarios';
import { FakeProviderA } from './support/fake-provider-a';
import { created, errorEvent, providerASettings, textReply } from './support/provider-a-fixtures';
import type { ToolResult } from './support/real-tools';
import { promtool, render } from './support/real-tools';

/**
 * The monitoring kit in docker/k8s/monitoring/ (docs/deployment.md): the Grafana dashboard, the alerting
 * rules (plain file and PrometheusRule), the ServiceMonitor and the kustomize overlay that ties
 * them to the base manifests. The overlay is rendered by the real kustomize and the rules are
 * checked by the real promtool (test/support/real-tools.ts). Every series a query reads must be
 * one a running gateway really exports, with labels it really has and label values from its
 * closed sets.
 */
const MONITORING = path.join(REPO_ROOT, 'docker', 'k8s', 'monitoring');
const BASE = path.join(REPO_ROOT, 'docker', 'k8s', 'base');
const SECRET = 'monitoring-secret';

// Manifests and dashboards are free-form documents; the tests walk them like plain objects.
type Doc = Record<string, any>;

const readYaml = (file: string): Doc => parse(fs.readFileSync(file, 'utf8')) as Doc;
const dashboard = JSON.parse(fs.readFileSync(path.join(MONITORING, 'grafana-dashboard.json'), 'utf8')) as Doc;
const rulesFile = readYaml(path.join(MONITORING, 'llm-gateway.rules.yaml'));
const prometheusRule = readYaml(path.join(MONITORING, 'prometheusrule.yaml'));
const rules: Doc[] = rulesFile.groups.flatMap((group: Doc) => group.rules);

/** Series Prometheus itself adds to every scrape target, with their labels. */
const SYNTHESIZED: Record<string, readonly string[]> = { up: ['job', 'instance'] };
/** Target labels Prometheus attaches to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];

/** Closed label-value sets (docs/endpoints.md "Metrics"); a query may only match these values. */
const CLOSED_VALUES: Record<string, ReadonlySet<string>> = {
  provider: new Set(['provider_a', 'provider_b', 'provider_c', 'none', 'provider_c_processes', 'structured']),
  stream: new Set(['true', 'false']),
  kind: new Set(['prompt', 'completion', 'cached', 'reasoning', 'minor', 'major', 'incremental', 'weakcb']),
};
const CLOSED_VALUES_BY_METRIC: Record<string, Record<string, ReadonlySet<string>>> = {
  gateway_chat_api_upstream_errors_total: {
    code: new Set(errorTable().keys()),
    route: new Set(['chat', 'structured']),
  },
  gateway_chat_api_upstream_retries_total: { code: new Set(errorTable().keys()) },
  gateway_chat_api_queue_wait_seconds: {
    result: new Set(['acquired', 'bypassed', 'full', 'timeout', 'canceled', 'draining']),
  },
  gateway_chat_api_login_state: { state: new Set(LOGIN_STATES) },
  gateway_chat_api_body_budget_refusals_total: { route: new Set(BODY_ROUTES) },
};

interface Exported {
  /** Every series name a scrape can hold (histograms as _bucket, _sum, _count). */
  readonly series: ReadonlySet<string>;
  /** Series name → its family's label names (from the registry the scrape came from). */
  labels(series: string): readonly string[];
  /** Series name → its family name. */
  family(series: string): string;
}

/** The families of one scrape, by their `# TYPE` lines. */
function exportedFrom(scrape: string): Exported {
  const families = new Map<string, string>();
  for (const match of scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)) families.set(match[1], match[2]);
  const seriesToFamily = new Map<string, string>();
  for (const [name, type] of families) {
    seriesToFamily.set(name, name);
    if (type === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) seriesToFamily.set(name + suffix, name);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) seriesToFamily.set(name + suffix, name);
  }
  return {
    series: new Set(seriesToFamily.keys()),
    family: (series) => seriesToFamily.get(series) ?? series,
    labels: (series) => {
      const family = seriesToFamily.get(series)!;
      const metric = register.getSingleMetric(family) as unknown as { labelNames?: string[] } | undefined;
      const le = series.endsWith('_bucket') ? ['le'] : [];
      return [...(metric?.labelNames ?? []), ...le, ...TARGET_LABELS];
    },
  };
}

/** Literal alternatives of a matcher value (`a|b|c`), or undefined when it is a real regex. */
function literalAlternatives(matcher: LabelMatcher): string[] | undefined {
  if (matcher.op === '=' || matcher.op === '!=') return [matcher.value];
  return /^[\w|]+$/.test(matcher.value) ? matcher.value.split('|') : undefined;
}

/** Problems with one query against one scrape; empty when every reference is real. */
function problemsOf(expr: string, exported: Exported): string[] {
  const problems: string[] = [];
  const { selectors, aggregations } = parsePromQL(expr);
  const labelsOf = (selector: Selector) => SYNTHESIZED[selector.metric] ?? exported.labels(selector.metric);
  for (const selector of selectors) {
    if (!SYNTHESIZED[selector.metric] && !exported.series.has(selector.metric)) {
      problems.push(`${selector.metric} is not exported`);
      continue;
    }
    for (const matcher of selector.matchers) {
      if (!labelsOf(selector).includes(matcher.label))
        problems.push(`${selector.metric} has no label ${matcher.label}`);
      const closed =
        CLOSED_VALUES_BY_METRIC[exported.family(selector.metric)]?.[matcher.label] ?? CLOSED_VALUES[matcher.label];
      for (const value of (closed && literalAlternatives(matcher)) || []) {
        if (!closed.has(value)) problems.push(`${selector.metric}{${matcher.label}} never takes the value ${value}`);
      }
    }
  }
  for (const aggregation of aggregations) {
    const available = new Set(aggregation.selectors.flatMap(labelsOf));
    for (const label of aggregation.by)
      if (!available.has(label)) problems.push(`"by (${label})" groups on a label none of its series has`);
  }
  return problems;
}

/** Every PromQL query of the dashboard: panel targets and `label_values(...)` variables. */
function dashboardQueries(): Array<{ where: string; expr: string }> {
  const panels: Doc[] = dashboard.panels.flatMap((panel: Doc) => [panel, ...(panel.panels ?? [])]);
  const targets = panels.flatMap((panel) =>
    (panel.targets ?? []).map((target: Doc) => ({
      where: `panel "${panel.title}" ${target.refId}`,
      expr: target.expr as string,
    })),
  );
  const variables = dashboard.templating.list
    .filter((variable: Doc) => variable.type === 'query')
    .map((variable: Doc) => {
      const query = typeof variable.query === 'string' ? variable.query : variable.query.query;
      const metric = /^label_values\((\w+),\s*\w+\)$/.exec(query)?.[1];
      return { where: `variable $${variable.name}`, expr: metric ?? query };
    });
  return [...targets, ...variables];
}

describe('docker/k8s/monitoring against a running gateway', () => {
  let gateway: TestGateway;
  let exported: Exported;
  /** The first scrape after start-up, before any request. */
  let firstScrape = '';

  beforeAll(async () => {
    gateway = await startGateway({ GATEWAY_BEARER_SECRET: SECRET, STRUCTURED_INFERENCE_ENABLED: 'true' });
    const response = await rawRequest(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${SECRET}` } });
    expect(response.status).toBe(200);
    firstScrape = response.body.toString();
    exported = exportedFrom(firstScrape);
  });

  afterAll(() => gateway.close());

  it('the checker itself flags a missing series, a missing label, a foreign label value and a syntax error', () => {
    expect(problemsOf('rate(gateway_chat_api_no_such_total[5m])', exported)).toEqual([
      'gateway_chat_api_no_such_total is not exported',
    ]);
    expect(problemsOf('gateway_chat_api_queue_depth{model="x"}', exported)).toEqual([
      'gateway_chat_api_queue_depth has no label model',
    ]);
    expect(problemsOf('gateway_chat_api_upstream_errors_total{code=~"auth|login"}', exported)).toEqual([
      'gateway_chat_api_upstream_errors_total{code} never takes the value login',
    ]);
    expect(problemsOf('sum by (model) (gateway_chat_api_queue_depth)', exported)).toEqual([
      '"by (model)" groups on a label none of its series has',
    ]);
    expect(() => problemsOf('sum(rate(gateway_chat_api_requests_total[5m])', exported)).toThrow(/syntax error/);
  });

  it('every dashboard query parses and reads only exported series, labels and label values', () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(30);
    const problems = queries.flatMap(({ where, expr }) =>
      problemsOf(expr, exported).map((problem) => `${where}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it("every alert expression parses and reads only exported series (plus Prometheus's own `up`)", () => {
    const problems = rules.flatMap((rule) =>
      problemsOf(rule.expr, exported).map((problem) => `${rule.alert}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it('GatewayBodyBudgetRefusing reads a series of each route at 0 from start-up, so increase() sees the first refusal', () => {
    const refusing = rules.find((rule) => rule.alert === 'GatewayBodyBudgetRefusing')!;
    const [selector] = parsePromQL(refusing.expr).selectors;
    const read = samples(firstScrape).filter(
      (sample) => sample.name === selector.metric && selector.matchers.every((m) => satisfies(sample.labels, m)),
    );
    expect(read.map(({ labels, value }) => ({ route: labels.route, value }))).toEqual(
      BODY_ROUTES.map((route) => ({ route, value: 0 })),
    );
  });

  it('the dashboard covers what the issue asks for', () => {
    const all = dashboardQueries()
      .map((query) => query.expr)
      .join('\n');
    for (const metric of [
      'gateway_chat_api_requests_total',
      'gateway_chat_api_time_to_first_token_seconds_bucket',
      'gateway_chat_api_request_duration_seconds_bucket',
      'gateway_chat_api_queue_depth',
      'gateway_chat_api_queue_wait_seconds_bucket',
      'gateway_chat_api_upstream_errors_total',
      'gateway_chat_api_upstream_retries_total',
      'gateway_chat_api_structured_latency_seconds_count',
      'gateway_chat_api_structured_idempotency_total',
      'gateway_chat_api_process_resident_memory_bytes',
      'gateway_chat_api_nodejs_eventloop_lag_p99_seconds',
      'gateway_chat_api_account_quota_used_ratio',
      'gateway_chat_api_account_paid_usage_in_use',
      'gateway_chat_api_paid_turns_total',
    ]) {
      expect(all).toContain(metric);
    }
  });
});

describe("gateway_chat_api_upstream_retries_total (the dashboard's retries panel)", () => {
  const upstream = fakeUpstream({
    homePrefix: 'monitoring-retries-',
    startFake: () => FakeProviderA.start(),
    settings: (fake, home) => ({
      ...providerASettings(fake, home, { transport: 'sse' }),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_TIMEOUT: '8s',
    }),
  });
  let url = '';
  const counter = async (name: string) => {
    const text = (await rawRequest(`${url}/metrics`)).body.toString();
    return sampleValue(text, name, { provider: 'provider_a', code: 'upstream' }) ?? 0;
  };

  beforeAll(async () => {
    url = (await upstream.start()).url;
  });
  afterAll(() => upstream.stop());

  it('counts a retry before output by family and code, while the request itself succeeds', async () => {
    const retriesBefore = await counter('gateway_chat_api_upstream_retries_total');
    const errorsBefore = await counter('gateway_chat_api_upstream_errors_total');
    upstream.fake.enqueue({ reject: { status: 503 }, frames: [] });
    upstream.fake.enqueue(textReply('after one retry'));
    const response = await rawRequest(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer any', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sol', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString()).choices[0].message.content).toBe('after one retry');
    expect(await counter('gateway_chat_api_upstream_retries_total')).toBe(retriesBefore + 1);
    expect(await counter('gateway_chat_api_upstream_errors_total')).toBe(errorsBefore);
  });
});

/** Whether a scraped sample's labels satisfy one PromQL matcher (regexes are anchored, as in PromQL). */
function satisfies(labels: Readonly<Record<string, string>>, matcher: LabelMatcher): boolean {
  const value = labels[matcher.label] ?? '';
  switch (matcher.op) {
    case '=':
      return value === matcher.value;
    case '!=':
      return value !== matcher.value;
    case '=~':
      return new RegExp(`^(?:${matcher.value})$`).test(value);
    case '!~':
      return !new RegExp(`^(?:${matcher.value})$`).test(value);
  }
}

/** The sum over a scrape of every sample one selector of an alert reads. */
const selected = (scrape: string, selector: Selector) =>
  samples(scrape)
    .filter((sample) => sample.name === selector.metric && selector.matchers.every((m) => satisfies(sample.labels, m)))
    .reduce((total, sample) => total + sample.value, 0);

describe('GatewayUpstreamErrorRatioHigh against a gateway with chat and structured inference on provider_a', () => {
  const upstream = fakeUpstream({
    homePrefix: 'monitoring-ratio-',
    startFake: () => FakeProviderA.start(),
    settings: (fake, home) => ({
      ...providerASettings(fake, home, { transport: 'sse' }),
      GATEWAY_PROVIDERS: 'provider_a',
      STRUCTURED_INFERENCE_ENABLED: 'true',
      PROVIDER_A_TIMEOUT: '8s',
    }),
  });
  let url = '';
  const ratio = rules.find((rule) => rule.alert === 'GatewayUpstreamErrorRatioHigh')!;
  const { selectors } = parsePromQL(ratio.expr);
  const failures = selectors.find((selector) => selector.metric === 'gateway_chat_api_upstream_errors_total')!;
  const requests = selectors.find((selector) => selector.metric === 'gateway_chat_api_requests_total')!;
  /** What the alert divides, and the upstream failures of provider_a by route. */
  const counts = async () => {
    const scrape = (await rawRequest(`${url}/metrics`)).body.toString();
    const byRoute = (route: string) =>
      sampleValue(scrape, 'gateway_chat_api_upstream_errors_total', {
        provider: 'provider_a',
        code: 'upstream',
        route,
      });
    return {
      failures: selected(scrape, failures),
      requests: selected(scrape, requests),
      chat: byRoute('chat'),
      structured: byRoute('structured'),
    };
  };
  // Every attempt fails before output: the first and the two retries.
  const failingAttempts = () => {
    const failed = { frames: [created(), errorEvent({ status: 500, code: 'server_error', message: 'broke' })] };
    upstream.fake.enqueue(failed, failed, failed);
  };
  const post = (route: string, body: Record<string, unknown>) =>
    rawRequest(`${url}${route}`, {
      method: 'POST',
      headers: { authorization: 'Bearer any', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    url = (await upstream.start()).url;
  });
  afterAll(() => upstream.stop());

  it('a failed structured call moves neither side of the chat ratio; it counts under route="structured", a failed chat under route="chat"', async () => {
    const start = await counts();
    // Both routes' series exist at 0 from start-up (an alert on increase() sees the first failure).
    expect([start.chat, start.structured]).toEqual([0, 0]);

    failingAttempts();
    const structured = await post('/v1/structured/inference', {
      request_id: 'ratio-1',
      model: 'gpt-6.1-terra',
      input: 'Revenue grew 12% in the third quarter.',
      schema: { type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'string' } } },
    });
    expect(structured.status).toBe(502);
    const afterStructured = await counts();
    expect(afterStructured).toEqual({ ...start, structured: 1 });

    failingAttempts();
    const chat = await post('/v1/chat/completions', { model: 'sol', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(502);
    expect(await counts()).toEqual({
      failures: start.failures + 1,
      requests: start.requests + 1,
      chat: 1,
      structured: 1,
    });
  });
});

describe('alerting rules (llm-gateway.rules.yaml and prometheusrule.yaml)', () => {
  const deploymentDoc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'deployment.md'), 'utf8');
  /** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
  const anchors = new Set(
    [...deploymentDoc.matchAll(/^#+ (.+)$/gm)].map((match) =>
      match[1]
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    ),
  );

  it('are one group of uniquely named alerts with a duration, a severity, a summary and a runbook', () => {
    expect(rulesFile.groups).toHaveLength(1);
    const names = rules.map((rule) => rule.alert);
    expect(new Set(names).size).toBe(names.length);
    for (const rule of rules) {
      expect(Object.keys(rule).sort()).toEqual(expect.arrayContaining(['alert', 'annotations', 'expr', 'labels']));
      expect(rule.record).toBeUndefined();
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning']).toContain(rule.labels.severity);
      expect(rule.annotations.summary).toEqual(expect.any(String));
      expect(rule.annotations.description).toEqual(expect.any(String));
    }
  });

  it('cover login failures, upstream error ratio, queue saturation, body budget refusals, readiness and memory', () => {
    const byName = new Map(rules.map((rule) => [rule.alert as string, rule.expr as string]));
    expect(byName.get('GatewayUpstreamLoginFailing')).toContain('code="auth"');
    expect(byName.get('GatewayUpstreamAccountUnsupported')).toContain('code="provider_account_unsupported"');
    expect(byName.get('GatewayUpstreamProjectRequired')).toContain('code="provider_project_required"');
    expect(byName.get('GatewayProviderCliMissing')).toContain('code="provider_cli_missing"');
    // A family without a usable login, before any request fails: the states that count as usable
    // are the ones the pool serves from (isUsable), no more and no fewer.
    const noUsableLogin = byName.get('GatewayNoUsableLogin');
    expect(noUsableLogin).toContain('gateway_chat_api_login_state');
    const usableStates = /state=~"([\w|]+)"/.exec(noUsableLogin ?? '')?.[1].split('|');
    expect(usableStates?.sort()).toEqual(LOGIN_STATES.filter(isUsable).sort());
    expect(byName.get('GatewayUpstreamErrorRatioHigh')).toContain('gateway_chat_api_upstream_errors_total');
    expect(byName.get('GatewayQueueSaturated')).toMatch(/result=~"full\|timeout"/);
    // Every refusal of either route, one alert per route.
    expect(byName.get('GatewayBodyBudgetRefusing')).toContain('gateway_chat_api_body_budget_refusals_total[');
    expect(byName.get('GatewayBodyBudgetRefusing')).toContain('by (job, instance, route)');
    expect(byName.get('GatewayNotReady')).toContain('gateway_chat_api_ready');
    expect(byName.get('GatewayMemoryNearLimit')).toContain('gateway_chat_api_process_memory_limit_bytes');
    // The whole container against its limit: provider_c's claude children count too.
    expect(byName.get('GatewayMemoryNearLimit')).toContain('gateway_chat_api_container_memory_working_set_bytes');
    expect(byName.get('GatewayMemoryNearLimit')).not.toContain('resident');
  });

  it('each runbook_url points at a heading of docs/deployment.md named after the alert', () => {
    for (const rule of rules) {
      const anchor = rule.alert.toLowerCase();
      expect(rule.annotations.runbook_url).toBe(`docs/deployment.md#${anchor}`);
      expect(anchors).toContain(anchor);
    }
  });

  it('the PrometheusRule carries the groups of the plain rules file without GatewayNotReady', () => {
    expect(prometheusRule).toMatchObject({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'llm-gateway' },
    });
    const withoutNotReady = {
      groups: rulesFile.groups.map((group: Doc) => ({
        ...group,
        rules: group.rules.filter((rule: Doc) => rule.alert !== 'GatewayNotReady'),
      })),
    };
    expect(prometheusRule.spec).toEqual(withoutNotReady);
  });

  it('GatewayNotReady cannot fire on Kubernetes: the kubelet kills a draining pod before its `for` has passed', () => {
    const notReady = rules.find((rule) => rule.alert === 'GatewayNotReady')!;
    const deployment = render(BASE).find((manifest) => manifest.kind === 'Deployment')!;
    const graceMs = deployment.spec.template.spec.terminationGracePeriodSeconds * 1000;
    // Were the grace ever longer than the alert's wait, the PrometheusRule should carry it again.
    expect(graceMs).toBeLessThan(parseDuration(notReady.for));
    expect(deploymentDoc).toMatch(/#### GatewayNotReady\n\n[^#]*cannot fire on\s+Kubernetes/);
  });
});

describe('the kustomize overlay docker/k8s/monitoring, rendered by the real kustomize', () => {
  const documents = render(MONITORING);
  const one = (kind: string) => {
    const found = documents.filter((document) => document.kind === kind);
    expect(found).toHaveLength(1);
    return found[0];
  };

  it('renders the base manifests plus a ServiceMonitor, a PrometheusRule and the dashboard ConfigMap', () => {
    for (const kind of ['Deployment', 'Service', 'PersistentVolumeClaim', 'ServiceMonitor', 'PrometheusRule'])
      one(kind);
    const keys = documents.map((document) => `${document.kind}/${document.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    const dashboardMap = documents.find(
      (document) => document.kind === 'ConfigMap' && document.metadata.name === 'llm-gateway-dashboard',
    );
    expect(dashboardMap?.metadata.labels.grafana_dashboard).toBe('1');
    expect(JSON.parse(dashboardMap?.data['grafana-dashboard.json']).uid).toBe('llm-gateway');
  });

  it('the ServiceMonitor selects the Service, scrapes its http port on /metrics and sends the bearer the Deployment reads', () => {
    const monitor = one('ServiceMonitor');
    const service = one('Service');
    for (const [key, value] of Object.entries(monitor.spec.selector.matchLabels))
      expect(service.metadata.labels[key]).toBe(value);
    const [endpoint] = monitor.spec.endpoints;
    expect(service.spec.ports.map((port: Doc) => port.name)).toContain(endpoint.port);
    expect(endpoint.path).toBe('/metrics');
    expect(endpoint.authorization.type).toBe('Bearer');
    // The Secret is created by hand (docs/deployment.md), so it is not rendered: the scrape must
    // read the very Secret key the gateway's container reads its bearer from.
    const bearer = one('Deployment').spec.template.spec.containers[0].env.find(
      (entry: Doc) => entry.name === 'GATEWAY_BEARER_SECRET',
    );
    expect(endpoint.authorization.credentials).toEqual(bearer.valueFrom.secretKeyRef);
    // The GatewayDown alert matches the job Prometheus derives from the Service name.
    expect(rules.find((rule) => rule.alert === 'GatewayDown')?.expr).toContain(`job="${service.metadata.name}"`);
  });
});

describe('promtool check rules', () => {
  it('accepts the plain rules file', () => {
    const result = promtool(['check', 'rules', path.join(MONITORING, 'llm-gateway.rules.yaml')]);
    expect({ status: result.status, output: result.stdout + result.stderr }).toEqual({
      status: 0,
      output: expect.stringContaining(`SUCCESS: ${rules.length} rules found`),
    });
  });

  it("accepts the PrometheusRule's spec, and rejects a broken rule (the check is real)", () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'promtool-'));
    try {
      const fromOperator = path.join(scratch, 'prometheusrule-spec.yaml');
      fs.writeFileSync(fromOperator, stringify(prometheusRule.spec));
      expect(promtool(['check', 'rules', fromOperator]).status).toBe(0);
      const broken = path.join(scratch, 'broken.yaml');
      fs.writeFileSync(
        broken,
        stringify({ groups: [{ name: 'x', rules: [{ alert: 'Broken', expr: 'sum(rate(x[5m])' }] }] }),
      );
      const result = promtool(['check', 'rules', broken]);
      expect(result.status).not.toBe(0);
      expect(result.stdout + result.stderr).toMatch(/FAILED/);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});

/**
 * `promtool test rules` against llm-gateway.rules.yaml: when each alert fires, from given series.
 * Unless `annotations` is set, the annotations are left out of the copy under test (promtool
 * compares them verbatim, and they are templated prose); what is tested is the expression, the
 * `for` and the labels. With it, each expected alert must list its annotations as rendered.
 */
function promtoolTestRules(tests: Doc[], { annotations = false } = {}): ToolResult {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'promtool-test-'));
  try {
    const underTest = {
      groups: rulesFile.groups.map((group: Doc) => ({
        ...group,
        rules: group.rules.map(({ annotations: texts, ...rule }: Doc) =>
          annotations ? { ...rule, annotations: texts } : rule,
        ),
      })),
    };
    fs.writeFileSync(path.join(scratch, 'rules.yaml'), stringify(underTest));
    fs.writeFileSync(
      path.join(scratch, 'tests.yaml'),
      stringify({ rule_files: ['rules.yaml'], evaluation_interval: '1m', tests }),
    );
    return promtool(['test', 'rules', path.join(scratch, 'tests.yaml')]);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** A series selector of the text format promtool's input_series take. */
const series = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.entries({ job: 'llm-gateway', ...labels })
    .map(([key, value]) => `${key}="${value}"`)
    .join(',')}}`;

/** One login's gauge as the gateway exports it: 1 for its state, 0 for every other, minute by minute. */
const loginGauge = (provider: string, account: string, states: readonly LoginStateKind[]) =>
  LOGIN_STATES.map((state) => ({
    series: series('gateway_chat_api_login_state', { instance: 'gw:8088', provider, account, state }),
    values: states.map((current) => (current === state ? 1 : 0)).join(' '),
  }));
const minutes = (state: LoginStateKind, count: number): LoginStateKind[] => Array(count).fill(state);

describe('promtool test rules', () => {
  const passes = (result: ToolResult) =>
    expect({ status: result.status, output: result.stdout + result.stderr }).toEqual({
      status: 0,
      output: expect.stringContaining('SUCCESS'),
    });

  it.each([
    ['GatewayUpstreamLoginFailing', 'provider_a', 'auth'],
    ['GatewayUpstreamAccountUnsupported', 'provider_b', 'provider_account_unsupported'],
    ['GatewayUpstreamProjectRequired', 'provider_b', 'provider_project_required'],
    ['GatewayProviderCliMissing', 'provider_c', 'provider_cli_missing'],
  ])(
    '%s fires on the first failure after a start when the series starts at 0 (as the gateway exports it), on either route; one born at 1 would be missed',
    (alertname, provider, code) => {
      const errors = (instance: string, route = 'chat') =>
        series('gateway_chat_api_upstream_errors_total', { instance, provider, code, route });
      const firing = (instance: string) => ({
        exp_labels: { severity: 'critical', job: 'llm-gateway', instance, provider },
      });
      passes(
        promtoolTestRules([
          {
            interval: '1m',
            input_series: [
              // Started at 0, one failure at minute 2.
              { series: errors('from-zero:8088'), values: '0 0 1 1 1' },
              // The same failure met by a structured call: the same login, the same fix.
              { series: errors('structured:8088'), values: '0 0 0 0 0' },
              { series: errors('structured:8088', 'structured'), values: '0 0 1 1 1' },
              // The same failure on a series that did not exist before it: increase() has no earlier sample.
              { series: errors('born-at-one:8088'), values: '_ _ 1 1 1' },
            ],
            alert_rule_test: [
              { eval_time: '1m', alertname, exp_alerts: [] },
              { eval_time: '3m', alertname, exp_alerts: [firing('from-zero:8088'), firing('structured:8088')] },
            ],
          },
        ]),
      );
    },
  );

  it('GatewayUpstreamErrorRatioHigh fires on failing chat requests, and not on failing structured calls beside healthy chat', () => {
    const labels = (instance: string) => ({ instance, provider: 'provider_a' });
    const failed = (instance: string, route: string) =>
      series('gateway_chat_api_upstream_errors_total', { ...labels(instance), code: 'upstream', route });
    const answered = (instance: string, status: string) =>
      series('gateway_chat_api_requests_total', { ...labels(instance), model: 'sol', status });
    const ratioHigh = (eval_time: string, alerts: Array<[string, string]>) => ({
      eval_time,
      alertname: 'GatewayUpstreamErrorRatioHigh',
      exp_alerts: alerts.map(([instance, share]) => ({
        exp_labels: { severity: 'warning', job: 'llm-gateway', ...labels(instance) },
        exp_annotations: {
          summary: 'More than 25 % of provider_a chat requests fail upstream',
          description: `${share} of chat requests to provider_a ended in an upstream error, timeout or invalid tool call over 15 minutes.`,
          runbook_url: 'docs/deployment.md#gatewayupstreamerrorratiohigh',
        },
      })),
    });
    passes(
      promtoolTestRules(
        [
          {
            interval: '1m',
            input_series: [
              // Chat answers all of its 10 requests a minute; every structured call (10 a minute) fails upstream.
              { series: answered('structured-failing:8088', '200'), values: '0+10x30' },
              { series: failed('structured-failing:8088', 'chat'), values: '0x30' },
              { series: failed('structured-failing:8088', 'structured'), values: '0+10x30' },
              // Half of the chat requests fail upstream (502); structured is healthy.
              { series: answered('chat-failing:8088', '200'), values: '0+5x30' },
              { series: answered('chat-failing:8088', '502'), values: '0+5x30' },
              { series: failed('chat-failing:8088', 'chat'), values: '0+5x30' },
              { series: failed('chat-failing:8088', 'structured'), values: '0x30' },
            ],
            alert_rule_test: [ratioHigh('10m', []), ratioHigh('20m', [['chat-failing:8088', '50%']])],
          },
        ],
        { annotations: true },
      ),
    );
  });

  describe('GatewayQueueSaturated', () => {
    const waits = (provider: string, result: string) =>
      series('gateway_chat_api_queue_wait_seconds_count', { instance: 'gw:8088', provider, result });
    const saturated = (eval_time: string, providers: string[]) => ({
      eval_time,
      alertname: 'GatewayQueueSaturated',
      exp_alerts: providers.map((provider) => ({
        exp_labels: { severity: 'warning', job: 'llm-gateway', instance: 'gw:8088', provider },
        exp_annotations: {
          summary: `The ${provider} queue turns requests away (429)`,
          description: `Requests to ${provider} have been turned away for 5 minutes without a 2-minute break: its queue was full or they timed out waiting for a slot; clients get 429.`,
          runbook_url: 'docs/deployment.md#gatewayqueuesaturated',
        },
      })),
    });

    it.each([
      // The ServiceMonitor's interval, and Prometheus's default one (a scrape config without its own).
      ['30s', '0+1x30'],
      ['1m', '0+1x15'],
    ])(
      'fires after 5 minutes of steady refusals scraped every %s, on a series that starts at 0',
      (interval, values) => {
        passes(
          promtoolTestRules(
            [
              {
                interval,
                input_series: [
                  { series: waits('provider_c_processes', 'full'), values },
                  { series: waits('structured', 'timeout'), values: '0x30' },
                ],
                alert_rule_test: [saturated('4m', []), saturated('8m', ['provider_c_processes'])],
              },
            ],
            { annotations: true },
          ),
        );
      },
    );

    it('stays silent on refusals with minutes between them: the queue was not saturated throughout', () => {
      passes(
        promtoolTestRules(
          [
            {
              interval: '1m',
              input_series: [
                // Two refusals 4 minutes apart (minutes 2 and 6).
                { series: waits('provider_a', 'full'), values: '0 0 1 1 1 1 2 2 2 2 2 2 2 2 2 2' },
                // One every 3 minutes for a quarter of an hour.
                { series: waits('structured', 'timeout'), values: '0 0 0 1 1 1 2 2 2 3 3 3 4 4 4 5' },
              ],
              alert_rule_test: ['5m', '7m', '8m', '9m', '10m', '11m', '13m', '15m'].map((at) => saturated(at, [])),
            },
          ],
          { annotations: true },
        ),
      );
    });
  });

  describe('GatewayBodyBudgetRefusing', () => {
    const refusals = (route: string) =>
      series('gateway_chat_api_body_budget_refusals_total', { instance: 'gw:8088', route });
    const refusing = (eval_time: string, routes: string[]) => ({
      eval_time,
      alertname: 'GatewayBodyBudgetRefusing',
      exp_alerts: routes.map((route) => ({
        exp_labels: { severity: 'warning', job: 'llm-gateway', instance: 'gw:8088', route },
        exp_annotations: {
          summary: `The gateway refuses ${route} request bodies: its body budget is full (503)`,
          description: `${route} requests to gw:8088 have been refused for 5 minutes without a 2-minute break because their bodies did not fit in GATEWAY_MAX_BODY_BYTES_IN_FLIGHT beside the bodies held; clients get 503 body_budget_full with Retry-After.`,
          runbook_url: 'docs/deployment.md#gatewaybodybudgetrefusing',
        },
      })),
    });

    it.each([
      // The ServiceMonitor's interval, and Prometheus's default one (a scrape config without its own).
      ['30s', '0+1x30'],
      ['1m', '0+1x15'],
    ])(
      'fires for the route refused steadily for 5 minutes, scraped every %s, on a series that starts at 0',
      (interval, values) => {
        passes(
          promtoolTestRules(
            [
              {
                interval,
                input_series: [
                  { series: refusals('chat'), values },
                  { series: refusals('structured'), values: '0x30' },
                ],
                alert_rule_test: [refusing('4m', []), refusing('8m', ['chat'])],
              },
            ],
            { annotations: true },
          ),
        );
      },
    );

    it('stays silent on one refused upload, and on refusals with minutes between them', () => {
      passes(
        promtoolTestRules(
          [
            {
              interval: '1m',
              input_series: [
                // One refusal at minute 2, retried and taken.
                { series: refusals('chat'), values: '0 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1' },
                // One every 3 minutes for a quarter of an hour.
                { series: refusals('structured'), values: '0 0 0 1 1 1 2 2 2 3 3 3 4 4 4 5' },
              ],
              alert_rule_test: ['3m', '5m', '7m', '8m', '9m', '10m', '11m', '13m', '15m'].map((at) => refusing(at, [])),
            },
          ],
          { annotations: true },
        ),
      );
    });
  });

  it("GatewayMemoryNearLimit compares the container's working set (claude children included) with the limit, not the gateway's RSS", () => {
    const MiB = 1024 ** 2;
    const memory = (instance: string, rssMiB: number, containerMiB: number) => [
      { series: series('gateway_chat_api_process_resident_memory_bytes', { instance }), values: `${rssMiB * MiB}x15` },
      {
        series: series('gateway_chat_api_container_memory_working_set_bytes', { instance }),
        values: `${containerMiB * MiB}x15`,
      },
      // The provider-c overlay's limit.
      { series: series('gateway_chat_api_process_memory_limit_bytes', { instance }), values: `${1536 * MiB}x15` },
    ];
    passes(
      promtoolTestRules([
        {
          interval: '1m',
          input_series: [
            // Four claude children beside a 300 MiB gateway: 1450 of 1536 MiB, near the OOM kill.
            ...memory('children:8088', 300, 1450),
            // The gateway alone near its own share, the container far from its limit.
            ...memory('gateway-alone:8088', 500, 700),
          ],
          alert_rule_test: [
            { eval_time: '5m', alertname: 'GatewayMemoryNearLimit', exp_alerts: [] },
            {
              eval_time: '11m',
              alertname: 'GatewayMemoryNearLimit',
              exp_alerts: [{ exp_labels: { severity: 'warning', job: 'llm-gateway', instance: 'children:8088' } }],
            },
          ],
        },
      ]),
    );
  });

  it('GatewayNoUsableLogin fires when a family has had no usable login for 5 minutes, before any request, and stops once one is written', () => {
    const noUsableLogin = (eval_time: string, providers: string[]) => ({
      eval_time,
      alertname: 'GatewayNoUsableLogin',
      exp_alerts: providers.map((provider) => ({
        exp_labels: { severity: 'critical', job: 'llm-gateway', instance: 'gw:8088', provider },
      })),
    });
    passes(
      promtoolTestRules([
        {
          interval: '1m',
          input_series: [
            // Started without a login; written at minute 8, as the report sees it 10 s later.
            ...loginGauge('provider_a', 'default', [...minutes('missing', 8), ...minutes('usable', 7)]),
            // Expired with a refresh token: the first request renews it, so it counts as usable.
            ...loginGauge('provider_b', 'default', minutes('expired_refreshable', 15)),
            // One refused login beside a usable one: the family still serves.
            ...loginGauge('provider_c', 'default', minutes('refresh_refused', 15)),
            ...loginGauge('provider_c', 'second', minutes('usable', 15)),
          ],
          alert_rule_test: [noUsableLogin('4m', []), noUsableLogin('6m', ['provider_a']), noUsableLogin('12m', [])],
        },
      ]),
    );
  });

  it('GatewayLoginNeedsLogin fires for one login left unusable for 15 minutes while the family has others', () => {
    const needsLogin = (eval_time: string, logins: [string, string, LoginStateKind][]) => ({
      eval_time,
      alertname: 'GatewayLoginNeedsLogin',
      exp_alerts: logins.map(([provider, account, state]) => ({
        exp_labels: { severity: 'warning', job: 'llm-gateway', instance: 'gw:8088', provider, account, state },
      })),
    });
    passes(
      promtoolTestRules([
        {
          interval: '1m',
          input_series: [
            // One refused login beside a usable one: the family serves, the refused login needs a person.
            ...loginGauge('provider_c', 'default', minutes('refresh_refused', 25)),
            ...loginGauge('provider_c', 'second', minutes('usable', 25)),
            // Refused by the API and never answered again (another login serves the family).
            ...loginGauge('provider_c', 'third', minutes('login_refused', 25)),
            // Refused by the API once, then answered a turn at minute 4: back before the 15 minutes.
            ...loginGauge('provider_c', 'fourth', [...minutes('login_refused', 4), ...minutes('usable', 21)]),
            // Missing at start, written at minute 8: gone before the 15 minutes.
            ...loginGauge('provider_a', 'default', [...minutes('missing', 8), ...minutes('usable', 17)]),
            // Expired with a refresh token: renewed by the first request, nobody needs to act.
            ...loginGauge('provider_b', 'default', minutes('expired_refreshable', 25)),
          ],
          alert_rule_test: [
            needsLogin('14m', []),
            needsLogin('16m', [
              ['provider_c', 'default', 'refresh_refused'],
              ['provider_c', 'third', 'login_refused'],
            ]),
          ],
        },
      ]),
    );
  });

  it('fails a case whose expected alert does not fire (the check is real)', () => {
    const result = promtoolTestRules([
      {
        interval: '1m',
        input_series: [
          {
            series: series('gateway_chat_api_upstream_errors_total', {
              instance: 'gw:8088',
              provider: 'provider_a',
              code: 'auth',
            }),
            values: '_ _ 1 1 1',
          },
        ],
        alert_rule_test: [
          {
            eval_time: '3m',
            alertname: 'GatewayUpstreamLoginFailing',
            exp_alerts: [
              { exp_labels: { severity: 'critical', job: 'llm-gateway', instance: 'gw:8088', provider: 'provider_a' } },
            ],
          },
        ],
      },
    ]);
    expect(result.status).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/FAILED/);
  });
});
