import canonicalize from 'canonicalize';
import { sha256Hex } from '../common/hashing';
import { familyOf } from '../core/family-registry';
import { GatewayError } from '../core/gateway.error';
import { ConfigError } from '../config/app-config';
import type { ProviderId } from '../core/provider-id';
import type { CatalogEntry } from '../models/model-catalog';
import { checkEffort, resolveEntry } from '../models/model-catalog';
import { pickTierModels, tierOfSlug } from '../models/model-tiers';
import type { ResolvedModel } from '../core/resolved-model';
import { REASONING_EFFORTS } from './structured-request.parser';
import { quoted } from '../core/quoted';

export interface AllowlistInput {
  /** STRUCTURED_MODELS (trimmed, de-duplicated), or `undefined` for the default. */
  readonly requested?: readonly string[];
  /**
   * The whole bundled catalog with its tier aliases, disabled families included, so a disabled id
   * is told from an unknown one; no live list (the allowlist is fixed at startup).
   */
  readonly catalog: readonly CatalogEntry[];
  readonly enabledProviders: readonly ProviderId[];
}

export interface DroppedModel {
  readonly id: string;
  readonly reason: 'no_strict_schema' | 'provider_disabled';
}

/** One row of the policy hash (docs/design/behaviours.md §6.4). */
interface PolicyRow {
  readonly id: string;
  readonly upstream_model: string;
  readonly reasoning_effort: string | null;
  readonly verbosity: string | null;
  readonly service_tier: string | null;
}

/**
 * The structured model allowlist and its `model_policy_version`: 16 hex characters of SHA-256
 * over the RFC 8785 form of the allowed ids and their resolutions, so any allowlist or
 * resolution change yields a new version and therefore fresh inferences, never stale replays.
 */
export class StructuredAllowlist {
  readonly policyVersion: string;
  /** Sorted allowed ids (also the `details` of an `unsupported_model` answer). */
  readonly ids: readonly string[];
  /** The families of the allowed ids, each once: the ones this route calls. */
  readonly providers: readonly ProviderId[];
  private readonly byId: ReadonlyMap<string, CatalogEntry>;

  constructor(
    entries: readonly CatalogEntry[],
    readonly dropped: readonly DroppedModel[] = [],
  ) {
    const sorted = [...entries].sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
    this.byId = new Map(sorted.map((entry) => [entry.id, entry]));
    this.ids = sorted.map((entry) => entry.id);
    this.providers = [...new Set(sorted.map((entry) => entry.provider))].sort();
    this.policyVersion = modelPolicyVersion(sorted);
  }

  /**
   * Builds the allowlist at startup. The default is every id of the `sol`, `terra` and `luna`
   * tier models (as the bundled catalog names them at startup) whose effort the route takes
   * (docs/structured.md "Models"). An id outside the catalog is a ConfigError naming
   * STRUCTURED_MODELS; ids that cannot serve strict schemas, or of disabled families, are dropped
   * and reported in `dropped` (the module logs a warning for them), and a STRUCTURED_MODELS left
   * with none is a ConfigError too.
   */
  static build({ requested, catalog, enabledProviders }: AllowlistInput): StructuredAllowlist {
    const byId = new Map(catalog.map((entry) => [entry.id, entry]));
    const candidates = requested ?? defaultIds(catalog);
    const kept: CatalogEntry[] = [];
    const dropped: DroppedModel[] = [];
    for (const id of new Set(candidates)) {
      const entry = byId.get(id);
      if (!entry) {
        throw new ConfigError(
          `invalid setting STRUCTURED_MODELS / --structured-models: ${quoted(id)} is not a model id of the catalog: name ids GET /v1/models lists, or unset it for the default allowlist${requested ? ` (got ${quoted(requested.join(','))})` : ''}`,
        );
      }
      if (!servesStrictSchemas(entry)) dropped.push({ id, reason: 'no_strict_schema' });
      else if (!enabledProviders.includes(entry.provider)) dropped.push({ id, reason: 'provider_disabled' });
      else kept.push(entry);
    }
    if (requested !== undefined && kept.length === 0) throw noneServed(dropped, byId, enabledProviders);
    return new StructuredAllowlist(kept, dropped);
  }

