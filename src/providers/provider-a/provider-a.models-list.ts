import { isJsonObject } from '../../common/json';
import type { UpstreamModelInfo } from '../../models/upstream-model-info';
import type { ProviderACredentials } from '../../accounts/provider-a/provider-a.auth';
import type { CodexClient } from './provider-a.client';
import { CODEX_ORIGINATOR } from './provider-a.constants';
import { httpUrlFor } from './provider-a.transport';

// The live model list of the Codex backend, read as Codex CLI 0.171.0 reads it
// (test/fixtures/codex-oracle/codex-0.171.0.gpt-6.1-sol.models-served.capture.json):
// `GET {base}/models?client_version=0.171.0` with the login's bearer and account id. The backend
// shapes the list by that version (a model's `minimal_client_version` hides it from older
// clients), so it is the version the gateway claims (PROVIDER_A_CLIENT_VERSION).

/**
 * `…/codex/responses` → `…/codex/models?client_version=<claimed version>`, on http(s) whatever the
 * transport: a gateway pointed at another upstream (or a test fake) reads that one's list.
 */
export function modelsListUrl(responsesUrl: string, client: CodexClient): string {
  const url = new URL(httpUrlFor(responsesUrl));
  url.pathname = url.pathname.replace(/\/responses\/?$/, '') + '/models';
  url.search = `client_version=${encodeURIComponent(client.version)}`;
  url.hash = '';
  return url.toString();
}

/** The CLI's headers for the list; the user agent is minimal mode's (the gateway is a wrapper). */
export function modelsListHeaders(credentials: ProviderACredentials, client: CodexClient): Record<string, string> {
  return {
    authorization: `Bearer ${credentials.accessToken}`,
    'chatgpt-account-id': credentials.accountId,
    originator: CODEX_ORIGINATOR,
    'user-agent': client.userAgentMinimal,
    accept: '*/*',
    'accept-encoding': client.acceptEncoding,
  };
}

const SLUG = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const positiveInteger = (value: unknown) =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
const word = (value: unknown) => (typeof value === 'string' && /^[a-z0-9_-]{1,32}$/i.test(value) ? value : undefined);

/**
 * `["low", …]` or `[{effort: "low", …}, …]` (the CLI's form); ids (`{id: "priority"}`) for tiers.
 * `undefined` (unknown, so not checked) for anything else, and for a non-empty array none of whose
 * entries reads: a reshaped field says nothing, it does not say "none".
 */
function names(value: unknown, key: 'effort' | 'id'): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const read = value
    .map((entry) => word(isJsonObject(entry) ? entry[key] : entry))
    .filter((entry): entry is string => entry !== undefined);
  return value.length > 0 && read.length === 0 ? undefined : read;
}

/** Why a fetched list was not applied (the last good list is kept). */
export type UnreadableList = 'not_a_model_list' | 'no_readable_entry';

/**
 * The backend's answer (`{models: [...]}`, entries as `codex debug models --bundled` prints
 * them) → what the catalog merges. Entries without a usable slug are skipped. Not a list:
 * `not_a_model_list` when the body is not a model list at all, `no_readable_entry` when it has
 * entries but none with a usable slug (the list changed shape; applying it would empty the
 * catalog's provider_a part).
 */
export function parseModelsList(body: unknown): UpstreamModelInfo[] | UnreadableList {
  if (!isJsonObject(body) || !Array.isArray(body.models)) return 'not_a_model_list';
  const infos: UpstreamModelInfo[] = [];
  for (const model of body.models) {
    if (!isJsonObject(model) || typeof model.slug !== 'string' || !SLUG.test(model.slug)) continue;
    const modalities = Array.isArray(model.input_modalities)
      ? model.input_modalities.map(word).filter((entry): entry is string => entry !== undefined)
      : undefined;
    infos.push({
      provider: 'provider_a',
      slug: model.slug,
      listed: model.visibility !== 'hide',
      efforts: names(model.supported_reasoning_levels, 'effort'),
      defaultEffort: word(model.default_reasoning_level) ?? null,
      defaultVerbosity: word(model.default_verbosity) ?? null,
      supportsVerbosity: typeof model.support_verbosity === 'boolean' ? model.support_verbosity : undefined,
      defaultReasoningSummary: word(model.default_reasoning_summary),
      supportsReasoningSummary:
        typeof model.supports_reasoning_summary_parameter === 'boolean'
          ? model.supports_reasoning_summary_parameter
          : undefined,
      serviceTiers: names(model.service_tiers, 'id'),
      responsesLite: typeof model.use_responses_lite === 'boolean' ? model.use_responses_lite : undefined,
      contextWindow: positiveInteger(model.context_window),
      inputModalities: modalities,
      priority: typeof model.priority === 'number' ? model.priority : undefined,
    });
  }
  return body.models.length > 0 && infos.length === 0 ? 'no_readable_entry' : infos;
}
