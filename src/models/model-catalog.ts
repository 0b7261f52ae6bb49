import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from '../config/app-config';
import { flagOf } from '../config/settings';
import { JsonFileProblem, readJsonFile } from '../common/json-file';
import { GatewayError } from '../core/gateway.error';
import type { ProviderId } from '../core/provider-id';
import { families, familyIds, familyOf, isFamilyId } from '../core/family-registry';
import type { ResolvedModel } from '../core/resolved-model';
import type { CatalogEntry } from './catalog-entry';
import { catalogRowProblem } from './catalog-row-rules';
import { quoted } from '../core/quoted';
import { LiveModelLists } from './live-model-lists';
import { familyOfId, modelNotFound } from './model-not-found';
import type { TierAlias, TierModel } from './model-tiers';
import { pickTierModels, tierAliasRows } from './model-tiers';
import type { UpstreamModelInfo } from './upstream-model-info';
import { mergeInfo, parseUpstreamModels } from './upstream-model-info';
import { PASSTHROUGH_NAME } from './passthrough-name';
import { variantId } from './variant-id';

/*
 * The model catalog: the bundled rows and the live lists over them, how a public id resolves to
 * what the upstream receives, which rows `/v1/models` shows, and the variant rows a live-listed
 * model gets (efforts, the fast tier, and what a CLI-only effort puts on the wire).
 */

export type { CatalogEntry } from './catalog-entry';

/**
 * The built-in catalog as one file: every built-in family's rows (each family's own
 * `provider-x.catalog.json`, which the gateway reads) joined by `npm run catalog:json`, to copy
 * as the start of a GATEWAY_MODEL_CATALOG file.
 */
export const BUILT_IN_CATALOG_PATH = path.join(__dirname, 'catalog.json');

/** Unix seconds reported as `created` for every model (the catalog's publication date). */
export const CATALOG_CREATED = 1767225600;

/** A passthrough id's effort and verbosity when its family's catalog part names none. */
const NO_PASSTHROUGH_DEFAULTS = { effort: null, verbosity: null } as const;

export interface ResolveOverrides {
  readonly reasoningEffort?: string;
  readonly verbosity?: string;
}

/**
 * The default for a catalog file that names none: the `sol` tier alias, so a body without
 * `model` reaches whichever model leads that tier today (docs/chat.md "Model ids"); the built-in
 * catalog's default too.
 */
export const FALLBACK_DEFAULT_MODEL = 'sol';

/** The catalog as routes see it at one moment: rebuilt whole when the live lists changed. */
interface CatalogState {
  /** Rows of the enabled families: what `resolve` knows (bundled rows, then live-only rows). */
  readonly entries: readonly CatalogEntry[];
  readonly byId: ReadonlyMap<string, CatalogEntry>;
  /** Upstream model → what is known about it (bundled file data, the live list over it). */
  readonly infos: ReadonlyMap<string, UpstreamModelInfo>;
  /** Rows `/v1/models` shows. */
  readonly listed: readonly CatalogEntry[];
  /** The model each tier means now, and the alias ids that stand for it. */
  readonly tiers: readonly TierModel[];
  readonly aliases: ReadonlyMap<string, TierAlias>;
}

export class ModelCatalog {
  private built: CatalogState;
  /** The live lists' revision `built` reflects. */
  private builtFrom: number;
  private readonly bundledInfos: ReadonlyMap<string, UpstreamModelInfo>;
  private changes = 0;

  constructor(
    /** Every row of the file, disabled families included (the structured allowlist tells a disabled id from an unknown one). */
    readonly allEntries: readonly CatalogEntry[],
    private readonly enabledProviders: readonly ProviderId[],
    /** The catalog's `default_model`: what a chat body without `model` asks for. */
    readonly defaultModel: string = FALLBACK_DEFAULT_MODEL,
    /** The file's `upstream_models` data. */
    upstreamModels: readonly UpstreamModelInfo[] = [],
    /** What the upstreams say while the gateway runs (the adapters write it; the catalog only reads). */
    readonly live: LiveModelLists = new LiveModelLists(),
  ) {
    this.bundledInfos = new Map(upstreamModels.map((info) => [info.slug, info]));
    this.builtFrom = live.revision;
    this.built = this.build();
  }

