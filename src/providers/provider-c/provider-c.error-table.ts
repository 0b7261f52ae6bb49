import type { ErrorSpec } from '../../core/error-codes';
import type { Family } from '../../core/family';
import { PROVIDER_C_ORGANIZATION_PAGE } from './provider-c.fix';

/** The error codes only provider_c raises (docs/error-codes.md), merged into the one table by the registry. */
export const PROVIDER_C_ERRORS = {
  // The `claude` executable cannot be found or run: the operator installs it, no retry helps.
  provider_cli_missing: {
    status: 502,
    type: 'upstream_error',
    openaiCode: 'provider_cli_missing',
    structuredCode: 'upstream_error',
    streamText: 'upstream error',
    message: "the provider's command-line tool is not installed on the gateway's machine",
    upstream: true,
  },
} as const satisfies Record<string, ErrorSpec>;

declare module '../../core/error-codes' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the codes are the table's keys
  interface FamilyErrorCodes extends Record<keyof typeof PROVIDER_C_ERRORS, true> {}
}

/** provider_c's own words where the generic family message would leave out what Anthropic said or bills. */
export const PROVIDER_C_MESSAGES: Family['messages'] = {
  provider_cli_missing: ({ provider, fix }) =>
    fix.install
      ? `${provider} needs the ${fix.cli} on the gateway's machine and cannot find it: ${fix.install}`
      : undefined,
  usage_credit_exhausted: ({ provider, fix, reset, retry }) =>
    `${provider}: the usage credit of this ${fix.cli} login is used up${reset} (the Anthropic API answered that its credit balance is too low); ${retry ?? 'wait for the reset'}, add usage credits to that account, or add another login`,
  // Anthropic paused the organization's usage at its daily cap (`overage-daily-cap-paused`): the
  // organization's admin page lifts it, not the owner's usage page.
  usage_paused: ({ provider, fix, reset, retry }) =>
    `${provider}: Anthropic paused usage for the organization of this ${fix.cli} login: the organization reached its daily spending cap (the login's plan is not spent); an admin of that organization can raise or lift the cap at ${PROVIDER_C_ORGANIZATION_PAGE} or ask Anthropic support, else usage resumes when the daily cap resets${reset}; ${retry ?? 'retry after it resets'}, or add a login of another organization`,
  // Anthropic bills this use of a Claude subscription as a third-party app, from extra usage that is off or spent.
  extra_usage_required: ({ provider, fix }) =>
    fix.paidUsage
      ? `${provider}: Anthropic bills this use of the ${fix.cli} login as a third-party app, from ${fix.paidUsage.name}, which is off or spent on that account; the account owner can turn it on or add more at ${fix.paidUsage.page}, or use another model family (not retried)`
      : undefined,
};
