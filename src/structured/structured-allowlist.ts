import canonicalize from 'canonicalize';
import { sha256Hex } from '../common/hashing';
import { GatewayError } from '../core/gateway.error';
import { ConfigError } from '../config/app-config';
import type { ProviderId } from '../core/provider-id';
import type { CatalogEntry } from '../models/model-catalog';
import { resolveEntry } from '../models/model-catalog';
import type { ResolvedModel } from '../core/resolved-model';

export interface AllowlistInput {
  /** STRUCTURED_MODELS (trimmed, de-duplicated), or `undefined` for the default. */
  readonly requested?: readonly string[];
  /** The whole catalog, disabled families included, so a disabled id is told from an unknown one. */
  readonly catalog: readonly CatalogEntry[];
  readonly enabledProviders: readonly ProviderId[];
}

export interface DroppedModel {
  readonly id: string;
  readonly reason: 'no_strict_schema' | 'provider_disabled';
}

/** One row of the policy hash (gateway-behaviours.md §6.4). */
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
  private readonly byId: ReadonlyMap<string, CatalogEntry>;

  constructor(
    entries: readonly CatalogEntry[],
    readonly dropped: readonly DroppedModel[] = [],
  ) {
    const sorted = [...entries].sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
    this.byId = new Map(sorted.map((entry) => [entry.id, entry]));
    this.ids = sorted.map((entry) => entry.id);
    this.policyVersion = modelPolicyVersion(sorted);
  }

  /**
   * Builds the allowlist at startup. An id outside the catalog is a ConfigError naming
   * STRUCTURED_MODELS; ids whose catalog row is not `structured`, or of disabled families,
   * are dropped and reported in `dropped` (the module logs a warning for them).
   */
  static build({ requested, catalog, enabledProviders }: AllowlistInput): StructuredAllowlist {
    const byId = new Map(catalog.map((entry) => [entry.id, entry]));
    const candidates = requested ?? catalog.filter((entry) => entry.structured).map((entry) => entry.id);
    const kept: CatalogEntry[] = [];
    const dropped: DroppedModel[] = [];
    for (const id of new Set(candidates)) {
      const entry = byId.get(id);
      if (!entry) {
        throw new ConfigError(
          `invalid setting STRUCTURED_MODELS / --structured-models: ${JSON.stringify(id.slice(0, 80))} is not a model id of the catalog`,
        );
      }
      // The catalog's `structured` flag is the one statement of whether an id can serve strict
      // schemas (contract endpoint rule 5); the built-in catalog sets it on provider_a ids only.
      if (!entry.structured) dropped.push({ id, reason: 'no_strict_schema' });
      else if (!enabledProviders.includes(entry.provider)) dropped.push({ id, reason: 'provider_disabled' });
      else kept.push(entry);
    }
    return new StructuredAllowlist(kept, dropped);
  }

  /**
   * Exact, case-sensitive lookup with the request's effort and verbosity overrides applied
   * (design.md §3). A miss is `unsupported_model` listing the allowed ids.
   */
  resolve(id: string, overrides: { reasoningEffort?: string; verbosity?: string } = {}): ResolvedModel {
    const entry = this.byId.get(id);
    if (!entry) {
      throw new GatewayError('unsupported_model', {
        publicMessage: 'model is not enabled for structured inference',
        details: [`supported models: ${this.ids.join(', ')}`],
      });
    }
    return resolveEntry(entry, overrides);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }
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
