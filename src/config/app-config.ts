import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type {
  AccountSetting,
  DefaultedSettingName,
  ParsedOf,
  SettingDefinition,
  SettingName,
  SettingsConfig,
} from './settings';
import { familyIds } from '../core/family-registry';
import type { ProviderId } from '../core/provider-id';
import { SETTINGS, SETTINGS_BY_ENV, SETTINGS_BY_FLAG } from './settings';
import { SettingRuleError } from './setting-parsers';

/** One login of a family (docs/accounts.md); a family configured the old way has one, `default`. */
export interface AccountLogin {
  readonly alias: string;
  /** provider_a: the Codex auth.json; provider_b: the Gemini oauth_creds.json. */
  readonly loginFile: string;
}

/**
 * One provider_c login: a Claude Code config directory (its `.credentials.json` is the watched
 * login file), a file holding a long-lived OAuth token, or (`cli`, the one `default` account when
 * PROVIDER_C_ACCOUNTS is unset) whatever login the CLI finds itself.
 */
export interface ProviderCLogin extends AccountLogin {
  readonly kind: 'cli' | 'config_dir' | 'token_file';
  /** The directory (config_dir) or the file (token_file) as configured; absent for `cli`. */
  readonly location?: string;
}

/** The alias of the one login of a family configured without an accounts list. */
export const DEFAULT_ACCOUNT_ALIAS = 'default';

/** PROVIDER_A_WIRE (docs/providers.md "Two request shapes"). */
export type ProviderAWire = ParsedOf<'PROVIDER_A_WIRE'>;
/** PRIMARY_CUSTOM_TOOL_WIRE. */
export type CustomToolWire = ParsedOf<'PRIMARY_CUSTOM_TOOL_WIRE'>;

/** The fields that combine several settings (or the environment): each a typed function in `loadConfig`. */
interface DerivedConfig {
  /** GATEWAY_PROVIDERS, else every registered family. */
  readonly enabledProviders: readonly ProviderId[];
  readonly providerA: {
    /** CODEX_HOME with `~` expanded. */
    readonly codexHome: string;
    /** The first account's login file (the only one unless PROVIDER_A_ACCOUNTS is set). */
    readonly authFile: string;
    /** Every provider_a login, at least one. */
    readonly accounts: readonly AccountLogin[];
  };
  readonly providerB: {
    /** GEMINI_HOME with `~` expanded. */
    readonly geminiHome: string;
    /** The first account's login file (the only one unless PROVIDER_B_ACCOUNTS is set). */
    readonly authFile: string;
    /** Every provider_b login, at least one. */
    readonly accounts: readonly AccountLogin[];
  };
  readonly providerC: {
    /** Environment for the child: the gateway's, minus secrets it must never see. */
    readonly childEnv: Readonly<Record<string, string>>;
    /** The logins (docs/accounts.md); one, `default` (the CLI's own), unless PROVIDER_C_ACCOUNTS is set. */
    readonly accounts: readonly ProviderCLogin[];
  };
}

/** A row placed at a field the loader derives would be overwritten, so it does not compile. */
type DerivedGroup = {
  [G in keyof DerivedConfig]: DerivedConfig[G] extends readonly unknown[] ? never : G;
}[keyof DerivedConfig];
type PlacedOverDerived = {
  [G in DerivedGroup]: Extract<keyof SettingsConfig[G], keyof DerivedConfig[G]>;
}[DerivedGroup];
const _noRowAtADerivedField: [PlacedOverDerived] extends [never] ? true : PlacedOverDerived = true;

/**
 * The typed configuration every module reads (never `process.env`): one field per placed row of
 * the settings table (its `at`, its parser's type; see `SettingsConfig`), plus the derived fields.
 */
export type AppConfig = SettingsConfig & DerivedConfig;

/** A bad setting: `message` is the one line printed before exiting with status 1. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** `--help` was asked for; the loader does not exit by itself. */
export class HelpRequested extends Error {}

/** Variables a provider_c child must never inherit (docs/upstream/provider-c.md §3.2). */
const CHILD_ENV_DENYLIST = ['GATEWAY_BEARER_SECRET', 'ANTHROPIC_API_KEY'];

