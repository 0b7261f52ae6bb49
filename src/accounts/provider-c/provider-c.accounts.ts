import * as fs from 'node:fs';
import type { AccountPool } from '../account-pool';
import type { AccountPools } from '../account-pools';
import type { AppConfig } from '../../config/app-config';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { sha256Hex } from '../../common/hashing';
import { isJsonObject, nonEmptyString } from '../../common/json';
import type { EventLogger } from '../../core/event-logger';
import { GatewayError } from '../../core/gateway.error';
import type { PlanUsageRead } from '../../core/plan-usage';
import { readJsonObject } from '../credential-file';
import { refusedLoginFile, unreadableLoginError } from '../login-file-check';
import { LoginNotReadable } from '../plan-usage-refresh';
import type { ProviderCLogin } from './provider-c.credentials';
import { credentialsFileOf, refreshCredentialsAhead } from './provider-c.credentials';
import { providerCQuotaBucket } from './provider-c.quota-buckets';

/** What the pool holds per Claude Code login: how a child of that login is started, and its idle refresh. */
export interface ProviderCAccount {
  /** The variables that point a child at this login, from memory (a token file's token as last read). */
  childEnv(): Record<string, string>;
  /**
   * The pool's sweep saw the login file change (PoolAccountSpec.loginFileChanged): a token file is
   * read again, and its token (hashed) says whose login it holds. A config directory's children
   * read `.credentials.json` themselves, and the CLI rotates its tokens in it while naming no
   * account there, so a new login cannot be told from a refresh: undefined, as for the CLI's own login.
   */
  loginFileChanged(): string | undefined;
  /**
   * The background refresh of this login in flight, settled either way; undefined when there is
   * none. A child must not start meanwhile (the refresh token it would read is about to be
   * spent), so a turn's request waits for it first (ProviderCUpstream.request), as another
   * family's request waits for its token refresh.
   */
  refreshInFlight(): Promise<void> | undefined;
  /**
   * Marks a child of this login running until the returned function is called: a running CLI
   * refreshes its login itself, so the background refresh leaves the login alone meanwhile.
   * Called with no refresh in flight (the turn's request waited for it).
   */
  childStarting(): () => void;
  /**
   * Renews the login's token when it expires within `aheadMs` (config directories only); resolves
   * with the new token's expiry, undefined when it renewed none.
   */
  refreshAhead(aheadMs: number, logger: EventLogger): Promise<number | undefined>;
  /**
   * The OAuth access token a child of this login sends, read anew each time, for the usage
   * endpoint: the token file's content, a config directory's `.credentials.json`
   * `claudeAiOauth.accessToken`, or for the CLI's own login its `CLAUDE_CODE_OAUTH_TOKEN`, else
   * the credentials file of its config directory. Rejects with LoginNotReadable when there is none.
   */
  oauthToken(): Promise<string>;
}

/**
 * Login variables a child must not inherit when the operator lists the logins: one left in the
 * gateway's environment would override the account's own (the CLI prefers a token to a directory).
 */
const INHERITED_LOGIN_VARIABLES = ['CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CONFIG_DIR'] as const;

/** Children running and the refresh in flight of one login. */
class LoginActivity {
  private children = 0;
  private refreshing?: Promise<number | undefined>;

  refreshInFlight(): Promise<void> | undefined {
    return this.refreshing?.then(
      () => undefined,
      () => undefined,
    );
  }

  childStarting(): () => void {
    this.children++;
    let ended = false;
    return () => {
      if (!ended) this.children--;
      ended = true;
    };
  }

  /** Runs `refresh` unless a child is running (then the CLI keeps its own login fresh). */
  async refreshUnlessBusy(refresh: () => Promise<number | undefined>): Promise<number | undefined> {
    if (this.children > 0 || this.refreshing) return undefined;
    this.refreshing = refresh();
    try {
      return await this.refreshing;
    } finally {
      this.refreshing = undefined;
    }
  }
}

/**
 * A token file's token ('' when the file is missing or empty), or the failure a turn on it gets
 * when the system refuses to read it: that names the errno and the file's fix, not a new login.
 */
function tokenFileContent(file: string): string | GatewayError {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    return unreadableLoginError('provider_c', file, 'token file', error) ?? '';
  }
}

/**
 * The access token a Claude Code credentials file holds (plain JSON on Linux), else
 * LoginNotReadable: with the errno and the file's fix when the system refused to read it.
 */
async function storedAccessToken(file: string): Promise<string> {
  let stored: Record<string, unknown>;
  try {
    stored = await readJsonObject(file);
  } catch (error) {
    throw new LoginNotReadable('missing', refusedLoginFile(file, 'credentials file', error));
  }
  const oauth = stored.claudeAiOauth;
  const token = isJsonObject(oauth) ? nonEmptyString(oauth.accessToken) : undefined;
  if (!token) throw new LoginNotReadable();
  return token;
}

