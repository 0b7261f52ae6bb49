import { orList } from '../common/text';
import { editDistance } from '../core/edit-distance';
import { families, isFamilyId } from '../core/family-registry';
import { GatewayError } from '../core/gateway.error';
import type { ProviderId } from '../core/provider-id';
import type { CatalogEntry } from './catalog-entry';
import type { Tier, TierAlias, TierModel } from './model-tiers';
import { pickTierModels, tierAliasRows, tierWordOf } from './model-tiers';
import { PASSTHROUGH_NAME } from './passthrough-name';
import type { VariantCatalogView } from './variant-hint';
import { effortHint, variantHint } from './variant-hint';

/*
 * The 404 `model_not_found` for an id no enabled family serves (chat, and `GET /v1/models/{id}`),
 * worded to name what works instead (docs/error-codes.md "model_not_found"). It is built only on a
 * miss: an id that resolves never runs any of this. A near miss is named, never served: which
 * model a CLI alias or a differently spelled id means is the client's choice to make.
 */

/** What the 404 reads of the catalog as it is now. */
export interface CatalogNow extends VariantCatalogView {
  /** Every row of the file, disabled families included. */
  readonly allEntries: readonly CatalogEntry[];
  /** The ids that resolve now: enabled families' rows, live variants and tier aliases. */
  readonly byId: ReadonlyMap<string, CatalogEntry>;
  /** The rows `/v1/models` shows now. */
  readonly listed: readonly CatalogEntry[];
  readonly tiers: readonly TierModel[];
  readonly aliases: ReadonlyMap<string, TierAlias>;
  /** What a chat body without `model` asks for. */
  readonly defaultModel: string;
}

const LIST_TAIL = 'GET /v1/models lists the models this gateway serves';
/** How many ids one answer suggests at most. */
const MAX_SUGGESTIONS = 3;
/**
 * The longest id worth a suggestion: a `<family>/` prefix and the 128 characters an upstream name
 * may hold. A longer one is no model anyone meant, and gets the plain 404 after the family check.
 */
const MAX_SUGGESTED_ID = 160;
/** How far a misspelled tier id may be from a tier id it is taken for (`sol-hihg` → `sol-high`). */
const MAX_TIER_TYPO = 2;

/**
 * `opus[1m]` → `opus`: the id without a trailing `[…]` tag (Claude Code's context-window switch).
 * Read by index, not by a pattern that backtracks on a run of `[`.
 */
export function withoutTag(id: string): string {
  if (!id.endsWith(']')) return id;
  const open = id.lastIndexOf('[');
  return open >= 0 && !id.slice(open + 1, -1).includes(']') ? id.slice(0, open) : id;
}

/**
 * The 404 for `modelId`; `serves` says which families the gateway serves. In order: a family the
 * gateway does not enable (a row of the file, a tier id, a passthrough prefix or an upstream name
 * of that family) is named with the setting; an id that differs from a served one only in case
 * or surrounding spaces names that id; a tier id the bundled catalog had and the tier's model
 * now lacks names what the tier means now and its ids; any other tier-shaped id, the nearest
 * tier ids; else the answer suggests the id without a `[…]` tag, what the family's CLI alias
 * stands for, and for an id shaped like a family's upstream names its catalog id or passthrough
 * form (without the gateway's own suffixes or an effort word, variant-hint.ts), whichever of them
 * the gateway serves, and says when the live list no longer offers the model. At most
 * MAX_SUGGESTIONS ids are named.
 */
