import type { ProviderId } from '../core/provider-id';

/** One row of the catalog data file (docs/design/decisions.md §3). */
export interface CatalogEntry {
  readonly id: string;
  readonly provider: ProviderId;
  readonly upstream_model: string;
  readonly reasoning_effort: string | null;
  /**
   * The efforts the upstream model accepts (as the pinned provider CLI lists them); a request
   * `reasoning_effort` outside them is refused before any upstream call. Absent: not checked.
   */
  readonly reasoning_efforts?: readonly string[];
  readonly verbosity: string | null;
  readonly service_tier: 'priority' | null;
  /** Whether structured output may use this id by default. */
  readonly structured: boolean;
}
