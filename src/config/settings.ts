import { isIPv6 } from 'node:net';
import * as path from 'node:path';
import { families, familyIds } from '../core/family-registry';
import type { ProviderId } from '../core/provider-id';
import { buildDateProblem, commitProblem } from '../core/build-stamp-rules';
import type { ParseContext } from './setting-parsers';
import {
  expandHome,
  parseBoolean,
  parseDuration,
  parseEnum,
  parseHeaderName,
  parseIntegerIn,
  parseList,
  parseNonEmpty,
  parseNonNegativeInteger,
  parsePath,
  parsePort,
  parsePositiveDuration,
  parsePositiveInteger,
  parseUrl,
  SettingRuleError,
} from './setting-parsers';

/**
 * THE table of settings (docs/design/decisions.md §2): the shared rows here, each family's rows in
 * its own folder (`Family.settings`). Every setting is an environment variable and a
 * `--kebab-case` flag; the flag wins. `--help` and docs/configuration.md are generated from
 * this table, and a test checks the doc against it, so the three cannot drift. Each row also names
 * its place in `AppConfig`, whose type and values are derived from the rows (app-config.ts).
 */
export interface SettingDefinition<T = unknown, N extends string = string> {
  /** Environment variable name. */
  readonly env: N;
  /** Command-line flag, `--` + kebab case of the env name unless stated. */
  readonly flag: string;
  /**
   * Where the parsed value lands in `AppConfig`: `group.field` or `field`. Unset: the setting is
   * read by a derivation (the loader's open-bind rule, a family's homes and login files) or ignored.
   */
  readonly at: string | undefined;
  /**
   * Default shown in `--help` and the docs; `undefined` means unset. Unless `derivedDefault`, it is
   * written as an operator would write the setting, and the loader parses it like a given value.
   */
  readonly defaultText?: string;
  /**
   * The default depends on other settings or on bundled data (`defaultText` says how): the row reads
   * as unset and the loader's derivation, or the module reading it, supplies the value.
   */
  readonly derivedDefault?: boolean;
  readonly description: string;
  /** Parses a raw value (a path row reads the home from `context`); throws SettingRuleError naming the rule. */
  readonly parse: (raw: string, context: ParseContext) => T;
  /** Secret values are never echoed in errors. */
  readonly sensitive?: boolean;
  /** Boolean flags may be given without a value (`--structured-enabled`). */
  readonly isBoolean?: boolean;
}

/** A family by its contract name, or by the name of the CLI whose login it uses. */
function familyNamed(name: string): ProviderId | undefined {
  const wanted = name.toLowerCase();
  return families().find((family) => family.id === wanted || family.cliNames.includes(wanted))?.id;
}

function parseProviders(raw: string): ProviderId[] {
  const names = parseList(raw);
  if (names.length === 0) throw new SettingRuleError(`must name at least one of ${familyIds().join(', ')}`);
  const resolved = names.map((name) => {
    const id = familyNamed(name);
    if (!id) {
      const cliNames = families().flatMap((family) => family.cliNames);
      throw new SettingRuleError(
        `unknown provider "${name.slice(0, 40)}"; allowed: ${familyIds().join(', ')} (or ${cliNames.join(', ')})`,
      );
    }
    return id;
  });
  return [...new Set(resolved)];
}

/** Queue key modes of docs/design/behaviours.md §3.3. */
function parseQueueKeyMode(raw: string): string {
  const value = raw.trim();
  if (['chat', 'global', 'caller'].includes(value)) return value;
  const match = /^(header|body):(.*)$/.exec(value);
  if (match && match[2].trim() !== '') {
    const name = match[1] === 'header' ? parseHeaderName(match[2]) : match[2].trim();
    return `${match[1]}:${name}`;
  }
  throw new SettingRuleError('must be chat, global, caller, header:<name> or body:<field> (with a non-empty name)');
}

/**
 * The bind address. An IPv6 address may be written as in a URL (`[::1]`): the brackets go, since
 * listen() takes the bare address and would look the bracketed text up as a host name.
 */
function parseHost(raw: string): string {
  const value = parseNonEmpty(raw);
  const bracketed = /^\[(.*)\]$/.exec(value);
  if (!bracketed) return value;
  if (!isIPv6(bracketed[1])) {
    throw new SettingRuleError(
      'brackets go only around an IPv6 address (as in [::1]); write a name or an IPv4 address without them',
    );
  }
  return bracketed[1];
}

