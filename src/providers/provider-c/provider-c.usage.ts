import { readJsonCapped, usageReadRefused } from '../../common/egress/http-body';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { isJsonObject } from '../../common/json';
import { PROVIDER_C_MODEL_WINDOWS } from '../../accounts/provider-c/provider-c.quota-buckets';
import {
  isSpentPlanWindow,
  type PaidUsage,
  type PlanReport,
  type PlanWindow,
  spentUntilOf,
  vendorWord,
} from '../../core/plan-usage';

/**
 * The host Claude Code 2.1.332 reads its usage from: its OAuth configuration's `BASE_API_URL`,
 * whatever `ANTHROPIC_BASE_URL` says (docs/upstream/provider-c.md "The usage endpoint").
 */
export const PROVIDER_C_USAGE_ORIGIN = 'https://api.anthropic.com';
/** The path the CLI reads for its SDK `get_usage` and `/usage` (plain, without its `?skip_spend=1` style variants). */
export const PROVIDER_C_USAGE_PATH = '/api/oauth/usage';
/** The beta the CLI names on every OAuth-authenticated call to its first-party API. */
export const PROVIDER_C_OAUTH_BETA = 'oauth-2025-04-20';
/**
 * The version named in the user agent when the installed one is not known yet: the pinned Claude
 * Code of oracles/package.json (src/providers/oracle-pins.spec.ts holds it to the pin).
 */
export const FALLBACK_CLAUDE_CODE_VERSION = '2.1.332';
/** A usage answer is a few kilobytes; anything past this is not one. */
const MAX_USAGE_BYTES = 64 * 1024;

/**
 * The plan windows of the answer, with their length. `cinder_cove`, `wattle_ember` and `limits`
 * are left out: the CLI shows them only behind flags, and their meaning is not documented.
 */
const USAGE_WINDOW_SECONDS: Readonly<Record<string, number>> = {
  five_hour: 5 * 3600,
  seven_day: 7 * 86_400,
  seven_day_oauth_apps: 7 * 86_400,
  seven_day_opus: 7 * 86_400,
  seven_day_sonnet: 7 * 86_400,
};

/**
 * Where the gateway reads provider_c's usage: the CLI's own host, unless the children's
 * environment points Anthropic's API elsewhere with `ANTHROPIC_BASE_URL` (a relay in front of
 * the API, or the loopback fake in tests); then there.
 */