export function modelNotFound(modelId: string, now: CatalogNow, serves: (family: ProviderId) => boolean): GatewayError {
  const trimmed = modelId.trim();
  const normalized = trimmed.toLowerCase();
  const family = familyOfId(modelId, now) ?? familyOfId(normalized, now);
  if (modelId.length > MAX_SUGGESTED_ID)
    return family !== undefined && !serves(family) ? notEnabled(family, false) : new GatewayError('model_not_found');
  const bare = withoutTag(normalized);
  const ofBare = family ?? familyOfId(bare, now);
  if (ofBare !== undefined && !serves(ofBare)) return notEnabled(ofBare, modelId === now.defaultModel);

  const suggestions: string[] = [];
  const suggest = (candidate: string | undefined): boolean => {
    if (candidate === undefined || candidate === modelId || suggestions.includes(candidate)) return false;
    if (!now.byId.has(candidate) && !isServedPassthrough(candidate, serves)) return false;
    suggestions.push(candidate);
    return true;
  };
  const lowered = lowerCaseIds(now.byId);
  suggest(lowered.get(normalized));
  suggest(trimmed);
  // A client asking for "default" most likely means the gateway's own default.
  if (normalized === 'default') suggest(now.defaultModel);
  if (suggestions.length === 0) {
    const tier = tierOfMiss(normalized, now);
    if (tier !== undefined) {
      if (tierMovedFrom(normalized, tier, now)) return tierMoved(tier, now);
      nearestTierIds(normalized, tier, now).forEach(suggest);
    }
  }
  const servedFamilies = families().filter((candidate) => serves(candidate.id));
  const alias = servedFamilies.find(
    ({ catalog }) => catalog?.cliAliases !== undefined && Object.hasOwn(catalog.cliAliases, normalized),
  );
  alias?.catalog?.cliAliases?.[normalized].forEach(suggest);
  if (bare !== normalized) suggest(lowered.get(bare));
  // Only for a name the catalog does not have in any spelling: the upstream's name, with an
  // effort the id spelled into it (the gateway's suffix, or a word no upstream name ends in) as a
  // field, on its catalog id or its passthrough form.
  const efforts = new Map<string, string>();
  let dropped: string | undefined;
  for (const candidate of servedFamilies) {
    if (!candidate.catalog?.modelNames?.test(normalized) || lowered.has(normalized)) continue;
    const hint = candidate.catalog.variantSuffixes
      ? variantHint(candidate.id, normalized, now)
      : effortHint(candidate.id, normalized, now);
    dropped ??= hint.dropped;
    const suggestion = hint.suggestion;
    if (suggestion && suggest(suggestion.id) && suggestion.effort !== null)
      efforts.set(suggestion.id, suggestion.effort);
  }
  const named = suggestions.slice(0, MAX_SUGGESTIONS);
  // The model is named from the live list it was on, never from the request.
  const gone = dropped === undefined ? '' : `: the upstream's model list no longer offers ${dropped}`;
  if (named.length === 0)
    return new GatewayError(
      'model_not_found',
      gone === '' ? {} : { publicMessage: `the model does not exist or is not enabled${gone}; ${LIST_TAIL}` },
    );
  const passthrough = named.some((id) => id.includes('/'))
    ? " (an id with a family's prefix goes to that family's upstream as written)"
    : '';
  const spelled = named.map((id) => (efforts.has(id) ? `${id} with reasoning_effort: "${efforts.get(id)}"` : id));
  const choices = orList(spelled);
  const publicMessage = alias
    ? `the model does not exist or is not enabled: ${normalized} is a model alias of the ${alias.fix.cli}, which resolves it by account or mode; use ${choices}${passthrough}. ${LIST_TAIL}`
    : `the model does not exist or is not enabled${gone}; did you mean ${choices}${passthrough}? ${LIST_TAIL}`;
  return new GatewayError('model_not_found', { publicMessage });
}

/**
 * The family an id names, whether or not it is enabled: a row of the file, a tier id of the
 * family with tiers (`sol`, `sol-high`, any `<tier>-…`), a `<family>/…` passthrough, or an
 * upstream name of a family's shape (`claude-…`). A CLI alias names none: `auto` or `default`
 * may mean anything to a client, so a disabled family is not claimed for them.
 */
export function familyOfId(id: string, now: Pick<CatalogNow, 'allEntries'>): ProviderId | undefined {
  const row = now.allEntries.find((entry) => entry.id === id);
  if (row !== undefined) return row.provider;
  const slash = id.indexOf('/');
  if (slash >= 0) {
    const prefix = id.slice(0, slash);
    return isFamilyId(prefix) ? prefix : undefined;
  }
  for (const family of families()) {
    const catalog = family.catalog;
    if (catalog === undefined) continue;
    if (catalog.tiers === true && tierWordOf(id) !== undefined) return family.id;
    if (catalog.modelNames?.test(id)) return family.id;
  }
  return undefined;
}

/** The tier of a tier-shaped id that is no tier id now (its tier's model lacks that suffix). */
function tierOfMiss(id: string, now: CatalogNow): TierModel | undefined {
  if (now.aliases.has(id)) return undefined;
  const tier = tierWordOf(id);
  return tier === undefined ? undefined : now.tiers.find((model) => model.tier === tier);
}

/**
 * Whether `id` is one the tier had while it meant the bundled catalog's model, and the tier means
 * another model now: the tier moved. Any other tier-shaped id is misspelled.
 */
function tierMovedFrom(id: string, tier: TierModel, now: CatalogNow): boolean {
  const bundled = bundledTiers(now.allEntries).get(tier.tier);
  return bundled !== undefined && bundled.model !== tier.upstreamModel && bundled.ids.has(id);
}

