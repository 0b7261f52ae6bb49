import type { ProviderId } from './provider-id';

/** The verbosity words OpenAI defines (`verbosity` of a chat or structured call, a catalog row's default). */
export const VERBOSITIES = ['low', 'medium', 'high'] as const;

/** A model id resolved against the catalog (docs/design/decisions.md §3). */
export interface ResolvedModel {
  /** The id exactly as the client sent it (echoed in responses). */
  readonly requestedId: string;
  /** Catalog id, or `null` for an explicit `provider_x/<model>` passthrough. */
  readonly catalogId: string | null;
  readonly provider: ProviderId;
  readonly upstreamModel: string;
  /** Effective effort: request override, else the catalog default; `null` = none. */
  readonly reasoningEffort: string | null;
  /** Effective verbosity: request override, else the catalog default. */
  readonly verbosity: string | null;
  /** `priority` for `-fast` ids; taken from the id only. */
  readonly serviceTier: 'priority' | null;
  /** The most output tokens the upstream model gives, when its model list (or the bundled data) says. */
  readonly maxOutputTokens?: number;
}
