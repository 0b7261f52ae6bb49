import type { ProviderACredentials } from '../../accounts/provider-a/provider-a.auth';
import { readJsonCapped, usageReadRefused } from '../../common/egress/http-body';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import type { PlanReport } from '../../core/plan-usage';
import type { CodexClient } from './provider-a.client';
import { modelsListHeaders } from './provider-a.models-list';
import { planReportOf, rateLimitsFromUsage } from './provider-a.rate-limits';
import { httpUrlFor } from './provider-a.transport';

/** A usage answer is a few hundred bytes; anything past this is not one. */
const MAX_USAGE_BYTES = 64 * 1024;

/**
 * The usage endpoint the Codex CLI's `/status` reads (docs/upstream/provider-a.md §4.3): on the
 * ChatGPT backend (a base whose path holds `/backend-api`) `…/backend-api/wham/usage`, else the
 * Codex API's `…/api/codex/usage`. Derived from PROVIDER_A_URL's origin and path.
 */
export function whamUsageUrl(responsesUrl: string): string {
  const url = new URL(httpUrlFor(responsesUrl));
  const at = url.pathname.indexOf('/backend-api');
  url.pathname = at >= 0 ? `${url.pathname.slice(0, at)}/backend-api/wham/usage` : '/api/codex/usage';
  url.search = '';
  url.hash = '';
  return url.toString();
}

export interface ProviderAUsageRead {
  readonly url: string;
  readonly credentials: ProviderACredentials;
  readonly client: CodexClient;
  readonly proxy?: UpstreamProxy;
  readonly signal: AbortSignal;
  readonly now?: number;
}

/**
 * `GET wham/usage` with the login's bearer and `ChatGPT-Account-Id`, as a plan report. A 401/403
 * is `auth` (the login's token is refused), any other non-2xx `upstream`; only the status is kept.
 */
export async function readProviderAUsage(read: ProviderAUsageRead): Promise<PlanReport | undefined> {
  const fetcher = read.proxy ?? { fetch: (url: string, init: RequestInit) => fetch(url, init) };
  const response = await fetcher.fetch(read.url, {
    method: 'GET',
    headers: modelsListHeaders(read.credentials, read.client),
    signal: read.signal,
  });
  if (!response.ok) throw usageReadRefused(response, 'provider_a');
  const now = read.now ?? Date.now();
  const limits = rateLimitsFromUsage(await readJsonCapped(response, MAX_USAGE_BYTES), now);
  return limits ? planReportOf(limits, 'usage_endpoint', false, now) : undefined;
}