function parseReplicas(raw: string): number {
  const value = parseNonNegativeInteger(raw);
  if (value !== 1) {
    throw new SettingRuleError(
      'must be exactly 1: one process must own the idempotency keys (run replicas: 1 with strategy: Recreate or maxSurge: 0)',
    );
  }
  return value;
}

/** The health document's commit id and build date formats (core/build-stamp-rules.ts). */
function parseCommit(raw: string): string {
  const value = raw.trim().toLowerCase();
  const problem = commitProblem(value);
  if (problem) throw new SettingRuleError(problem);
  return value;
}

function parseBuildDate(raw: string): string {
  const value = raw.trim();
  const problem = buildDateProblem(value);
  if (problem) throw new SettingRuleError(problem);
  return value;
}

/** Account aliases name logins in logs and metrics (docs/accounts.md): short, label-safe. */
const ALIAS = /^[A-Za-z0-9_-]{1,32}$/;

/** One login of a family: its operator-given alias and where the login lives. */
export interface AccountSetting {
  readonly alias: string;
  readonly location: string;
}

/**
 * `alias=path,alias=path`: aliases unique and label-safe, paths absolute or from the home (a
 * leading `~`), each login listed once. A relative path would name a different file from each
 * directory the gateway is started in. Two aliases of one location would be two logins sharing one
 * refresh token, each refreshing it (the upstream revokes the one refreshed first) and its plan
 * counted twice. Here the location is compared as written, normalized, without the disk; two
 * spellings of one file (a symbolic link, a mount) are refused by the family's derivation
 * (`refuseOneLoginUnderTwoAliases`).
 */
export function parseAccounts(raw: string, context: ParseContext): AccountSetting[] {
  const entries = parseList(raw);
  if (entries.length === 0) throw new SettingRuleError('must list at least one alias=path');
  const aliasOf = new Map<string, string>();
  const seen = new Set<string>();
  return entries.map((entry) => {
    const equals = entry.indexOf('=');
    const alias = equals === -1 ? '' : entry.slice(0, equals).trim();
    const written = equals === -1 ? '' : entry.slice(equals + 1).trim();
    if (!ALIAS.test(alias) || written === '') {
      throw new SettingRuleError('each entry must be alias=path with an alias of 1-32 letters, digits, _ or -');
    }
    if (seen.has(alias)) throw new SettingRuleError(`alias "${alias}" is used twice`);
    seen.add(alias);
    const location = expandHome(written, context.home);
    if (!path.isAbsolute(location)) {
      throw new SettingRuleError(
        `the path of alias "${alias}", ${JSON.stringify(written.slice(0, 80))}, is relative; write it absolute (/…) or from the home (~/…)`,
      );
    }
    const normalized = path.normalize(location).replace(/(.)\/+$/, '$1');
    const earlier = aliasOf.get(normalized);
    if (earlier !== undefined) {
      throw new SettingRuleError(
        `aliases "${earlier}" and "${alias}" name the same login, ${normalized}; list each login once, under one alias`,
      );
    }
    aliasOf.set(normalized, alias);
    return { alias, location: normalized };
  });
}

/**
 * Values the docs and manifests have shown as examples of a bearer secret. Someone who copied one
 * has no secret at all, so they are refused like a short one.
 */
export const PLACEHOLDER_BEARER_SECRETS: readonly string[] = [
  'change-me',
  'change-me-to-a-long-random-value',
  'changeme',
  'secret',
  'your-secret-here',
];
export const MIN_BEARER_SECRET_LENGTH = 16;

/**
 * The inbound bearer: long enough not to be guessed, and not a value copied from an example. The
 * whitespace around it is dropped, as it is around the token of a request (bearer-check.ts): a
 * secret read from a file or an env file often ends in a newline no client sends, and kept, it
 * would refuse every client.
 */
function parseBearerSecret(raw: string): string {
  const secret = parseNonEmpty(raw);
  if (PLACEHOLDER_BEARER_SECRETS.includes(secret.toLowerCase())) {
    throw new SettingRuleError('is a documented placeholder, not a secret; generate one with `openssl rand -hex 32`');
  }
  if (secret.length < MIN_BEARER_SECRET_LENGTH) {
    throw new SettingRuleError(
      `must be at least ${MIN_BEARER_SECRET_LENGTH} characters; generate one with \`openssl rand -hex 32\``,
    );
  }
  return secret;
}

