import type { ErrorSpec } from '../../core/error-codes';

/** The error codes only provider_b raises (docs/error-codes.md), merged into the one table by the registry. */
export const PROVIDER_B_ERRORS = {
  // Code Assist refuses the kind of Google account, not its token: logging in again does not help.
  provider_account_unsupported: {
    status: 403,
    type: 'permission_error',
    openaiCode: 'provider_account_unsupported',
    structuredCode: 'auth_error',
    structuredStatus: 401,
    streamText: 'provider account unsupported',
    message:
      'the upstream no longer serves this login (Google ended Gemini CLI logins of individual accounts on Code Assist on 2026-06-18; Code Assist Standard or Enterprise with PROVIDER_B_PROJECT still works); see docs/providers.md',
    upstream: true,
    refusesAccount: true,
  },
  // Code Assist serves the account but has no project for it: a setting or a one-time run of the
  // CLI fixes it, not a new login, so the account pool leaves the login as it is.
  provider_project_required: {
    status: 403,
    type: 'permission_error',
    openaiCode: 'upstream_project_required',
    structuredCode: 'auth_error',
    structuredStatus: 401,
    streamText: 'upstream project required',
    message:
      'the upstream has no Code Assist project for this login: set PROVIDER_B_PROJECT, or open the Gemini CLI once with that Google account; see docs/providers.md#project-setup-loadcodeassist-as-the-gemini-cli-does-it',
    upstream: true,
  },
  // The model is short of capacity for every user (the Gemini CLI's "high demand"), not this
  // login's quota: no login is rested, and a retry later or another model serves.
  provider_model_at_capacity: {
    status: 503,
    type: 'upstream_error',
    openaiCode: 'model_at_capacity',
    structuredCode: 'unavailable',
    streamText: 'model at capacity',
    message:
      'the upstream has no capacity for this model right now (high demand for every user, not a limit of this login); retry shortly, or choose another model from GET /v1/models',
    retryAfterSeconds: 30,
    upstream: true,
  },
} as const satisfies Record<string, ErrorSpec>;

declare module '../../core/error-codes' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the codes are the table's keys
  interface FamilyErrorCodes extends Record<keyof typeof PROVIDER_B_ERRORS, true> {}
}
