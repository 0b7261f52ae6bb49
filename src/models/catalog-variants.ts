import type { ProviderId } from '../core/provider-id';
import type { CatalogEntry } from './catalog-entry';
import type { UpstreamModelInfo } from './upstream-model-info';

/**
 * Efforts that are a mode of the provider CLI rather than a value the upstream takes, and what
 * the CLI puts on the wire for them. Codex CLI 0.169.0 lists `ultra` ("maximum reasoning with
 * automatic task delegation": the CLI spawns sub-agents itself) and sends `effort: "xhigh"` for it
 * (test/fixtures/codex-oracle/codex-0.169.0.efforts.json); the backend refuses `"ultra"` with 400.
 * The gateway cannot delegate (the tools run on the client), so `ultra` ids are not listed; the
 * ids and the request value still resolve, to what the CLI sends (docs/chat.md "Models").
 */
const CLI_ONLY_EFFORTS: Partial<Record<ProviderId, Readonly<Record<string, string>>>> = {
  provider_a: { ultra: 'xhigh' },
};

/** The effort the upstream receives for a catalog or request effort. */
export function wireEffort(provider: ProviderId, effort: string | null): string | null {
  return effort === null ? null : (CLI_ONLY_EFFORTS[provider]?.[effort] ?? effort);
}

/** True for an effort the gateway accepts but does not offer (a CLI-only mode). */
export function isCliOnlyEffort(provider: ProviderId, effort: string | null): boolean {
  return effort !== null && CLI_ONLY_EFFORTS[provider]?.[effort] !== undefined;
}

/** The efforts to advertise for a model: the upstream's, minus CLI-only modes. */
export function offeredEfforts(provider: ProviderId, efforts: readonly string[] | undefined): string[] | undefined {
  return efforts?.filter((effort) => !isCliOnlyEffort(provider, effort));
}

/**
 * The public ids of a live-listed provider_a model, as the bundled catalog spells them:
 * `<slug>` (the model's default effort), `<slug>-<effort>` per listed effort, and the same with
 * `-fast` (`service_tier: "priority"`) when the model lists that tier. Nothing is structured:
 * the structured allowlist is fixed at startup (docs/structured.md).
 */
export function variantRows(info: UpstreamModelInfo): CatalogEntry[] {
  const efforts = info.efforts ?? [];
  const tiers: Array<'priority' | null> = info.serviceTiers?.includes('priority') ? [null, 'priority'] : [null];
  const rows: CatalogEntry[] = [];
  for (const tier of tiers) {
    const base = tier ? `${info.slug}-fast` : info.slug;
    const row = (id: string, effort: string | null): CatalogEntry => ({
      id,
      provider: info.provider,
      upstream_model: info.slug,
      reasoning_effort: effort,
      reasoning_efforts: efforts.length > 0 ? efforts : undefined,
      verbosity: info.defaultVerbosity ?? null,
      service_tier: tier,
      structured: false,
    });
    rows.push(row(base, info.defaultEffort ?? efforts[0] ?? null));
    for (const effort of efforts) rows.push(row(`${base}-${effort}`, effort));
  }
  return rows;
}

/**
 * Whether `/v1/models` shows a row: not a CLI-only effort, and where the upstream's entry is
 * known, not hidden or dropped, its effort one the upstream lists, its tier one it offers.
 */
export function isListed(row: CatalogEntry, info: UpstreamModelInfo | undefined, dropped: boolean): boolean {
  if (dropped || isCliOnlyEffort(row.provider, row.reasoning_effort)) return false;
  if (!info) return true;
  if (info.listed === false) return false;
  if (info.efforts && row.reasoning_effort !== null && !info.efforts.includes(row.reasoning_effort)) return false;
  if (info.serviceTiers && row.service_tier !== null && !info.serviceTiers.includes(row.service_tier)) return false;
  return true;
}