/** The structured allowlist: an empty one would answer every request unsupported_model. */
function parseModelIds(raw: string): string[] {
  const ids = parseList(raw);
  if (ids.length === 0)
    throw new SettingRuleError('must name at least one model id of the catalog; unset it for the default allowlist');
  return ids;
}

/** The largest chat body: it is held in memory whole while it is read and parsed. */
const MAX_BODY_BYTES_LIMIT = 256 * 1024 * 1024;

/** Structured bodies are capped at 4 MiB (docs/design/behaviours.md §6.1 step 3). */
export const STRUCTURED_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** How log lines are written (LOG_FORMAT); `auto` is decided at startup by whether stdout is a terminal. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

function parseLogLevel(raw: string): string {
  return parseEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const)(raw.toLowerCase());
}

const kebab = (env: string) => `--${env.toLowerCase().replace(/_/g, '-')}`;

/** A default that is a function of other settings or bundled data, in the words the docs show. */
export interface DerivedDefault {
  readonly derived: string;
}
export const derived = (words: string): DerivedDefault => ({ derived: words });

/**
 * Where a written default is parsed when its row is built: the home is known only when the
 * configuration is loaded (the loader parses the default again then), so `~` stands for it here.
 */
const TABLE_CONTEXT: ParseContext = { home: '~' };

/**
 * One row of the table. The row keeps its env name, its place in `AppConfig`, the type its parser
 * returns and whether it has a default (written as an operator would write it, and parsed here, so a
 * default its own parser refuses fails at import), so the loader reads each setting with that type
 * and no cast, and `AppConfig` is typed from the rows.
 */
export function setting<
  N extends string,
  P extends string | undefined,
  T,
  D extends string | DerivedDefault | undefined,
>(
  env: N,
  at: P,
  fallback: D,
  description: string,
  parse: (raw: string, context: ParseContext) => T,
  extra: Partial<Pick<SettingDefinition, 'flag' | 'sensitive' | 'isBoolean'>> = {},
): SettingDefinition<T, N> & { readonly at: P; readonly hasDefault: D extends string ? true : false } {
  const written = typeof fallback === 'string';
  if (written) parse(fallback, TABLE_CONTEXT);
  return {
    env,
    at,
    flag: extra.flag ?? kebab(env),
    defaultText: written ? fallback : fallback?.derived,
    ...(fallback !== undefined && !written ? { derivedDefault: true } : {}),
    hasDefault: written as D extends string ? true : false,
    description,
    parse,
    ...extra,
  };
}

export const bool = <N extends string, P extends string | undefined>(
  env: N,
  at: P,
  fallback: string,
  description: string,
  flag?: string,
) => setting(env, at, fallback, description, parseBoolean, { isBoolean: true, ...(flag ? { flag } : {}) });
const text = (raw: string) => raw;

