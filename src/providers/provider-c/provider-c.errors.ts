import { installedClaudeCodeVersion } from '../../accounts/provider-c/provider-c.cli-version';
import type { CommandProblem } from '../../accounts/provider-c/provider-c.login-check';
import { PROVIDER_C_FIX, PROVIDER_C_ORGANIZATION_PAGE } from './provider-c.fix';
import type { UpstreamCause } from '../../core/gateway.error';
import { GatewayError } from '../../core/gateway.error';
import { errorSpec } from '../../core/error-codes';
import { idleTimeoutFix, turnTimeoutFix } from '../shared/timeout-fixes';
import { sanitizeUpstreamMessage } from '../../common/logging/request-log';

/**
 * docs/upstream/provider-c.md §8.3: without a parseable reset hint a short-term rate limit means
 * "retry in a minute". A usage limit without one keeps its reset unknown: the table's default
 * Retry-After, and the account pool's default cooldown.
 */
export const DEFAULT_LIMIT_RETRY_AFTER_SECONDS = 60;

/**
 * A login the CLI cannot use or the API refused, in Claude Code 2.1.332's own words ("Not logged in
 * · Please run /login", "Invalid API key · Please run /login", "Invalid auth token · Fix external
 * auth token", "Authentication required · Sign in again to continue", "Failed to authenticate. API
 * Error: 401 …", "Failed to authenticate: OAuth token revoked. …") and the API's ("Invalid bearer
 * token", "OAuth token has expired", "OAuth access token has been revoked", its
 * `authentication_error`). Whole phrases only: a word such as "login" or "oauth" in a path or a
 * stack frame says nothing of the login.
 */
const AUTH_PATTERNS = [
  /\bnot logged in\b/,
  /\bplease run \/login\b/,
  /\binvalid (?:api key|auth token|bearer token|x-api-key)\b/,
  /\bauthentication required · sign in again\b/,
  /\bfailed to authenticate\b/,
  /\boauth (?:access )?token (?:has expired|has been revoked|revoked)\b/,
  /\bauthentication_(?:error|failed)\b/,
  /\bapi error: 401\b/,
];
/** A status is a limit only as the CLI reports the API's ("API Error: 429"), never a number in a stack frame. */
const LIMIT_PATTERNS = [
  /rate limit/,
  /usage limit/,
  /limit reached/,
  /too many requests/,
  /\bapi error: 429\b/,
  /quota/,
  /hit your (?:[\w-]+ )?limit/,
  /limiting requests/,
];
/**
 * The subscription cap itself, as opposed to a short-term rate limit: `You've hit your 5-hour limit
 * · resets …` and kin. The short-term limit's own words deny it: "Server is temporarily limiting
 * requests (not your usage limit)".
 */
const USAGE_LIMIT_PATTERNS = [/(?<!not your )usage limit/, /hit your (?:[\w-]+ )?limit/];
const CONTEXT_PATTERNS = [/prompt is too long/, /context (?:window|length)/, /too many tokens/];
/**
 * The API's version gate in its own words, for a CLI that does not report
 * `api_error: claude_code_version_too_old`: a model's minimum ("Claude Code 2.1.275 does not
 * support this model; version 2.1.280 or newer is required") or an organization's floor.
 */
const CLIENT_TOO_OLD_PATTERN = /\bclaude code \S+ (?:does not support this model|is older than the minimum version)/;

/**
 * Anthropic's refusal of a subscription request it bills as a third-party app while the account's
 * extra usage is off or spent, in every wording seen ("Third-party apps now draw from your extra
 * usage, not your plan limits…", the organisation's "…draw from extra usage, not plan limits…",
 * "You're out of extra usage…"). Claude Code 2.1.332 reports it only as `error: "unknown"` with the
 * API's 400 and its text, so the text is what tells it apart from any other 400.
 */
const EXTRA_USAGE_PATTERNS = [/\bdraw from (?:your )?extra usage\b/, /\bout of extra usage\b/];

