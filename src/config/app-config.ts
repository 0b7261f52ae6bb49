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
  SettingReader,
  SettingsConfig,
} from './settings';
import { familyIds, families } from '../core/family-registry';
import type { ProviderId } from '../core/provider-id';
import {
  allSettings,
  flagOf,
  settingsByEnv,
  settingsByFlag,
  STRUCTURED_MAX_BODY_BYTES,
  writtenDefault,
} from './settings';
import type { ParseContext } from './setting-parsers';
import { SettingRuleError } from './setting-parsers';
import { quoted } from '../core/quoted';

/** One login of a family (docs/accounts.md); a family configured the old way has one, `default`. */
export interface AccountLogin {
  readonly alias: string;
  /** The file that holds the login, as the family's CLI writes it. */
  readonly loginFile: string;
  /**
   * What logs this login in again when the family's plain login command would write another file
   * (the login is not where its CLI keeps one by default): the CLI pointed at the login's own home,
   * or told where to put the file. Unset for the CLI's default login, whose fix is the family's.
   */
  readonly loginCommand?: string;
}

/** The alias of the one login of a family configured without an accounts list. */
export const DEFAULT_ACCOUNT_ALIAS = 'default';

/** PRIMARY_CUSTOM_TOOL_WIRE. */
export type CustomToolWire = ParsedOf<'PRIMARY_CUSTOM_TOOL_WIRE'>;

/** The fields that combine several settings (or the environment): each a typed function in `loadConfig`. */
interface DerivedConfig {
  /** GATEWAY_PROVIDERS, else every registered family. */
  readonly enabledProviders: readonly ProviderId[];
}

/**
 * The fields each family computes from its settings (its `Family.settings.derive`), by group: a
 * family's settings file adds its group here (`readonly providerX: { home: string; … }`), merged
 * over the fields its rows place in that group.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the families' augmentations
export interface FamilyDerivedConfig {}

/** A row placed at a field a derivation computes would be overwritten, so it does not compile. */
type Computed = DerivedConfig & FamilyDerivedConfig;
type DerivedGroup = {
  [G in keyof Computed]: Computed[G] extends readonly unknown[] ? never : G;
}[keyof Computed];
type PlacedOverDerived = {
  [G in DerivedGroup]: G extends keyof SettingsConfig ? Extract<keyof SettingsConfig[G], keyof Computed[G]> : never;
}[DerivedGroup];
const _noRowAtADerivedField: [PlacedOverDerived] extends [never] ? true : PlacedOverDerived = true;

/**
 * The typed configuration every module reads (never `process.env`): one field per placed row of
 * the settings table (its `at`, its parser's type; see `SettingsConfig`), plus the derived fields
 * (the loader's own and each family's).
 */
export type AppConfig = SettingsConfig & DerivedConfig & FamilyDerivedConfig;

/** A bad setting: `message` is the one line printed before exiting with status 1. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** `--help` was asked for; the loader does not exit by itself. */
export class HelpRequested extends Error {}

function parseArgv(argv: readonly string[], definitions: readonly SettingDefinition[]): Map<SettingDefinition, string> {
  const byFlag = settingsByFlag(definitions);
  const values = new Map<SettingDefinition, string>();
  /** The name each setting was given under, for the refusal of a second one. */
  const givenAs = new Map<SettingDefinition, string>();
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    if (argument === '--help' || argument === '-h') throw new HelpRequested();
    const equals = argument.indexOf('=');
    const name = equals === -1 ? argument : argument.slice(0, equals);
    const definition = byFlag.get(name);
    // Only a flag's name is shown, never what follows `=` nor a bare argument: a mistyped
    // `--gateway-bearer-secret=…` must not put the secret on stderr.
    if (!definition && name.startsWith('-')) {
      throw new ConfigError(`unknown flag ${quoted(name, 60)}; run with --help for the list of settings`);
    }
    if (!definition) {
      throw new ConfigError(
        `unexpected argument ${index + 1}: settings are flags such as --gateway-port=8080; run with --help for the list`,
      );
    }
    // Two values for one setting: which one the operator meant is unknown, so neither is taken.
    const earlier = givenAs.get(definition);
    if (earlier !== undefined) {
      const also = earlier === name ? '' : `also as ${earlier}; `;
      throw new ConfigError(`${name} is given twice (${also}setting ${definition.env}): give it once`);
    }
    givenAs.set(definition, name);
    // Without `=`, the value is the next argument, unless that is a flag: taken as the value, a
    // flag would be lost and its text become the value (a secret of "--gateway-host=0.0.0.0").
    const next = equals === -1 ? argv[index + 1] : undefined;
    const nextIsValue = next !== undefined && !next.startsWith('--');
    if (equals !== -1) {
      values.set(definition, argument.slice(equals + 1));
    } else if (nextIsValue) {
      values.set(definition, next);
      index++;
    } else if (definition.isBoolean) {
      values.set(definition, 'true');
    } else {
      throw new ConfigError(
        `${name} needs a value (setting ${definition.env}): give it as ${name}=VALUE or ${name} VALUE; a value that starts with -- only after =`,
      );
    }
  }
  return values;
}

