import * as path from 'node:path';
import type { Family } from '../../core/family';
import type { ProviderCLogin } from '../../config/app-config';
import { accountBaseEnvironment } from '../../accounts/provider-c/provider-c.accounts';
import { claudeChildEnvironment } from '../../accounts/provider-c/provider-c.child-env';
import { checkProviderCLogin } from '../../accounts/provider-c/provider-c.login-check';

/** Claude Code: the `claude` CLI run as a child per turn, with its own login. */
export const providerC: Family = {
  id: 'provider_c',
  title: 'provider_c (Claude Code)',
  cliNames: ['claude'],
  fix: {
    cli: 'Claude Code CLI',
    login: "run `claude` on the gateway's machine, then `/login` (or create a token with `claude setup-token`)",
    install: 'install it (`npm install -g @anthropic-ai/claude-code`) or set PROVIDER_C_COMMAND to its path',
    update:
      "run `claude update` on the gateway's machine (in the container image: rebuild it with a newer CLAUDE_CODE_PACKAGE); the next request runs the new version, no restart needed",
    paidUsage: { name: "Claude's extra usage", page: 'claude.ai/settings/usage' },
  },
  logins: (config) => {
    const base = accountBaseEnvironment(config, claudeChildEnvironment(config.providerC.childEnv));
    return config.providerC.accounts.map((login: ProviderCLogin) => ({
      provider: 'provider_c',
      account: login.alias,
      spawnsCli: login.kind === 'cli',
      check: (now) => checkProviderCLogin(login, { command: config.providerC.command, childEnv: base }, now),
    }));
  },
  adapter: () => import('./provider-c.adapter').then((module) => module.ProviderCAdapter),
  readPlan: (read) => import('./provider-c.plan-check').then((module) => module.readProviderCPlan(read)),
  catalog: {
    // docs/upstream/provider-c.md §9.
    passthroughDefaults: { effort: null, verbosity: null },
    // Drop a leading `anthropic/`; in a `claude-` name every `.` becomes `-`.
    passthroughModel: (model) => {
      const bare = model.startsWith('anthropic/') ? model.slice('anthropic/'.length) : model;
      return bare.startsWith('claude-') ? bare.replace(/\./g, '-') : bare;
    },
    rows: path.join(__dirname, 'provider-c.catalog.json'),
  },
  // The process slots (provider-c.process-slots.ts), a literal here: importing that file would
  // load the queue code with the declaration.
  queues: ['provider_c_processes'],
};
