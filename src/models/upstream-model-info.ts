import type { ProviderId } from '../core/provider-id';

/**
 * What the catalog knows about one upstream model, whichever id variant names it: from the
 * catalog file's `upstream_models` section, and for provider_a from the live model list the
 * backend publishes to the login (docs/design/decisions.md §3). Every field is optional: unknown stays unsaid.
 */
export interface UpstreamModelInfo {
  readonly provider: ProviderId;
  /** The upstream model id (the live list's `slug`). */
  readonly slug: string;
  /** `false` for `visibility: "hide"`: resolvable, never listed. */
  readonly listed?: boolean;
  /** Efforts the upstream accepts, as the provider CLI lists them (CLI-only modes included). */
  readonly efforts?: readonly string[];
  readonly defaultEffort?: string | null;
  readonly defaultVerbosity?: string | null;
  /** provider_a: `false` when the model takes no `text.verbosity` (the list's `support_verbosity`). */
  readonly supportsVerbosity?: boolean;
  /** provider_a: the list's `default_reasoning_summary` (`none`, `auto`, `detailed`, …). */
  readonly defaultReasoningSummary?: string;
  /** provider_a: `false` when the model takes no `reasoning.summary` (`supports_reasoning_summary_parameter`). */
  readonly supportsReasoningSummary?: boolean;
  /** Upstream service tiers (`priority` makes `-fast` ids). */
  readonly serviceTiers?: readonly string[];
  /** provider_a: the model takes the "Responses lite" request shape (docs/providers.md). */
  readonly responsesLite?: boolean;
  readonly contextWindow?: number;
  readonly maxOutputTokens?: number;
  readonly inputModalities?: readonly string[];
  /** Ordering hint of the live list (lower first). */
  readonly priority?: number;
}

/** The catalog file's spelling of `UpstreamModelInfo` (snake case, like the rest of the file). */
interface FileInfo {
  readonly provider?: unknown;
  readonly context_window?: unknown;
  readonly max_output_tokens?: unknown;
  readonly input_modalities?: unknown;
  readonly use_responses_lite?: unknown;
}

const positiveInteger = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
const strings = (value: unknown): readonly string[] | undefined =>
  Array.isArray(value) && value.every((entry) => typeof entry === 'string') ? value : undefined;

/**
 * Reads the catalog file's `upstream_models` object (`{<upstream model>: {provider,
 * context_window, max_output_tokens, input_modalities, use_responses_lite}}`). A malformed entry
 * is a problem string naming the key (startup fails on it like on any catalog error).
 */
export function parseUpstreamModels(
  section: unknown,
  providers: readonly ProviderId[],
): { infos: UpstreamModelInfo[]; problem?: string } {
  if (section === undefined) return { infos: [] };
  if (typeof section !== 'object' || section === null || Array.isArray(section))
    return { infos: [], problem: '"upstream_models" must be an object' };
  const infos: UpstreamModelInfo[] = [];
  for (const [slug, raw] of Object.entries(section as Record<string, FileInfo>)) {
    if (typeof raw !== 'object' || raw === null) return { infos, problem: `upstream_models.${slug} must be an object` };
    if (!providers.includes(raw.provider as ProviderId))
      return { infos, problem: `upstream_models.${slug} has an unknown "provider"` };
    for (const key of ['context_window', 'max_output_tokens'] as const) {
      if (raw[key] !== undefined && positiveInteger(raw[key]) === undefined)
        return { infos, problem: `upstream_models.${slug}.${key} must be a positive integer` };
    }
    if (raw.input_modalities !== undefined && strings(raw.input_modalities) === undefined)
      return { infos, problem: `upstream_models.${slug}.input_modalities must be an array of strings` };
    if (raw.use_responses_lite !== undefined && typeof raw.use_responses_lite !== 'boolean')
      return { infos, problem: `upstream_models.${slug}.use_responses_lite must be true or false` };
    infos.push({
      provider: raw.provider as ProviderId,
      slug,
      contextWindow: positiveInteger(raw.context_window),
      maxOutputTokens: positiveInteger(raw.max_output_tokens),
      inputModalities: strings(raw.input_modalities),
      responsesLite: raw.use_responses_lite,
    });
  }
  return { infos };
}

/** `live` over `bundled`, field by field: the live list wins where it says something. */
export function mergeInfo(
  bundled: UpstreamModelInfo | undefined,
  live: UpstreamModelInfo | undefined,
): UpstreamModelInfo | undefined {
  if (!bundled || !live) return live ?? bundled;
  const merged: Record<string, unknown> = { ...bundled };
  for (const [key, value] of Object.entries(live)) if (value !== undefined) merged[key] = value;
  return merged as unknown as UpstreamModelInfo;
}
