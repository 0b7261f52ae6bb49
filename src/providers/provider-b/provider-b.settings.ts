import * as path from 'node:path';
import { geminiLoginCommand } from '../../accounts/provider-b/provider-b.auth';
import type { AccountLogin, FamilyDerivedConfig } from '../../config/app-config';
import { accountLogins } from '../../config/app-config';
import type { FamilySettings } from '../../config/settings';
import { derived, parseAccounts, setting } from '../../config/settings';
import {
  expandHome,
  parseDuration,
  parseNonEmpty,
  parsePath,
  parsePositiveDuration,
  parseUrl,
  SettingRuleError,
} from '../../config/setting-parsers';

/**
 * A Google Cloud project id such as `my-project-123`. Code Assist takes the id, not the numeric
 * project number, and answers a number with an unhelpful error, so it is refused at startup (as
 * the Gemini CLI refuses it before any call).
 */
function parseProjectId(raw: string): string {
  const value = parseNonEmpty(raw);
  if (/^\d+$/.test(value))
    throw new SettingRuleError('must be the project id (e.g. my-project-123), not the numeric project number');
  return value;
}

/** provider_b's rows: its home, its logins, its endpoints, its project and its limits. */
const PROVIDER_B_ROWS = [
  setting(
    'GEMINI_HOME',
    undefined,
    derived('$GEMINI_CLI_HOME/.gemini when GEMINI_CLI_HOME is set, else ~/.gemini'),
    "The Gemini CLI's `.gemini` folder, which holds its login. Unset, it is where the CLI keeps it: in the home GEMINI_CLI_HOME names (the CLI's own variable; unset, the user's home).",
    parsePath,
  ),
  setting(
    'PROVIDER_B_AUTH_FILE',
    undefined,
    derived('$GEMINI_HOME/oauth_creds.json'),
    'provider_b login file (written by the Gemini CLI).',
    parsePath,
  ),
  setting(
    'PROVIDER_B_ACCOUNTS',
    undefined,
    undefined,
    'Several provider_b logins: alias=path of a Gemini oauth_creds.json, comma-separated (replaces PROVIDER_B_AUTH_FILE). See docs/accounts.md.',
    parseAccounts,
  ),
  setting(
    'PROVIDER_B_URL',
    'providerB.url',
    'https://cloudcode-pa.googleapis.com/v1internal',
    'Code Assist base URL.',
    parseUrl(['http', 'https']),
  ),
  setting(
    'PROVIDER_B_TOKEN_URL',
    'providerB.tokenUrl',
    'https://oauth2.googleapis.com/token',
    'provider_b OAuth refresh endpoint.',
    parseUrl(['http', 'https']),
  ),
  setting(
    'PROVIDER_B_PROJECT',
    'providerB.project',
    undefined,
    'Code Assist project id (the string id, not the numeric project number); unset = the one :loadCodeAssist names.',
    parseProjectId,
  ),
  setting(
    'PROVIDER_B_TIMEOUT',
    'providerB.timeoutMs',
    '10m',
    'Bound on a whole provider_b turn, retries included; `0`: no bound.',
    parseDuration,
  ),
  setting(
    'PROVIDER_B_ONBOARDING_POLL_INTERVAL',
    'providerB.onboardingPollIntervalMs',
    '5s',
    'How often a first-time onboarding operation is polled (the Gemini CLI uses 5 s); more than 0.',
    parsePositiveDuration,
  ),
];

declare module '../../config/settings' {
  interface FamilySettingRows {
    readonly provider_b: (typeof PROVIDER_B_ROWS)[number];
  }
}

declare module '../../config/app-config' {
  interface FamilyDerivedConfig {
    readonly providerB: {
      /** GEMINI_HOME with `~` expanded, else `.gemini` in GEMINI_CLI_HOME or the home. */
      readonly geminiHome: string;
      /** The first account's login file (the only one unless PROVIDER_B_ACCOUNTS is set). */
      readonly authFile: string;
      /** Every provider_b login (each a Gemini oauth_creds.json), at least one. */
      readonly accounts: readonly AccountLogin[];
    };
  }
}

/**
 * The settings of provider_b, and its logins: PROVIDER_B_ACCOUNTS, else the one oauth_creds.json
 * under GEMINI_HOME, which follows the Gemini CLI's GEMINI_CLI_HOME as provider_c's default login
 * follows CLAUDE_CONFIG_DIR.
 */
export const PROVIDER_B_SETTINGS: FamilySettings = {
  rows: PROVIDER_B_ROWS,
  derive: (read, { env, home }): Pick<FamilyDerivedConfig, 'providerB'> => {
    // The Gemini CLI keeps its `.gemini` folder in GEMINI_CLI_HOME when that is set (not empty), else in the home.
    const cliHome = env.GEMINI_CLI_HOME ? expandHome(env.GEMINI_CLI_HOME, home) : home;
    const geminiHome = read.given('GEMINI_HOME') ?? path.join(cliHome, '.gemini');
    // `gemini` alone writes ~/.gemini/oauth_creds.json; a login anywhere else names its own home.
    const cliDefault = path.join(home, '.gemini', 'oauth_creds.json');
    const accounts = accountLogins(
      read.given('PROVIDER_B_ACCOUNTS'),
      read.given('PROVIDER_B_AUTH_FILE'),
      path.join(geminiHome, 'oauth_creds.json'),
      'PROVIDER_B',
    ).map((login) =>
      login.loginFile === cliDefault ? login : { ...login, loginCommand: geminiLoginCommand(login.loginFile) },
    );
    return { providerB: { geminiHome, authFile: accounts[0].loginFile, accounts } };
  },
};
