import type { Family } from '../../core/family';

/**
 * What to do about each of the backend's model refusals (docs/providers.md "Model errors"), in
 * provider_a's words: the Codex CLI version the gateway claims, the ChatGPT plan of the login.
 */
export const MODEL_REFUSAL_FIX = {
  model_requires_newer_client:
    'the upstream serves this model only to a newer Codex CLI than the version this gateway claims; choose another model from GET /v1/models, or upgrade the gateway to a release that verifies a newer Codex CLI (until then an operator can claim a newer version with PROVIDER_A_CLIENT_VERSION, an unverified wire: docs/providers.md "Client version")',
  model_not_entitled:
    "the upstream does not serve this model to this login's ChatGPT plan; choose another model from GET /v1/models, or use a login whose plan includes it",
  not_found:
    'the upstream does not know this model or no longer serves it to this login; choose another model from GET /v1/models',
} as const;

/** provider_a's own words for the model refusals the core table words without a family. */
export const PROVIDER_A_MESSAGES: Family['messages'] = {
  model_requires_newer_client: () => MODEL_REFUSAL_FIX.model_requires_newer_client,
  model_not_entitled: () => MODEL_REFUSAL_FIX.model_not_entitled,
};
