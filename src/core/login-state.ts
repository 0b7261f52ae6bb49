import { familyOf } from './family-registry';
import type { GatewayErrorOptions } from './gateway.error';
import type { ProviderId } from './provider-id';

/**
 * What the gateway can tell about one configured login without asking the upstream (docs/accounts.md):
 * reported once per login at startup and whenever it changes, and as the
 * `gateway_chat_api_login_state` gauge.
 *
 * - `usable`: found, and its token is valid (or the CLI says it is logged in)
 * - `expired_refreshable`: the access token expired, a refresh token is there: renewed on first use
 * - `missing`: no login at all (no file, an empty token file, the CLI says it is not logged in)
 * - `unusable`: a file that cannot serve (unreadable, no tokens, expired without a refresh token)
 * - `refresh_refused`: the token endpoint refused this login's refresh token (on a request or a
 *   background refresh); only a new login fixes it
 * - `login_refused`: the upstream's API refused this login in its answer to a request (a login the
 *   gateway never refreshes, such as a CLI's own login or a token file, is only ever refused so); a
 *   later answered turn on it brings it back, else a new login fixes it
 * - `account_unsupported`: the upstream does not serve this kind of account (seen on a request)
 * - `cli_missing`: the CLI a family runs as a child process cannot be found
 */
export const LOGIN_STATES = [
  'usable',
  'expired_refreshable',
  'missing',
  'unusable',
  'refresh_refused',
  'login_refused',
  'account_unsupported',
  'cli_missing',
] as const;

export type LoginStateKind = (typeof LOGIN_STATES)[number];

declare module './family' {
  interface Family {
    /** The fix of a login state only this family reaches (its account kind refused), beside the CLI's login and install. */
    readonly loginFixes?: { readonly [S in LoginStateKind]?: string };
  }
}

/** One login's state; `reason` is a closed, secret-free word or two (never a path's content, a token or an e-mail). */
export interface LoginCheck {
  readonly state: LoginStateKind;
  readonly reason?: string;
  /** When the login's access token expires (epoch ms), where its file says. */
  readonly expiresAt?: number;
  /** The installed CLI's version as it reports it, for a family that runs one (as its `--version` prints it). */
  readonly cliVersion?: string;
  /**
   * The fix when this check's cause has another one than its state's (loginFix): a CLI set to bill
   * something else, a login file the gateway's user may not read.
   */
  readonly fix?: string;
  /**
   * A turn on this login would be billed outside the family's plan (the CLI set to bill an API key
   * or a cloud account): no plan meters it and no setting consents to it, so the pool never gives
   * it a turn, not even as a family's last login.
   */
  readonly billsElsewhere?: boolean;
}

/** Whether a turn on this login can be expected to reach the upstream. */
export function isUsable(state: LoginStateKind): boolean {
  return state === 'usable' || state === 'expired_refreshable';
}

/**
 * The one thing to do about a login in this state, or undefined when there is nothing to do: the
 * family's own fix for the state (`Family.loginFixes`), else its CLI's install, else the login's
 * own command (`loginCommand`: AccountLogin.loginCommand, for a login not where its CLI keeps one
 * by default), else the family's login command.
 */
export function loginFix(provider: ProviderId, state: LoginStateKind, loginCommand?: string): string | undefined {
  const family = familyOf(provider);
  switch (state) {
    case 'usable':
    case 'expired_refreshable':
      return undefined;
    case 'cli_missing':
      return family.loginFixes?.cli_missing ?? family.fix.install;
    default:
      return family.loginFixes?.[state] ?? loginCommand ?? family.fix.login;
  }
}

/** One login as a fix names it: its alias, what was found of it, and its own login command. */
export interface LoginFinding {
  readonly alias: string;
  /** What its check (or the upstream) found; undefined when nothing is known of it. */
  readonly check: LoginCheck | undefined;
  /** AccountLogin.loginCommand: the command when the family's plain one would log in another file. */
  readonly loginCommand?: string;
}

/** The fix of one login: its check's own, else its state's (with the login's own command). */
export function findingFix(provider: ProviderId, finding: LoginFinding): string | undefined {
  const { check } = finding;
  return check && (check.fix ?? loginFix(provider, check.state, finding.loginCommand));
}

/**
 * What to say about a family none of whose logins is usable: the fix they share (a state's own,
 * a check's such as a file's permissions, or one login command), else each login's own fix by alias.
 * The message follows the fix after `to fix:` as a login's line does, since a fix may be a command
 * ("run `codex login` …") or a sentence of its own ("/x is a directory, not a login file").
 */
export function noUsableLogin(
  provider: ProviderId,
  logins: readonly LoginFinding[],
): { readonly fix: string; readonly message: string } {
  const fixes = logins.flatMap((login) => {
    const fix = findingFix(provider, login);
    return fix === undefined ? [] : [{ alias: login.alias, fix }];
  });
  const distinct = new Set(fixes.map(({ fix }) => fix));
  const outcome = `${provider} has no usable login, so its models answer errors`;
  if (distinct.size > 1) {
    const each = fixes.map(({ alias, fix: one }) => `login "${alias}": ${one}`).join('; ');
    return { fix: `fix one of them: ${each}`, message: `${outcome}; to fix one of them: ${each}` };
  }
  const fix = distinct.size === 0 ? familyOf(provider).fix.login : fixes[0].fix;
  return { fix, message: `${outcome}; to fix: ${fix}` };
}

/**
 * The `auth` failure of a turn whose login has a cause with its own fix (`LoginCheck.fix`: a login
 * file the gateway's user may not read, which a login run as another user cannot mend): the
 * client's message names the cause and that fix instead of the family's login command, and the
 * failure's log lines carry both. Undefined for a check without a fix of its own.
 */
export function ownFixFailure(
  provider: ProviderId,
  check: LoginCheck | undefined,
): Pick<GatewayErrorOptions, 'provider' | 'publicMessage' | 'detail' | 'fix'> | undefined {
  if (check?.fix === undefined) return undefined;
  const cause = check.reason ?? check.state.replace(/_/g, ' ');
  return {
    provider,
    publicMessage: `${provider} cannot use its ${familyOf(provider).fix.cli} login on the gateway (${cause}; this is not about your API key): ${check.fix}; the gateway picks the change up without a restart`,
    detail: `${provider} ${cause}`,
    fix: check.fix,
  };
}

/**
 * The readable message of a login's line: family, alias, state and the fix (`loginCommand`: the
 * login's own). A missing login also names the file its check looked for (`loginFile`), so a login
 * made elsewhere (another home, another user) shows as such.
 */
export function loginStateMessage(
  provider: ProviderId,
  account: string,
  check: LoginCheck,
  loginCommand?: string,
  loginFile?: string,
): string {
  const fix = check.fix ?? loginFix(provider, check.state, loginCommand);
  const cli = check.cliVersion ? `${familyOf(provider).fix.cli} ${check.cliVersion}` : familyOf(provider).fix.cli;
  const where = check.state === 'missing' && loginFile !== undefined ? `at ${loginFile}` : undefined;
  const said = [check.reason, where].filter((part) => part !== undefined).join(' ');
  const what = `${provider} login "${account}" (${cli}): ${check.state.replace(/_/g, ' ')}${said ? ` (${said})` : ''}`;
  return fix ? `${what}; to fix: ${fix}` : what;
}