/**
 * Anthropic's refusal of a conversation past 200,000 tokens, from a subscription login without
 * extra usage, to a model Claude Code gives a 1,000,000-token window: the API's 429 "Extra usage is
 * required for long context requests." (or "Usage credits are required for long context…"), which
 * Claude Code 2.1.332 reports as `api_error: "long_context_credits_required"` in its own words
 * ("Usage credits required for 1M context · …"; older builds: "Extra usage is required for 1M
 * context · …"). The marker is what tells it apart from a limit; the words are the fallback.
 */
const LONG_CONTEXT_API_ERROR = 'long_context_credits_required';
const LONG_CONTEXT_PATTERN = /\b(?:extra usage|usage credits) (?:is |are )?required for (?:long|1m) context\b/;

/**
 * Anthropic pausing all usage of the login's organization at its daily cap, for a CLI that does not
 * report `dailyCapPaused`: Claude Code 2.1.332's own words for it ("Usage is paused for your
 * organization. For help, please contact support.").
 */
const USAGE_PAUSED_PATTERN = /\busage is paused for your organization\b/;

/** The input a subscription login may send to such a model without extra usage (Anthropic's long-context rule). */
const STANDARD_CONTEXT_TOKENS = '200,000';

/**
 * What the CLI reported about a failed turn, read from its structured fields (Claude Code
 * 2.1.332, see __fixtures__/): the synthetic `assistant` line's `error` (`authentication_failed`,
 * `rate_limit`, `server_error`, `invalid_request`, `billing_error`, `unknown`),
 * `api_error_status`, `api_error_type`, `api_error` (`usage_limit_reached`,
 * `claude_code_version_too_old`, `long_context_credits_required`), the limit's reset
 * (`api_error_params.rate_limit_info.resetsAt`, or a rejected `rate_limit_event`), and the
 * `result` line's `subtype` and `terminal_reason`. `text` is the CLI's own message: a fallback for
 * classification, never shown to a client, and logged only sanitized (`upstream_message`).
 */
export interface CliErrorReport {
  readonly text: string;
  readonly error?: string;
  readonly apiStatus?: number;
  readonly apiErrorType?: string;
  readonly apiError?: string;
  readonly subtype?: string;
  readonly terminalReason?: string;
  /** Unix seconds at which a rejected limit resets. */
  readonly resetsAt?: number;
  /**
   * The API paused all usage of the login's organization at its daily cap: the CLI's
   * `dailyCapPaused`, on the refused request's `rate_limit_info` or its `rate_limit_event`.
   */
  readonly dailyCapPaused?: boolean;
  /** The version the CLI printed on its `init` line (the binary that ran this turn). */
  readonly cliVersion?: string;
}

/** Why a run ended without a usable answer, as the turn saw it. */
export type RunFailure =
  /** We terminated it for PROVIDER_C_TIMEOUT or the idle timer. */
  | { readonly kind: 'timeout'; readonly idle: boolean }
  /** spawn() itself failed (ENOENT, EACCES, …). */
  | { readonly kind: 'spawn'; readonly errno: string }
  /** A stdout line over 16 MiB. */
  | { readonly kind: 'line_too_long' }
  /** The process exited non-zero, was killed by a signal we did not send, or printed nothing. */
  | { readonly kind: 'exit'; readonly code: number | null; readonly signal: string | null; readonly stderr: string }
  /** A `result` line with `is_error` or an `error…` subtype, with what the CLI reported. */
  | { readonly kind: 'error_result'; readonly report: CliErrorReport; readonly stderr: string };

/**
 * A run that failed as the turn met it (a spawn refused, the child's exit): what
 * `classifyRunFailure` reads, classified by the family's `classify` at the runner's time.
 */
export class RunFailed extends Error {
  constructor(readonly failure: RunFailure) {
    super(`provider_c run failed: ${failure.kind}`);
    this.name = 'RunFailed';
  }
}