/**
 * The home a leading `~` stands for: HOME, else the user's entry. An empty HOME counts as unset,
 * like every empty variable (node's own `os.homedir()` would answer it with ''), and paths relative
 * to wherever the gateway was started are never what was meant.
 */
function homeDirectory(env: Readonly<Record<string, string | undefined>>): string {
  if (env.HOME) return env.HOME;
  for (const candidate of [() => os.homedir(), () => os.userInfo().homedir]) {
    try {
      const home = candidate();
      if (home) return home;
    } catch {
      // No entry for this user (a container run with an arbitrary uid): the next source, or the refusal.
    }
  }
  throw new ConfigError(
    'HOME is empty or unset and this user has no home directory: set HOME to the directory under which ~ and the CLI logins are found',
  );
}

/**
 * A value as shown in a refusal: a URL's userinfo (`user:password@`) left out, then capped. All up
 * to the last `@` goes, so a password with a `/` or `@` of its own is not shown either.
 */
function shownValue(raw: string): string {
  return JSON.stringify(raw.replace(/^([^/?#@]*:\/\/)?.*@/s, (_, scheme = '') => `${scheme}…@`).slice(0, 80));
}

/** A variable as given; an empty one counts as unset (docs/configuration.md "Formats"). */
function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}

const LOWER_CASE_ALIASED = new Set(['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY']);

/**
 * (environment, argv) → AppConfig. Flags win over the environment; every value is validated
 * here, once, and the first bad one throws a ConfigError naming the setting and the rule (secret
 * values are never echoed). Reads nothing else from the process; each registered family then
 * derives its own fields (`Family.settings.derive`), which may stat the login locations it is given
 * (their kind, and whether two lead to one file: `refuseOneLoginUnderTwoAliases`).
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, argv: readonly string[] = []): AppConfig {
  // The table is built once per load: the shared rows and every registered family's.
  const definitions = allSettings();
  const fromFlags = parseArgv(argv, definitions);
  const home = homeDirectory(env);
  const context: ParseContext = { home };
  const values = new Map<SettingName, unknown>();
  const defaults = new Map<SettingName, unknown>();
  for (const definition of definitions) {
    // The proxy variables are conventionally also spelled in lower case (curl, undici, reqwest).
    const raw =
      fromFlags.get(definition) ??
      nonEmpty(env[definition.env]) ??
      (LOWER_CASE_ALIASED.has(definition.env) ? nonEmpty(env[definition.env.toLowerCase()]) : undefined);
    if (raw !== undefined) {
      values.set(definition.env, parseSetting(definition, raw, context));
      continue;
    }
    // A default is parsed here, with this home (`~/.codex` is the home of this load), when it is used.
    const fallback = writtenDefault(definition);
    if (fallback !== undefined) defaults.set(definition.env, parseSetting(definition, fallback, context));
  }
  // Each setting's type is the return type of its parser in the table, so these two readers are the
  // only place a parsed value is cast to it; a name outside the table does not compile.
  const byEnv = settingsByEnv(definitions);
  const read: SettingReader = {
    given: <K extends SettingName>(name: K) => values.get(name) as ParsedOf<K> | undefined,
    value: <K extends DefaultedSettingName>(name: K) =>
      (values.has(name) ? values.get(name) : defaults.get(name)) as ParsedOf<K>,
  };
  const { given, value } = read;

  refuseOpenBindWithoutSecret(
    value('GATEWAY_HOST'),
    given('GATEWAY_BEARER_SECRET'),
    value('GATEWAY_ALLOW_UNAUTHENTICATED'),
  );

  refuseHeadersTimeoutOverRequestTimeout(
    value('GATEWAY_HEADERS_TIMEOUT'),
    value('GATEWAY_REQUEST_TIMEOUT'),
    byEnv.get('GATEWAY_HEADERS_TIMEOUT')!.flag,
  );

  refuseBodyBudgetBelowOneBody(
    value('GATEWAY_MAX_BODY_BYTES_IN_FLIGHT'),
    value('GATEWAY_MAX_BODY_BYTES'),
    value('STRUCTURED_INFERENCE_ENABLED'),
    byEnv.get('GATEWAY_MAX_BODY_BYTES_IN_FLIGHT')!.flag,
  );

  const config: Record<string, unknown> = {
    ...placeSettings(definitions, values, defaults),
    enabledProviders: given('GATEWAY_PROVIDERS') ?? familyIds(),
  };
  for (const family of families()) {
    for (const [group, fields] of Object.entries(family.settings?.derive?.(read, { env, home }) ?? {})) {
      config[group] = { ...(config[group] as object | undefined), ...fields };
    }
  }
  // Every field of `AppConfig` is here: one per placed row (`SettingsConfig`), the loader's own
  // derived fields, and each registered family's (`FamilyDerivedConfig`, which its derivation
  // returns typed), so this one cast is sound.
  return config as unknown as AppConfig;
}

/** One value parsed by its row; a broken rule is the one-line ConfigError naming the setting. */
function parseSetting(definition: SettingDefinition, raw: string, context: ParseContext): unknown {
  try {
    return definition.parse(raw, context);
  } catch (error) {
    if (!(error instanceof SettingRuleError)) throw error;
    const shown = definition.sensitive ? '' : ` (got ${shownValue(raw)})`;
    throw new ConfigError(`invalid setting ${definition.env} / ${definition.flag}: ${error.message}${shown}`);
  }
}

/**
 * Each row with a place in `AppConfig` puts its value there: the given value, else its default
 * value, else `undefined`. `SettingsConfig` is the type of exactly this object (one field per placed
 * row, typed by its parser), which is why the one cast below is sound.
 */
function placeSettings(
  definitions: readonly SettingDefinition<unknown, SettingName>[],
  values: ReadonlyMap<SettingName, unknown>,
  defaults: ReadonlyMap<SettingName, unknown>,
): SettingsConfig {
  const root: Record<string, unknown> = {};
  for (const definition of definitions) {
    if (definition.at === undefined) continue;
    const value = values.has(definition.env) ? values.get(definition.env) : defaults.get(definition.env);
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

/** Addresses only this machine can reach: the IPv4 loopback range, ::1 and the name localhost (brackets gone: parseHost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.toLowerCase();
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
    `invalid setting GATEWAY_HOST / --gateway-host: ${quoted(host)} is not loopback, so GATEWAY_BEARER_SECRET must be set (or GATEWAY_ALLOW_UNAUTHENTICATED=true to serve anyone who reaches the port)`,
  );
}

/**
 * Node times a request's headers within its request timeout, so a longer headers timeout would
 * never be reached; Node refuses the pair when a server is created with it, and is not asked again
 * when they are set later, so the loader refuses it here. No rule ties either to the keep-alive
 * timeout: Node times the headers of a request from its first byte, not from the end of the answer
 * before it, so an idle kept-alive connection is bound by the keep-alive timeout alone.
 */
function refuseHeadersTimeoutOverRequestTimeout(headersMs: number, requestMs: number, headersFlag: string): void {
  if (headersMs <= requestMs) return;
  throw new ConfigError(
    `invalid setting GATEWAY_HEADERS_TIMEOUT / ${headersFlag}: ${headersMs} ms is longer than GATEWAY_REQUEST_TIMEOUT (${requestMs} ms), which bounds the headers too; lower GATEWAY_HEADERS_TIMEOUT or raise GATEWAY_REQUEST_TIMEOUT to at least that`,
  );
}

/**
 * The bytes all bodies together may hold must take the largest body a route accepts: a smaller
 * budget would refuse such a body with a 503 however often it is retried, the gateway idle or not.
 */
function refuseBodyBudgetBelowOneBody(
  budgetBytes: number,
  maxBodyBytes: number,
  structuredEnabled: boolean,
  budgetFlag: string,
): void {
  if (budgetBytes === 0) return;
  const [largest, which] =
    structuredEnabled && STRUCTURED_MAX_BODY_BYTES > maxBodyBytes
      ? [STRUCTURED_MAX_BODY_BYTES, "the structured route's body cap, while STRUCTURED_INFERENCE_ENABLED is true"]
      : [maxBodyBytes, 'GATEWAY_MAX_BODY_BYTES, the largest chat body'];
  if (budgetBytes >= largest) return;
  throw new ConfigError(
    `invalid setting GATEWAY_MAX_BODY_BYTES_IN_FLIGHT / ${budgetFlag}: ${budgetBytes} bytes is less than ${largest} (${which}), so such a body would be refused however often it is retried; raise GATEWAY_MAX_BODY_BYTES_IN_FLIGHT to at least ${largest} (together with the container's memory limit: docs/deployment.md "Memory budget"), or set it to 0 for no bound`,
  );
}

/**
 * A family's logins: the accounts list when given (then the single-file setting must be unset, so
 * nobody wonders which one wins), else the one file configured the old way as alias `default`.
 */
export function accountLogins(
  listed: readonly AccountSetting[] | undefined,
  singleFile: string | undefined,
  defaultFile: string,
  prefix: string,
): AccountLogin[] {
  if (!listed) return [{ alias: DEFAULT_ACCOUNT_ALIAS, loginFile: singleFile ?? defaultFile }];
  if (singleFile !== undefined) {
    const [accounts, authFile] = [`${prefix}_ACCOUNTS`, `${prefix}_AUTH_FILE`];
    throw new ConfigError(
      `invalid setting ${accounts} / ${flagOf(accounts)}: ${authFile} / ${flagOf(authFile)} is set too (got ${quoted(singleFile)}), and which login to use would be a guess: unset ${authFile}, and list its file in ${accounts} (alias=${singleFile}) if it is one of the logins`,
    );
  }
  const logins = listed.map(({ alias, location }) => ({ alias, loginFile: location }));
  refuseOneLoginUnderTwoAliases(`${prefix}_ACCOUNTS`, logins);
  return logins;
}

/**
 * Two listed logins whose paths differ as written but lead to one file (a symbolic link, a hard
 * link, two bind mounts of one host file, a config directory linked to another) would be one
 * login counted twice: twice its in-flight cap, two cooldowns, two refreshes racing to spend its
 * one refresh token. `parseAccounts` refuses paths spelt alike without touching the disk; this
 * asks the disk, once, while the configuration loads (never on a request): a file that exists is
 * known by its device and inode, one not made yet by its path with every directory that exists
 * resolved. `loginFile` is the file the login reads, `location` the path as listed when that is
 * another (a config directory), else the file itself.
 */
export function refuseOneLoginUnderTwoAliases(
  setting: string,
  logins: readonly { readonly alias: string; readonly loginFile: string; readonly location?: string }[],
): void {
  if (logins.length < 2) return;
  const earlier = new Map<string, { readonly alias: string; readonly location: string }>();
  for (const { alias, loginFile, location = loginFile } of logins) {
    const { key, shown } = fileIdentity(loginFile);
    const first = earlier.get(key);
    if (first === undefined) {
      earlier.set(key, { alias, location });
      continue;
    }
    throw new ConfigError(
      `invalid setting ${setting} / ${flagOf(setting)}: aliases "${first.alias}" and "${alias}" name the same login: ${first.location} and ${location} both lead to ${shown}; list each login once, under one alias`,
    );
  }
}

/**
 * What tells one login file from another (`key`) and how a refusal names it (`shown`, its real
 * path): its device and inode when it exists; else where it will be made (`whereItWillBeMade`). A
 * path the gateway may not examine is known as written (normalized), and the login check then says
 * what is wrong with it.
 */
function fileIdentity(file: string): { readonly key: string; readonly shown: string } {
  try {
    const stat = fs.statSync(file);
    return { key: `inode ${stat.dev}:${stat.ino}`, shown: fs.realpathSync(file) };
  } catch {
    // Not there (yet), or not to be examined: where it will be made, as far as that can be told.
  }
  const shown = whereItWillBeMade(file) ?? path.normalize(file);
  return { key: `path ${shown}`, shown };
}

/** The kernel's own bound on links in one path lookup: a longer chain of dangling links is a loop. */
const MAX_LINKS_FOLLOWED = 40;

/**
 * The real path a file not made yet will have: the directories that exist resolved, the rest kept
 * as written. A symbolic link on the way whose target does not exist yet (a login file linked to
 * one a login command has not written, a mounted directory not there yet) is followed to that
 * target, so two links to one future file are one login. Undefined when the path cannot be
 * examined (a loop of links, a directory the gateway may not read).
 */
function whereItWillBeMade(file: string, linksLeft = MAX_LINKS_FOLLOWED): string | undefined {
  const missing: string[] = [];
  for (let directory = path.normalize(file); ; directory = path.dirname(directory)) {
    try {
      return path.join(fs.realpathSync(directory), ...missing);
    } catch (error) {
      const errno = (error as NodeJS.ErrnoException).code;
      if ((errno !== 'ENOENT' && errno !== 'ENOTDIR') || directory === path.dirname(directory)) return undefined;
      const target = danglingLinkTarget(directory);
      if (target !== undefined)
        return linksLeft > 0 ? whereItWillBeMade(path.join(target, ...missing), linksLeft - 1) : undefined;
      missing.unshift(path.basename(directory));
    }
  }
}

/** Where the symbolic link at `link` points, resolved from its real directory; undefined when it is no link. */
function danglingLinkTarget(link: string): string | undefined {
  try {
    if (!fs.lstatSync(link).isSymbolicLink()) return undefined;
    return path.resolve(fs.realpathSync(path.dirname(link)), fs.readlinkSync(link));
  } catch {
    return undefined;
  }
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
  for (const definition of allSettings()) {
    lines.push(`  ${definition.env} / ${definition.flag}`);
    lines.push(`      ${definition.description}`);
    lines.push(`      default: ${definition.defaultText ?? '(unset)'}`);
  }
  return lines.join('\n') + '\n';
}
