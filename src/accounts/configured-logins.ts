import type { AccountLogin, AppConfig, ProviderCLogin } from '../config/app-config';
import type { LoginCheck } from '../core/login-state';
import type { ProviderId } from '../core/provider-id';
import { checkProviderALogin } from './provider-a/provider-a.login-check';
import { checkProviderBLogin } from './provider-b/provider-b.login-check';
import { accountBaseEnvironment } from './provider-c/provider-c.accounts';
import { claudeChildEnvironment } from './provider-c/provider-c.child-env';
import { checkProviderCLogin } from './provider-c/provider-c.login-check';

/** One configured login of an enabled family, with its offline check. */
export interface ConfiguredLogin {
  readonly provider: ProviderId;
  readonly account: string;
  readonly check: (now: number) => Promise<LoginCheck>;
  /** Whether a check starts the CLI (then it is repeated less often). */
  readonly spawnsCli: boolean;
}

/**
 * Every login of every enabled family, in the order of GATEWAY_PROVIDERS and of each family's
 * accounts: what the startup login report watches and the setup check prints (docs/troubleshooting.md).
 */
export function configuredLogins(config: AppConfig): ConfiguredLogin[] {
  return config.enabledProviders.flatMap((provider) => loginsOf(config, provider));
}

/** The family's configured logins, each with its offline check. */
function loginsOf(config: AppConfig, provider: ProviderId): ConfiguredLogin[] {
  switch (provider) {
    case 'provider_a':
      return fileLogins(provider, config.providerA.accounts, checkProviderALogin);
    case 'provider_b':
      return fileLogins(provider, config.providerB.accounts, checkProviderBLogin);
    case 'provider_c': {
      const base = accountBaseEnvironment(config, claudeChildEnvironment(config.providerC.childEnv));
      return config.providerC.accounts.map((login: ProviderCLogin) => ({
        provider,
        account: login.alias,
        spawnsCli: login.kind === 'cli',
        check: (now) => checkProviderCLogin(login, { command: config.providerC.command, childEnv: base }, now),
      }));
    }
  }
}

/** Logins that are one file per account (provider_a, provider_b), checked offline without a CLI. */
function fileLogins(
  provider: ProviderId,
  accounts: readonly AccountLogin[],
  checkFile: (file: string, now: number) => Promise<LoginCheck>,
): ConfiguredLogin[] {
  return accounts.map(({ alias, loginFile }) => ({
    provider,
    account: alias,
    spawnsCli: false,
    check: (now) => checkFile(loginFile, now),
  }));
}