/**
 * docs/upstream/provider-c.md §8.3: a failed run → our error code. An error result is classified from the CLI's structured
 * fields first (`classifyReport`); text (the result text, else the last stderr line) is the fallback,
 * case-insensitive, checked in the table's order. The classification leaves this
 * function, and for the log only (`upstream_message`) the result text or the last stderr line,
 * sanitized and bounded: they never reach a client. Only plain `upstream`
 * failures from the CLI are `retryable` (never a spawn failure, a login error, a limit, a version
 * refusal or a timeout). `command`: what is wrong with a PROVIDER_C_COMMAND path that exists, for
 * a spawn refused (the client's message and the log's fix then name it instead of the install).
 */
export function classifyRunFailure(
  failure: RunFailure,
  now: number = Date.now(),
  command?: CommandProblem,
): GatewayError {
  switch (failure.kind) {
    case 'timeout':
      return new GatewayError('timeout', {
        detail: failure.idle
          ? 'provider_c: the child was stopped after no output for GATEWAY_STREAM_IDLE_TIMEOUT'
          : "provider_c: the child was stopped at the turn's deadline (PROVIDER_C_TIMEOUT, or the request's own deadline)",
        fix: failure.idle
          ? idleTimeoutFix()
          : `${turnTimeoutFix('PROVIDER_C_TIMEOUT')} (or the client gives the request a longer deadline)`,
      });
    case 'spawn':
      // No such executable, or not one we may run: the operator installs the CLI, no retry helps.
      return MISSING_COMMAND_ERRNOS.has(failure.errno)
        ? new GatewayError('provider_cli_missing', {
            detail: `spawn failed: ${failure.errno}`,
            provider: 'provider_c',
            ...(command && {
              publicMessage: `provider_c cannot run the ${PROVIDER_C_FIX.cli} on the gateway's machine (${command.reason}): ${command.fix}`,
            }),
            upstream: { errno: failure.errno, fix: command?.fix ?? PROVIDER_C_FIX.install },
          })
        : new GatewayError('upstream', {
            detail: `spawn failed: ${failure.errno}`,
            upstream: {
              errno: failure.errno,
              fix: "the system refused to start PROVIDER_C_COMMAND: check the gateway's limits on processes and open files",
            },
          });
    case 'line_too_long':
      return new GatewayError('upstream', { detail: 'stdout line over 16 MiB' });
    case 'exit':
      return withCause(classifyText(lastLine(failure.stderr) ?? '', `exit ${failure.code ?? failure.signal}`, now), {
        exitCode: failure.code,
        exitSignal: failure.signal,
        message: sanitizeUpstreamMessage(lastLine(failure.stderr)),
      });
    case 'error_result': {
      const { report } = failure;
      return withCause(classifyErrorResult(report, failure.stderr, now), {
        type: report.apiErrorType,
        code: report.apiError ?? report.error,
        message: sanitizeUpstreamMessage(report.text !== '' ? report.text : lastLine(failure.stderr)),
      });
    }
  }
}

const MISSING_COMMAND_ERRNOS = new Set(['ENOENT', 'EACCES', 'ENOTDIR']);

/**
 * An error result failed on the login's plan itself: it classifies as `usage_limit` (the CLI's
 * `usage_limit_reached` marker, or from a CLI that sets no structured field the subscription cap's
 * words). A short-term rate limit, the long-context refusal and every other failure do not.
 */
export function isPlanLimitResult(report: CliErrorReport, stderr: string): boolean {
  return classifyErrorResult(report, stderr, Date.now()).code === 'usage_limit';
}

/** An error result by the CLI's structured fields, else by its text (its last stderr line when it has none). */
function classifyErrorResult(report: CliErrorReport, stderr: string, now: number): GatewayError {
  return (
    classifyReport(report, now) ??
    classifyText(
      report.text !== '' ? report.text : (lastLine(stderr) ?? ''),
      `error result${reportDetail(report)}`,
      now,
    )
  );
}

/** The same classification, with what the CLI said for the log (`upstream_*` lines only). */
function withCause(error: GatewayError, upstream: UpstreamCause): GatewayError {
  return error.with({ upstream });
}

/**
 * The CLI prints its reason last; earlier stderr lines are progress and warnings (a path, a stack
 * frame): a run is classified by this line alone, and it is the one logged.
 */
