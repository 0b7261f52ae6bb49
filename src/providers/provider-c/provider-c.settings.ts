import * as fs from 'node:fs';
import * as path from 'node:path';
import { errnoOf } from '../../common/errno';
import { gatewayUser } from '../../common/gateway-user';
import { isClaudeCredentialRoute } from '../../accounts/provider-c/provider-c.credential-routes';
import type { ProviderCLogin } from '../../accounts/provider-c/provider-c.credentials';
import { claudeLoginCommand, claudeTokenFileCommand } from '../../accounts/provider-c/provider-c.credentials';
import type { FamilyDerivedConfig } from '../../config/app-config';
import { ConfigError, DEFAULT_ACCOUNT_ALIAS, refuseOneLoginUnderTwoAliases } from '../../config/app-config';
import type { AccountSetting, FamilySettings } from '../../config/settings';
import { flagOf, parseAccounts, setting } from '../../config/settings';
import { expandHome, parseDuration, parsePath, parsePositiveInteger, parseUrl } from '../../config/setting-parsers';

/** provider_c's rows: its logins, its refresh endpoint, the CLI it runs and its limits. */
const PROVIDER_C_ROWS = [
  setting(
    'PROVIDER_C_ACCOUNTS',
    undefined,
    undefined,
    "Several provider_c logins: alias=path, comma-separated; a directory is a Claude Code config dir (CLAUDE_CONFIG_DIR), a file holds an OAuth token (CLAUDE_CODE_OAUTH_TOKEN, from `claude setup-token`). Unset: the CLI's own login. See docs/accounts.md.",
    parseAccounts,
  ),
  setting(
    'PROVIDER_C_TOKEN_URL',
    'providerC.tokenUrl',
    'https://platform.claude.com/v1/oauth/token',
    'OAuth refresh endpoint for the Claude Code config directories of PROVIDER_C_ACCOUNTS (idle logins are refreshed in the background).',
    parseUrl(['http', 'https']),
  ),
  setting(
    'PROVIDER_C_COMMAND',
    'providerC.command',
    'claude',
    'The Claude Code executable (name on PATH or a path).',
    parsePath,
  ),
  setting(
    'PROVIDER_C_MAX_PROCESSES',
    'providerC.maxProcesses',
    '8',
    'provider_c child processes at once; beyond it requests wait.',
    parsePositiveInteger,
  ),
  setting(
    'PROVIDER_C_TIMEOUT',
    'providerC.timeoutMs',
    '10m',
    'Bound on a whole provider_c turn; `0`: no bound.',
    parseDuration,
  ),
];

declare module '../../config/settings' {
  interface FamilySettingRows {
    readonly provider_c: (typeof PROVIDER_C_ROWS)[number];
  }
}

declare module '../../config/app-config' {
  interface FamilyDerivedConfig {
    readonly providerC: {
      /** Environment for the child: the gateway's, minus secrets it must never see and every credential route. */
      readonly childEnv: Readonly<Record<string, string>>;
      /** The credential routes set in the gateway's environment and kept from the children (names, sorted). */
      readonly droppedCredentialVariables: readonly string[];
      /** The logins (docs/accounts.md); one, `default` (the CLI's own), unless PROVIDER_C_ACCOUNTS is set. */
      readonly accounts: readonly ProviderCLogin[];
    };
  }
}

const ACCOUNTS = 'PROVIDER_C_ACCOUNTS';

/** The gateway's own secret, which no provider_c child may inherit (docs/upstream/provider-c.md §3.2). */
const GATEWAY_SECRET = 'GATEWAY_BEARER_SECRET';

/**
 * The settings of provider_c, the environment its children start from, and its logins. Loading
 * the configuration asks the disk here: the stat that tells each PROVIDER_C_ACCOUNTS location's
 * kind, and the one that tells whether two of them lead to one login file.
 */
export const PROVIDER_C_SETTINGS: FamilySettings = {
  rows: PROVIDER_C_ROWS,
  derive: (read, { env, home }): Pick<FamilyDerivedConfig, 'providerC'> => {
    // Every child starts from this environment, the CLI's own login and PROVIDER_C_ACCOUNTS alike.
    const childEnv: Record<string, string> = {};
    const dropped: string[] = [];
    for (const [key, entry] of Object.entries(env)) {
      if (entry === undefined || key === GATEWAY_SECRET) continue;
      if (isClaudeCredentialRoute(key)) dropped.push(key);
      else childEnv[key] = entry;
    }
    return {
      providerC: {
        childEnv,
        droppedCredentialVariables: dropped.sort(),
        accounts: providerCLogins(read.given('PROVIDER_C_ACCOUNTS'), childEnv, home),
      },
    };
  },
};

/**
 * provider_c's logins: each listed path is a config directory or a token file, told apart on disk
 * at startup (a path that is neither stops startup); unlisted, the CLI's own login as `default`,
 * watched through the credentials file of its config directory.
 */
function providerCLogins(
  listed: readonly AccountSetting[] | undefined,
  childEnv: Readonly<Record<string, string>>,
  home: string,
): ProviderCLogin[] {
  if (!listed) {
    const configDir = expandHome(childEnv.CLAUDE_CONFIG_DIR ?? path.join(home, '.claude'), home);
    return [{ alias: DEFAULT_ACCOUNT_ALIAS, kind: 'cli', loginFile: path.join(configDir, '.credentials.json') }];
  }
  const logins = listed.map(({ alias, location: resolved }): ProviderCLogin => {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(resolved);
    } catch (error) {
      throw new ConfigError(
        `invalid setting ${ACCOUNTS} / ${flagOf(ACCOUNTS)}: ${unusableLocation(alias, resolved, error)}`,
      );
    }
    if (!stat.isDirectory())
      return {
        alias,
        kind: 'token_file',
        location: resolved,
        loginFile: resolved,
        loginCommand: claudeTokenFileCommand(resolved),
      };
    const login: ProviderCLogin = {
      alias,
      kind: 'config_dir',
      location: resolved,
      loginFile: path.join(resolved, '.credentials.json'),
    };
    // `claude` alone keeps its login in ~/.claude; any other directory is named in its command.
    return resolved === path.join(home, '.claude') ? login : { ...login, loginCommand: claudeLoginCommand(resolved) };
  });
  refuseOneLoginUnderTwoAliases(ACCOUNTS, logins);
  return logins;
}

/** What is wrong with a listed location that cannot be examined, and how to make it a login. */
function unusableLocation(alias: string, location: string, error: unknown): string {
  const errno = errnoOf(error);
  if (errno === 'ENOENT' || errno === 'ENOTDIR') {
    return (
      `the path of alias "${alias}", ${location}, does not exist, so it is neither a Claude Code config directory nor a token file: ` +
      `for a config directory, ${claudeLoginCommand(location)}; for a token file, ${claudeTokenFileCommand(location)}; or correct the path`
    );
  }
  return `the path of alias "${alias}", ${location}, cannot be examined (${errno ?? 'unknown error'}): let ${gatewayUser()} into its directories, or correct the path`;
}
