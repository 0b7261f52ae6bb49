import { familyOf } from '../core/family-registry';
import type { ProviderId } from '../core/provider-id';
import type { CatalogEntry } from './catalog-entry';
import type { UpstreamModelInfo } from './upstream-model-info';

/*
 * The model tiers (docs/chat.md "Model ids"): `sol`, `terra` and `luna` name whichever model of
 * the tiered family (its `catalog.tiers`) leads that tier today. The backend's list has no tier field (its `display_name` repeats
 * the slug and `upgrade` may point across tiers), so a model's tier is the last word of its slug.
 */

export const TIERS = ['sol', 'terra', 'luna'] as const;
export type Tier = (typeof TIERS)[number];

/** Where a tier's model came from: the backend's live list, or the bundled catalog when the list has none. */
export type TierSource = 'live_list' | 'bundled_catalog';

export interface TierModel {
  readonly tier: Tier;
  /** The upstream model (slug) the tier's aliases reach. */
  readonly upstreamModel: string;
  readonly source: TierSource;
}

/** What a tier alias row stands for, shown by `/v1/models` (docs/endpoints.md). */
export interface TierAlias {
  readonly tier: Tier;
  /** The concrete catalog id the alias resolves like (`sol-high` → `gpt-6.2-sol-high`). */
  readonly target: string;
  readonly source: TierSource;
}

/** `gpt-6.2-sol` → `sol`; a slug that does not end in a tier word has none. */
export function tierOfSlug(slug: string): Tier | undefined {
  const last = slug.slice(slug.lastIndexOf('-') + 1);
  return (TIERS as readonly string[]).includes(last) ? (last as Tier) : undefined;
}

/** `luna-high` → `luna`: the tier word an id starts with, as a whole word (a tier id or a suffixed one). */
export function tierWordOf(id: string): Tier | undefined {
  return TIERS.find((tier) => id === tier || id.startsWith(`${tier}-`));
}

/** Whether a family's models carry the tier words (its `catalog.tiers`). */
export function hasTiers(provider: ProviderId): boolean {
  return familyOf(provider).catalog?.tiers === true;
}

/**
 * Each tier's model: the first listed, not refused model of that tier in the live list (its
 * `priority` order), else the first of the bundled rows (file order: the bundled list's order).
 */
export function pickTierModels(
  live: readonly UpstreamModelInfo[] | undefined,
  bundled: readonly CatalogEntry[],
  isDropped: (slug: string) => boolean,
): TierModel[] {
  const ordered = [...(live ?? [])].sort((left, right) => (left.priority ?? 0) - (right.priority ?? 0));
  const picked: TierModel[] = [];
  for (const tier of TIERS) {
    const fromLive = ordered.find(
      (info) => tierOfSlug(info.slug) === tier && info.listed !== false && !isDropped(info.slug),
    );
    if (fromLive) {
      picked.push({ tier, upstreamModel: fromLive.slug, source: 'live_list' });
      continue;
    }
    const fromFile = bundled.find((entry) => hasTiers(entry.provider) && tierOfSlug(entry.upstream_model) === tier);
    if (fromFile) picked.push({ tier, upstreamModel: fromFile.upstream_model, source: 'bundled_catalog' });
  }
  return picked;
}

/**
 * The alias rows of one tier: every id of its model (`<slug>`, `<slug>-high`, `<slug>-fast-low`,
 * …) with the slug replaced by the tier word, resolving exactly like the id it copies. Ids the
 * catalog file defines itself are left to the file (`taken`).
 */
export function tierAliasRows(
  model: TierModel,
  entries: readonly CatalogEntry[],
  taken: (id: string) => boolean,
): Array<{ row: CatalogEntry; alias: TierAlias }> {
  const slug = model.upstreamModel;
  const rows: Array<{ row: CatalogEntry; alias: TierAlias }> = [];
  for (const entry of entries) {
    if (!hasTiers(entry.provider) || entry.upstream_model !== slug) continue;
    if (entry.id !== slug && !entry.id.startsWith(`${slug}-`)) continue;
    const id = model.tier + entry.id.slice(slug.length);
    if (taken(id)) continue;
    rows.push({
      // An alias is never on the structured allowlist by default (docs/structured.md).
      row: { ...entry, id, structured: false },
      alias: { tier: model.tier, target: entry.id, source: model.source },
    });
  }
  return rows;
}