/** The shared rows listed before the families' rows: the server, its auth and its logs. */
const LEADING_ROWS = [
  setting(
    'GATEWAY_HOST',
    'server.host',
    '127.0.0.1',
    'Bind address (the container image sets 0.0.0.0); an IPv6 address with or without brackets (::1 or [::1]).',
    parseHost,
  ),
  setting('GATEWAY_PORT', 'server.port', '8088', 'TCP port to listen on (0 picks a free port).', parsePort),
  setting(
    'GATEWAY_BEARER_SECRET',
    'server.bearerSecret',
    undefined,
    `Inbound bearer secret for /v1/* and /metrics: at least ${MIN_BEARER_SECRET_LENGTH} characters once the whitespace around it (a secret file's final newline) is dropped, not a documented placeholder (e.g. \`openssl rand -hex 32\`). Unset: any non-empty bearer, or none, is accepted, which only a loopback GATEWAY_HOST allows unless GATEWAY_ALLOW_UNAUTHENTICATED is true.`,
    parseBearerSecret,
    { sensitive: true },
  ),
  bool(
    'GATEWAY_ALLOW_UNAUTHENTICATED',
    undefined,
    'false',
    'Serve /v1/* and /metrics without a bearer secret on a GATEWAY_HOST that is not loopback (anyone who reaches the port spends your subscriptions). Without it such a start is refused.',
  ),
  setting(
    'GATEWAY_PROVIDERS',
    undefined,
    derived('every built-in family, in the order of src/families.ts'),
    'Enabled upstream families, by id or by the name of the CLI whose login each uses (e.g. codex, gemini, claude).',
    parseProviders,
  ),
  setting(
    'GATEWAY_MODEL_CATALOG',
    'modelCatalogPath',
    undefined,
    'Path of a JSON model catalog that replaces the built-in one (same shape as src/models/catalog.json; a row or default_model that breaks its rules, docs/providers.md "Model ids", fails startup).',
    parsePath,
  ),
  setting(
    'GATEWAY_CALLER_HEADER',
    'server.callerHeader',
    undefined,
    'Header whose value names the caller (multi-tenant use); taken as sent, so set it only behind a proxy that writes it.',
    (raw) => parseHeaderName(raw).toLowerCase(),
  ),
  setting(
    'GATEWAY_MAX_BODY_BYTES',
    'server.maxBodyBytes',
    '33554432',
    `Request body cap for chat, in bytes: at most ${MAX_BODY_BYTES_LIMIT} (256 MiB), since a body is held in memory whole while it is read.`,
    parseIntegerIn(1, MAX_BODY_BYTES_LIMIT),
  ),
  setting(
    'GATEWAY_MAX_BODY_BYTES_IN_FLIGHT',
    'server.maxBodyBytesInFlight',
    '67108864',
    'Request body bytes all requests together may hold in memory (chat and structured; held as its bytes arrive until the answer ends; a body whose Content-Length does not fit in what is left is refused before it is read): a body that does not fit is refused with 503 and Retry-After. The default is two bodies of the default GATEWAY_MAX_BODY_BYTES; at least GATEWAY_MAX_BODY_BYTES (and 4194304, the structured cap, while structured inference is enabled); 0 = no bound. Size it with the memory limit: docs/deployment.md "Memory budget".',
    parseNonNegativeInteger,
  ),
  setting(
    'GATEWAY_KEEP_ALIVE_TIMEOUT',
    'server.keepAliveTimeoutMs',
    '65s',
    'How long an idle client connection stays open for its next request (announced as `Keep-Alive: timeout=`). Keep it longer than the idle timeout of any load balancer or proxy in front (60 s for ingress-nginx and AWS ALB), so the balancer closes an idle connection first and never sends a request on one the gateway is closing.',
    parsePositiveDuration,
  ),
  setting(
    'GATEWAY_HEADERS_TIMEOUT',
    'server.headersTimeoutMs',
    '60s',
    "Longest a client may take to send a request's headers, from its first byte (or from connecting); then 408 and the connection closes. At most GATEWAY_REQUEST_TIMEOUT.",
    parsePositiveDuration,
  ),
  setting(
    'GATEWAY_REQUEST_TIMEOUT',
    'server.requestTimeoutMs',
    '5m',
    'Longest a client may take to send a whole request, headers and body; then 408 and the connection closes. It bounds receiving the request only: a streamed answer runs as long as it lasts.',
    parsePositiveDuration,
  ),
  setting(
    'GATEWAY_STREAM_IDLE_TIMEOUT',
    'server.streamIdleTimeoutMs',
    '240s',
    'Longest silence between upstream events, and longest a client may take nothing of a stream the gateway waits to write (it is then treated as gone); 0 disables both.',
    parseDuration,
  ),
  setting(
    'GATEWAY_DRAIN_TIMEOUT',
    'server.drainTimeoutMs',
    '30s',
    "How long in-flight work may finish after SIGTERM/SIGINT/SIGHUP; what still runs then is ended with the draining error (a 503, or a stream's error chunk). 0: nothing may finish, what is in flight is ended at once (the gateway exits at once when nothing is).",
    parseDuration,
  ),
  bool('METRICS_ENABLED', 'metricsEnabled', 'true', 'Serve GET /metrics (Prometheus text).'),
  setting(
    'LOG_LEVEL',
    'logLevel',
    'info',
    'pino log level: fatal, error, warn, info, debug, trace or silent.',
    parseLogLevel,
  ),
  setting(
    'LOG_FORMAT',
    'logFormat',
    'auto',
    'Log line format: `json` (one pino JSON object per line, for log collectors), `pretty` (readable lines through pino-pretty, for a person), or `auto`: pretty when stdout is a terminal, else json.',
    (raw) => parseEnum(LOG_FORMATS)(raw.trim().toLowerCase()),
  ),
];

