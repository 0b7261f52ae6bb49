import * as path from 'node:path';
import { codexLoginCommand } from '../../accounts/provider-a/provider-a.auth';
import type { AccountLogin, FamilyDerivedConfig } from '../../config/app-config';
import { accountLogins } from '../../config/app-config';
import type { FamilySettings, ParsedOf } from '../../config/settings';
import { derived, parseAccounts, setting } from '../../config/settings';
import {
  parseDuration,
  parseEnum,
  parseIntegerIn,
  parsePath,
  parsePositiveDuration,
  parseUrl,
  SettingRuleError,
} from '../../config/setting-parsers';

/** A Codex CLI version as the CLI prints it (`0.171.0`, `0.172.0-alpha.1`): it goes into a header and a query. */
function parseClientVersion(raw: string): string {
  const value = raw.trim();
  if (!/^\d{1,4}\.\d{1,4}\.\d{1,4}(-[0-9A-Za-z.]{1,32})?$/.test(value))
    throw new SettingRuleError('must be a Codex CLI version such as 0.171.0');
  return value;
}

/** provider_a's rows: its home, its logins, its endpoints, its limits and its request shape. */
const PROVIDER_A_ROWS = [
  setting('CODEX_HOME', undefined, '~/.codex', "The Codex CLI's home directory.", parsePath),
  setting(
    'PROVIDER_A_AUTH_FILE',
    undefined,
    derived('$CODEX_HOME/auth.json'),
    'provider_a login file (written by `codex login`).',
    parsePath,
  ),
  setting(
    'PROVIDER_A_ACCOUNTS',
    undefined,
    undefined,
    'Several provider_a logins: alias=path of a Codex auth.json, comma-separated (replaces PROVIDER_A_AUTH_FILE). See docs/accounts.md.',
    parseAccounts,
  ),
  setting(
    'PROVIDER_A_URL',
    'providerA.url',
    'wss://chatgpt.com/backend-api/codex/responses',
    'provider_a endpoint; ws(s):// uses WebSocket, http(s):// uses HTTP+SSE.',
    parseUrl(['ws', 'wss', 'http', 'https']),
  ),
  setting(
    'PROVIDER_A_TOKEN_URL',
    'providerA.tokenUrl',
    'https://auth.openai.com/oauth/token',
    'provider_a OAuth refresh endpoint.',
    parseUrl(['http', 'https']),
  ),
  setting(
    'PROVIDER_A_TIMEOUT',
    'providerA.timeoutMs',
    '10m',
    'Bound on a whole provider_a turn, retries included; `0`: no bound.',
    parseDuration,
  ),
  setting(
    'PROVIDER_A_MAX_KEPT_SESSIONS',
    'providerA.maxKeptSessions',
    '64',
    'provider_a WebSocket connections kept open for the next turn of their chat; beyond it the least recently used is closed (0: a new connection per turn). At most 10000.',
    parseIntegerIn(0, 10_000),
  ),
  setting(
    'PROVIDER_A_SESSION_IDLE_TIMEOUT',
    'providerA.sessionIdleTimeoutMs',
    '5m',
    'A kept provider_a connection unused this long is closed (must be more than 0).',
    parsePositiveDuration,
  ),
  setting(
    'PROVIDER_A_MODELS_REFRESH',
    'providerA.modelsRefreshMs',
    '15m',
    'How often the live provider_a model list (GET …/codex/models, as the Codex CLI reads it) is fetched with a ready login and merged into the bundled catalog; first fetch at startup, in the background (0: never, the bundled catalog only). See docs/chat.md "Models".',
    parseDuration,
  ),
  setting(
    'PROVIDER_A_WIRE',
    'providerA.wire',
    'auto',
    'provider_a request shape: auto (per model, as the model list marks use_responses_lite), classic, or lite (Responses lite: tools as an additional_tools item, instructions as developer input). See docs/providers.md.',
    parseEnum(['auto', 'classic', 'lite'] as const),
  ),
  setting(
    'PROVIDER_A_CLIENT_VERSION',
    'providerA.clientVersion',
    derived('the Codex CLI release the gateway verifies (docs/providers.md)'),
    'Codex CLI version provider_a claims (model list client_version, User-Agent). Only to reach models the backend serves to a newer CLI before a gateway release verifies it: the wire stays that of the default version, unverified; a warning is logged at startup. See docs/providers.md.',
    parseClientVersion,
  ),
  setting(
    'PRIMARY_FAITHFUL_PROFILE',
    'providerA.faithfulProfilePath',
    derived('built-in'),
    'JSON profile injected in faithful mode (faithful: true).',
    parsePath,
  ),
];

declare module '../../config/settings' {
  interface FamilySettingRows {
    readonly provider_a: (typeof PROVIDER_A_ROWS)[number];
  }
}

declare module '../../config/app-config' {
  interface FamilyDerivedConfig {
    readonly providerA: {
      /** CODEX_HOME with `~` expanded. */
      readonly codexHome: string;
      /** The first account's login file (the only one unless PROVIDER_A_ACCOUNTS is set). */
      readonly authFile: string;
      /** Every provider_a login (each a Codex auth.json), at least one. */
      readonly accounts: readonly AccountLogin[];
    };
  }
}

/** PROVIDER_A_WIRE (docs/providers.md "Two request shapes"). */
export type ProviderAWire = ParsedOf<'PROVIDER_A_WIRE'>;

/** The settings of provider_a, and its logins: PROVIDER_A_ACCOUNTS, else the one auth.json under CODEX_HOME. */
export const PROVIDER_A_SETTINGS: FamilySettings = {
  rows: PROVIDER_A_ROWS,
  derive: (read, { home }): Pick<FamilyDerivedConfig, 'providerA'> => {
    const codexHome = read.value('CODEX_HOME');
    // `codex login` alone writes ~/.codex/auth.json; a login anywhere else names its own home.
    const cliDefault = path.join(home, '.codex', 'auth.json');
    const accounts = accountLogins(
      read.given('PROVIDER_A_ACCOUNTS'),
      read.given('PROVIDER_A_AUTH_FILE'),
      path.join(codexHome, 'auth.json'),
      'PROVIDER_A',
    ).map((login) =>
      login.loginFile === cliDefault ? login : { ...login, loginCommand: codexLoginCommand(login.loginFile) },
    );
    return { providerA: { codexHome, authFile: accounts[0].loginFile, accounts } };
  },
};
