import * as path from 'node:path';
import type { Family } from '../../core/family';
import { PROVIDER_B_ERRORS } from './provider-b.error-table';
import { checkProviderBLogin } from '../../accounts/provider-b/provider-b.login-check';
import { fileLogins } from '../../accounts/configured-logins';
import { PROVIDER_B_PARAMETERS } from './provider-b.parameters';
import { PROVIDER_B_SETTINGS } from './provider-b.settings';
import { GEMINI_CLI_ALIASES } from './provider-b.model-aliases';

/** Gemini Code Assist: the Google login of the Gemini CLI. */
export const providerB: Family = {
  id: 'provider_b',
  title: 'provider_b (Gemini Code Assist)',
  cliNames: ['gemini'],
  fix: { cli: 'Gemini CLI', login: 'run `gemini` on the gateway\'s machine and choose "Login with Google"' },
  settings: PROVIDER_B_SETTINGS,
  errors: PROVIDER_B_ERRORS,
  loginFixes: {
    account_unsupported:
      'use a Gemini Code Assist Standard or Enterprise licence with PROVIDER_B_PROJECT, or another family (docs/providers.md#who-can-use-provider_b)',
  },
  logins: (config) => fileLogins('provider_b', config.providerB.accounts, checkProviderBLogin),
  parameters: PROVIDER_B_PARAMETERS,
  timeoutSetting: 'PROVIDER_B_TIMEOUT',
  adapter: () => import('./provider-b.adapter').then((module) => module.ProviderBAdapter),
  readPlan: (read) => import('./provider-b.plan-check').then((module) => module.readProviderBPlan(read)),
  // docs/upstream/provider-b.md §11.
  catalog: {
    // No effort is on the wire (provider-b.parameters.ts), so none is claimed; `none` turns thoughts off.
    passthroughDefaults: { effort: null, verbosity: null },
    acceptedEfforts: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'],
    rows: path.join(__dirname, 'provider-b.catalog.json'),
    // Gemini model names; `gemma-…` ids are no Code Assist models for a Google login.
    modelNames: /^gemini-/,
    cliAliases: GEMINI_CLI_ALIASES,
  },
};