function lastLine(text: string): string | undefined {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return lines.at(-1);
}

/**
 * The structured fields of a failed turn → our code, or undefined when the CLI set none of them.
 * Auth before limits before everything else, like the text table. 5xx, 529 and the CLI's
 * `server_error`/`unknown` are transient: retryable before output.
 */
function classifyReport(report: CliErrorReport, now: number): GatewayError | undefined {
  const { error, apiStatus: status, apiErrorType: type } = report;
  if (error === undefined && status === undefined && type === undefined && report.apiError === undefined)
    return undefined;
  const detail = `error result${reportDetail(report)}`;
  if (report.apiError === 'claude_code_version_too_old' || CLIENT_TOO_OLD_PATTERN.test(report.text.toLowerCase()))
    return clientTooOld(detail, status, report.cliVersion);
  // Not a limit although a 429: no wait helps, a shorter conversation does.
  if (isLongContextRefusal(report)) return longContextRefused(detail, status);
  // A refusal, not a limit: a 429 or the CLI's `rate_limit` with such words is the plan's limit below.
  if (status !== 429 && error !== 'rate_limit' && isExtraUsageRefusal(report.text))
    return extraUsageRequired(detail, status);
  if (
    error === 'authentication_failed' ||
    status === 401 ||
    status === 403 ||
    type === 'authentication_error' ||
    type === 'permission_error'
  ) {
    return new GatewayError('auth', { detail, upstreamStatus: status });
  }
  // The organization's pause comes as the plan's limit (`usage_limit_reached`); only its marker tells.
  if (report.dailyCapPaused === true || USAGE_PAUSED_PATTERN.test(report.text.toLowerCase()))
    return usagePaused(detail, status, report.resetsAt, now);
  if (
    error === 'rate_limit' ||
    status === 429 ||
    type === 'rate_limit_error' ||
    report.apiError === 'usage_limit_reached'
  ) {
    // Only the CLI's own marker tells the spent subscription from a short-term limit: its text for
    // the latter reads "Server is temporarily limiting requests (not your usage limit)".
    return limitError(
      report.apiError === 'usage_limit_reached',
      detail,
      retryAfterFromReset(report.resetsAt, now) ?? parseRetryAfterSeconds(report.text.toLowerCase(), now),
      status,
      report.resetsAt,
    );
  }
  // The CLI's `billing_error` is what it prints when the API says the credit balance is too low: a
  // spent usage credit of the login (docs/troubleshooting.md says what is known of which credit).
  if (error === 'billing_error' || type === 'billing_error') {
    return new GatewayError('usage_credit_exhausted', {
      detail,
      upstreamStatus: status,
      retryAfterSeconds: retryAfterFromReset(report.resetsAt, now),
      resetsAt: report.resetsAt === undefined ? undefined : report.resetsAt * 1000,
    });
  }
  if (
    error === 'invalid_request' ||
    status === 400 ||
    status === 413 ||
    type === 'invalid_request_error' ||
    type === 'request_too_large'
  ) {
    const tooLong = status === 413 || CONTEXT_PATTERNS.some((pattern) => pattern.test(report.text.toLowerCase()));
    return new GatewayError(tooLong ? 'context_window' : 'bad_request', { detail, upstreamStatus: status });
  }
  if (status === 404 || type === 'not_found_error')
    return new GatewayError('not_found', { detail, upstreamStatus: status });
  return new GatewayError('upstream', { detail, upstreamStatus: status, retryable: true });
}

/** Only the CLI's enumerated fields, never its text: safe to log. */
function reportDetail(report: CliErrorReport): string {
  const fields = [report.error, report.apiStatus, report.apiErrorType, report.apiError, report.terminalReason].filter(
    (field) => field !== undefined,
  );
  return fields.length > 0 ? ` (${fields.join(', ')})` : '';
}

function retryAfterFromReset(resetsAt: number | undefined, now: number): number | undefined {
  if (resetsAt === undefined) return undefined;
  const seconds = Math.ceil(resetsAt - now / 1000);
  return seconds > 0 ? seconds : undefined;
}

