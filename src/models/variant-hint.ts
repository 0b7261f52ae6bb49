import { familyOf } from '../core/family-registry';
import type { ProviderId } from '../core/provider-id';
import type { CatalogEntry } from './catalog-entry';
import type { UpstreamModelInfo } from './upstream-model-info';
import { parseVariantId } from './variant-id';

/*
 * What the 404 for a name of a family's upstream shape (`catalog.modelNames`) suggests instead of
 * the name as written (docs/error-codes.md "model_not_found"): the upstream knows `gpt-7-sol` and
 * `claude-opus-4-8`, never an effort spelled into the name (`gpt-7-sol-high`, the gateway's own
 * suffix; `claude-opus-4-8-high`, `gemini-2.5-pro:high`, names no model has). Built only on a
 * miss, from what the catalog knows now and what the live list dropped.
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
  /**
   * What to name instead, and the effort to send with it (`null`: none): a catalog id, or the
   * passthrough `<family>/<model>` of what the id meant, only ever with a model part of the
   * characters upstream names have (`upstreamShaped`).
   */
  readonly suggestion?: { readonly id: string; readonly effort: string | null };
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
 * The hint for `id` (lower case, no catalog id), a name of the upstream shape of `family`, whose
 * ids carry the gateway's suffixes (`catalog.variantSuffixes`). A known model with suffixes the
 * gateway spells: its passthrough with the effort the id named (or the one its plain id meant);
 * none for `-fast` (only an id gives the priority tier) or an effort the model lacks, which name
 * the model's own id instead. A known model's name with a suffix the gateway does not spell
 * (`gpt-5.5-hihg`): that model's id. An unknown name: its passthrough, an effort suffix taken
 * off. An effort after a colon (`gpt-6.2-sol:high`) is read as the gateway's `-high`.
 */
export function variantHint(family: ProviderId, id: string, now: VariantCatalogView): VariantHint {
  const known = knownModels(family, now);
  const asked = dashedEffort(id, known.efforts);
  if (asked !== id && now.byId.has(asked)) return { suggestion: { id: asked, effort: null } };
  const parts = parseVariantId(asked, (word) => known.efforts.has(word));
  const model = known.models.get(parts.slug);
  const servedId = (slug: string) => (now.byId.has(slug) ? { id: slug, effort: null } : undefined);
  if (model === undefined) {
    const base = longestPrefix(asked, known.models);
    if (base !== undefined)
      return { suggestion: servedId(base), dropped: known.models.get(base)!.dropped ? base : undefined };
    return parts.fast ? {} : { suggestion: passthrough(family, parts.slug, parts.effort) };
  }
  const dropped = model.dropped ? parts.slug : undefined;
  if (parts.fast || !offers(model, parts.effort)) return { suggestion: servedId(parts.slug), dropped };
  return { suggestion: passthrough(family, parts.slug, parts.effort ?? model.defaultEffort), dropped };
}

/**
 * The hint for `id` (lower case, no catalog id), a name of the upstream shape of `family`, whose
 * ids are its upstream's names (no `catalog.variantSuffixes`). A last word that is an effort of
 * the family (its accepted efforts, the efforts its rows name), after a `-` or a `:`, is no part of
 * any upstream name (test/cli-model-ids.e2e-spec.ts checks the pinned CLIs' lists): an id of the
 * catalog spelled that way (`claude-fable-5:high` → `claude-fable-5-high`) is named, else the
 * name without it, with the effort as `reasoning_effort` (an effort the model lacks is left out):
 * its catalog id, else its passthrough. Any other name: its passthrough, where an upstream could
 * know it.
 */
export function effortHint(family: ProviderId, id: string, now: VariantCatalogView): VariantHint {
  const known = knownModels(family, now);
  const asked = dashedEffort(id, known.efforts);
  if (asked !== id && now.byId.has(asked)) return { suggestion: { id: asked, effort: null } };
  const dash = asked.lastIndexOf('-');
  const effort = dash > 0 && known.efforts.has(asked.slice(dash + 1)) ? asked.slice(dash + 1) : null;
  if (effort === null) return { suggestion: passthrough(family, asked, null) };
  const slug = asked.slice(0, dash);
  const model = known.models.get(slug);
  const named = model === undefined || offers(model, effort) ? effort : null;
  if (now.byId.has(slug)) return { suggestion: { id: slug, effort: named } };
  return { suggestion: passthrough(family, slug, named) };
}

/**
 * The characters of the model names the upstreams know (the pinned CLIs' lists and provider_a's
 * bundled list; test/cli-model-ids.e2e-spec.ts): a passthrough of any other would reach the
 * upstream as a name no model has (`claude-opus-4-8:latest`, `gemini-2.5-pro@001`).
 */
const UPSTREAM_NAME = /^[a-z0-9][a-z0-9.-]*$/;
/** The same with a `[…]` tag after it, for a family whose CLI takes one (`catalog.nameTags`). */
const TAGGED_UPSTREAM_NAME = /^[a-z0-9][a-z0-9.-]*(?:\[[a-z0-9]+\])?$/;

/** Whether `name` may be the model part of a passthrough of `family` that a 404 suggests. */
export function upstreamShaped(family: ProviderId, name: string): boolean {
  return (familyOf(family).catalog?.nameTags ? TAGGED_UPSTREAM_NAME : UPSTREAM_NAME).test(name);
}

function passthrough(family: ProviderId, name: string, effort: string | null): VariantHint['suggestion'] {
  return upstreamShaped(family, name) ? { id: `${family}/${name}`, effort } : undefined;
}

/** Whether the model takes `effort` (`null`: its default; unknown efforts: any). */
function offers(model: KnownModel, effort: string | null): boolean {
  return effort === null || !model.efforts || model.efforts.length === 0 || model.efforts.includes(effort);
}

/** `gpt-6.2-sol:high` → `gpt-6.2-sol-high`: an effort after a colon, spelled as the catalog spells it. */
function dashedEffort(id: string, efforts: ReadonlySet<string>): string {
  const colon = id.lastIndexOf(':');
  return colon > 0 && efforts.has(id.slice(colon + 1)) ? `${id.slice(0, colon)}-${id.slice(colon + 1)}` : id;
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
  const catalog = familyOf(family).catalog;
  const efforts = new Set([...Object.keys(catalog?.cliOnlyEfforts ?? {}), ...(catalog?.acceptedEfforts ?? [])]);
  for (const model of models.values()) model.efforts?.forEach((effort) => efforts.add(effort));
  for (const entry of now.byId.values())
    if (entry.provider === family && entry.reasoning_effort) efforts.add(entry.reasoning_effort);
  return { models, efforts };
}