  /** Bumped on every change, so the model list route can cache its body per revision. */
  get revision(): number {
    this.view();
    return this.changes;
  }

  /** The current view: rebuilt when the live lists changed since the last one. */
  private view(): CatalogState {
    if (this.builtFrom !== this.live.revision) {
      this.builtFrom = this.live.revision;
      this.built = this.build();
    }
    return this.built;
  }

  /** Rows of the enabled families: what `resolve` knows. */
  get entries(): readonly CatalogEntry[] {
    return this.view().entries;
  }

  /** Rows `/v1/models` lists (hidden, dropped and CLI-only variants left out). */
  get listed(): readonly CatalogEntry[] {
    return this.view().listed;
  }

  /** The model each tier (`sol`, `terra`, `luna`) means now (docs/chat.md "Model ids"). */
  get tiers(): readonly TierModel[] {
    return this.view().tiers;
  }

  /**
   * The file's rows with the tier aliases they define, every family included, no live list: what
   * the structured allowlist is fixed from at startup (docs/structured.md "Models").
   */
  bundledEntries(): readonly CatalogEntry[] {
    return new ModelCatalog(this.allEntries, familyIds(), this.defaultModel, [...this.bundledInfos.values()]).entries;
  }

  /** What a tier alias id stands for now; `undefined` for any other id. */
  aliasOf(id: string): TierAlias | undefined {
    return this.view().aliases.get(id);
  }

  /**
   * The catalog file GATEWAY_MODEL_CATALOG names, else the built-in one: every registered family's
   * own rows (its `catalog.rows` file, in registration order). A bad file is a ConfigError (fails
   * startup).
   */
  static load(
    filePath: string | undefined,
    enabledProviders: readonly ProviderId[],
    live: LiveModelLists = new LiveModelLists(),
  ): ModelCatalog {
    if (filePath === undefined) {
      const { entries, infos } = builtInRows();
      return new ModelCatalog(entries, enabledProviders, FALLBACK_DEFAULT_MODEL, infos, live);
    }
    const problem = (text: string) =>
      new ConfigError(
        `invalid setting GATEWAY_MODEL_CATALOG / ${flagOf('GATEWAY_MODEL_CATALOG')}: ${text} (${filePath})`,
      );
    const document = readCatalogDocument(filePath, problem);
    const { entries, infos } = catalogRows(document, familyIds(), problem);
    const defaultModel = checkedDefaultModel(document, entries, problem);
    return new ModelCatalog(entries, enabledProviders, defaultModel, infos, live);
  }

  get(id: string): CatalogEntry | undefined {
    return this.view().byId.get(id);
  }

  isEnabled(provider: ProviderId): boolean {
    return this.enabledProviders.includes(provider);
  }

  /**
   * The 404 `model_not_found` for an id no enabled family serves (chat, and `GET /v1/models/{id}`),
   * naming what works instead (model-not-found.ts); `serves` says which families are served.
   */
  notFound(
    modelId: string,
    serves: (family: ProviderId) => boolean = (family) => this.isEnabled(family),
  ): GatewayError {
    const { byId, infos, listed, tiers, aliases } = this.view();
    const droppedModels = (family: ProviderId) => this.live.droppedModels(family);
    return modelNotFound(
      modelId,
      {
        allEntries: this.allEntries,
        byId,
        infos,
        droppedModels,
        listed,
        tiers,
        aliases,
        defaultModel: this.defaultModel,
      },
      serves,
    );
  }

  /**
   * The family an id belongs to, enabled or not (a row of the file, a tier id, a passthrough, an
   * upstream name of a family's shape); undefined when none says so.
   */
  familyOfModel(id: string): ProviderId | undefined {
    return familyOfId(id, this);
  }

  /** What is known about an upstream model (bundled data, the live list over it). */
  upstreamInfo(upstreamModel: string): UpstreamModelInfo | undefined {
    return this.view().infos.get(upstreamModel);
  }