/**
 * A spent subscription (`usage_limit`) or a short-term rate limit (`rate_limited`): both 429, never
 * retried here. Only the rate limit assumes a wait when none is reported.
 */
function limitError(
  usageLimit: boolean,
  detail: string,
  retryAfterSeconds: number | undefined,
  upstreamStatus?: number,
  resetsAtSeconds?: number,
): GatewayError {
  return new GatewayError(usageLimit ? 'usage_limit' : 'rate_limited', {
    detail,
    upstreamStatus,
    resetsAt: usageLimit && resetsAtSeconds !== undefined ? resetsAtSeconds * 1000 : undefined,
    retryAfterSeconds: retryAfterSeconds ?? (usageLimit ? undefined : DEFAULT_LIMIT_RETRY_AFTER_SECONDS),
  });
}

/**
 * Anthropic paused all usage of the login's organization at the organization's daily spending cap
 * (`overage-daily-cap-paused`, which Claude Code 2.1.332 reports with no reset and no way out but
 * "contact support"): not the login's plan, so nothing says the plan is spent. Only an admin of
 * the organization lifts it (or the cap's reset), so it is never retried; the account pool rests
 * the login (`usage_paused`) for the Retry-After, the table's hour when no reset is known, and other
 * logins serve meanwhile.
 */
function usagePaused(
  detail: string,
  upstreamStatus: number | undefined,
  resetsAtSeconds: number | undefined,
  now: number,
): GatewayError {
  return new GatewayError('usage_paused', {
    detail,
    upstreamStatus,
    provider: 'provider_c',
    retryAfterSeconds: retryAfterFromReset(resetsAtSeconds, now) ?? errorSpec('usage_paused').retryAfterSeconds,
    resetsAt: resetsAtSeconds === undefined ? undefined : resetsAtSeconds * 1000,
    fix: `Anthropic paused usage for the organization of this login at its daily spending cap (the plan is not spent): an admin of that organization raises or lifts its daily spending cap at ${PROVIDER_C_ORGANIZATION_PAGE} or asks Anthropic support, else usage resumes when the cap resets; the login rests meanwhile and logins of other organizations serve`,
  });
}

/**
 * The API refused this Claude Code build as too old for the model (or for the organization's
 * policy): a 400 only the operator can fix, by updating the CLI, so the message names the
 * command and the version that was refused (the run's own, else the one the startup probe found).
 * Never retried: every run of the same binary gets the same answer.
 */
function clientTooOld(
  detail: string,
  upstreamStatus: number | undefined,
  cliVersion: string | undefined,
): GatewayError {
  const version = cliVersion ?? installedClaudeCodeVersion();
  const fix = PROVIDER_C_FIX;
  return new GatewayError('model_requires_newer_client', {
    detail,
    upstreamStatus,
    provider: 'provider_c',
    publicMessage: `provider_c: the upstream refuses the ${fix.cli} installed on the gateway (${version === undefined ? 'version unknown' : `version ${version}`}) as too old for this model or for the account's organization; ${fix.update}; or choose another model from GET /v1/models`,
  });
}

/** The long-context refusal: the CLI's marker, else its words or the API's (case-insensitive). */
function isLongContextRefusal(report: Pick<CliErrorReport, 'apiError' | 'text'>): boolean {
  return report.apiError === LONG_CONTEXT_API_ERROR || LONG_CONTEXT_PATTERN.test(report.text.toLowerCase());
}

/**
 * The conversation is longer than this login may send without extra usage: a `context_window` error
 * (400 `context_length_exceeded`), which coding agents answer by compacting the conversation and
 * sending it again, the one fix that needs no account owner. Never retried (every run of the same
 * conversation gets the same answer), and neither a dead login nor a spent plan: the login keeps
 * serving shorter conversations.
 */