/** The ids of a tier now, in the order `GET /v1/models` lists them. */
function tierIds(tier: TierModel, now: CatalogNow): string[] {
  const ofTier = (id: string) => now.aliases.get(id)?.tier === tier.tier;
  const listed = now.listed.filter((entry) => ofTier(entry.id)).map((entry) => entry.id);
  return listed.length > 0 ? listed : [...now.aliases.keys()].filter(ofTier);
}

/**
 * `luna now means gpt-7-luna, which offers luna, luna-low, luna-medium; …`, the first
 * MAX_SUGGESTIONS of its ids named and the rest counted.
 */
function tierMoved(tier: TierModel, now: CatalogNow): GatewayError {
  const ids = tierIds(tier, now);
  const more = ids.length > MAX_SUGGESTIONS ? ` and ${ids.length - MAX_SUGGESTIONS} more` : '';
  return new GatewayError('model_not_found', {
    publicMessage: `${tier.tier} now means ${tier.upstreamModel}, which offers ${ids.slice(0, MAX_SUGGESTIONS).join(', ')}${more}; ${LIST_TAIL}`,
  });
}

/**
 * The tier ids nearest a misspelled one: those it is the start of (`terra-med`), else those at
 * most MAX_TIER_TYPO edits away (`sol-hgh`); of them the nearest, at most MAX_SUGGESTIONS. None
 * near: the tier id itself.
 */
function nearestTierIds(id: string, tier: TierModel, now: CatalogNow): string[] {
  let best = Infinity;
  let nearest: string[] = [];
  for (const candidate of tierIds(tier, now)) {
    const distance = editDistance(id, candidate);
    // Any id the asked one starts ranks before every typo: it is fewer than MAX_SUGGESTED_ID edits away.
    const rank = candidate.startsWith(id)
      ? distance
      : distance <= MAX_TIER_TYPO
        ? MAX_SUGGESTED_ID + distance
        : Infinity;
    if (rank < best) [best, nearest] = [rank, [candidate]];
    else if (rank === best && rank !== Infinity) nearest.push(candidate);
  }
  return best === Infinity ? [tier.tier] : nearest.slice(0, MAX_SUGGESTIONS);
}

/** Each tier's bundled model and the ids it gave the tier: per file, made on its first miss. */
const bundledTierCache = new WeakMap<
  readonly CatalogEntry[],
  ReadonlyMap<Tier, { readonly model: string; readonly ids: ReadonlySet<string> }>
>();

function bundledTiers(allEntries: readonly CatalogEntry[]) {
  let tiers = bundledTierCache.get(allEntries);
  if (tiers === undefined) {
    const map = new Map<Tier, { model: string; ids: ReadonlySet<string> }>();
    for (const model of pickTierModels(undefined, allEntries, () => false)) {
      const ids = tierAliasRows(model, allEntries, () => false).map(({ row }) => row.id);
      map.set(model.tier, { model: model.upstreamModel, ids: new Set(ids) });
    }
    tiers = map;
    bundledTierCache.set(allEntries, tiers);
  }
  return tiers;
}

function notEnabled(family: ProviderId, isDefault: boolean): GatewayError {
  const publicMessage = isDefault
    ? `the model belongs to ${family}, which this gateway does not enable (GATEWAY_PROVIDERS), and it is the gateway's default model (a request without model asks for it): send a model from GET /v1/models, or have the operator enable ${family} or name another default_model (GATEWAY_MODEL_CATALOG)`
    : `the model belongs to ${family}, which this gateway does not enable (GATEWAY_PROVIDERS); GET /v1/models lists the models it serves`;
  return new GatewayError('model_not_found', { publicMessage });
}

/** `<family>/<model>` of a served family, with a model part an upstream can take. */
function isServedPassthrough(id: string, serves: (family: ProviderId) => boolean): boolean {
  const slash = id.indexOf('/');
  const prefix = id.slice(0, Math.max(slash, 0));
  return slash > 0 && isFamilyId(prefix) && serves(prefix) && PASSTHROUGH_NAME.test(id.slice(slash + 1));
}

/** Each resolvable id by its lower-case spelling; made once per catalog view, on its first miss. */
const lowerCaseCache = new WeakMap<ReadonlyMap<string, CatalogEntry>, ReadonlyMap<string, string>>();

function lowerCaseIds(byId: ReadonlyMap<string, CatalogEntry>): ReadonlyMap<string, string> {
  let lowered = lowerCaseCache.get(byId);
  if (lowered === undefined) {
    const map = new Map<string, string>();
    for (const id of byId.keys()) if (!map.has(id.toLowerCase())) map.set(id.toLowerCase(), id);
    lowered = map;
    lowerCaseCache.set(byId, lowered);
  }
  return lowered;
}