/**
 * The shared rows listed after the families' rows: egress proxy, tool turns, accounts, structured
 * inference, build provenance. (docs/configuration.md groups rows by name, so this split keeps it
 * in the same order as one table would.)
 */
const TRAILING_ROWS = [
  setting(
    'HTTPS_PROXY',
    'proxy.httpsProxy',
    undefined,
    'Egress proxy (http://host:port, a CONNECT proxy) for the https:// and wss:// connections the gateway opens to an upstream (turns, token refreshes, usage reads); a CLI child the gateway runs reads the proxy variables of the environment it inherits, not this flag. The lower-case https_proxy is read too.',
    parseUrl(['http', 'https']),
    { sensitive: true },
  ),
  setting(
    'HTTP_PROXY',
    'proxy.httpProxy',
    undefined,
    'Egress proxy for the http:// and ws:// connections the gateway opens to an upstream (and for https:// when HTTPS_PROXY is unset); the lower-case http_proxy is read too.',
    parseUrl(['http', 'https']),
    { sensitive: true },
  ),
  setting(
    'NO_PROXY',
    'proxy.noProxy',
    undefined,
    'Hosts that bypass the proxy: comma-separated names (covering their subdomains), optional :port, or * for all; the lower-case no_proxy is read too.',
    parseNonEmpty,
  ),
  setting(
    'PRIMARY_CUSTOM_TOOL_WIRE',
    'customToolWire',
    'function',
    'How custom (freeform) tool calls reach clients: function or custom.',
    parseEnum(['function', 'custom'] as const),
  ),
  bool('PRIMARY_AGENT_QUEUE_ENABLED', 'agentQueue.enabled', 'true', 'Agent queue for tool turns on/off.'),
  setting(
    'PRIMARY_AGENT_QUEUE_KEY_MODE',
    'agentQueue.keyMode',
    'chat',
    'Queue key: chat, global, caller, header:<name> or body:<field>.',
    parseQueueKeyMode,
  ),
  setting(
    'PRIMARY_AGENT_MAX_ACTIVE',
    'agentQueue.maxActive',
    '16',
    'Active tool turns per upstream family.',
    parsePositiveInteger,
  ),
  setting(
    'PRIMARY_AGENT_MAX_ACTIVE_PER_KEY',
    'agentQueue.maxActivePerKey',
    '1',
    'Active tool turns per queue key.',
    parsePositiveInteger,
  ),
  setting(
    'PRIMARY_AGENT_QUEUE_LIMIT',
    'agentQueue.queueLimit',
    '128',
    'Waiters per family; beyond it: 429 at once.',
    parseNonNegativeInteger,
  ),
  setting(
    'PRIMARY_AGENT_QUEUE_TIMEOUT',
    'agentQueue.queueTimeoutMs',
    '5m',
    'Longest wait for a slot, then 429; 0 waits until the client leaves.',
    parseDuration,
  ),
  bool('PRIMARY_CONTEXT_MANAGEMENT_ENABLED', 'contextManagement.enabled', 'true', 'Compaction of long tool histories.'),
  setting(
    'PRIMARY_CONTEXT_MANAGEMENT_MAX_BYTES',
    'contextManagement.maxBytes',
    '196608',
    'Serialized history size that triggers compaction (0 off).',
    parseNonNegativeInteger,
  ),
  setting(
    'PRIMARY_CONTEXT_MANAGEMENT_MAX_MESSAGES',
    'contextManagement.maxMessages',
    '120',
    'Message count that triggers compaction (0 off).',
    parseNonNegativeInteger,
  ),
  setting(
    'PRIMARY_CONTEXT_MANAGEMENT_RECENT_MESSAGES',
    'contextManagement.recentMessages',
    '24',
    'Tail of the history that is never compacted.',
    parseNonNegativeInteger,
  ),
  setting(
    'PRIMARY_CONTEXT_MANAGEMENT_TOOL_OUTPUT_MAX_BYTES',
    'contextManagement.toolOutputMaxBytes',
    '32768',
    'Cap for any single tool result, always applied (0 off).',
    parseNonNegativeInteger,
  ),
  setting(
    'PRIMARY_CONTEXT_MANAGEMENT_COMPACTED_TOOL_OUTPUT_BYTES',
    'contextManagement.compactedToolOutputBytes',
    '512',
    'Size older tool results shrink to when compacted.',
    parseNonNegativeInteger,
  ),
  setting(
    'ACCOUNT_MAX_IN_FLIGHT',
    'accounts.maxInFlight',
    '0',
    'Turns running at once on one login (a full login takes no new turn; a stopped turn counts until its child is gone, and a new turn waits for that), and on all logins of a family for one chat (a stopped turn stops counting at once). 0 = no cap.',
    parseNonNegativeInteger,
  ),
  setting(
    'ACCOUNT_COOLDOWN_DEFAULT',
    'accounts.cooldownDefaultMs',
    '5m',
    'Cooldown after a usage limit or 429 when the upstream reported no reset time; a usage limit or spent credit with no reset known tells its client this wait in Retry-After.',
    parsePositiveDuration,
  ),
  setting(
    'ACCOUNT_PINNED_CHATS_MAX',
    'accounts.pinnedChatsMax',
    '10000',
    'Chats remembered per family with the login they stick to (oldest forgotten first): 1 to 100000.',
    parseIntegerIn(1, 100_000),
  ),
  setting(
    'ACCOUNT_REFRESH_AHEAD',
    'accounts.refreshAheadMs',
    '5m',
    "Background refresh renews a login whose access token expires within this. Keep it below the tokens' life (Gemini's last an hour): a login whose renewed token is still within it is renewed when half its token's life is left instead, with one warning (docs/accounts.md).",
    parsePositiveDuration,
  ),
  setting(
    'ACCOUNT_REFRESH_INTERVAL',
    'accounts.refreshIntervalMs',
    '60s',
    'How often idle logins are checked for refresh (with ±20 % jitter); 0 disables.',
    parseDuration,
  ),
  setting(
    'ACCOUNT_PAID_USAGE',
    'accounts.paidUsage',
    'plan_only',
    "plan_only: a login whose plan is spent, or that the upstream reports drawing paid usage (Claude's extra usage, Codex credits), gets no new turn until the plan window resets; allow: serve as the upstream does, and log and count each paid turn. See docs/accounts.md.",
    parseEnum(['plan_only', 'allow'] as const),
  ),
  setting(
    'ACCOUNT_USAGE_REFRESH_INTERVAL',
    'accounts.usageRefreshIntervalMs',
    '5m',
    "How often each login's plan usage is read from its vendor's usage endpoint (the one its CLI reads; docs/accounts.md names each), starting at startup; 0 = never (turns still report it, and the setup check reads it).",
    parseDuration,
  ),
  bool(
    'STRUCTURED_INFERENCE_ENABLED',
    'structured.enabled',
    'false',
    'Registers POST /v1/structured/inference.',
    '--structured-enabled',
  ),
  setting('STRUCTURED_MAX_ACTIVE', 'structured.maxActive', '4', 'Active structured requests.', parsePositiveInteger),
  setting(
    'STRUCTURED_MAX_ACTIVE_PER_KEY',
    'structured.maxActivePerKey',
    '2',
    'Active structured requests per caller.',
    parsePositiveInteger,
  ),
  setting(
    'STRUCTURED_QUEUE_LIMIT',
    'structured.queueLimit',
    '16',
    'Structured waiters; beyond it: rate_limited at once.',
    parseNonNegativeInteger,
  ),
  setting(
    'STRUCTURED_QUEUE_TIMEOUT',
    'structured.queueTimeoutMs',
    '30s',
    "Longest wait for a structured slot, then rate_limited. 0: no bound of its own, so only the request's deadline (deadline_ms, else STRUCTURED_MAX_DEADLINE) ends the wait.",
    parseDuration,
  ),
  setting(
    'STRUCTURED_MAX_DEADLINE',
    'structured.maxDeadlineMs',
    '5m',
    'Cap for deadline_ms, and the deadline when it is absent.',
    parsePositiveDuration,
  ),
  setting(
    'STRUCTURED_IDEMPOTENCY_TTL',
    'structured.idempotencyTtlMs',
    '10m',
    'How long a stored structured response replays, from the moment it is stored. 0: nothing is stored, so a retry with the same key runs again; requests with the key that arrive while the first runs still share its answer.',
    parseDuration,
  ),
  setting(
    'STRUCTURED_IDEMPOTENCY_CAPACITY',
    'structured.idempotencyCapacity',
    '1024',
    'Live idempotency bindings the store holds.',
    parsePositiveInteger,
  ),
  setting(
    'STRUCTURED_REPLICAS',
    'structured.replicas',
    '1',
    'Must be exactly 1 (one process owns the idempotency keys).',
    parseReplicas,
  ),
  setting(
    'STRUCTURED_MODELS',
    'structured.models',
    derived('the sol, terra and luna tier models that serve strict schemas, with effort and -fast variants'),
    'Structured allowlist (comma-separated catalog ids; at least one must be able to serve structured inference, docs/structured.md "Models").',
    parseModelIds,
  ),
  setting(
    'STRUCTURED_MAX_OUTPUT_TOKENS',
    undefined,
    undefined,
    'Ignored (removed in contract 2.0.0); accepted so old deployments still start.',
    text,
  ),
  setting(
    'GATEWAY_MAX_SEMI_SPACE_MIB',
    undefined,
    undefined,
    'Ignored: the young generation\'s bound is node\'s own `--max-semi-space-size`, given where node starts (docs/deployment.md "Memory"); accepted so old deployments still start.',
    text,
  ),
  setting('BUILD_VERSION', 'buildOverrides.version', undefined, 'Overrides the stamped build version.', parseNonEmpty),
  setting(
    'BUILD_COMMIT',
    'buildOverrides.commit',
    undefined,
    'Overrides the stamped source commit (the full 40-character id).',
    parseCommit,
  ),
  setting(
    'BUILD_DATE',
    'buildOverrides.date',
    undefined,
    'Overrides the stamped build date (UTC, YYYY-MM-DDTHH:MM:SSZ).',
    parseBuildDate,
  ),
];

