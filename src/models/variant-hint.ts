import { familyOf } from '../core/family-registry';
import type { ProviderId } from '../core/provider-id';
import type { CatalogEntry } from './catalog-entry';
import type { UpstreamModelInfo } from './upstream-model-info';
import { parseVariantId } from './variant-id';

/*
 * What the 404 for an upstream-shaped name of a family with variant suffixes (`catalog.
 * variantSuffixes`) suggests instead of the name as written (docs/error-codes.md
 * "model_not_found"): the upstream knows `gpt-7-sol`, never the gateway's `gpt-7-sol-high`. Built
 * only on a miss, from what the catalog knows now and what the live list dropped.
 */

/** What the hint reads of the catalog. */
export interface VariantCatalogView {
  /** The ids that resolve now. */
  readonly byId: ReadonlyMap<string, CatalogEntry>;
  /** What is known about each upstream model now (bundled data, the live lists over it). */
  readonly infos: ReadonlyMap<string, UpstreamModelInfo>;
  /** The models a family's live list offered earlier in this process and no longer does. */
  readonly droppedModels: (family: ProviderId) => Iterable<UpstreamModelInfo>;
}

export interface VariantHint {
  /** `<family>/<slug>` and the effort to send with it: what the id meant, as a passthrough. */
  readonly passthrough?: { readonly id: string; readonly effort: string | null };
  /** The catalog id of the model the id names, where no passthrough would mean what it meant. */
  readonly served?: string;
  /** The model the id names, when the family's live list offered it earlier and no longer does. */
  readonly dropped?: string;
}

interface KnownModel {
  /** The efforts it takes; absent or empty: not known. */
  readonly efforts?: readonly string[];
  /** The effort its plain id means. */
  readonly defaultEffort: string | null;
  readonly dropped: boolean;
}

interface KnownModels {
  readonly models: ReadonlyMap<string, KnownModel>;
  /** Every effort word an id of the family may end in. */
  readonly efforts: ReadonlySet<string>;
}

/**
 * The hint for `id` (lower case, no catalog id), a name of `family`'s upstream shape. A known
 * model with suffixes the gateway spells: its passthrough with the effort the id named (or the
 * one its plain id meant); none for `-fast` (only an id gives the priority tier) or an effort the
 * model lacks, which name the model's own id instead. A known model's name with a suffix the
 * gateway does not spell (`gpt-5.5-hihg`): that model's id. An unknown name: its passthrough,
 * an effort suffix taken off.
 */
export function variantHint(family: ProviderId, id: string, now: VariantCatalogView): VariantHint {
  const known = knownModels(family, now);
  const parts = parseVariantId(id, (word) => known.efforts.has(word));
  const model = known.models.get(parts.slug);
  const servedId = (slug: string) => (now.byId.has(slug) ? slug : undefined);
  if (model === undefined) {
    const base = longestPrefix(id, known.models);
    if (base !== undefined)
      return { served: servedId(base), dropped: known.models.get(base)!.dropped ? base : undefined };
    return parts.fast ? {} : { passthrough: { id: `${family}/${parts.slug}`, effort: parts.effort } };
  }
  const dropped = model.dropped ? parts.slug : undefined;
  const offered =
    parts.effort === null || !model.efforts || model.efforts.length === 0 || model.efforts.includes(parts.effort);
  if (parts.fast || !offered) return { served: servedId(parts.slug), dropped };
  return { passthrough: { id: `${family}/${parts.slug}`, effort: parts.effort ?? model.defaultEffort }, dropped };
}

/** The longest known model name `id` starts with, followed by `-`. */
function longestPrefix(id: string, models: ReadonlyMap<string, KnownModel>): string | undefined {
  let best: string | undefined;
  for (const slug of models.keys())
    if (id.startsWith(`${slug}-`) && (best === undefined || slug.length > best.length)) best = slug;
  return best;
}

/** Per catalog view (its `byId`, new whenever the live lists change), made on its first miss. */
const knownCache = new WeakMap<ReadonlyMap<string, CatalogEntry>, Map<ProviderId, KnownModels>>();

function knownModels(family: ProviderId, now: VariantCatalogView): KnownModels {
  let byFamily = knownCache.get(now.byId);
  if (byFamily === undefined) {
    byFamily = new Map();
    knownCache.set(now.byId, byFamily);
  }
  let known = byFamily.get(family);
  if (known === undefined) {
    known = collectKnown(family, now);
    byFamily.set(family, known);
  }
  return known;
}

function collectKnown(family: ProviderId, now: VariantCatalogView): KnownModels {
  const dropped = new Map([...now.droppedModels(family)].map((info) => [info.slug, info]));
  const models = new Map<string, KnownModel>();
  for (const entry of now.byId.values()) {
    const slug = entry.upstream_model;
    if (entry.provider !== family || models.has(slug)) continue;
    models.set(slug, {
      efforts: now.infos.get(slug)?.efforts ?? entry.reasoning_efforts,
      defaultEffort: now.byId.get(slug)?.reasoning_effort ?? now.infos.get(slug)?.defaultEffort ?? null,
      dropped: dropped.has(slug),
    });
  }
  for (const [slug, info] of dropped)
    if (!models.has(slug))
      models.set(slug, { efforts: info.efforts, defaultEffort: info.defaultEffort ?? null, dropped: true });
  const efforts = new Set(Object.keys(familyOf(family).catalog?.cliOnlyEfforts ?? {}));
  for (const model of models.values()) model.efforts?.forEach((effort) => efforts.add(effort));
  return { models, efforts };
}
