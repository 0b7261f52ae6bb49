import type { CatalogEntry } from './catalog-entry';
import { CATALOG_CREATED, offeredEfforts, wireEffort } from './model-catalog';
import type { TierAlias } from './model-tiers';
import type { UpstreamModelInfo } from './upstream-model-info';

/**
 * One `/v1/models` entry (docs/design/decisions.md §3): the contract's `id`, `object`, `created`, `owned_by`,
 * plus what agents use to configure themselves (docs/chat.md "Model ids"). A field whose value is
 * unknown is left out rather than guessed.
 */
export function modelListEntry(
  entry: CatalogEntry,
  info: UpstreamModelInfo | undefined,
  alias?: TierAlias,
): Record<string, unknown> {
  const efforts = offeredEfforts(entry.provider, info?.efforts ?? entry.reasoning_efforts);
  const result: Record<string, unknown> = {
    id: entry.id,
    object: 'model',
    created: CATALOG_CREATED,
    owned_by: entry.provider,
    // Every id variant (effort, -fast, alias) of one upstream model shares it.
    family: entry.upstream_model,
  };
  if (info?.contextWindow !== undefined) result.context_window = info.contextWindow;
  if (info?.maxOutputTokens !== undefined) result.max_output_tokens = info.maxOutputTokens;
  if (info?.inputModalities !== undefined) result.input_modalities = info.inputModalities;
  if (entry.reasoning_effort !== null) result.reasoning_effort = wireEffort(entry.provider, entry.reasoning_effort);
  if (efforts !== undefined && efforts.length > 0) result.supported_reasoning_efforts = efforts;
  // A tier alias says which concrete id it means today, and whether the live list chose it
  // (docs/endpoints.md "GET /v1/models").
  if (alias) {
    result.alias_for = alias.target;
    result.tier = alias.tier;
    result.tier_source = alias.source;
  }
  return result;
}