function parseArgv(argv: readonly string[]): Map<SettingDefinition, string> {
  const values = new Map<SettingDefinition, string>();
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    if (argument === '--help' || argument === '-h') throw new HelpRequested();
    const equals = argument.indexOf('=');
    const name = equals === -1 ? argument : argument.slice(0, equals);
    const definition = SETTINGS_BY_FLAG.get(name);
    if (!definition) {
      throw new ConfigError(
        `unknown flag ${JSON.stringify(argument.slice(0, 60))}; run with --help for the list of settings`,
      );
    }
    if (equals !== -1) {
      values.set(definition, argument.slice(equals + 1));
    } else if (definition.isBoolean && (index + 1 >= argv.length || argv[index + 1].startsWith('--'))) {
      values.set(definition, 'true');
    } else if (index + 1 < argv.length) {
      values.set(definition, argv[++index]);
    } else {
      throw new ConfigError(`${definition.flag} needs a value`);
    }
  }
  return values;
}

function expandHome(value: string, home: string): string {
  if (value === '~') return home;
  if (value.startsWith('~/')) return path.join(home, value.slice(2));
  return value;
}

const LOWER_CASE_ALIASED = new Set(['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY']);

/**
 * (environment, argv) → AppConfig. Flags win over the environment; every value is validated
 * here, once, and the first bad one throws a ConfigError naming the setting and the rule (secret
 * values are never echoed). Reads nothing else from the process; the one file-system call is the
 * stat that tells each PROVIDER_C_ACCOUNTS location's kind (config directory or token file).
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, argv: readonly string[] = []): AppConfig {
  const fromFlags = parseArgv(argv);
  const values = new Map<SettingName, unknown>();
  for (const definition of SETTINGS) {
    // The proxy variables are conventionally also spelled in lower case (curl, undici, reqwest).
    const raw =
      fromFlags.get(definition) ??
      env[definition.env] ??
      (LOWER_CASE_ALIASED.has(definition.env) ? env[definition.env.toLowerCase()] : undefined);
    if (raw === undefined || (raw === '' && !fromFlags.has(definition))) continue;
    try {
      values.set(definition.env, definition.parse(raw));
    } catch (error) {
      if (!(error instanceof SettingRuleError)) throw error;
      const shown = definition.sensitive ? '' : ` (got ${JSON.stringify(raw.slice(0, 80))})`;
      throw new ConfigError(`invalid setting ${definition.env} / ${definition.flag}: ${error.message}${shown}`);
    }
  }
  // Each setting's type is the return type of its parser in the table, so these two readers are the
  // only place a parsed value is cast to it; a name outside the table does not compile.
  /** A setting as given by flag or environment, parsed; `undefined` when unset. */
  const given = <K extends SettingName>(name: K): ParsedOf<K> | undefined =>
    values.get(name) as ParsedOf<K> | undefined;
  /** A setting with a table default: the given value, else that default value. */
  const value = <K extends DefaultedSettingName>(name: K): ParsedOf<K> =>
    (values.has(name) ? values.get(name) : SETTINGS_BY_ENV.get(name)!.defaultValue) as ParsedOf<K>;

  refuseOpenBindWithoutSecret(
    value('GATEWAY_HOST'),
    given('GATEWAY_BEARER_SECRET'),
    value('GATEWAY_ALLOW_UNAUTHENTICATED'),
  );

  const home = env.HOME ?? os.homedir();
  const codexHome = expandHome(value('CODEX_HOME'), home);
  const geminiHome = expandHome(value('GEMINI_HOME'), home);

  /** A family's logins: PREFIX_ACCOUNTS, else PREFIX_AUTH_FILE (or its default) as alias `default`. */
  const logins = (prefix: 'PROVIDER_A' | 'PROVIDER_B', defaultFile: string) =>
    accountLogins(given(`${prefix}_ACCOUNTS`), given(`${prefix}_AUTH_FILE`), defaultFile, home, prefix);
  const providerAAccounts = logins('PROVIDER_A', path.join(codexHome, 'auth.json'));
  const providerBAccounts = logins('PROVIDER_B', path.join(geminiHome, 'oauth_creds.json'));

  const childEnv: Record<string, string> = {};
  for (const [key, entry] of Object.entries(env)) {
    if (entry !== undefined && !CHILD_ENV_DENYLIST.includes(key)) childEnv[key] = entry;
  }

  const placed = placeSettings(values);
  return {
    ...placed,
    enabledProviders: given('GATEWAY_PROVIDERS') ?? familyIds(),
    providerA: {
      ...placed.providerA,
      codexHome,
      authFile: providerAAccounts[0].loginFile,
      accounts: providerAAccounts,
    },
    providerB: {
      ...placed.providerB,
      geminiHome,
      authFile: providerBAccounts[0].loginFile,
      accounts: providerBAccounts,
    },
    providerC: {
      ...placed.providerC,
      childEnv,
      accounts: providerCLogins(given('PROVIDER_C_ACCOUNTS'), childEnv, home),
    },
  };
}

