import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LoginCheck } from '../../core/login-state';
import { isJsonObject, nonEmptyString } from '../../common/json';
import { isExpired } from '../login-token-cache';
import { readLoginDocument, shellWord, tokenCheck, unreadableLoginFile } from '../login-file-check';
import { errnoOf } from '../../common/errno';
import { gatewayUser } from '../../common/gateway-user';
import { claudeCodeVersion } from './provider-c.cli-version';
import type { ProviderCLogin } from './provider-c.credentials';
import { credentialsFileOf } from './provider-c.credentials';

/** `claude auth status --json` answers from local state in about a second; beyond this it is stuck. */
const AUTH_STATUS_TIMEOUT_MS = 20_000;

export interface ProviderCCheckSettings {
  readonly command: string;
  /** The environment a child of this login gets (the gateway's, cleaned, plus the login's variables). */
  readonly childEnv: Readonly<Record<string, string>>;
}

/**
 * The state of one Claude Code login without any API call (docs/accounts.md). The executable comes first
 * (no CLI, no login that matters). A config directory's `.credentials.json` and a token file are
 * read as the CLI would; the CLI's own login (`cli`: the keychain, `CLAUDE_CODE_OAUTH_TOKEN`, a
 * file under `~/.claude`) is only knowable by asking the CLI: `claude auth status --json` prints
 * `{"loggedIn": …, "authMethod": …, "apiProvider": …}` offline (fixture: providers/provider-c/__fixtures__/claude-code-2.1.332/auth-status.json).
 * A found executable's version (`claude --version`, asked once) comes with every state.
 */
export async function checkProviderCLogin(
  login: ProviderCLogin,
  settings: ProviderCCheckSettings,
  now: number = Date.now(),
): Promise<LoginCheck> {
  const executable = resolveCommand(settings.command, settings.childEnv.PATH);
  if (executable === undefined) return { state: 'cli_missing', ...(commandProblem(settings.command) ?? NOT_FOUND) };
  const [check, cliVersion] = await Promise.all([
    loginState(login, executable, settings, now),
    claudeCodeVersion(executable, settings.childEnv),
  ]);
  return cliVersion === undefined ? check : { ...check, cliVersion };
}

function loginState(
  login: ProviderCLogin,
  executable: string,
  settings: ProviderCCheckSettings,
  now: number,
): Promise<LoginCheck> | LoginCheck {
  switch (login.kind) {
    case 'token_file':
      return tokenFileState(login.location!);
    case 'config_dir':
      return configDirState(login.location!, now);
    case 'cli':
      return authStatus(executable, settings.childEnv);
  }
}

function tokenFileState(file: string): LoginCheck {
  let token: string;
  try {
    token = fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? { state: 'missing', reason: 'no token file' }
      : unreadableLoginFile(file, 'token file', error);
  }
  return token !== '' ? { state: 'usable' } : { state: 'missing', reason: 'token file empty' };
}

async function configDirState(dir: string, now: number): Promise<LoginCheck> {
  const read = await readLoginDocument(credentialsFileOf(dir), '.credentials.json');
  if ('check' in read) return read.check;
  const oauth = isJsonObject(read.document.claudeAiOauth) ? read.document.claudeAiOauth : {};
  if (!nonEmptyString(oauth.accessToken)) return { state: 'missing', reason: 'no login in .credentials.json' };
  const expiresAt = typeof oauth.expiresAt === 'number' ? oauth.expiresAt : undefined;
  return tokenCheck(isExpired(expiresAt, now), nonEmptyString(oauth.refreshToken) !== undefined, expiresAt);
}

/**
 * Runs `claude --setting-sources "" auth status --json`: without settings files, as the children
 * run (provider-c.argv.ts), so a settings file's apiKeyHelper or env does not decide a status the
 * children never see. Only `loggedIn`, `apiProvider` and `authMethod` are read (it also prints the e-mail).
 */
function authStatus(executable: string, env: Readonly<Record<string, string>>): Promise<LoginCheck> {
  return new Promise((resolve) => {
    execFile(
      executable,
      ['--setting-sources', '', 'auth', 'status', '--json'],
      { env, cwd: os.tmpdir(), timeout: AUTH_STATUS_TIMEOUT_MS, maxBuffer: 1 << 20 },
      (_error, stdout) => {
        resolve(parseAuthStatus(stdout));
      },
    );
  });
}

/** What a child would bill when the CLI is set to another backend than Anthropic's API. */
const OTHER_BACKEND_FIX =
  "remove what switches Claude Code to that backend (a CLAUDE_CODE_USE_* variable, in its managed settings or the gateway's environment): the gateway only serves the CLI's Claude login";
/** What a child would bill when the CLI's credential is an API key (a Console login, an apiKeyHelper). */
const API_KEY_FIX =
  "log the CLI in with a Claude subscription instead: run `claude` on the gateway's machine, then `/login` (or create a token with `claude setup-token`)";

