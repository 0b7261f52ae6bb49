import * as path from 'node:path';
import type { Family } from '../../core/family';
import { PROVIDER_C_ERRORS, PROVIDER_C_MESSAGES } from './provider-c.error-table';
import { PROVIDER_C_FIX } from './provider-c.fix';
import type { ProviderCLogin } from '../../accounts/provider-c/provider-c.credentials';
import { accountBaseEnvironment } from '../../accounts/provider-c/provider-c.accounts';
import { claudeChildEnvironment } from '../../accounts/provider-c/provider-c.child-env';
import { checkProviderCLogin } from '../../accounts/provider-c/provider-c.login-check';
import { PROVIDER_C_PARAMETERS } from './provider-c.parameters';
import { CLI_EFFORTS } from './provider-c.argv';
import { PROVIDER_C_SETTINGS } from './provider-c.settings';
import { CLAUDE_CODE_ALIASES } from './provider-c.model-aliases';

/** Claude Code: the `claude` CLI run as a child per turn, with its own login. */
export const providerC: Family = {
  id: 'provider_c',
  title: 'provider_c (Claude Code)',
  cliNames: ['claude'],
  fix: PROVIDER_C_FIX,
  settings: PROVIDER_C_SETTINGS,
  errors: PROVIDER_C_ERRORS,
  messages: PROVIDER_C_MESSAGES,
  logins: (config) => {
    const base = accountBaseEnvironment(config, claudeChildEnvironment(config.providerC.childEnv));
    return config.providerC.accounts.map((login: ProviderCLogin) => ({
      provider: 'provider_c',
      account: login.alias,
      loginCommand: login.loginCommand,
      // The CLI's own login is what `claude auth status` answers; the others are files the check reads.
      loginFile: login.kind === 'cli' ? undefined : login.loginFile,
      spawnsCli: login.kind === 'cli',
      check: (now) => checkProviderCLogin(login, { command: config.providerC.command, childEnv: base }, now),
    }));
  },
  parameters: PROVIDER_C_PARAMETERS,
  timeoutSetting: 'PROVIDER_C_TIMEOUT',
  adapter: () => import('./provider-c.adapter').then((module) => module.ProviderCAdapter),
  readPlan: (read) => import('./provider-c.plan-check').then((module) => module.readProviderCPlan(read)),
  catalog: {
    // docs/upstream/provider-c.md §9.
    passthroughDefaults: { effort: null, verbosity: null },
    // The CLI's `--effort` levels, and the words for the least thinking (provider-c.argv.ts): anything else is a 400.
    acceptedEfforts: ['none', 'minimal', ...CLI_EFFORTS],
    // Drop a leading `anthropic/`; in a `claude-` name every `.` becomes `-`.
    passthroughModel: (model) => {
      const bare = model.startsWith('anthropic/') ? model.slice('anthropic/'.length) : model;
      return bare.startsWith('claude-') ? bare.replace(/\./g, '-') : bare;
    },
    rows: path.join(__dirname, 'provider-c.catalog.json'),
    modelNames: /^claude-/,
    // `claude --model opus[1m]`: the CLI reads the tag itself.
    nameTags: true,
    cliAliases: CLAUDE_CODE_ALIASES,
  },
  // The process slots (provider-c.process-slots.ts), a literal here: importing that file would
  // load the queue code with the declaration.
  queues: ['provider_c_processes'],
};
