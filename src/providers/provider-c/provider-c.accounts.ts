import * as fs from 'node:fs';
import type { AccountPool } from '../../accounts/account-pool';
import type { AccountPools } from '../../accounts/account-pools';
import type { AppConfig, ProviderCLogin } from '../../config/app-config';
import { GatewayError } from '../../core/gateway.error';

/** What the pool holds per Claude Code login: how a child of that login is started. */
export interface ProviderCAccount {
  /** The variables that point a child at this login; read anew for every spawn (a rewritten token file counts at once). */
  childEnv(): Record<string, string>;
}

/**
 * Login variables a child must not inherit when the operator lists the logins: one left in the
 * gateway's environment would override the account's own (the CLI prefers a token to a directory).
 */
const INHERITED_LOGIN_VARIABLES = ['CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CONFIG_DIR'] as const;

function accountOf(login: ProviderCLogin): ProviderCAccount {
  switch (login.kind) {
    case 'cli':
      return { childEnv: () => ({}) };
    case 'config_dir':
      return { childEnv: () => ({ CLAUDE_CONFIG_DIR: login.location! }) };
    case 'token_file':
      return {
        childEnv: () => {
          let token = '';
          try {
            token = fs.readFileSync(login.location!, 'utf8').trim();
          } catch {
            // Unreadable is the same as empty: the login is unusable until the file is fixed.
          }
          // An auth failure marks the account dead until its file changes (docs/accounts.md).
          if (token === '') throw new GatewayError('auth', { detail: 'provider_c token file is empty or unreadable' });
          return { CLAUDE_CODE_OAUTH_TOKEN: token };
        },
      };
  }
}

/** The child environment every account starts from: without inherited login variables once logins are listed. */
export function accountBaseEnvironment(config: AppConfig, base: Readonly<Record<string, string>>): Record<string, string> {
  const env = { ...base };
  if (config.providerC.accounts.some((login) => login.kind !== 'cli')) {
    for (const name of INHERITED_LOGIN_VARIABLES) delete env[name];
  }
  return env;
}

/**
 * The provider_c pool: one account per configured login (docs/accounts.md). The CLI refreshes a
 * config directory's token itself while it runs; the gateway does not refresh idle ones (not
 * built), and a token file is a long-lived token that needs none. The CLI reports no usage
 * windows on its stdout, so new chats are spread by turns in flight; its usage-limit and 429
 * errors cool the login, its authentication errors mark it dead until the login file changes.
 */
export function createProviderCPool(config: AppConfig, pools: AccountPools): AccountPool<ProviderCAccount> {
  const specs = config.providerC.accounts.map((login) => ({ alias: login.alias, loginFile: login.loginFile, handle: accountOf(login) }));
  return pools.create('provider_c', specs);
}
