import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AppConfig } from './app-config';
import { ConfigError, HelpRequested, loadConfig, renderHelp } from './app-config';
import type { Family } from '../core/family';
import { familyOf, registerFamily } from '../core/family-registry';
import { allSettings, setting, writtenDefault } from './settings';
import { parseUrl } from './setting-parsers';

const SETTINGS = allSettings();

const HOME = '/home/tester';
const load = (env: Record<string, string> = {}, argv: string[] = []) => loadConfig({ HOME, ...env }, argv);

/** The one-line message of the ConfigError `run` throws (fails when nothing is thrown). */
function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected a ConfigError');
}

describe(loadConfig.name, () => {
  describe('defaults (docs/design/decisions.md §2)', () => {
    it('applies every documented default when nothing is set', () => {
      const config = load();
      expect(config.server).toEqual({
        host: '127.0.0.1',
        port: 8088,
        bearerSecret: undefined,
        callerHeader: undefined,
        maxBodyBytes: 33_554_432,
        maxBodyBytesInFlight: 67_108_864,
        keepAliveTimeoutMs: 65_000,
        headersTimeoutMs: 60_000,
        requestTimeoutMs: 300_000,
        streamIdleTimeoutMs: 240_000,
        drainTimeoutMs: 30_000,
      });
      expect(config.enabledProviders).toEqual(['provider_a', 'provider_b', 'provider_c']);
      expect(config.modelCatalogPath).toBeUndefined();
      expect(config.metricsEnabled).toBe(true);
      expect(config.logLevel).toBe('info');
      expect(config.providerA).toEqual({
        codexHome: path.join(HOME, '.codex'),
        authFile: path.join(HOME, '.codex', 'auth.json'),
        accounts: [{ alias: 'default', loginFile: path.join(HOME, '.codex', 'auth.json') }],
        url: 'wss://chatgpt.com/backend-api/codex/responses',
        tokenUrl: 'https://auth.openai.com/oauth/token',
        timeoutMs: 600_000,
        maxKeptSessions: 64,
        sessionIdleTimeoutMs: 300_000,
        faithfulProfilePath: undefined,
        modelsRefreshMs: 15 * 60_000,
        wire: 'auto',
        clientVersion: undefined,
      });
      expect(config.customToolWire).toBe('function');
      expect(config.accounts).toEqual({
        maxInFlight: 0,
        cooldownDefaultMs: 300_000,
        pinnedChatsMax: 10_000,
        refreshAheadMs: 300_000,
        refreshIntervalMs: 60_000,
        paidUsage: 'plan_only',
        usageRefreshIntervalMs: 300_000,
      });
      expect(config.agentQueue).toEqual({
        enabled: true,
        keyMode: 'chat',
        maxActive: 16,
        maxActivePerKey: 1,
        queueLimit: 128,
        queueTimeoutMs: 300_000,
      });
      expect(config.contextManagement).toEqual({
        enabled: true,
        maxBytes: 196_608,
        maxMessages: 120,
        recentMessages: 24,
        toolOutputMaxBytes: 32_768,
        compactedToolOutputBytes: 512,
      });
      expect(config.providerB).toEqual({
        geminiHome: path.join(HOME, '.gemini'),
        authFile: path.join(HOME, '.gemini', 'oauth_creds.json'),
        accounts: [{ alias: 'default', loginFile: path.join(HOME, '.gemini', 'oauth_creds.json') }],
        url: 'https://cloudcode-pa.googleapis.com/v1internal',
        tokenUrl: 'https://oauth2.googleapis.com/token',
        project: undefined,
        timeoutMs: 600_000,
        onboardingPollIntervalMs: 5_000,
      });
      expect(config.providerC).toMatchObject({ command: 'claude', maxProcesses: 8, timeoutMs: 600_000 });
      expect(config.structured).toEqual({
        enabled: false,
        maxActive: 4,
        maxActivePerKey: 2,
        queueLimit: 16,
        queueTimeoutMs: 30_000,
        maxDeadlineMs: 300_000,
        idempotencyTtlMs: 600_000,
        idempotencyCapacity: 1024,
        replicas: 1,
        models: undefined,
      });
      expect(config.buildOverrides).toEqual({ version: undefined, commit: undefined, date: undefined });
    });

    it('derives the login files from CODEX_HOME and GEMINI_HOME, expanding ~', () => {
      const config = load({ CODEX_HOME: '~/codex-alt', GEMINI_HOME: '/srv/gemini' });
      expect(config.providerA.authFile).toBe(path.join(HOME, 'codex-alt', 'auth.json'));
      expect(config.providerB.authFile).toBe('/srv/gemini/oauth_creds.json');
      expect(load({ PROVIDER_A_AUTH_FILE: '~/a.json' }).providerA.authFile).toBe(path.join(HOME, 'a.json'));
    });

    it('looks for the Gemini login where the Gemini CLI writes it: under GEMINI_CLI_HOME when set, unless GEMINI_HOME says', () => {
      // The CLI (0.61.0) takes GEMINI_CLI_HOME as the home its .gemini folder is in; empty is unset.
      expect(load({ GEMINI_CLI_HOME: '/srv/cli-home' }).providerB).toMatchObject({
        geminiHome: '/srv/cli-home/.gemini',
        authFile: '/srv/cli-home/.gemini/oauth_creds.json',
      });
      expect(load({ GEMINI_CLI_HOME: '~/cli-home' }).providerB.geminiHome).toBe(path.join(HOME, 'cli-home', '.gemini'));
      expect(load({ GEMINI_CLI_HOME: '' }).providerB.geminiHome).toBe(path.join(HOME, '.gemini'));
      expect(load({ GEMINI_CLI_HOME: '/srv/cli-home', GEMINI_HOME: '/srv/gemini' }).providerB.geminiHome).toBe(
        '/srv/gemini',
      );
      // Not the CLI's default login: the fix is the CLI run with that home, which writes the file.
      expect(load({ GEMINI_CLI_HOME: '/srv/cli-home' }).providerB.accounts[0].loginCommand).toContain(
        'run `GEMINI_CLI_HOME=/srv/cli-home gemini`',
      );
    });
  });

  describe('parsing', () => {
    it('reads durations in ms, s, m, h and 0', () => {
      expect(load({ GATEWAY_DRAIN_TIMEOUT: '500ms' }).server.drainTimeoutMs).toBe(500);
      expect(load({ GATEWAY_DRAIN_TIMEOUT: '90s' }).server.drainTimeoutMs).toBe(90_000);
      expect(load({ PRIMARY_AGENT_QUEUE_TIMEOUT: '5m' }).agentQueue.queueTimeoutMs).toBe(300_000);
      expect(load({ PROVIDER_A_TIMEOUT: '1h' }).providerA.timeoutMs).toBe(3_600_000);
      expect(load({ PROVIDER_A_CLIENT_VERSION: ' 0.172.0 ' }).providerA.clientVersion).toBe('0.172.0');
      expect(load({ GATEWAY_STREAM_IDLE_TIMEOUT: '0' }).server.streamIdleTimeoutMs).toBe(0);
      // Whole milliseconds: a fraction rounds, and a zero written with a unit is still 0.
      expect(load({ PROVIDER_A_TIMEOUT: '1.6ms' }).providerA.timeoutMs).toBe(2);
      expect(load({ PROVIDER_A_TIMEOUT: '0.0s' }).providerA.timeoutMs).toBe(0);
      expect(load({ GATEWAY_DRAIN_TIMEOUT: '0ms' }).server.drainTimeoutMs).toBe(0);
    });

    it('reads every documented boolean spelling in any case, a log level and a log format in any case, and a URL without its trailing slashes', () => {
      // docs/configuration.md "Formats": booleans are true/false, also 1/0, yes/no and on/off.
      for (const on of ['true', '1', 'yes', 'on', ' ON '])
        expect(load({ PRIMARY_AGENT_QUEUE_ENABLED: on }).agentQueue.enabled).toBe(true);
      for (const off of ['false', '0', 'no', 'off', 'Off'])
        expect(load({ PRIMARY_AGENT_QUEUE_ENABLED: off }).agentQueue.enabled).toBe(false);
      expect(load({ LOG_LEVEL: 'DEBUG' }).logLevel).toBe('debug');
      expect(load({ LOG_FORMAT: 'Pretty' }).logFormat).toBe('pretty');
      // provider_a posts to its URL as given, so a trailing slash would name another path.
      expect(load({ PROVIDER_A_URL: 'https://relay.test/codex/responses//' }).providerA.url).toBe(
        'https://relay.test/codex/responses',
      );
    });

    it('refuses a duration that is not 0 but rounds to 0 ms, which would read as the meaning of 0', () => {
      // PROVIDER_A_TIMEOUT=0 is "no bound": 0.4ms must not silently become that.
      expect(configError(() => load({ PROVIDER_A_TIMEOUT: '0.4ms' }))).toBe(
        'invalid setting PROVIDER_A_TIMEOUT / --provider-a-timeout: is less than 1 ms, and durations are whole milliseconds, so it would read as 0, which has its own meaning here; write at least 1ms, or 0 if that meaning is what you want (got "0.4ms")',
      );
      expect(configError(() => load({ GATEWAY_DRAIN_TIMEOUT: '0.0001s' }))).toMatch(
        /^invalid setting GATEWAY_DRAIN_TIMEOUT \/ --gateway-drain-timeout: is less than 1 ms.*\(got "0\.0001s"\)$/,
      );
    });

    it('accepts codex, gemini and claude as synonyms and removes duplicates', () => {
      expect(load({ GATEWAY_PROVIDERS: 'codex, claude,provider_a' }).enabledProviders).toEqual([
        'provider_a',
        'provider_c',
      ]);
      expect(load({ GATEWAY_PROVIDERS: 'gemini' }).enabledProviders).toEqual(['provider_b']);
      expect(load({ GATEWAY_PROVIDERS: 'Codex,PROVIDER_B' }).enabledProviders).toEqual(['provider_a', 'provider_b']);
      // The refusal names both spellings a family may be given by.
      expect(configError(() => load({ GATEWAY_PROVIDERS: 'codex,openai' }))).toBe(
        'invalid setting GATEWAY_PROVIDERS / --gateway-providers: unknown provider "openai"; allowed: provider_a, provider_b, provider_c (or codex, gemini, claude) (got "codex,openai")',
      );
    });

    it('drops the whitespace around a value of a fixed set and around a queue key field, as around any value', () => {
      expect(load({ PRIMARY_CUSTOM_TOOL_WIRE: ' custom\n' }).customToolWire).toBe('custom');
      expect(load({ ACCOUNT_PAID_USAGE: '\tallow ' }).accounts.paidUsage).toBe('allow');
      expect(load({ PRIMARY_AGENT_QUEUE_KEY_MODE: 'body: user' }).agentQueue.keyMode).toBe('body:user');
      expect(load({ PRIMARY_AGENT_QUEUE_KEY_MODE: 'header: X-Team' }).agentQueue.keyMode).toBe('header:X-Team');
    });

    it('reads a list once per item: a model listed twice is one entry of the allowlist', () => {
      expect(load({ STRUCTURED_MODELS: 'a, b, a,b' }).structured.models).toEqual(['a', 'b']);
    });

    it('accepts every queue key mode of docs/design/behaviours.md §3.3', () => {
      for (const mode of ['chat', 'global', 'caller', 'header:x-team', "header:X_Team.v2!#$%&'*+^`|~", 'body:user']) {
        expect(load({ PRIMARY_AGENT_QUEUE_KEY_MODE: mode }).agentQueue.keyMode).toBe(mode);
      }
    });

    it('lower-cases the caller header name and keeps the bearer secret verbatim', () => {
      const config = load({ GATEWAY_CALLER_HEADER: 'X-Tenant', GATEWAY_BEARER_SECRET: 'S3cret-S3cret-S3cret' });
      expect(config.server.callerHeader).toBe('x-tenant');
      expect(config.server.bearerSecret).toBe('S3cret-S3cret-S3cret');
    });

    it('drops the whitespace around a bearer secret (a secret file ends in a newline), as the request side drops it around the token', () => {
      for (const written of ['S3cret-S3cret-S3cret\n', ' S3cret-S3cret-S3cret \r\n', '\tS3cret-S3cret-S3cret'])
        expect(load({ GATEWAY_BEARER_SECRET: written }).server.bearerSecret).toBe('S3cret-S3cret-S3cret');
      // Only the inside counts towards the 16 characters.
      expect(configError(() => load({ GATEWAY_BEARER_SECRET: '0123456789abcde\n ' }))).toMatch(
        /^invalid setting GATEWAY_BEARER_SECRET \/ --gateway-bearer-secret: must be at least 16 characters/,
      );
    });

    it('trims path and command settings and makes a leading ~ the home, wherever the path is read', () => {
      const config = load({
        CODEX_HOME: '~/.codex ',
        GEMINI_HOME: ' ~/gemini\n',
        GATEWAY_MODEL_CATALOG: '~/catalog.json',
        PRIMARY_FAITHFUL_PROFILE: '~/profile.json ',
        PROVIDER_C_COMMAND: 'claude ',
        PROVIDER_B_AUTH_FILE: '~/creds.json\t',
      });
      expect(config.providerA.codexHome).toBe(path.join(HOME, '.codex'));
      expect(config.providerA.authFile).toBe(path.join(HOME, '.codex', 'auth.json'));
      expect(config.providerB.geminiHome).toBe(path.join(HOME, 'gemini'));
      expect(config.providerB.authFile).toBe(path.join(HOME, 'creds.json'));
      expect(config.modelCatalogPath).toBe(path.join(HOME, 'catalog.json'));
      expect(config.providerA.faithfulProfilePath).toBe(path.join(HOME, 'profile.json'));
      expect(config.providerC.command).toBe('claude');
      expect(load({ PROVIDER_C_COMMAND: '~/bin/claude' }).providerC.command).toBe(path.join(HOME, 'bin', 'claude'));
      expect(load({ GATEWAY_MODEL_CATALOG: '~' }).modelCatalogPath).toBe(HOME);
      // Only a leading ~ (of the path, or of `~/`): elsewhere it is a character of the name.
      expect(load({ GATEWAY_MODEL_CATALOG: '/srv/~/c.json' }).modelCatalogPath).toBe('/srv/~/c.json');
      expect(load({ PROVIDER_C_COMMAND: '~claude' }).providerC.command).toBe('~claude');
      expect(configError(() => load({ PROVIDER_C_COMMAND: ' ' }))).toMatch(/PROVIDER_C_COMMAND.*must not be empty/);
    });

    it("reads the home from HOME, and from the user's entry when HOME is empty", () => {
      const config = loadConfig({ HOME: '' });
      expect(path.isAbsolute(config.providerA.codexHome)).toBe(true);
      expect(config.providerA.codexHome).toBe(path.join(os.homedir() || os.userInfo().homedir, '.codex'));
    });

    it('refuses an empty structured allowlist, which would refuse every model', () => {
      for (const written of [',', ' ', ' , ,'])
        expect(configError(() => load({ STRUCTURED_MODELS: written }))).toBe(
          `invalid setting STRUCTURED_MODELS / --structured-models: must name at least one model id of the catalog; unset it for the default allowlist (got ${JSON.stringify(written)})`,
        );
    });

    it('reads the lower-case proxy variable when the upper-case one is empty, since empty counts as unset', () => {
      expect(load({ HTTPS_PROXY: '', https_proxy: 'http://p:3128' }).proxy.httpsProxy).toBe('http://p:3128');
      expect(load({ HTTP_PROXY: '', http_proxy: 'http://p:3129' }).proxy.httpProxy).toBe('http://p:3129');
      expect(load({ NO_PROXY: '', no_proxy: 'internal' }).proxy.noProxy).toBe('internal');
      expect(load({ HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:2' }).proxy.httpsProxy).toBe(
        'http://upper:1',
      );
    });

    it('takes build provenance overrides (docs/design/decisions.md §6)', () => {
      const config = load({
        BUILD_VERSION: 'v0.1.0',
        BUILD_COMMIT: 'ABCDEF0123456789abcdef0123456789ABCDEF01',
        BUILD_DATE: '2026-05-06T07:08:09Z',
      });
      expect(config.buildOverrides).toEqual({
        version: 'v0.1.0',
        commit: 'abcdef0123456789abcdef0123456789abcdef01',
        date: '2026-05-06T07:08:09Z',
      });
    });

    it('refuses a BUILD_DATE that no clock shows (a day past the end of its month, hour 24), as the health document would report it', () => {
      for (const written of [
        '2026-02-30T00:00:00Z',
        '2026-04-31T12:00:00Z',
        '2025-02-29T00:00:00Z',
        '2026-01-01T24:00:00Z',
      ])
        expect(configError(() => load({ BUILD_DATE: written }))).toBe(
          `invalid setting BUILD_DATE / --build-date: must be a UTC timestamp YYYY-MM-DDTHH:MM:SSZ that exists (a day of its month, hours 00 to 23) (got ${JSON.stringify(written)})`,
        );
      expect(configError(() => load({ BUILD_DATE: '2026-13-01T00:00:00Z' }))).toBe(
        'invalid setting BUILD_DATE / --build-date: must be a UTC timestamp YYYY-MM-DDTHH:MM:SSZ (got "2026-13-01T00:00:00Z")',
      );
      for (const written of ['2024-02-29T23:59:59Z', ' 2026-12-31T00:00:00Z\n'])
        expect(load({ BUILD_DATE: written }).buildOverrides.date).toBe(written.trim());
    });

    it('refuses a count written other than as decimal digits, or too large to count exactly', () => {
      for (const written of ['1e3', '0x50', '80.0', '+80', '-0'])
        expect(configError(() => load({ GATEWAY_PORT: written }))).toBe(
          `invalid setting GATEWAY_PORT / --gateway-port: must be a port number between 0 and 65535 (got ${JSON.stringify(written)})`,
        );
      expect(configError(() => load({ PRIMARY_AGENT_QUEUE_LIMIT: '9007199254740993' }))).toBe(
        'invalid setting PRIMARY_AGENT_QUEUE_LIMIT / --primary-agent-queue-limit: must be a non-negative integer (got "9007199254740993")',
      );
      expect(load({ PRIMARY_AGENT_QUEUE_LIMIT: '9007199254740991' }).agentQueue.queueLimit).toBe(9_007_199_254_740_991);
    });

    it('ignores STRUCTURED_MAX_OUTPUT_TOKENS (removed in 2.0.0) instead of failing', () => {
      expect(() => load({ STRUCTURED_MAX_OUTPUT_TOKENS: '5' })).not.toThrow();
    });

    it("ignores GATEWAY_MAX_SEMI_SPACE_MIB, env or flag: the bound is node's own flag, given where node starts", () => {
      expect(() => load({ GATEWAY_MAX_SEMI_SPACE_MIB: '16' }, ['--gateway-max-semi-space-mib', '0'])).not.toThrow();
    });

    it('treats an empty environment variable as unset', () => {
      expect(load({ GATEWAY_PORT: '' }).server.port).toBe(8088);
      expect(load({ GATEWAY_BEARER_SECRET: '' }).server.bearerSecret).toBeUndefined();
    });

    it('reads several provider_a logins with their aliases, and one login the old way as alias default', () => {
      const config = loadConfig({
        HOME,
        PROVIDER_A_ACCOUNTS: 'personal=~/.codex-personal/auth.json, team=/logins/team.json',
      });
      // Neither file is the Codex CLI's default (~/.codex/auth.json): each names its own login command.
      expect(config.providerA.accounts).toEqual([
        {
          alias: 'personal',
          loginFile: path.join(HOME, '.codex-personal', 'auth.json'),
          loginCommand: `run \`CODEX_HOME=${HOME}/.codex-personal codex login\` on the gateway's machine (it rewrites ${HOME}/.codex-personal/auth.json)`,
        },
        {
          alias: 'team',
          loginFile: '/logins/team.json',
          loginCommand: 'run `codex login` and put the auth.json it writes at /logins/team.json',
        },
      ]);
      expect(config.providerA.authFile).toBe(path.join(HOME, '.codex-personal', 'auth.json'));
      expect(loadConfig({ HOME, PROVIDER_A_AUTH_FILE: '/x/auth.json' }).providerA.accounts).toEqual([
        {
          alias: 'default',
          loginFile: '/x/auth.json',
          loginCommand: "run `CODEX_HOME=/x codex login` on the gateway's machine (it rewrites /x/auth.json)",
        },
      ]);
      // The CLI's own default file: the family's plain command logs it in.
      expect(loadConfig({ HOME }).providerA.accounts).toEqual([
        { alias: 'default', loginFile: path.join(HOME, '.codex', 'auth.json') },
      ]);
      expect(
        loadConfig({
          HOME,
          PROVIDER_B_ACCOUNTS: `work=/g/work/.gemini/oauth_creds.json,home=${HOME}/.gemini/oauth_creds.json`,
        }).providerB.accounts,
      ).toEqual([
        {
          alias: 'work',
          loginFile: '/g/work/.gemini/oauth_creds.json',
          loginCommand:
            'run `GEMINI_CLI_HOME=/g/work gemini` on the gateway\'s machine and choose "Login with Google" (it rewrites /g/work/.gemini/oauth_creds.json)',
        },
        { alias: 'home', loginFile: `${HOME}/.gemini/oauth_creds.json` },
      ]);
    });

    it('tells provider_c config directories from token files on disk, and stops on a path that is neither', () => {
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-config-'));
      try {
        fs.mkdirSync(path.join(scratch, 'work'));
        fs.writeFileSync(path.join(scratch, 'personal.token'), 'token\n');
        const listed = `work=${path.join(scratch, 'work')},personal=${path.join(scratch, 'personal.token')}`;
        expect(load({ PROVIDER_C_ACCOUNTS: listed }).providerC.accounts).toEqual([
          {
            alias: 'work',
            kind: 'config_dir',
            location: path.join(scratch, 'work'),
            loginFile: path.join(scratch, 'work', '.credentials.json'),
            loginCommand: `run \`CLAUDE_CONFIG_DIR=${scratch}/work claude\` on the gateway's machine, then \`/login\` (it rewrites ${scratch}/work/.credentials.json)`,
          },
          {
            alias: 'personal',
            kind: 'token_file',
            location: path.join(scratch, 'personal.token'),
            loginFile: path.join(scratch, 'personal.token'),
            loginCommand: `run \`claude setup-token\` on the gateway's machine and write the token it prints to ${scratch}/personal.token`,
          },
        ]);
        const missing = path.join(scratch, 'missing');
        expect(configError(() => load({ PROVIDER_C_ACCOUNTS: `gone=${missing}` }))).toBe(
          `invalid setting PROVIDER_C_ACCOUNTS / --provider-c-accounts: the path of alias "gone", ${missing}, does not exist, so it is neither a Claude Code config directory nor a token file: for a config directory, run \`CLAUDE_CONFIG_DIR=${missing} claude\` on the gateway's machine, then \`/login\` (it rewrites ${missing}/.credentials.json); for a token file, run \`claude setup-token\` on the gateway's machine and write the token it prints to ${missing}; or correct the path`,
        );
      } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
      }
      // Unlisted: the CLI's own login, watched through its config directory's credentials file.
      expect(load().providerC.accounts).toEqual([
        { alias: 'default', kind: 'cli', loginFile: path.join(HOME, '.claude', '.credentials.json') },
      ]);
      expect(load({ CLAUDE_CONFIG_DIR: '/c' }).providerC.accounts[0].loginFile).toBe('/c/.credentials.json');
    });

    it('keeps the environment for provider_c children minus the bearer secret and every credential route', () => {
      // Every credential route by name, and a setting under each third-party backend's prefix,
      // written out here so that a name dropped from the gateway's list fails this test.
      const routes = [
        'ANTHROPIC_API_KEY',
        'ANTHROPIC_AUTH_TOKEN',
        'ANTHROPIC_AWS_API_KEY',
        'ANTHROPIC_BEDROCK_BASE_URL',
        'ANTHROPIC_FEDERATION_RULE_ID',
        'ANTHROPIC_FOUNDRY_API_KEY',
        'ANTHROPIC_GOOGLE_CLOUD_PROJECT',
        'ANTHROPIC_IDENTITY_TOKEN',
        'ANTHROPIC_IDENTITY_TOKEN_FILE',
        'ANTHROPIC_PROFILE',
        'ANTHROPIC_UNIX_SOCKET',
        'ANTHROPIC_VERTEX_PROJECT_ID',
        'AWS_BEARER_TOKEN_BEDROCK',
        'CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR',
        'CLAUDE_CODE_GATEWAY_TOKEN',
        'CLAUDE_CODE_GATEWAY_TOKEN_FILE_DESCRIPTOR',
        'CLAUDE_CODE_HOST_AUTH_ENV_VAR',
        'CLAUDE_CODE_HOST_CREDS_FILE',
        'CLAUDE_CODE_PROVIDER_MANAGED_BY_HOST',
        'CLAUDE_CODE_RUNNER_MODEL_SOCKET',
        'CLAUDE_CODE_USE_ANTHROPIC_AWS',
        'CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD',
        'CLAUDE_CODE_USE_BEDROCK',
        'CLAUDE_CODE_USE_FOUNDRY',
        'CLAUDE_CODE_USE_GATEWAY',
        'CLAUDE_CODE_USE_MANTLE',
        'CLAUDE_CODE_USE_VERTEX',
      ];
      const config = loadConfig({
        HOME,
        PATH: '/bin',
        GATEWAY_BEARER_SECRET: 'top-secret-top-secret',
        ...Object.fromEntries(routes.map((name) => [name, '1'])),
        // Not credential routes: the login itself, where the first-party API is, a feature switch.
        CLAUDE_CODE_OAUTH_TOKEN: 'o',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
        CLAUDE_CODE_USE_POWERSHELL_TOOL: '1',
      });
      expect(config.providerC.childEnv).toEqual({
        HOME,
        PATH: '/bin',
        CLAUDE_CODE_OAUTH_TOKEN: 'o',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
        CLAUDE_CODE_USE_POWERSHELL_TOOL: '1',
      });
      expect(config.providerC.droppedCredentialVariables).toEqual(routes);
    });
  });

  describe('flags', () => {
    it('lets a --kebab-case flag win over the environment variable', () => {
      expect(load({ GATEWAY_PORT: '9000' }, ['--gateway-port', '9100']).server.port).toBe(9100);
      expect(load({ GATEWAY_PORT: '9000' }, ['--gateway-port=9200']).server.port).toBe(9200);
      expect(load({ LOG_LEVEL: 'debug' }, ['--log-level=warn']).logLevel).toBe('warn');
    });

    it('takes boolean flags without a value and --structured-enabled as the short form', () => {
      expect(load({}, ['--structured-enabled']).structured.enabled).toBe(true);
      expect(load({}, ['--structured-inference-enabled']).structured.enabled).toBe(true);
      expect(load({ METRICS_ENABLED: 'true' }, ['--metrics-enabled', 'false']).metricsEnabled).toBe(false);
      expect(load({}, ['--metrics-enabled=false', '--structured-enabled']).metricsEnabled).toBe(false);
    });

    it('reads structured settings as --structured-* flags (docs/structured.md "Limits and settings")', () => {
      const config = load({}, [
        '--structured-max-active=7',
        '--structured-models',
        'gpt-5.6-sol,gpt-5.6-luna',
        '--structured-idempotency-ttl',
        '2s',
      ]);
      expect(config.structured.maxActive).toBe(7);
      expect(config.structured.models).toEqual(['gpt-5.6-sol', 'gpt-5.6-luna']);
      expect(config.structured.idempotencyTtlMs).toBe(2000);
    });

    it('throws HelpRequested for --help and -h', () => {
      expect(() => load({}, ['--help'])).toThrow(HelpRequested);
      expect(() => load({}, ['-h'])).toThrow(HelpRequested);
    });
  });

  describe('bad values: one line naming the setting and the rule', () => {
    it.each([
      [
        { GATEWAY_PROVIDERS: 'provider_a,openrouter' },
        /GATEWAY_PROVIDERS.*unknown provider "openrouter".*provider_a, provider_b, provider_c/,
      ],
      [{ GATEWAY_PROVIDERS: ' , ' }, /GATEWAY_PROVIDERS.*at least one/],
      [{ GATEWAY_PORT: '70000' }, /GATEWAY_PORT.*port number between 0 and 65535/],
      [{ GATEWAY_PORT: 'http' }, /GATEWAY_PORT.*port number/],
      [
        { STRUCTURED_REPLICAS: '2' },
        /STRUCTURED_REPLICAS.*exactly 1.*one process must own the idempotency keys.*replicas: 1.*Recreate/,
      ],
      [{ STRUCTURED_REPLICAS: '0' }, /STRUCTURED_REPLICAS.*exactly 1/],
      [{ GATEWAY_DRAIN_TIMEOUT: '30' }, /GATEWAY_DRAIN_TIMEOUT.*duration such as 500ms, 90s, 5m, 1h or 0/],
      [{ PROVIDER_A_TIMEOUT: '10 minutes' }, /PROVIDER_A_TIMEOUT.*duration/],
      [{ STRUCTURED_MAX_DEADLINE: '0' }, /STRUCTURED_MAX_DEADLINE.*positive duration/],
      [{ GATEWAY_KEEP_ALIVE_TIMEOUT: '0' }, /GATEWAY_KEEP_ALIVE_TIMEOUT.*positive duration/],
      [{ GATEWAY_HEADERS_TIMEOUT: '60' }, /GATEWAY_HEADERS_TIMEOUT.*duration such as/],
      [{ PRIMARY_CUSTOM_TOOL_WIRE: 'xml' }, /PRIMARY_CUSTOM_TOOL_WIRE.*one of function, custom/],
      [{ PRIMARY_AGENT_QUEUE_KEY_MODE: 'header:' }, /PRIMARY_AGENT_QUEUE_KEY_MODE.*header:<name>.*non-empty/],
      [{ PRIMARY_AGENT_QUEUE_KEY_MODE: 'session' }, /PRIMARY_AGENT_QUEUE_KEY_MODE/],
      // No request can carry such a header, so the key would always be the global one.
      [
        { PRIMARY_AGENT_QUEUE_KEY_MODE: 'header:x y' },
        /PRIMARY_AGENT_QUEUE_KEY_MODE.*"x y" is not an HTTP header name.*\(got "header:x y"\)$/,
      ],
      [
        { PRIMARY_AGENT_QUEUE_KEY_MODE: 'header:X-Team:' },
        /PRIMARY_AGENT_QUEUE_KEY_MODE.*"X-Team:" is not an HTTP header/,
      ],
      [{ GATEWAY_CALLER_HEADER: 'x y' }, /GATEWAY_CALLER_HEADER.*"x y" is not an HTTP header name/],
      [{ GATEWAY_CALLER_HEADER: 'X-Caller:' }, /GATEWAY_CALLER_HEADER.*"X-Caller:" is not an HTTP header name/],
      [{ GATEWAY_CALLER_HEADER: 'x-caller\u00e9' }, /GATEWAY_CALLER_HEADER.*not an HTTP header name/],
      [{ PRIMARY_AGENT_MAX_ACTIVE: '0' }, /PRIMARY_AGENT_MAX_ACTIVE.*at least 1/],
      [{ PRIMARY_AGENT_QUEUE_LIMIT: '-1' }, /PRIMARY_AGENT_QUEUE_LIMIT.*non-negative integer/],
      [{ METRICS_ENABLED: 'maybe' }, /METRICS_ENABLED.*true or false/],
      [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL.*one of fatal, error, warn, info, debug, trace, silent/],
      [{ PROVIDER_A_URL: 'ftp://example.test' }, /PROVIDER_A_URL.*scheme ws, wss, http, https/],
      [{ PROVIDER_B_TOKEN_URL: 'not a url' }, /PROVIDER_B_TOKEN_URL.*URL/],
      [{ PROVIDER_B_PROJECT: '123456789012' }, /PROVIDER_B_PROJECT.*project id.*not the numeric project number/],
      [{ BUILD_COMMIT: 'abc1234' }, /BUILD_COMMIT.*full 40-character hexadecimal commit id/],
      [{ BUILD_COMMIT: 'a'.repeat(39) }, /BUILD_COMMIT.*full 40-character hexadecimal commit id/],
      [{ BUILD_COMMIT: 'a'.repeat(41) }, /BUILD_COMMIT.*full 40-character hexadecimal commit id/],
      [{ BUILD_DATE: '2026-01-02 03:04:05' }, /BUILD_DATE.*YYYY-MM-DDTHH:MM:SSZ/],
    ])('rejects %j', (env, expected) => {
      const message = configError(() => load(env));
      expect(message).toMatch(expected);
      // The flag is named too, so a user who set it on the command line recognizes it.
      expect(message).toMatch(/ \/ --[a-z-]+/);
    });

    it('rejects a bad accounts list, a repeated alias, and an accounts list beside the single login file', () => {
      expect(() => loadConfig({ HOME, PROVIDER_A_ACCOUNTS: 'no-equals-sign' })).toThrow(
        /PROVIDER_A_ACCOUNTS.*alias=path/,
      );
      expect(() => loadConfig({ HOME, PROVIDER_A_ACCOUNTS: 'bad alias!=/x' })).toThrow(/alias of 1-32 letters/);
      expect(configError(() => loadConfig({ HOME, PROVIDER_A_ACCOUNTS: `${'a'.repeat(33)}=/x` }))).toBe(
        `invalid setting PROVIDER_A_ACCOUNTS / --provider-a-accounts: each entry must be alias=path with an alias of 1-32 letters, digits, _ or - (got "${'a'.repeat(33)}=/x")`,
      );
      expect(loadConfig({ HOME, PROVIDER_A_ACCOUNTS: `${'a'.repeat(32)}=/x` }).providerA.accounts[0].alias).toBe(
        'a'.repeat(32),
      );
      expect(configError(() => loadConfig({ HOME, PROVIDER_A_ACCOUNTS: ' , ' }))).toBe(
        'invalid setting PROVIDER_A_ACCOUNTS / --provider-a-accounts: must list at least one alias=path (got " , ")',
      );
      expect(() => loadConfig({ HOME, PROVIDER_A_ACCOUNTS: 'a=/x,a=/y' })).toThrow(/alias "a" is used twice/);
      expect(configError(() => loadConfig({ HOME, PROVIDER_A_ACCOUNTS: 'a=/x', PROVIDER_A_AUTH_FILE: '/y' }))).toBe(
        'invalid setting PROVIDER_A_ACCOUNTS / --provider-a-accounts: PROVIDER_A_AUTH_FILE / --provider-a-auth-file is set too (got "/y"), and which login to use would be a guess: unset PROVIDER_A_AUTH_FILE, and list its file in PROVIDER_A_ACCOUNTS (alias=/y) if it is one of the logins',
      );
      expect(
        configError(() => loadConfig({ HOME, PROVIDER_B_ACCOUNTS: 'a=/x' }, ['--provider-b-auth-file=/y'])),
      ).toMatch(
        /^invalid setting PROVIDER_B_ACCOUNTS \/ --provider-b-accounts: PROVIDER_B_AUTH_FILE \/ --provider-b-auth-file is set too/,
      );
      expect(() => loadConfig({ HOME, PROVIDER_A_CLIENT_VERSION: '0.172.0&x=1' })).toThrow(
        /PROVIDER_A_CLIENT_VERSION \/ --provider-a-client-version: must be a Codex CLI version such as 0\.171\.0/,
      );
      expect(() => loadConfig({ HOME, ACCOUNT_COOLDOWN_DEFAULT: '0' })).toThrow(
        /ACCOUNT_COOLDOWN_DEFAULT.*positive duration/,
      );
    });

    it('refuses one login file listed under two aliases, which would refresh one token twice and count its plan twice', () => {
      expect(configError(() => load({ PROVIDER_A_ACCOUNTS: `a=~/x,b=${HOME}/x` }))).toBe(
        `invalid setting PROVIDER_A_ACCOUNTS / --provider-a-accounts: aliases "a" and "b" name the same login, ${HOME}/x; list each login once, under one alias (got "a=~/x,b=${HOME}/x")`,
      );
      // The same file however it is spelt: a trailing slash, a `.` or `..` step.
      expect(configError(() => load({ PROVIDER_B_ACCOUNTS: 'w=/logins/x/../y, h=/logins/./y' }))).toMatch(
        /PROVIDER_B_ACCOUNTS \/ --provider-b-accounts: aliases "w" and "h" name the same login, \/logins\/y;/,
      );
      expect(configError(() => load({ PROVIDER_C_ACCOUNTS: 'w=/c/work/,h=/c/work' }))).toMatch(
        /PROVIDER_C_ACCOUNTS.*aliases "w" and "h" name the same login, \/c\/work;/,
      );
    });

    it('refuses two paths that lead to one login file (a link, a mount), known on disk at startup', () => {
      // The real directory, so the shared file the refusal names is the path written here.
      const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'same-login-')));
      const at = (...parts: string[]) => path.join(scratch, ...parts);
      try {
        fs.mkdirSync(at('codex'));
        fs.writeFileSync(at('codex', 'auth.json'), '{}');
        fs.symlinkSync(at('codex', 'auth.json'), at('link.json'));
        expect(
          configError(() => load({ PROVIDER_A_ACCOUNTS: `a=${at('codex', 'auth.json')},b=${at('link.json')}` })),
        ).toBe(
          `invalid setting PROVIDER_A_ACCOUNTS / --provider-a-accounts: aliases "a" and "b" name the same login: ${at('codex', 'auth.json')} and ${at('link.json')} both lead to ${at('codex', 'auth.json')}; list each login once, under one alias`,
        );
        // A hard link (or two bind mounts of one host file) has no link to follow: the inode tells.
        fs.linkSync(at('codex', 'auth.json'), at('hard.json'));
        expect(
          configError(() => load({ PROVIDER_B_ACCOUNTS: `w=${at('hard.json')},h=${at('codex', 'auth.json')}` })),
        ).toMatch(
          /^invalid setting PROVIDER_B_ACCOUNTS \/ --provider-b-accounts: aliases "w" and "h" name the same login: /,
        );
        // A login not made yet, through a linked directory: the same file once it is made.
        fs.symlinkSync(at('codex'), at('codex-link'));
        expect(
          configError(() =>
            load({
              PROVIDER_A_ACCOUNTS: `a=${at('codex', 'new', 'auth.json')},b=${at('codex-link', 'new', 'auth.json')}`,
            }),
          ),
        ).toBe(
          `invalid setting PROVIDER_A_ACCOUNTS / --provider-a-accounts: aliases "a" and "b" name the same login: ${at('codex', 'new', 'auth.json')} and ${at('codex-link', 'new', 'auth.json')} both lead to ${at('codex', 'new', 'auth.json')}; list each login once, under one alias`,
        );
        // provider_c's config directories: two names of one directory share its credentials file.
        expect(configError(() => load({ PROVIDER_C_ACCOUNTS: `w=${at('codex')},h=${at('codex-link')}` }))).toBe(
          `invalid setting PROVIDER_C_ACCOUNTS / --provider-c-accounts: aliases "w" and "h" name the same login: ${at('codex')} and ${at('codex-link')} both lead to ${at('codex', '.credentials.json')}; list each login once, under one alias`,
        );
        // Links whose targets are not made yet (a file, a directory, a relative link to a link): the
        // one file a login command will write through either of them.
        fs.symlinkSync(at('codex', 'later', 'auth.json'), at('dangling.json'));
        fs.symlinkSync(at('codex', 'later'), at('later-link'));
        fs.symlinkSync('later-link/auth.json', at('relative.json'));
        for (const [first, second] of [
          [at('dangling.json'), at('later-link', 'auth.json')],
          [at('relative.json'), at('codex', 'later', 'auth.json')],
        ]) {
          expect(configError(() => load({ PROVIDER_A_ACCOUNTS: `a=${first},b=${second}` }))).toBe(
            `invalid setting PROVIDER_A_ACCOUNTS / --provider-a-accounts: aliases "a" and "b" name the same login: ${first} and ${second} both lead to ${at('codex', 'later', 'auth.json')}; list each login once, under one alias`,
          );
        }
        // A loop of links cannot be examined: known as written, so two names of it are two logins.
        fs.symlinkSync(at('loop-b'), at('loop-a'));
        fs.symlinkSync(at('loop-a'), at('loop-b'));
        expect(
          load({ PROVIDER_A_ACCOUNTS: `a=${at('loop-a')},b=${at('loop-b')}` }).providerA.accounts.map(
            (login) => login.alias,
          ),
        ).toEqual(['a', 'b']);
        // Two files, existing or not, are two logins.
        fs.writeFileSync(at('other.json'), '{}');
        const two = `a=${at('link.json')},b=${at('other.json')},c=${at('codex-link', 'later.json')},d=${at('codex', 'new', 'auth.json')}`;
        expect(load({ PROVIDER_A_ACCOUNTS: two }).providerA.accounts.map((login) => login.alias)).toEqual([
          'a',
          'b',
          'c',
          'd',
        ]);
      } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    });

    it('refuses a relative login path, which would depend on the directory the gateway was started in', () => {
      expect(configError(() => load({ PROVIDER_A_ACCOUNTS: 'a=b=c' }))).toBe(
        'invalid setting PROVIDER_A_ACCOUNTS / --provider-a-accounts: the path of alias "a", "b=c", is relative; write it absolute (/…) or from the home (~/…) (got "a=b=c")',
      );
      expect(configError(() => load({ PROVIDER_C_ACCOUNTS: 'a=/c/ok,b=logins/b.token' }))).toMatch(
        /PROVIDER_C_ACCOUNTS.*the path of alias "b", "logins\/b\.token", is relative/,
      );
      // `~user` is no home a shell would expand here either.
      expect(configError(() => load({ PROVIDER_B_ACCOUNTS: 'a=~me/x' }))).toMatch(/alias "a", "~me\/x", is relative/);
      expect(load({ PROVIDER_A_ACCOUNTS: 'a=~' }).providerA.accounts[0].loginFile).toBe(HOME);
    });

    it('names the flag for a bad flag value', () => {
      expect(configError(() => load({}, ['--gateway-port=99999']))).toMatch(
        /GATEWAY_PORT \/ --gateway-port: must be a port number/,
      );
    });

    it('refuses a flag without a value when the next argument is a flag, instead of taking that flag as the value', () => {
      const message = configError(() => load({}, ['--gateway-bearer-secret', '--gateway-host=0.0.0.0']));
      expect(message).toBe(
        '--gateway-bearer-secret needs a value (setting GATEWAY_BEARER_SECRET): give it as --gateway-bearer-secret=VALUE or --gateway-bearer-secret VALUE; a value that starts with -- only after =',
      );
      expect(configError(() => load({}, ['--gateway-port', '--structured-enabled']))).toMatch(
        /^--gateway-port needs a value \(setting GATEWAY_PORT\)/,
      );
      // A value that starts with -- is still possible after =, and a single dash is a value.
      expect(load({}, ['--gateway-bearer-secret=--0123456789abcdef']).server.bearerSecret).toBe('--0123456789abcdef');
      expect(configError(() => load({}, ['--gateway-port', '-1']))).toMatch(/GATEWAY_PORT.*port number.*"-1"/);
    });

    it('refuses a flag given twice, also under its other name, instead of keeping the last', () => {
      expect(configError(() => load({}, ['--gateway-port', '1', '--gateway-port', '2']))).toBe(
        '--gateway-port is given twice (setting GATEWAY_PORT): give it once',
      );
      expect(configError(() => load({}, ['--gateway-port=1', '--gateway-port=1']))).toMatch(
        /--gateway-port is given twice/,
      );
      expect(configError(() => load({}, ['--structured-enabled', '--structured-inference-enabled=false']))).toBe(
        '--structured-inference-enabled is given twice (also as --structured-enabled; setting STRUCTURED_INFERENCE_ENABLED): give it once',
      );
      // Never a value: a secret given twice is named by its flag only.
      const secret = '9f8e7d6c5b4a39281706f5e4d3c2b1a0';
      expect(
        configError(() => load({}, [`--gateway-bearer-secret=${secret}`, `--gateway-bearer-secret=${secret}x`])),
      ).not.toContain(secret.slice(0, 8));
    });

    it('rejects an unknown flag, a flag without a value and a positional argument', () => {
      expect(configError(() => load({}, ['--gateway-prot', '8080']))).toMatch(/unknown flag "--gateway-prot".*--help/);
      expect(configError(() => load({}, ['-p', '8080']))).toBe(
        'unknown flag "-p"; run with --help for the list of settings',
      );
      expect(configError(() => load({}, ['--gateway-port']))).toMatch(/--gateway-port needs a value/);
      expect(configError(() => load({}, ['--gateway-port=8080', 'serve']))).toMatch(
        /^unexpected argument 2: settings are flags such as --gateway-port=8080; run with --help/,
      );
    });

    it('shows only the name of an unknown flag, never its value nor a bare argument', () => {
      const secret = '9f8e7d6c5b4a39281706f5e4d3c2b1a0';
      const typo = configError(() => load({}, [`--gateway-bearer-secert=${secret}`]));
      expect(typo).toMatch(/^unknown flag "--gateway-bearer-secert"; run with --help/);
      expect(typo).not.toContain(secret.slice(0, 8));
      expect(configError(() => load({}, [secret]))).not.toContain(secret.slice(0, 8));
    });

    it('never echoes the bearer secret in its error', () => {
      // parseNonEmpty rejects a blank secret given as a flag; the value must not be shown.
      const message = configError(() => load({}, ['--gateway-bearer-secret', '   ']));
      expect(message).toMatch(/GATEWAY_BEARER_SECRET.*must not be empty/);
      expect(message).not.toContain('got');
    });

    it('refuses a bearer secret shorter than 16 characters or equal to a documented placeholder, without echoing it', () => {
      const short = configError(() => load({ GATEWAY_BEARER_SECRET: 'x' }));
      expect(short).toBe(
        'invalid setting GATEWAY_BEARER_SECRET / --gateway-bearer-secret: must be at least 16 characters; generate one with `openssl rand -hex 32`',
      );
      for (const placeholder of ['change-me', 'change-me-to-a-long-random-value', 'CHANGE-ME-TO-A-LONG-RANDOM-VALUE']) {
        const message = configError(() => load({ GATEWAY_BEARER_SECRET: placeholder }));
        expect(message).toMatch(
          /^invalid setting GATEWAY_BEARER_SECRET \/ --gateway-bearer-secret: is a documented placeholder/,
        );
        expect(message).not.toContain(placeholder);
      }
      expect(load({ GATEWAY_BEARER_SECRET: '0123456789abcdef' }).server.bearerSecret).toBe('0123456789abcdef');
    });

    it('refuses a non-loopback bind without a bearer secret unless GATEWAY_ALLOW_UNAUTHENTICATED is true', () => {
      for (const host of ['0.0.0.0', '10.1.2.3', '::', 'gateway.internal']) {
        expect(configError(() => load({ GATEWAY_HOST: host }))).toBe(
          `invalid setting GATEWAY_HOST / --gateway-host: "${host}" is not loopback, so GATEWAY_BEARER_SECRET must be set (or GATEWAY_ALLOW_UNAUTHENTICATED=true to serve anyone who reaches the port)`,
        );
        expect(load({ GATEWAY_HOST: host, GATEWAY_ALLOW_UNAUTHENTICATED: 'true' }).server.host).toBe(host);
        expect(load({ GATEWAY_HOST: host, GATEWAY_BEARER_SECRET: 'a-secret-of-16+chars' }).server.host).toBe(host);
      }
      for (const host of ['127.0.0.1', '127.0.0.53', '127.1.2.3', 'localhost', 'LocalHost', '::1'])
        expect(load({ GATEWAY_HOST: host }).server.host).toBe(host);
      // An IPv6 address as written in a URL: the brackets go, since listen() would look the bracketed text up as a name.
      expect(load({ GATEWAY_HOST: '[::1]' }).server.host).toBe('::1');
      expect(load({ GATEWAY_HOST: ' [fd00::5] ', GATEWAY_ALLOW_UNAUTHENTICATED: 'true' }).server.host).toBe('fd00::5');
      expect(configError(() => load({ GATEWAY_HOST: '[::]' }))).toMatch(/GATEWAY_HOST.*"::" is not loopback/);
      expect(configError(() => load({ GATEWAY_HOST: '[localhost]' }))).toBe(
        'invalid setting GATEWAY_HOST / --gateway-host: brackets go only around an IPv6 address (as in [::1]); write a name or an IPv4 address without them (got "[localhost]")',
      );
      expect(configError(() => load({}, ['--gateway-host', '0.0.0.0']))).toMatch(/GATEWAY_HOST.*not loopback/);
    });

    it('refuses a headers timeout longer than the request timeout, naming both settings and the fix', () => {
      const expected =
        'invalid setting GATEWAY_HEADERS_TIMEOUT / --gateway-headers-timeout: 600000 ms is longer than GATEWAY_REQUEST_TIMEOUT (300000 ms), which bounds the headers too; lower GATEWAY_HEADERS_TIMEOUT or raise GATEWAY_REQUEST_TIMEOUT to at least that';
      expect(configError(() => load({ GATEWAY_HEADERS_TIMEOUT: '10m' }))).toBe(expected);
      expect(configError(() => load({}, ['--gateway-headers-timeout=10m']))).toBe(expected);
      expect(configError(() => load({ GATEWAY_REQUEST_TIMEOUT: '30s' }))).toMatch(
        /GATEWAY_HEADERS_TIMEOUT.*60000 ms is longer than GATEWAY_REQUEST_TIMEOUT \(30000 ms\)/,
      );
      // Equal is Node's own bound, and allowed; the keep-alive timeout is free of both.
      const equal = load({ GATEWAY_HEADERS_TIMEOUT: '5m', GATEWAY_KEEP_ALIVE_TIMEOUT: '620s' }).server;
      expect([equal.headersTimeoutMs, equal.requestTimeoutMs, equal.keepAliveTimeoutMs]).toEqual([
        300_000, 300_000, 620_000,
      ]);
    });

    it('refuses a body budget smaller than the largest body a route accepts, naming the fix', () => {
      expect(configError(() => load({ GATEWAY_MAX_BODY_BYTES_IN_FLIGHT: '33554431' }))).toBe(
        'invalid setting GATEWAY_MAX_BODY_BYTES_IN_FLIGHT / --gateway-max-body-bytes-in-flight: 33554431 bytes is less than 33554432 (GATEWAY_MAX_BODY_BYTES, the largest chat body), so such a body would be refused however often it is retried; raise GATEWAY_MAX_BODY_BYTES_IN_FLIGHT to at least 33554432 (together with the container\'s memory limit: docs/deployment.md "Memory budget"), or set it to 0 for no bound',
      );
      // A raised body cap needs the budget raised with it (the default budget is two default bodies).
      expect(configError(() => load({ GATEWAY_MAX_BODY_BYTES: '100000000' }))).toMatch(
        /GATEWAY_MAX_BODY_BYTES_IN_FLIGHT.*67108864 bytes is less than 100000000 \(GATEWAY_MAX_BODY_BYTES/,
      );
      // The structured route's 4 MiB cap counts while that route is served.
      const small = { GATEWAY_MAX_BODY_BYTES: '1024', GATEWAY_MAX_BODY_BYTES_IN_FLIGHT: '4194303' };
      expect(load(small).server.maxBodyBytesInFlight).toBe(4_194_303);
      expect(configError(() => load({ ...small, STRUCTURED_INFERENCE_ENABLED: 'true' }))).toMatch(
        /4194303 bytes is less than 4194304 \(the structured route's body cap, while STRUCTURED_INFERENCE_ENABLED is true\)/,
      );
      // Equal fits one body; 0 is no bound, whatever the cap.
      expect(load({ GATEWAY_MAX_BODY_BYTES_IN_FLIGHT: '33554432' }).server.maxBodyBytesInFlight).toBe(33_554_432);
      expect(load({ GATEWAY_MAX_BODY_BYTES_IN_FLIGHT: '0', GATEWAY_MAX_BODY_BYTES: '268435456' }).server).toMatchObject(
        { maxBodyBytesInFlight: 0 },
      );
      expect(configError(() => load({ GATEWAY_MAX_BODY_BYTES_IN_FLIGHT: '-1' }))).toMatch(
        /must be a non-negative integer/,
      );
    });

    it('refuses a count beyond its documented bound, which would reserve memory for it at startup', () => {
      expect(configError(() => load({ ACCOUNT_PINNED_CHATS_MAX: '4294967296' }))).toBe(
        'invalid setting ACCOUNT_PINNED_CHATS_MAX / --account-pinned-chats-max: must be an integer from 1 to 100000 (got "4294967296")',
      );
      expect(configError(() => load({ ACCOUNT_PINNED_CHATS_MAX: '100001' }))).toMatch(/from 1 to 100000/);
      expect(load({ ACCOUNT_PINNED_CHATS_MAX: '100000' }).accounts.pinnedChatsMax).toBe(100_000);
      expect(configError(() => load({ PROVIDER_A_MAX_KEPT_SESSIONS: '9007199254740991' }))).toMatch(
        /^invalid setting PROVIDER_A_MAX_KEPT_SESSIONS \/ --provider-a-max-kept-sessions: must be an integer from 0 to 10000/,
      );
      expect(load({ PROVIDER_A_MAX_KEPT_SESSIONS: '10000' }).providerA.maxKeptSessions).toBe(10_000);
      expect(load({ PROVIDER_A_MAX_KEPT_SESSIONS: '0' }).providerA.maxKeptSessions).toBe(0);
      expect(configError(() => load({ GATEWAY_MAX_BODY_BYTES: '268435457' }))).toMatch(
        /GATEWAY_MAX_BODY_BYTES.*must be an integer from 1 to 268435456/,
      );
      expect(
        load({ GATEWAY_MAX_BODY_BYTES: '268435456', GATEWAY_MAX_BODY_BYTES_IN_FLIGHT: '0' }).server.maxBodyBytes,
      ).toBe(268_435_456);
      expect(configError(() => load({ GATEWAY_MAX_BODY_BYTES: '0' }))).toMatch(/from 1 to 268435456/);
    });

    it('refuses an onboarding poll interval of 0, which would poll without a pause', () => {
      expect(configError(() => load({ PROVIDER_B_ONBOARDING_POLL_INTERVAL: '0' }))).toBe(
        'invalid setting PROVIDER_B_ONBOARDING_POLL_INTERVAL / --provider-b-onboarding-poll-interval: must be a positive duration (got "0")',
      );
      expect(load({ PROVIDER_B_ONBOARDING_POLL_INTERVAL: '500ms' }).providerB.onboardingPollIntervalMs).toBe(500);
    });

    it('never echoes a proxy URL it refuses, which may hold a key outside its userinfo', () => {
      for (const [name, flag] of [
        ['HTTPS_PROXY', '--https-proxy'],
        ['HTTP_PROXY', '--http-proxy'],
      ])
        expect(configError(() => load({ [name]: 'ftp://proxy.corp:3128/?key=TOPSECRET' }))).toBe(
          `invalid setting ${name} / ${flag}: must be a URL with scheme http, https`,
        );
    });

    it('never echoes the user and password of a URL it refuses', () => {
      const message = configError(() => load({ PROVIDER_B_URL: 'htps://user:TOPSECRET@proxy.corp/v1internal' }));
      expect(message).toBe(
        'invalid setting PROVIDER_B_URL / --provider-b-url: must be a URL with scheme http, https (got "htps://…@proxy.corp/v1internal")',
      );
      for (const written of [
        `ftp://user:TOPSECRET@host/x`,
        `user:TOPSECRET@host:3128`,
        `ftp://user:TOP@SECRET@host/x`,
        `ftp://user:TOP/SECRET@host/x`,
        `ftp://user:${'TOPSECRET'.repeat(20)}@host/x`,
      ]) {
        const refused = configError(() => load({ PROVIDER_A_TOKEN_URL: written }));
        expect(refused).not.toMatch(/TOP|SECRET|user/);
        expect(refused).toContain('…@host');
      }
    });

    it('caps the echoed value so a huge value cannot flood the terminal', () => {
      const message = configError(() => load({ GATEWAY_PORT: '9'.repeat(5000) }));
      expect(message.length).toBeLessThan(300);
    });
  });
});