  private build(): CatalogState {
    const bundled = this.allEntries.filter((entry) => this.enabledProviders.includes(entry.provider));
    const infos = new Map(this.bundledInfos);
    const liveInfos: UpstreamModelInfo[] = [];
    for (const [provider, list] of this.live.published()) {
      if (!this.enabledProviders.includes(provider)) continue;
      for (const info of [...list].sort((left, right) => (left.priority ?? 0) - (right.priority ?? 0))) {
        infos.set(info.slug, mergeInfo(infos.get(info.slug), info)!);
        liveInfos.push(info);
      }
    }
    // A bundled default id takes the live list's default effort and verbosity, as the CLI does.
    const entries = bundled.map((entry) => withLiveDefaults(entry, infos.get(entry.upstream_model)));
    const known = new Set(bundled.map((entry) => entry.id));
    for (const info of liveInfos) {
      for (const row of variantRows(info)) {
        if (known.has(row.id)) continue;
        known.add(row.id);
        entries.push(row);
      }
    }
    // Tier aliases last: they copy the rows of their tier's model, live variants included.
    const tiered = families().find((family) => family.catalog?.tiers && this.enabledProviders.includes(family.id));
    const tiers = tiered
      ? pickTierModels(this.live.listOf(tiered.id), bundled, (slug) => this.live.isRefused(tiered.id, slug))
      : [];
    const aliases = new Map<string, TierAlias>();
    for (const tier of tiers) {
      for (const { row, alias } of tierAliasRows(tier, entries, (id) => known.has(id))) {
        known.add(row.id);
        entries.push(row);
        aliases.set(row.id, alias);
      }
    }
    // Once a family's live list is held, it alone says which of its models are offered; a tier
    // kept from the file (its list has no model of that tier) is the one exception.
    const liveSlugs = new Map(
      [...this.live.published()].map(([provider, list]) => [provider, new Set(list.map((info) => info.slug))]),
    );
    const isDropped = (entry: CatalogEntry) => {
      if (this.live.isRefused(entry.provider, entry.upstream_model)) return true;
      if (aliases.get(entry.id)?.source === 'bundled_catalog') return false;
      const slugs = liveSlugs.get(entry.provider);
      return slugs !== undefined && !slugs.has(entry.upstream_model);
    };
    const listed = entries.filter((entry) => isListed(entry, infos.get(entry.upstream_model), isDropped(entry)));
    this.changes += 1;
    return { entries, byId: new Map(entries.map((entry) => [entry.id, entry])), infos, listed, tiers, aliases };
  }

  /**
   * Resolves a public id (catalog row or `provider_x/<model>` passthrough) to what the upstream
   * receives. `undefined` for an unknown id or a disabled family. Request `reasoning_effort` and
   * `verbosity` override the row; the tier comes only from the id. A CLI-only effort resolves to
   * what the CLI sends for it (`wireEffort` below).
   */
  resolve(id: string, overrides: ResolveOverrides = {}): ResolvedModel | undefined {
    const entry = this.view().byId.get(id);
    if (entry) {
      checkEffort(
        entry.id,
        this.effortsOf(entry.upstream_model) ?? entry.reasoning_efforts ?? acceptedEfforts(entry.provider),
        overrides.reasoningEffort,
      );
      return resolveEntry(entry, overrides, this.view().infos.get(entry.upstream_model)?.maxOutputTokens);
    }
    const slash = id.indexOf('/');
    const provider = slash > 0 ? id.slice(0, slash) : '';
    const model = id.slice(slash + 1);
    if (!isFamilyId(provider) || model === '' || !this.isEnabled(provider)) return undefined;
    // Ids are exact: one that is a served passthrough but for the whitespace after it is no id
    // (the 404 names it without), like a catalog id with spaces around it.
    if (!PASSTHROUGH_NAME.test(model) && PASSTHROUGH_NAME.test(model.trimEnd())) return undefined;
    checkPassthroughName(model);
    // A passthrough of a model the catalog knows is held to that model's efforts; a new one is not.
    const known = this.view().entries.find(
      (row) => row.provider === provider && row.upstream_model === model && row.reasoning_efforts,
    );
    checkEffort(
      id,
      this.effortsOf(model) ?? known?.reasoning_efforts ?? acceptedEfforts(provider),
      overrides.reasoningEffort,
    );
    const { passthroughDefaults: defaults = NO_PASSTHROUGH_DEFAULTS, passthroughModel } =
      familyOf(provider).catalog ?? {};
    return {
      requestedId: id,
      catalogId: null,
      provider,
      upstreamModel: passthroughModel ? passthroughModel(model) : model,
      reasoningEffort: wireEffort(provider, overrides.reasoningEffort ?? defaults.effort),
      verbosity: overrides.verbosity ?? defaults.verbosity,
      serviceTier: null,
      maxOutputTokens: this.view().infos.get(model)?.maxOutputTokens,
    };
  }

