import * as path from 'node:path';
import type { Family } from '../../core/family';
import { PROVIDER_A_MESSAGES } from './provider-a.error-table';
import { checkProviderALogin } from '../../accounts/provider-a/provider-a.login-check';
import { fileLogins } from '../../accounts/configured-logins';
import { PROVIDER_A_PARAMETERS } from './provider-a.parameters';
import { PROVIDER_A_SETTINGS } from './provider-a.settings';

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
  settings: PROVIDER_A_SETTINGS,
  messages: PROVIDER_A_MESSAGES,
  logins: (config) => fileLogins('provider_a', config.providerA.accounts, checkProviderALogin),
  parameters: PROVIDER_A_PARAMETERS,
  // A function tool goes out with its `strict` flag, which the backend holds its calls to.
  strictToolsUpstream: true,
  timeoutSetting: 'PROVIDER_A_TIMEOUT',
  adapter: () => import('./provider-a.adapter').then((module) => module.ProviderAAdapter),
  readPlan: (read) => import('./provider-a.plan-check').then((module) => module.readProviderAPlan(read)),
  catalog: {
    // docs/upstream/provider-a.md §8.
    passthroughDefaults: { effort: 'medium', verbosity: 'medium' },
    // Codex CLI 0.171.0 lists `ultra` ("maximum reasoning with automatic task delegation": the CLI
    // spawns sub-agents itself) and sends `effort: "xhigh"` for it
    // (test/fixtures/codex-oracle/codex-0.171.0.efforts.json); the backend refuses `"ultra"` with
    // 400. The gateway cannot delegate (the tools run on the client), so `ultra` ids are not
    // listed; the ids and the request value still resolve, to what the CLI sends.
    cliOnlyEfforts: { ultra: 'xhigh' },
    tiers: true,
    strictTierModels: true,
    // The backend's model slugs: an unknown `gpt-…` id is answered with its `provider_a/` form.
    modelNames: /^gpt-/,
    variantSuffixes: true,
    rows: path.join(__dirname, 'provider-a.catalog.json'),
  },
};