describe('AppConfig from the settings table', () => {
  /** The value at a row's place (`group.field` or `field`) in a loaded config. */
  const at = (config: AppConfig, place: string): unknown =>
    place.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], config);

  it('gives every placed row its own place', () => {
    const places = SETTINGS.flatMap((definition) => (definition.at === undefined ? [] : [definition.at]));
    expect(new Set(places).size).toBe(places.length);
  });

  it("puts each row's default value at its place when nothing is set, and nothing for a row without one", () => {
    const config = load();
    for (const definition of SETTINGS) {
      if (definition.at !== undefined)
        expect([definition.env, at(config, definition.at)]).toEqual([
          definition.env,
          writtenDefault(definition) === undefined
            ? undefined
            : definition.parse(writtenDefault(definition)!, { home: HOME }),
        ]);
    }
  });

  it('puts a given value, parsed by the row, at its place', () => {
    const given: Record<string, string> = {
      GATEWAY_PORT: '9001',
      ACCOUNT_PAID_USAGE: 'allow',
      STRUCTURED_MODELS: 'a, b',
      PROVIDER_B_PROJECT: 'my-project-1',
      PRIMARY_AGENT_QUEUE_ENABLED: 'off',
    };
    const config = load(given);
    for (const definition of SETTINGS.filter((row) => row.env in given)) {
      expect(at(config, definition.at!)).toEqual(definition.parse(given[definition.env], { home: HOME }));
    }
    expect(config.accounts.paidUsage).toBe('allow');
    expect(config.structured.models).toEqual(['a', 'b']);
  });

  it('types each field by its row: its parser, required with a default, optional without', () => {
    const config = load();
    const paidUsage: 'plan_only' | 'allow' = config.accounts.paidUsage;
    const port: number = config.server.port;
    const secret: string | undefined = config.server.bearerSecret;
    // @ts-expect-error GATEWAY_BEARER_SECRET has no default, so its field may be unset
    const secretText: string = config.server.bearerSecret;
    // @ts-expect-error GATEWAY_PORT parses to a number
    const portText: string = config.server.port;
    // @ts-expect-error no row is placed at server.hostname
    const hostname: unknown = config.server.hostname;
    expect([paidUsage, port, secret, secretText, portText, hostname]).toEqual([
      'plan_only',
      8088,
      undefined,
      undefined,
      8088,
      undefined,
    ]);
  });
});