  /**
   * Exact, case-sensitive lookup with the request's effort and verbosity overrides applied
   * (docs/design/decisions.md §3). A miss is `unsupported_model` listing the allowed ids; an effort
   * the model does not take is `invalid_request` naming the ones it does on this route, before any upstream call
   * (the backend would refuse it, and no retry could succeed).
   */
  resolve(id: string, overrides: { reasoningEffort?: string; verbosity?: string } = {}): ResolvedModel {
    const entry = this.byId.get(id);
    if (!entry) {
      throw new GatewayError('unsupported_model', {
        publicMessage: 'model is not enabled for structured inference',
        details: [`supported models: ${this.ids.join(', ')}`],
      });
    }
    // Named as this route takes them: the row may list efforts its body rules refuse (`max`).
    const efforts = entry.reasoning_efforts?.filter((effort) =>
      (REASONING_EFFORTS as readonly string[]).includes(effort),
    );
    checkEffort(entry.id, efforts, overrides.reasoningEffort);
    return resolveEntry(entry, overrides);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }
}

/** How many dropped ids the startup refusal names; the rest are counted. */
const NAMED_DROPPED = 5;

/**
 * STRUCTURED_MODELS of which no id can be served: the route would answer every call
 * `unsupported_model`, so startup is refused naming the ids, why each is out, and what works.
 */
function noneServed(
  dropped: readonly DroppedModel[],
  byId: ReadonlyMap<string, CatalogEntry>,
  enabledProviders: readonly ProviderId[],
): ConfigError {
  const why = ({ id, reason }: DroppedModel) =>
    reason === 'provider_disabled'
      ? `${quoted(id)} (its family ${byId.get(id)?.provider} is not in GATEWAY_PROVIDERS)`
      : `${quoted(id)} (cannot serve strict schemas)`;
  const named = dropped.slice(0, NAMED_DROPPED).map(why).join(', ');
  const more = dropped.length > NAMED_DROPPED ? ` and ${dropped.length - NAMED_DROPPED} more` : '';
  const served = defaultIds([...byId.values()]).find((id) => enabledProviders.includes(byId.get(id)!.provider));
  const example = served === undefined ? '' : `, e.g. ${served}`;
  return new ConfigError(
    `invalid setting STRUCTURED_MODELS / --structured-models: none of its ids can serve structured inference: ${named}${more}; ` +
      `name at least one that can (a provider_a tier model at an effort this route takes${example}, or a catalog row marked "structured": true, of an enabled family), or unset it for the default allowlist`,
  );
}

/**
 * Whether an id can serve strict schemas (docs/structured.md "Models"): a tier model of a family
 * whose tier models do (its `catalog.strictTierModels`: its CLI's output-schema mode; aliases
 * included) at an effort the route takes, or any row the catalog file marks `structured: true`.
 */
function servesStrictSchemas(entry: CatalogEntry): boolean {
  if (entry.structured) return true;
  return (
    familyOf(entry.provider).catalog?.strictTierModels === true &&
    tierOfSlug(entry.upstream_model) !== undefined &&
    (REASONING_EFFORTS as readonly string[]).includes(entry.reasoning_effort ?? '')
  );
}

/**
 * The default allowlist: each tier model's own ids (`<slug>`, `<slug>-high`, `<slug>-fast-low`,
 * …; not the aliases: one id per policy row) that can serve strict schemas.
 */
function defaultIds(catalog: readonly CatalogEntry[]): string[] {
  const tiers = new Set(pickTierModels(undefined, catalog, () => false).map((tier) => tier.upstreamModel));
  return catalog
    .filter(
      (entry) =>
        tiers.has(entry.upstream_model) &&
        (entry.id === entry.upstream_model || entry.id.startsWith(`${entry.upstream_model}-`)) &&
        servesStrictSchemas(entry),
    )
    .map((entry) => entry.id);
}

/** First 16 hex of SHA-256 over the RFC 8785 form of the sorted policy rows. */
export function modelPolicyVersion(sortedEntries: readonly CatalogEntry[]): string {
  const rows: PolicyRow[] = sortedEntries.map((entry) => ({
    id: entry.id,
    upstream_model: entry.upstream_model,
    reasoning_effort: entry.reasoning_effort,
    verbosity: entry.verbosity,
    service_tier: entry.service_tier ?? null,
  }));
  return sha256Hex(canonicalize(rows)!).slice(0, 16);
}