/**
 * Each row with a place in `AppConfig` puts its value there: the given value, else its default
 * value, else `undefined`. `SettingsConfig` is the type of exactly this object (one field per placed
 * row, typed by its parser), which is why the one cast below is sound.
 */
function placeSettings(values: ReadonlyMap<SettingName, unknown>): SettingsConfig {
  const root: Record<string, unknown> = {};
  for (const definition of SETTINGS) {
    if (definition.at === undefined) continue;
    const value = values.has(definition.env) ? values.get(definition.env) : definition.defaultValue;
    const dot = definition.at.indexOf('.');
    if (dot === -1) {
      root[definition.at] = value;
    } else {
      const group = definition.at.slice(0, dot);
      const fields = (root[group] ??= {}) as Record<string, unknown>;
      fields[definition.at.slice(dot + 1)] = value;
    }
  }
  return root as SettingsConfig;
}

/** Addresses only this machine can reach: the IPv4 loopback range, ::1 and the name localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return net.isIPv4(bare) && bare.startsWith('127.');
}

/**
 * Without a bearer secret every request is let in (docs/design/decisions.md §5). That is fine on loopback; on
 * any other address it hands the operator's subscriptions to whoever reaches the port, so it
 * needs the explicit GATEWAY_ALLOW_UNAUTHENTICATED opt-in (e.g. behind a proxy that authenticates).
 */
function refuseOpenBindWithoutSecret(
  host: string,
  bearerSecret: string | undefined,
  allowUnauthenticated: boolean,
): void {
  if (bearerSecret !== undefined || allowUnauthenticated || isLoopbackHost(host)) return;
  throw new ConfigError(
    `invalid setting GATEWAY_HOST / --gateway-host: ${JSON.stringify(host.slice(0, 80))} is not loopback, so GATEWAY_BEARER_SECRET must be set (or GATEWAY_ALLOW_UNAUTHENTICATED=true to serve anyone who reaches the port)`,
  );
}

/**
 * A family's logins: the accounts list when given (then the single-file setting must be unset, so
 * nobody wonders which one wins), else the one file configured the old way as alias `default`.
 */
function accountLogins(
  listed: readonly AccountSetting[] | undefined,
  singleFile: string | undefined,
  defaultFile: string,
  home: string,
  prefix: string,
): AccountLogin[] {
  if (!listed) return [{ alias: DEFAULT_ACCOUNT_ALIAS, loginFile: expandHome(singleFile ?? defaultFile, home) }];
  if (singleFile !== undefined) {
    throw new ConfigError(
      `invalid setting ${prefix}_ACCOUNTS: set either ${prefix}_ACCOUNTS or ${prefix}_AUTH_FILE, not both`,
    );
  }
  return listed.map(({ alias, location }) => ({ alias, loginFile: expandHome(location, home) }));
}

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
  return listed.map(({ alias, location }) => {
    const resolved = expandHome(location, home);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(resolved);
    } catch {
      throw new ConfigError(
        `invalid setting PROVIDER_C_ACCOUNTS: ${alias}: ${resolved} is neither a Claude Code config directory nor a token file`,
      );
    }
    return stat.isDirectory()
      ? { alias, kind: 'config_dir', location: resolved, loginFile: path.join(resolved, '.credentials.json') }
      : { alias, kind: 'token_file', location: resolved, loginFile: resolved };
  });
}

/** The text of `--help`: every setting with its flag and default. */
export function renderHelp(): string {
  const lines = [
    'Usage: node dist/main.js [--flag value | --flag=value]...',
    '       node dist/main.js --check [--live] [--flag value]...',
    '',
    '--check prints what the gateway would find with these settings (each login, its expiry and fix,',
    'the models each family serves) and exits 0 only when every enabled family has a usable login;',
    'with --live it also sends one tiny chat per family. `npm run check` runs it.',
    '',
    'Settings (environment variable / flag; the flag wins):',
    '',
  ];
  for (const definition of SETTINGS) {
    lines.push(`  ${definition.env} / ${definition.flag}`);
    lines.push(`      ${definition.description}`);
    lines.push(`      default: ${definition.defaultText ?? '(unset)'}`);
  }
  return lines.join('\n') + '\n';
}