describe(renderHelp.name, () => {
  it('lists every setting with its variable, its flag and its default', () => {
    const help = renderHelp();
    for (const definition of SETTINGS) {
      expect(help).toContain(`${definition.env} / ${definition.flag}`);
      const block = help
        .slice(help.indexOf(`${definition.env} / ${definition.flag}`))
        .split('\n')
        .slice(0, 3)
        .join('\n');
      expect(block).toContain(`default: ${definition.defaultText ?? '(unset)'}`);
    }
    expect(help).toContain('default: 8088');
    expect(help).toContain('default: every built-in family, in the order of src/families.ts');
  });
});

describe("a family's own settings (Family.settings)", () => {
  const SPEC_URL = setting(
    'SPEC_FAMILY_URL',
    'specFamily.url',
    'https://spec.example/v1',
    'The spec family endpoint.',
    parseUrl(['https']),
  );
  const SPEC_HOME = setting('SPEC_FAMILY_HOME', undefined, '~/.spec', "The spec CLI's home directory.", (raw) => raw);
  /** A family of this spec only: a built-in declaration with its own id, rows and derivation, and none of its errors. */
  const specFamily = (id: string, rows: Family['settings']): Family => ({
    ...familyOf('provider_b'),
    errors: undefined,
    cliNames: [],
    id,
    settings: rows,
  });

  beforeAll(() => {
    registerFamily(
      specFamily('spec_settings', {
        rows: [SPEC_URL, SPEC_HOME],
        derive: (read, { env, home }) => ({
          specFamily: { port: read.value('GATEWAY_PORT'), home, mark: env.SPEC_FAMILY_MARK },
        }),
      }),
    );
  });

  it("lists its rows after the built-in families' rows and before the trailing shared rows", () => {
    const names: string[] = allSettings().map((definition) => definition.env);
    expect(names.indexOf('SPEC_FAMILY_URL')).toBeGreaterThan(names.indexOf('PROVIDER_C_TIMEOUT'));
    expect(names.indexOf('SPEC_FAMILY_URL')).toBeLessThan(names.indexOf('HTTPS_PROXY'));
    expect(renderHelp()).toContain('SPEC_FAMILY_URL / --spec-family-url');
  });

  it('places its rows and merges what it derives into the same group', () => {
    const config = load({ SPEC_FAMILY_MARK: 'seen', GATEWAY_PORT: '9002' }, ['--spec-family-url', 'https://other/v2']);
    expect((config as unknown as Record<string, unknown>).specFamily).toEqual({
      url: 'https://other/v2',
      port: 9002,
      home: HOME,
      mark: 'seen',
    });
    expect(load().providerB.accounts).toHaveLength(1);
  });

  it('refuses a bad value of its rows with the one-line message', () => {
    expect(configError(() => load({ SPEC_FAMILY_URL: 'http://plain' }))).toBe(
      'invalid setting SPEC_FAMILY_URL / --spec-family-url: must be a URL with scheme https (got "http://plain")',
    );
  });

  // Last: the registry keeps this family, whose row makes the table refuse to build.
  it('refuses a row whose name another row already has', () => {
    registerFamily(specFamily('spec_twice', { rows: [SPEC_URL] }));
    expect(() => allSettings()).toThrow('setting SPEC_FAMILY_URL is declared twice');
  });
});