/**
 * A family's settings, declared in its own folder: its rows, listed in `--help` and
 * docs/configuration.md between the leading and the trailing shared rows, in registration order,
 * and the fields of `AppConfig` it computes from several settings or the environment (homes, login
 * files, a child's environment). Its settings file also adds its rows to `FamilySettingRows` and
 * its computed fields to `FamilyDerivedConfig` (app-config.ts), so `AppConfig` types them.
 */
export interface FamilySettings {
  readonly rows: readonly SettingDefinition[];
  /**
   * The computed fields, by group (`{ providerX: { home, accounts } }`), merged over the group's
   * placed rows. Called for every registered family at load, in registration order; throws a
   * ConfigError for a combination of settings it refuses.
   */
  readonly derive?: (read: SettingReader, context: SettingContext) => Readonly<Record<string, object>>;
}

declare module '../core/family' {
  interface Family {
    /** Its settings rows and what it derives from them; absent when it has none. */
    readonly settings?: FamilySettings;
  }
}

/** The parsed settings as the loader hands them to a family's derivation, typed by their rows. */
export interface SettingReader {
  /** A setting as given by flag or environment, parsed; `undefined` when unset. */
  readonly given: <K extends SettingName>(name: K) => ParsedOf<K> | undefined;
  /** A setting with a table default: the given value, else that default value. */
  readonly value: <K extends DefaultedSettingName>(name: K) => ParsedOf<K>;
}