  /** The efforts the live list (or bundled data) gives an upstream model, if any. */
  private effortsOf(upstreamModel: string): readonly string[] | undefined {
    return this.view().infos.get(upstreamModel)?.efforts;
  }
}

/**
 * 400 `invalid_request_error` for a passthrough model id no upstream can name: more than 128
 * characters, or a space, a control character or one outside ASCII. Sent on, it would fail on the
 * gateway's own side (a header cannot carry it) and be retried as an upstream failure. The id is
 * not echoed.
 */
function checkPassthroughName(model: string): void {
  if (PASSTHROUGH_NAME.test(model)) return;
  throw new GatewayError('invalid_request', {
    param: 'model',
    publicMessage:
      'the model id after "<family>/" must be 1 to 128 printable ASCII characters without spaces; choose one from GET /v1/models',
  });
}

/**
 * 400 `invalid_request_error` naming the allowed values when a request effort is not one the
 * model accepts (the backend would refuse it, or worse, quietly use another). The client's value
 * is not echoed. No list, or an empty one (a model list that names no efforts for the model, to
 * which the Codex CLI still sends its effort setting), is not checked.
 */
export function checkEffort(
  modelId: string,
  allowed: readonly string[] | undefined,
  requested: string | undefined,
): void {
  if (requested === undefined || allowed === undefined || allowed.length === 0 || allowed.includes(requested)) return;
  throw new GatewayError('invalid_request', {
    param: 'reasoning_effort',
    publicMessage: `reasoning_effort must be one of ${allowed.join(', ')} for model ${modelId.slice(0, 128)}`,
  });
}

/** A catalog row as the upstream receives it; request effort/verbosity override the row's defaults. */
export function resolveEntry(
  entry: CatalogEntry,
  overrides: ResolveOverrides = {},
  maxOutputTokens?: number,
): ResolvedModel {
  return {
    requestedId: entry.id,
    catalogId: entry.id,
    provider: entry.provider,
    upstreamModel: entry.upstream_model,
    reasoningEffort: wireEffort(entry.provider, overrides.reasoningEffort ?? entry.reasoning_effort),
    verbosity: overrides.verbosity ?? entry.verbosity,
    serviceTier: entry.service_tier,
    maxOutputTokens,
  };
}

type CatalogProblem = (text: string) => ConfigError;

/**
 * The default model a catalog file puts in effect: its `default_model`, else the fallback
 * (FALLBACK_DEFAULT_MODEL). Either must be one of the file's ids or a tier alias its rows define
 * (checked with every family enabled: a default of a disabled family is warned about at startup,
 * models.module.ts), else every chat body without `model` would be a 404.
 */
function checkedDefaultModel(document: unknown, entries: readonly CatalogEntry[], problem: CatalogProblem): string {
  const named = (document as { default_model?: unknown }).default_model;
  const candidate = named === undefined ? FALLBACK_DEFAULT_MODEL : named;
  if (typeof candidate === 'string' && new ModelCatalog(entries, familyIds()).get(candidate)) return candidate;
  const example = entries.length > 0 ? `, e.g. ${quoted(entries[0].id)}` : '';
  if (named === undefined)
    throw problem(
      `the file names no "default_model", and the fallback ${quoted(FALLBACK_DEFAULT_MODEL)} (a tier alias) is no model of this catalog, whose rows define no ${FALLBACK_DEFAULT_MODEL} tier model: add a "default_model" naming one of its ids${example} (what a chat request without model asks for)`,
    );
  throw problem(
    `"default_model" must name a model id of the catalog or a tier alias its rows define, not ${quoted(named)}: name one of its ids${example}`,
  );
}

function readCatalogDocument(source: string, problem: CatalogProblem): unknown {
  try {
    return readJsonFile(source);
  } catch (error) {
    if (error instanceof JsonFileProblem) throw problem(error.message);
    throw error;
  }
}

