/** One sample line of the Prometheus text format (docs/endpoints.md "Metrics"). */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

// Hand-written: a sample line is one regular expression, and no parser of the text format is a
// dependency here (prom-client only writes it).
const SAMPLE_LINE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL_PAIR = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** Every sample of a scrape, in order; `# HELP`/`# TYPE` lines and blank lines are skipped. */
export function samples(text: string): Sample[] {
  return text.split('\n').flatMap((line) => {
    const match = SAMPLE_LINE.exec(line);
    if (!match) return [];
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(LABEL_PAIR)].map((pair) => [pair[1], pair[2]]));
    return [{ name: match[1], labels, value: Number(match[3]) }];
  });
}

/**
 * The value of `name` where its labels include `labels` (summed when several series match, as a
 * `sum()` over the others would); undefined when no series matches.
 */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  const matching = samples(text).filter(
    (sample) => sample.name === name && wanted.every(([key, value]) => sample.labels[key] === value),
  );
  return matching.length === 0 ? undefined : matching.reduce((total, sample) => total + sample.value, 0);
}

/** GET /metrics of a running gateway, in-process or child; throws unless it answered 200. */
export async function scrapeMetrics(
  gateway: { readonly url: string },
  headers: Record<string, string> = {},
): Promise<string> {
  const response = await fetch(`${gateway.url}/metrics`, { headers });
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  return response.text();
}

/** One value scraped now: `sampleValue`, with 0 for a series not written yet. */
export async function metricValue(
  gateway: { readonly url: string },
  name: string,
  labels: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<number> {
  return sampleValue(await scrapeMetrics(gateway, headers), name, labels) ?? 0;
}

/** What a family's `gateway_chat_api_tokens_total` counters rose by while `run` ran, by kind. */
export async function tokensCounted(
  gateway: { readonly url: string },
  provider: string,
  run: () => Promise<void>,
): Promise<Record<string, number>> {
  const kinds = ['prompt', 'completion', 'cached', 'reasoning'];
  const read = async () => {
    const text = await scrapeMetrics(gateway);
    return kinds.map((kind) => sampleValue(text, 'gateway_chat_api_tokens_total', { provider, kind }) ?? 0);
  };
  const before = await read();
  await run();
  const after = await read();
  return Object.fromEntries(kinds.map((kind, index) => [kind, after[index] - before[index]]));
}