/** What else a derivation may read: the environment the gateway was started with, and the user's home. */
export interface SettingContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
}

/**
 * The rows of each family, by family id, as types: a family's settings file adds
 * `interface FamilySettingRows { <id>: (typeof ITS_ROWS)[number] }`, which puts its settings in
 * `SettingName`, `ParsedOf` and `SettingsConfig` (so `config.providerX.field` has its row's type).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the families' augmentations
export interface FamilySettingRows {}

type SettingRow =
  (typeof LEADING_ROWS)[number] | (typeof TRAILING_ROWS)[number] | FamilySettingRows[keyof FamilySettingRows];
/** The env name of every setting in the table; any other name fails to compile. */
export type SettingName = SettingRow['env'];
/** What the parser of setting K returns. */
export type ParsedOf<K extends SettingName> = ReturnType<Extract<SettingRow, { readonly env: K }>['parse']>;
/** The settings the table gives a default value (not unset, not derived). */
export type DefaultedSettingName = Extract<SettingRow, { readonly hasDefault: true }>['env'];

/** Lists reach `AppConfig` read-only. */
type Frozen<T> = T extends readonly (infer E)[] ? readonly E[] : T;
type RowValue<R> = R extends { readonly parse: (raw: string, context: ParseContext) => infer T } ? Frozen<T> : never;
type PlacedRow = Extract<SettingRow, { readonly at: string }>;
type FieldOf<P> = P extends `${string}.${infer F}` ? F : P;
type GroupOf<P> = P extends `${infer G}.${string}` ? G : never;
/** One object type (not an intersection), so editors and errors show the fields. */
type Flat<T> = { [K in keyof T]: T[K] };
/** Rows with a default are required fields; the others are optional (unset when not given). */
type Fields<R extends PlacedRow> = Flat<
  {
    readonly [X in R as X extends { readonly hasDefault: true } ? FieldOf<X['at']> : never]: RowValue<X>;
  } & {
    readonly [X in R as X extends { readonly hasDefault: true } ? never : FieldOf<X['at']>]?: RowValue<X>;
  }
