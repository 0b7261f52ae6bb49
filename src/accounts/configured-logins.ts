import type { AccountLogin, AppConfig } from '../config/app-config';
import { familyOf } from '../core/family-registry';
import type { LoginCheck } from '../core/login-state';
import type { ProviderId } from '../core/provider-id';

declare module '../core/family' {
  interface Family {
    /** The logins of this family the configuration names, each with its offline check. */
    readonly logins?: (config: AppConfig) => ConfiguredLogin[];
  }
}

/** One configured login of an enabled family, with its offline check. */
export interface ConfiguredLogin {
  readonly provider: ProviderId;
  readonly account: string;
  readonly check: (now: number) => Promise<LoginCheck>;
  /** Whether a check starts the CLI (then it is repeated less often). */
  readonly spawnsCli: boolean;
  /** AccountLogin.loginCommand: what logs this login in again when the family's plain command would not. */
  readonly loginCommand?: string;
  /** The file its check reads, named when the login is missing; unset for a login its CLI answers for. */
  readonly loginFile?: string;
}

/**
 * Every login of every enabled family, in the order of GATEWAY_PROVIDERS and of each family's
 * accounts: what the startup login report watches and the setup check prints (docs/troubleshooting.md).
 */
export function configuredLogins(config: AppConfig): ConfiguredLogin[] {
  return config.enabledProviders.flatMap((provider) => familyOf(provider).logins?.(config) ?? []);
}

/** Logins that are one file per account, checked offline without a CLI. */
export function fileLogins(
  provider: ProviderId,
  accounts: readonly AccountLogin[],
  checkFile: (file: string, now: number) => Promise<LoginCheck>,
): ConfiguredLogin[] {
  return accounts.map(({ alias, loginFile, loginCommand }) => ({
    provider,
    account: alias,
    loginCommand,
    loginFile,
    spawnsCli: false,
    check: (now) => checkFile(loginFile, now),
  }));
}