/** `proxy`: the gateway's egress for the idle refresh of a config directory (the children find their own). */
function accountOf(
  login: ProviderCLogin,
  tokenUrl: string,
  inherited: Readonly<Record<string, string>>,
  proxy?: UpstreamProxy,
): ProviderCAccount {
  const activity = new LoginActivity();
  const common = {
    refreshInFlight: () => activity.refreshInFlight(),
    childStarting: () => activity.childStarting(),
    refreshAhead: async () => undefined,
    loginFileChanged: () => undefined,
  };
  switch (login.kind) {
    case 'cli':
      return {
        ...common,
        childEnv: () => ({}),
        // The CLI prefers a token in its environment to its stored login.
        oauthToken: async () =>
          nonEmptyString(inherited.CLAUDE_CODE_OAUTH_TOKEN?.trim()) ?? storedAccessToken(login.loginFile),
      };
    case 'config_dir':
      return {
        ...common,
        childEnv: () => ({ CLAUDE_CONFIG_DIR: login.location! }),
        refreshAhead: (aheadMs, logger) =>
          activity.refreshUnlessBusy(() =>
            refreshCredentialsAhead(
              { alias: login.alias, configDir: login.location!, loginCommand: login.loginCommand },
              tokenUrl,
              aheadMs,
              logger,
              Date.now,
              proxy,
            ),
          ),
        oauthToken: () => storedAccessToken(credentialsFileOf(login.location!)),
      };
    case 'token_file': {
      let token: string | GatewayError = '';
      return {
        ...common,
        loginFileChanged: () => {
          token = tokenFileContent(login.location!);
          return typeof token === 'string' && token !== '' ? sha256Hex(`provider_c.login:${token}`) : undefined;
        },
        childEnv: () => {
          // An auth failure marks the account dead until its file changes (docs/accounts.md).
          if (token instanceof GatewayError) throw token.with({});
          if (token === '')
            throw new GatewayError('auth', {
              detail: 'provider_c token file is missing or empty',
              loginFileCause: true,
            });
          return { CLAUDE_CODE_OAUTH_TOKEN: token };
        },
        // Read from the file: the usage reads and the setup check run off the request path, the latter without a pool.
        oauthToken: async () => {
          let stored: string;
          try {
            stored = fs.readFileSync(login.location!, 'utf8').trim();
          } catch (error) {
            // A file the system refuses: its errno and the file's fix, as a turn on it says.
            throw new LoginNotReadable('missing', refusedLoginFile(login.location!, 'token file', error));
          }
          if (stored === '') throw new LoginNotReadable();
          return stored;
        },
      };
    }
  }
}

/** The child environment every account starts from: without inherited login variables once logins are listed. */
export function accountBaseEnvironment(
  config: AppConfig,
  base: Readonly<Record<string, string>>,
): Record<string, string> {
  const env = { ...base };
  if (config.providerC.accounts.some((login) => login.kind !== 'cli')) {
    for (const name of INHERITED_LOGIN_VARIABLES) delete env[name];
  }
  return env;
}

/**
 * The provider_c pool: one account per configured login (docs/accounts.md). The CLI refreshes a
 * config directory's token itself while it runs; idle config directories are refreshed in the
 * background ahead of expiry through the gateway's egress `proxy`, and a token file is a long-lived token that needs none (neither does
 * the CLI's own login, `cli`, which the gateway does not own). What each plan has left comes from
 * the CLI's `rate_limit_event` after a turn and from `readUsage` (the adapter's reader of the
 * usage endpoint the CLI's `/usage` reads, at startup and every ACCOUNT_USAGE_REFRESH_INTERVAL).
 * Its usage-limit and 429 errors cool the login, its authentication errors mark it dead until the
 * login file changes. A spent weekly window of one model family (`seven_day_opus`,
 * `seven_day_sonnet`) rests only that family's ids on the login (provider-c.quota-buckets.ts).
 */
export function createProviderCPool(
  config: AppConfig,
  pools: AccountPools,
  proxy?: UpstreamProxy,
  readUsage?: PlanUsageRead<ProviderCAccount>,
): AccountPool<ProviderCAccount> {
  const specs = config.providerC.accounts.map((login) => {
    const handle = accountOf(login, config.providerC.tokenUrl, config.providerC.childEnv, proxy);
    return {
      alias: login.alias,
      loginFile: login.loginFile,
      loginCommand: login.loginCommand,
      handle,
      loginFileChanged: () => handle.loginFileChanged(),
    };
  });
  return pools.create(
    'provider_c',
    specs,
    (account, aheadMs, logger) => account.refreshAhead(aheadMs, logger),
    readUsage,
    providerCQuotaBucket,
  );
}

/** The OAuth token of one configured login (the setup check reads its usage without a pool). */
export function providerCLoginToken(config: AppConfig, alias: string): Promise<string> {
  const login = config.providerC.accounts.find((account) => account.alias === alias)!;
  return accountOf(login, config.providerC.tokenUrl, config.providerC.childEnv).oauthToken();
}