>;

/**
 * The part of `AppConfig` that is one setting per field, typed from the rows (the shared ones and
 * every family's): a row placed at `group.field` is `config.group.field`, one placed at `field` is
 * `config.field`, with its parser's type, optional when it has no default.
 */
export type SettingsConfig = Fields<Exclude<PlacedRow, { readonly at: `${string}.${string}` }>> & {
  readonly [G in GroupOf<PlacedRow['at']>]: Fields<Extract<PlacedRow, { readonly at: `${G}.${string}` }>>;
};

/**
 * Every setting, in the order `--help` and the doc list them: the leading shared rows, each
 * registered family's rows, the trailing shared rows. Read when the configuration is loaded (after
 * src/families.ts registered the built-in families, and a test perhaps one of its own), not when
 * this module is. Two rows with one name, or one place, are refused: one would hide the other.
 */
export function allSettings(): readonly SettingDefinition<unknown, SettingName>[] {
  // A family's rows are the ones its FamilySettingRows entry names; the declaration holds them untyped.
  const familyRows = families().flatMap((family) => family.settings?.rows ?? []) as readonly SettingDefinition<
    unknown,
    SettingName
  >[];
  const rows: readonly SettingDefinition<unknown, SettingName>[] = [...LEADING_ROWS, ...familyRows, ...TRAILING_ROWS];
  const names = new Set<string>();
  const places = new Set<string>();
  for (const row of rows) {
    if (names.has(row.env)) throw new Error(`setting ${row.env} is declared twice`);
    if (row.at !== undefined && places.has(row.at)) throw new Error(`two settings are placed at ${row.at}`);
    names.add(row.env);
    if (row.at !== undefined) places.add(row.at);
  }
  return rows;
}

/** A row's default as an operator would write it; `undefined` when it has none, or a derived one. */
export function writtenDefault(definition: SettingDefinition): string | undefined {
  return definition.derivedDefault ? undefined : definition.defaultText;
}

/** Every setting by its env name. */
export function settingsByEnv(
  rows: readonly SettingDefinition<unknown, SettingName>[] = allSettings(),
): ReadonlyMap<SettingName, SettingDefinition<unknown, SettingName>> {
  return new Map(rows.map((definition) => [definition.env, definition]));
}

/** The flag of a setting, for a refusal that names a setting its parser did not (the `--kebab-case` of a name outside the table). */
export function flagOf(env: string): string {
  return allSettings().find((definition) => definition.env === env)?.flag ?? kebab(env);
}

/** Every setting by its flag, and by the `--kebab-case` of its env name where the flag differs. */
export function settingsByFlag(
  rows: readonly SettingDefinition[] = allSettings(),
): ReadonlyMap<string, SettingDefinition> {
  return new Map(
    rows.flatMap((definition) => {
      const entries: [string, SettingDefinition][] = [[definition.flag, definition]];
      const longForm = kebab(definition.env);
      if (longForm !== definition.flag) entries.push([longForm, definition]);
      return entries;
    }),
  );
}