function longContextRefused(detail: string, upstreamStatus: number | undefined): GatewayError {
  const { cli, paidUsage } = PROVIDER_C_FIX;
  return new GatewayError('context_window', {
    detail,
    upstreamStatus,
    provider: 'provider_c',
    publicMessage: `provider_c: the conversation exceeds the context window this ${cli} login may use without ${paidUsage.name}, ${STANDARD_CONTEXT_TOKENS} tokens (Anthropic's rule for long context on models with a 1,000,000-token window); shorten or compact the conversation below ${STANDARD_CONTEXT_TOKENS} tokens, have the account owner turn on ${paidUsage.name} at ${paidUsage.page}, or choose another model (not retried)`,
    fix: `the account owner turns on ${paidUsage.name} for this login at ${paidUsage.page}, or clients keep their conversations on this login below ${STANDARD_CONTEXT_TOKENS} tokens (compacting them)`,
  });
}

/** The third-party refusal's words, in any of its wordings (case-insensitive). */
function isExtraUsageRefusal(text: string): boolean {
  const lower = text.toLowerCase();
  return EXTRA_USAGE_PATTERNS.some((pattern) => pattern.test(lower));
}

/**
 * Anthropic bills this use of the login as a third-party app, from extra usage that is off or
 * spent: only the account owner can change that (claude.ai/settings/usage), or the client uses
 * another family. Never retried (the CLI already asked three times, and every run gets the same
 * answer) and not a dead login: the same login still serves whatever Anthropic does not classify so.
 */
function extraUsageRequired(detail: string, upstreamStatus: number | undefined): GatewayError {
  return new GatewayError('extra_usage_required', { detail, upstreamStatus, provider: 'provider_c' });
}

function classifyText(text: string, what: string, now: number): GatewayError {
  const lower = text.toLowerCase();
  if (CLIENT_TOO_OLD_PATTERN.test(lower)) return clientTooOld(`${what}: client too old`, undefined, undefined);
  if (LONG_CONTEXT_PATTERN.test(lower)) return longContextRefused(`${what}: long context refused`, undefined);
  if (isExtraUsageRefusal(lower)) return extraUsageRequired(`${what}: extra usage required`, undefined);
  if (USAGE_PAUSED_PATTERN.test(lower)) return usagePaused(`${what}: usage paused`, undefined, undefined, now);
  if (AUTH_PATTERNS.some((pattern) => pattern.test(lower)))
    return new GatewayError('auth', { detail: `${what}: login required` });
  if (LIMIT_PATTERNS.some((pattern) => pattern.test(lower))) {
    return limitError(
      USAGE_LIMIT_PATTERNS.some((pattern) => pattern.test(lower)),
      `${what}: limit reached`,
      parseRetryAfterSeconds(lower, now),
    );
  }
  return new GatewayError('upstream', { detail: what, retryable: true });
}

const UNIT_SECONDS: Record<string, number> = {
  s: 1,
  sec: 1,
  second: 1,
  m: 60,
  min: 60,
  minute: 60,
  h: 3600,
  hr: 3600,
  hour: 3600,
};

/**
 * A wait hint in a limit message: `retry after <n> [unit]`, `resets in <n> <unit>`, or a reset
 * given as Unix seconds (`resets 1767225600`, `…limit reached|1767225600`). Clock times such as
 * `resets 3pm` carry a zone we cannot trust, so they fall back to the default.
 */
export function parseRetryAfterSeconds(lowerText: string, now: number = Date.now()): number | undefined {
  const relative =
    /(?:retry after|resets in|try again in)\s+(\d+(?:\.\d+)?)\s*(s|sec|second|m|min|minute|h|hr|hour)?s?\b/.exec(
      lowerText,
    );
  if (relative) {
    const seconds = Number(relative[1]) * UNIT_SECONDS[relative[2] ?? 's'];
    if (seconds > 0) return Math.ceil(seconds);
  }
  const epoch = /(?:resets?(?:\s+at)?\s+|\|)(\d{10})\b/.exec(lowerText);
  if (epoch) {
    const seconds = Number(epoch[1]) - Math.floor(now / 1000);
    if (seconds > 0) return seconds;
  }
  return undefined;
}