export function providerCUsageUrl(childEnv: Readonly<Record<string, string>>): string {
  const base = childEnv.ANTHROPIC_BASE_URL?.trim();
  // A base that is no URL is the CLI's to refuse; the read then goes to the CLI's own host.
  const url = base && URL.canParse(base) ? new URL(base) : new URL(PROVIDER_C_USAGE_ORIGIN);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${PROVIDER_C_USAGE_PATH}`;
  url.search = '';
  url.hash = '';
  return url.toString();
}

/**
 * The usage answer (docs/upstream/provider-c.md "The usage endpoint") as a plan report, or
 * `undefined` when it carries neither a window nor extra usage:
 * - each window object (`five_hour`, `seven_day`, …) with a non-null `utilization` (a percentage,
 *   as the CLI prints `${Math.floor(utilization)}% used`) becomes a window of `utilization / 100`,
 *   resetting at `resets_at` (an ISO time); a null window or utilization is not reported;
 *   `seven_day_opus` and `seven_day_sonnet` limit one model family (`model`, PROVIDER_C_MODEL_WINDOWS);
 * - the plan is spent when a reported window of the whole plan is at 100 % or more, until the
 *   latest of those windows' resets (`spentUntil`);
 * - extra usage stands behind the plan while `extra_usage.is_enabled` and its monthly limit is not
 *   used up (`extraUsageOf`), `disabled_reason` says why not, and what is left of the limit is
 *   the balance. The endpoint does not say whether a turn draws it (`inUse` is left unknown).
 */
export function planReportFromUsage(answer: unknown): PlanReport | undefined {
  if (!isJsonObject(answer)) return undefined;
  const windows: PlanWindow[] = [];
  for (const [name, windowSeconds] of Object.entries(USAGE_WINDOW_SECONDS)) {
    const window = answer[name];
    if (!isJsonObject(window) || typeof window.utilization !== 'number' || !Number.isFinite(window.utilization))
      continue;
    const resetsAt = typeof window.resets_at === 'string' ? Date.parse(window.resets_at) : Number.NaN;
    const model = PROVIDER_C_MODEL_WINDOWS[name];
    windows.push({
      name,
      usedRatio: Math.max(0, window.utilization) / 100,
      windowSeconds,
      ...(Number.isFinite(resetsAt) ? { resetsAt } : {}),
      ...(model !== undefined ? { model } : {}),
    });
  }
  const paid = extraUsageOf(answer.extra_usage);
  if (windows.length === 0 && paid === undefined) return undefined;
  const spent = windows.filter(isSpentPlanWindow);
  const spentUntil = spentUntilOf(spent);
  return {
    windows,
    ...(paid ? { paid } : {}),
    planSpent: spent.length > 0,
    ...(spentUntil !== undefined ? { spentUntil } : {}),
    source: 'usage_endpoint',
  };
}

/**
 * `extra_usage` as paid usage: available while it is enabled and its monthly limit is not used up.
 * `is_enabled` alone does not say that: an answer may say enabled with `utilization` at 100 or
 * `used_credits` at `monthly_limit`, and then nothing is left to draw (the API refuses a spent
 * plan's turns itself), so it is not available, for the vendor's reason when it gives one, else
 * `out_of_credits` (the word Claude Code's `overageDisabledReason` uses for spent extra usage).
 * A `monthly_limit` of 0 is left unread: "no limit" or "nothing left" alike, and reading it as
 * spent would let a spent plan's turn be billed without the guard.
 */
function extraUsageOf(raw: unknown): PaidUsage | undefined {
  if (!isJsonObject(raw) || typeof raw.is_enabled !== 'boolean') return undefined;
  // A limit of 0 is unread (above).
  const limit = amount(raw.monthly_limit) || undefined;
  const used = amount(raw.used_credits);
  const utilization = typeof raw.utilization === 'number' && Number.isFinite(raw.utilization) ? raw.utilization : 0;
  const spent = utilization >= 100 || (limit !== undefined && used !== undefined && used >= limit);
  const available = raw.is_enabled && !spent;
  const reason = vendorWord(raw.disabled_reason) ?? (raw.is_enabled && spent ? 'out_of_credits' : undefined);
  const balance = raw.is_enabled ? leftOf(limit, used, raw.currency) : undefined;
  return {
    kind: 'extra_usage',
    available,
    ...(balance !== undefined ? { balance } : {}),
    ...(reason ? { disabledReason: reason } : {}),
  };
}

/** A non-negative finite number, else `undefined` (the schema's `null`, or anything else). */
function amount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * What is left of the monthly limit, in the currency's major unit with its code (`37.66 USD`):
 * the answer's amounts are minor units of `currency` (cents for USD; the CLI reads an answer
 * without one as USD). `undefined` without both amounts (no monthly limit, or one of 0) or with
 * a currency that is no three-letter code.
 */
function leftOf(limit: number | undefined, used: number | undefined, currency: unknown): string | undefined {
  if (limit === undefined || used === undefined) return undefined;
  const code = currency === undefined || currency === null ? 'USD' : currency;
  if (typeof code !== 'string' || !/^[A-Za-z]{3}$/.test(code)) return undefined;
  const upper = code.toUpperCase();
  const digits = minorDigits(upper);
  return `${(Math.max(0, limit - used) / 10 ** digits).toFixed(digits)} ${upper}`;
}

/** The minor-unit digits of a currency (2 for USD, 0 for JPY); 2 for a code Intl does not know. */
function minorDigits(code: string): number {
  try {
    return (
      new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2
    );
  } catch {
    return 2;
  }
}

export interface ProviderCUsageRead {
  readonly url: string;
  /** The login's OAuth access token, as a child of that login would send it. */
  readonly token: string;
  /** The installed CLI's version, for the user agent; the bundled oracle's when not known. */
  readonly cliVersion?: string;
  readonly proxy?: UpstreamProxy;
  readonly signal: AbortSignal;
}

/**
 * `GET /api/oauth/usage` with the headers the CLI sends (captured from 2.1.332: bearer token,
 * `anthropic-beta: oauth-2025-04-20`, `User-Agent: claude-cli/<version> (external, sdk-cli)`,
 * JSON accept and content type), as a plan report. A 401/403 is `auth` (the token is
 * refused, or lacks the `user:profile` scope), any other non-2xx `upstream`; only the status is kept.
 */
export async function readProviderCUsage(read: ProviderCUsageRead): Promise<PlanReport | undefined> {
  const fetcher = read.proxy ?? { fetch: (url: string, init: RequestInit) => fetch(url, init) };
  const response = await fetcher.fetch(read.url, {
    method: 'GET',
    headers: {
      accept: 'application/json, text/plain, */*',
      authorization: `Bearer ${read.token}`,
      'anthropic-beta': PROVIDER_C_OAUTH_BETA,
      'content-type': 'application/json',
      'user-agent': `claude-cli/${read.cliVersion ?? FALLBACK_CLAUDE_CODE_VERSION} (external, sdk-cli)`,
    },
    redirect: 'error',
    signal: read.signal,
  });
  if (!response.ok) throw usageReadRefused(response, 'provider_c');
  return planReportFromUsage(await readJsonCapped(response, MAX_USAGE_BYTES));
}
