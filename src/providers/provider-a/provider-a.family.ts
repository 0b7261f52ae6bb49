import type { Family } from '../../core/family';
import { PROVIDER_A_MESSAGES } from './provider-a.error-table';
import { checkProviderALogin } from '../../accounts/provider-a/provider-a.login-check';
import { fileLogins } from '../../accounts/configured-logins';
import { PROVIDER_A_PARAMETERS } from './provider-a.parameters';

/** Codex: the ChatGPT login of the Codex CLI, on the Codex Responses backend. */
export const providerA: Family = {
  id: 'provider_a',
  title: 'provider_a (Codex)',
  cliNames: ['codex'],
  fix: {
    cli: 'Codex CLI',
    login: "run `codex login` on the gateway's machine",
    paidUsage: { name: 'Codex credits', page: 'chatgpt.com/codex/settings/usage' },
  },
  messages: PROVIDER_A_MESSAGES,
  logins: (config) => fileLogins('provider_a', config.providerA.accounts, checkProviderALogin),
  parameters: PROVIDER_A_PARAMETERS,
  adapter: () => import('./provider-a.adapter').then((module) => module.ProviderAAdapter),
};