/** A catalog document's rows and `upstream_models`, validated; `providers`: the families its rows may name. */
function catalogRows(
  document: unknown,
  providers: readonly ProviderId[],
  problem: CatalogProblem,
  seen = new Set<string>(),
): { entries: CatalogEntry[]; infos: UpstreamModelInfo[] } {
  const models = (document as { models?: unknown })?.models;
  if (!Array.isArray(models)) throw problem('the catalog must be an object with a "models" array');
  const entries = models.map((row, index) => {
    const invalid = catalogRowProblem(row) ?? otherFamily(row as CatalogEntry, providers);
    if (invalid) throw problem(`${rowLabel(row, index)} ${invalid}`);
    const entry = row as CatalogEntry;
    if (seen.has(entry.id)) throw problem(`duplicate model id "${entry.id}"`);
    seen.add(entry.id);
    return entry;
  });
  const upstream = parseUpstreamModels((document as { upstream_models?: unknown }).upstream_models, providers);
  if (upstream.problem) throw problem(upstream.problem);
  return { entries, infos: upstream.infos };
}

/** `models[3] (id "x1")`: where a problem row is, by its index and, when it has one, its id. */
function rowLabel(row: unknown, index: number): string {
  const id = (row as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id.trim() !== '' ? `models[${index}] (id ${quoted(id)})` : `models[${index}]`;
}

/** A family's rows file names only that family. */
function otherFamily(entry: CatalogEntry, providers: readonly ProviderId[]): string | undefined {
  return providers.includes(entry.provider)
    ? undefined
    : `names "provider" ${entry.provider}, not ${providers.join(', ')}`;
}

/** The registered families' rows files, as they are written (the generated single file is made of them). */
function familyRowsFiles(): Array<{ id: ProviderId; file: string }> {
  return families().flatMap((family) => (family.catalog?.rows ? [{ id: family.id, file: family.catalog.rows }] : []));
}

/** The built-in catalog: each family's rows file, checked to name only its family, ids unique across them. */
function builtInRows(): { entries: CatalogEntry[]; infos: UpstreamModelInfo[] } {
  const seen = new Set<string>();
  const entries: CatalogEntry[] = [];
  const infos: UpstreamModelInfo[] = [];
  for (const { id, file } of familyRowsFiles()) {
    const problem = (text: string) => new ConfigError(`invalid model catalog of ${id}: ${text} (${file})`);
    const rows = catalogRows(readCatalogDocument(file, problem), [id], problem, seen);
    entries.push(...rows.entries);
    infos.push(...rows.infos);
  }
  return { entries, infos };
}

/**
 * The built-in catalog as one file (`src/models/catalog.json`, BUILT_IN_CATALOG_PATH): the
 * families' rows files joined, with the fallback `default_model`. `npm run catalog:json` writes it
 * and a spec keeps it current; the gateway itself reads the families' files.
 */
export function builtInCatalogFile(): string {
  const documents = familyRowsFiles().map(
    ({ file }) => JSON.parse(fs.readFileSync(file, 'utf8')) as { upstream_models?: object; models: unknown[] },
  );
  const document = {
    default_model: FALLBACK_DEFAULT_MODEL,
    upstream_models: Object.assign({}, ...documents.map((document) => document.upstream_models ?? {})) as object,
    models: documents.flatMap((document) => document.models),
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

// Variants: CLI-only efforts, live-listed ids, what /v1/models shows ------------------------------

/**
 * Efforts that are a mode of the family's CLI rather than a value the upstream takes, and what
 * the CLI puts on the wire for them (its `catalog.cliOnlyEfforts`). The gateway cannot do what
 * such a mode does itself, so their ids are not listed; the ids and the request value still
 * resolve, to what the CLI sends (docs/chat.md "Model ids").
 */
function cliOnlyEfforts(provider: ProviderId): Readonly<Record<string, string>> | undefined {
  return familyOf(provider).catalog?.cliOnlyEfforts;
}

/** The efforts a family takes on any model whose own list names none (`catalog.acceptedEfforts`). */
function acceptedEfforts(provider: ProviderId): readonly string[] | undefined {
  return familyOf(provider).catalog?.acceptedEfforts;
}

/** The effort the upstream receives for a catalog or request effort. */
export function wireEffort(provider: ProviderId, effort: string | null): string | null {
  return effort === null ? null : (cliOnlyEfforts(provider)?.[effort] ?? effort);
}

/** True for an effort the gateway accepts but does not offer (a CLI-only mode). */
export function isCliOnlyEffort(provider: ProviderId, effort: string | null): boolean {
  return effort !== null && cliOnlyEfforts(provider)?.[effort] !== undefined;
}

/** The efforts to advertise for a model: the upstream's, minus CLI-only modes. */
export function offeredEfforts(provider: ProviderId, efforts: readonly string[] | undefined): string[] | undefined {
  return efforts?.filter((effort) => !isCliOnlyEffort(provider, effort));
}

/**
 * The public ids of a live-listed model, as the bundled catalog spells them:
 * `<slug>` (the model's default effort), `<slug>-<effort>` per listed effort, and the same with
 * `-fast` (`service_tier: "priority"`) when the model lists that tier. Nothing is structured:
 * the structured allowlist is fixed at startup (docs/structured.md).
 */
export function variantRows(info: UpstreamModelInfo): CatalogEntry[] {
  const efforts = info.efforts ?? [];
  const tiers: Array<'priority' | null> = info.serviceTiers?.includes('priority') ? [null, 'priority'] : [null];
  const rows: CatalogEntry[] = [];
  for (const tier of tiers) {
    const fast = tier !== null;
    // `named`: the effort the id spells (none on the default row); `effort`: what the row sends.
    const row = (named: string | null, effort: string | null): CatalogEntry => ({
      id: variantId({ slug: info.slug, fast, effort: named }),
      provider: info.provider,
      upstream_model: info.slug,
      reasoning_effort: effort,
      reasoning_efforts: efforts.length > 0 ? efforts : undefined,
      verbosity: info.defaultVerbosity ?? null,
      service_tier: tier,
      structured: false,
    });
    rows.push(row(null, info.defaultEffort ?? efforts[0] ?? null));
    for (const effort of efforts) rows.push(row(effort, effort));
  }
  return rows;
}

/**
 * `<slug>` and `<slug>-fast`: the ids that mean "the model's default" effort (an effort-suffixed
 * id means its effort whatever the default is).
 */
export function isDefaultRow(entry: CatalogEntry): boolean {
  const slug = entry.upstream_model;
  return entry.id === slug || entry.id === variantId({ slug, fast: true, effort: null });
}

/**
 * A row with what the live list gives its model as the defaults, where it gives them: what the
 * Codex CLI sends when no effort or verbosity is set. The effort of a default row
 * (`isDefaultRow`), and the verbosity of every id spelled from the slug (`<slug>`,
 * `<slug>-high`, `<slug>-fast-low`, …; no id names a verbosity). The row's own values are the
 * fallback; a row of another name (a catalog file's own id) is returned as it is.
 */
export function withLiveDefaults(entry: CatalogEntry, info: UpstreamModelInfo | undefined): CatalogEntry {
  const slug = entry.upstream_model;
  if (!info || (entry.id !== slug && !entry.id.startsWith(`${slug}-`))) return entry;
  const effort = isDefaultRow(entry) ? (info.defaultEffort ?? entry.reasoning_effort) : entry.reasoning_effort;
  const verbosity = info.defaultVerbosity ?? entry.verbosity;
  if (effort === entry.reasoning_effort && verbosity === entry.verbosity) return entry;
  return { ...entry, reasoning_effort: effort, verbosity };
}

/**
 * Whether `/v1/models` shows a row: not dropped (refused for the login, or missing from its
 * family's live list), not a CLI-only effort, and where the upstream's entry is known, not hidden, its effort one the upstream lists, its tier one it offers.
 */
export function isListed(row: CatalogEntry, info: UpstreamModelInfo | undefined, dropped: boolean): boolean {
  if (dropped || isCliOnlyEffort(row.provider, row.reasoning_effort)) return false;
  if (!info) return true;
  if (info.listed === false) return false;
  // An empty effort list names none, as in checkEffort: no effort id is hidden for it.
  const efforts = info.efforts?.length ? info.efforts : undefined;
  if (efforts && row.reasoning_effort !== null && !efforts.includes(row.reasoning_effort)) return false;
  if (info.serviceTiers && row.service_tier !== null && !info.serviceTiers.includes(row.service_tier)) return false;
  return true;
}