/**
 * The answer of `claude auth status --json` (exit 1 when logged out, with the same JSON). Logged in
 * is not enough: `apiProvider` other than `firstParty` (`bedrock`, `vertex`, `foundry`,
 * `anthropicAws`, `anthropicGoogleCloud`, `mantle`, `gateway` in 2.1.332) means the children would
 * bill a cloud account, and `authMethod` `api_key` or `api_key_helper` that they would bill an API
 * key; neither has plan meters, so both are unusable, and `billsElsewhere`: the pool gives such a
 * login no turn at all (docs/upstream/provider-c.md §3.2).
 */
export function parseAuthStatus(stdout: string): LoginCheck {
  let status: unknown;
  try {
    status = JSON.parse(stdout);
  } catch {
    return { state: 'unusable', reason: 'claude auth status gave no answer' };
  }
  if (!isJsonObject(status) || typeof status.loggedIn !== 'boolean')
    return { state: 'unusable', reason: 'claude auth status gave no answer' };
  const provider = status.apiProvider;
  if (provider !== undefined && provider !== 'firstParty') {
    // A closed word in the reason: the CLI's own name for the backend when it is one, never free text.
    const named = typeof provider === 'string' && /^[A-Za-z]{1,32}$/.test(provider) ? provider : 'unknown';
    return {
      state: 'unusable',
      reason: `claude auth status: apiProvider ${named}, not Anthropic's API`,
      fix: OTHER_BACKEND_FIX,
      billsElsewhere: true,
    };
  }
  if (!status.loggedIn) return { state: 'missing', reason: 'claude auth status: not logged in' };
  if (status.authMethod === 'api_key' || status.authMethod === 'api_key_helper')
    return {
      state: 'unusable',
      reason: `claude auth status: ${status.authMethod}, not a Claude login`,
      fix: API_KEY_FIX,
      billsElsewhere: true,
    };
  return { state: 'usable' };
}

/**
 * docs/upstream/provider-c.md §1: resolves the command the way spawn will, on the child's PATH. A name with a slash is
 * checked as a path. Returns the executable path, or undefined when there is none.
 */
export function resolveCommand(command: string, searchPath: string | undefined): string | undefined {
  const candidates = command.includes('/')
    ? [command]
    : (searchPath ?? '')
        .split(path.delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    try {
      if (!fs.statSync(candidate).isFile()) continue;
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // Not here; try the next directory.
    }
  }
  return undefined;
}

/** A command not found: the CLI's install is the fix (the family's, so none of its own here). */
const NOT_FOUND = { reason: 'command not found' } as const;

/** What is wrong with a PROVIDER_C_COMMAND that exists but cannot be run, and what to change. */
export interface CommandProblem {
  /** A few closed words, as a login check's reason. */
  readonly reason: string;
  readonly fix: string;
}

/**
 * Why a PROVIDER_C_COMMAND path (a name with `/`) that resolveCommand refused cannot be run: a
 * directory, a file without the execute permission, or a path the gateway's user may not look
 * into. Undefined for a bare name not on the PATH or a path to nothing: the CLI is to be installed
 * (the family's install fix), which for an existing path the operator has already done.
 */
export function commandProblem(command: string): CommandProblem | undefined {
  if (!command.includes('/')) return undefined;
  let stats: fs.Stats;
  try {
    stats = fs.statSync(command);
  } catch (error) {
    const errno = errnoOf(error);
    if (errno !== 'EACCES' && errno !== 'EPERM') return undefined;
    return {
      reason: `PROVIDER_C_COMMAND not reachable (${errno})`,
      fix: `${gatewayUser()} may not look into the directories of ${command}: let that user into them (chmod or chown)`,
    };
  }
  if (stats.isDirectory()) {
    return {
      reason: 'PROVIDER_C_COMMAND is a directory',
      fix: `${command} is a directory, not the claude executable: set PROVIDER_C_COMMAND to the executable file itself, or unset it to run claude from the PATH`,
    };
  }
  if (!stats.isFile()) return undefined;
  try {
    fs.accessSync(command, fs.constants.X_OK);
    return undefined;
  } catch {
    // Not executable for this user: below, which of the two causes it is.
  }
  // No execute bit at all is a chmod away; with one, the owner or the mount (noexec) refuses.
  const fix =
    (stats.mode & 0o111) === 0
      ? `${command} is not executable: run \`chmod +x ${shellWord(command)}\` (or set PROVIDER_C_COMMAND to the claude executable)`
      : `${command} may not be run by ${gatewayUser()}: let that user execute it (chmod or chown), and check that its file system is not mounted noexec`;
  return { reason: 'PROVIDER_C_COMMAND is not executable', fix };
}
