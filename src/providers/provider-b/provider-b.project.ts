import { GatewayError } from '../../core/gateway.error';
import { sanitizeIdentifier } from '../../common/logging/request-log';
import { untilAborted } from '../../common/async/abortable';
import { isAbortError } from '../shared/abort';
import type { EventLogger } from '../../core/event-logger';
import { CODE_ASSIST_METADATA } from './provider-b.constants';
import { isJsonObject } from '../../common/json';
import type { ProviderBFixReason } from './provider-b.refusals';
import { PERIMETER_PROJECT_FIX, PROJECT_SETUP_DOC, PROVIDER_B_FIXES } from './provider-b.refusals';
import { UpstreamRefusal } from '../shared/upstream-failure';

/** How discovery talks to the upstream; the adapter binds it to one turn. */
export interface DiscoveryTransport {
  /** POST `{base}:<method>` with auth (incl. the docs/upstream/provider-b.md §3 401 retry); resolves with the JSON body. */
  call(method: 'loadCodeAssist' | 'onboardUser', body: unknown): Promise<unknown>;
  /** GET `{base}/<operation name>`: the state of a long-running operation. */
  getOperation(name: string): Promise<unknown>;
  /** Sleeps, rejecting as soon as the turn is aborted. */
  wait(ms: number): Promise<void>;
  readonly deadlineAt: number;
  readonly signal: AbortSignal;
  readonly logger: EventLogger;
}

/** The tier `onboardUser` is asked for: the default allowed tier, else `legacy-tier` (as the CLI). */
interface OnboardTier {
  readonly id: string;
}

/** What a `loadCodeAssist` answer tells us to do (docs/upstream/provider-b.md §4.2, the pinned CLI's setup). */
export type LoadDecision =
  | { readonly kind: 'project'; readonly project: string }
  | { readonly kind: 'onboard'; readonly tier: OnboardTier; readonly ineligible: string[] }
  | { readonly kind: 'unsupported'; readonly ineligible: string[] }
  | {
      readonly kind: 'fail';
      readonly reason: 'provider_b_project_required' | 'provider_b_validation_required';
      readonly ineligible: string[];
    };

/** Google's answer to Gemini CLI logins of individual accounts since 2026-06-18. */
const UNSUPPORTED_CLIENT = 'UNSUPPORTED_CLIENT';
const FREE_TIER = 'free-tier';
/** How long an "account unsupported" answer is reused for the same login: a burst costs one call. */
export const UNSUPPORTED_CACHE_MS = 60_000;

/** `cloudaicompanionProject` is a string id or an object `{id, name}`; both are accepted. */
export function projectIdOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (isJsonObject(value) && typeof value.id === 'string' && value.id.trim() !== '') return value.id.trim();
  return undefined;
}

/**
 * The decision the pinned CLI's `setupUser` makes, plus the one it leaves to the backend's
 * message: an account whose tiers are all ineligible (`UNSUPPORTED_CLIENT`, or ineligible tiers
 * and nothing allowed) is unsupported, not unauthenticated. `configured` is PROVIDER_B_PROJECT.
 */
export function decideFromLoadResponse(response: unknown, configured?: string): LoadDecision {
  const body = isJsonObject(response) ? response : {};
  const project = projectIdOf(body.cloudaicompanionProject) ?? configured;
  const ineligible = (Array.isArray(body.ineligibleTiers) ? body.ineligibleTiers : [])
    .map((tier) => (isJsonObject(tier) && typeof tier.reasonCode === 'string' ? tier.reasonCode : undefined))
    .filter((code): code is string => code !== undefined);
  if (isJsonObject(body.currentTier)) {
    if (project) return { kind: 'project', project };
    return ineligible.length > 0
      ? { kind: 'unsupported', ineligible }
      : { kind: 'fail', reason: 'provider_b_project_required', ineligible };
  }
  if (ineligible.includes('VALIDATION_REQUIRED'))
    return { kind: 'fail', reason: 'provider_b_validation_required', ineligible };
  const allowed = Array.isArray(body.allowedTiers) ? body.allowedTiers.filter(isJsonObject) : [];
  if (ineligible.includes(UNSUPPORTED_CLIENT) || (ineligible.length > 0 && allowed.length === 0))
    return { kind: 'unsupported', ineligible };
  const defaultTier = allowed.find((tier) => tier.isDefault === true && typeof tier.id === 'string');
  return { kind: 'onboard', tier: { id: (defaultTier?.id as string | undefined) ?? 'legacy-tier' }, ineligible };
}

/** The body of `:loadCodeAssist`: with a configured project, it names it twice, as the CLI does. */
export function loadCodeAssistBody(configured: string | undefined): Record<string, unknown> {
  return configured === undefined
    ? { metadata: { ...CODE_ASSIST_METADATA } }
    : { cloudaicompanionProject: configured, metadata: { ...CODE_ASSIST_METADATA, duetProject: configured } };
}

/** The body of `:onboardUser`: the free tier never names a project; any other tier names the configured one. */
export function onboardUserBody(tier: OnboardTier, configured: string | undefined): Record<string, unknown> {
  if (tier.id === FREE_TIER || configured === undefined)
    return { tierId: tier.id, metadata: { ...CODE_ASSIST_METADATA } };
  return {
    tierId: tier.id,
    cloudaicompanionProject: configured,
    metadata: { ...CODE_ASSIST_METADATA, duetProject: configured },
  };
}

/**
 * What the pinned CLI's `CodeAssistServer.loadCodeAssist` answers itself when VPC Service Controls
 * refuse the call: a standard tier and no project, so set-up goes on with the configured project.
 */
const PERIMETER_ANSWER = { currentTier: { id: 'standard-tier' } };

/**
 * A refusal by VPC Service Controls, read as the CLI's `isVpcScAffectedUser` reads it: any
 * `details[]` entry of the error body with reason `SECURITY_POLICY_VIOLATED`, whatever the status.
 */
export function isPerimeterRefusal(failure: unknown): boolean {
  if (!(failure instanceof UpstreamRefusal)) return false;
  const error = isJsonObject(failure.body) ? failure.body.error : undefined;
  const details = isJsonObject(error) && Array.isArray(error.details) ? error.details : [];
  return details.some((detail) => isJsonObject(detail) && detail.reason === 'SECURITY_POLICY_VIOLATED');
}

/** `:loadCodeAssist`'s answer, or the CLI's stand-in when a VPC Service Controls perimeter refuses the call. */
async function loadCodeAssist(
  transport: DiscoveryTransport,
  configured: string | undefined,
): Promise<{ readonly answer: unknown; readonly perimeter: boolean }> {
  try {
    return { answer: await transport.call('loadCodeAssist', loadCodeAssistBody(configured)), perimeter: false };
  } catch (error) {
    if (!isPerimeterRefusal(error)) throw error;
    return { answer: PERIMETER_ANSWER, perimeter: true };
  }
}

/** `loadCodeAssist` always (the configured project too must be known to Code Assist), then onboarding if needed. */
export async function discoverProject(
  transport: DiscoveryTransport,
  configured: string | undefined,
  pollIntervalMs: number,
): Promise<string> {
  const { answer, perimeter } = await loadCodeAssist(transport, configured);
  const decision = decideFromLoadResponse(answer, configured);
  switch (decision.kind) {
    case 'project':
      return decision.project;
    case 'unsupported':
      return unsupported(transport, decision.ineligible);
    case 'fail':
      // Behind a perimeter the answer is the CLI's stand-in: the fix says so, the setting stays the way out.
      return projectRequired(
        transport,
        decision.reason,
        decision.ineligible,
        perimeter ? PERIMETER_PROJECT_FIX : PROVIDER_B_FIXES[decision.reason],
      );
    case 'onboard':
      return onboard(transport, decision.tier, decision.ineligible, configured, pollIntervalMs);
  }
}

/**
 * `onboardUser`, then `GET` its long-running operation every PROVIDER_B_ONBOARDING_POLL_INTERVAL
 * (5 s, as the CLI does) until done, within the turn deadline.
 */
async function onboard(
  transport: DiscoveryTransport,
  tier: OnboardTier,
  ineligible: string[],
  configured: string | undefined,
  interval: number,
): Promise<string> {
  let operation = await transport.call('onboardUser', onboardUserBody(tier, configured));
  const name =
    isJsonObject(operation) && typeof operation.name === 'string' && isOperationName(operation.name)
      ? operation.name
      : undefined;
  while (!(isJsonObject(operation) && operation.done === true)) {
    if (name === undefined) return onboardingFailed(transport, 'pending operation without a usable name');
    if (Date.now() + interval >= transport.deadlineAt)
      throw new GatewayError('timeout', { detail: 'provider_b onboarding outlived the turn deadline' });
    await transport.wait(interval);
    operation = await transport.getOperation(name);
  }
  const response = isJsonObject(operation.response) ? operation.response : {};
  const project = projectIdOf(response.cloudaicompanionProject) ?? configured;
  if (project) return project;
  if (ineligible.length > 0) return unsupported(transport, ineligible);
  // The CLI's setup ends here with ProjectIdRequiredError (set GOOGLE_CLOUD_PROJECT): the account
  // needs a project, not a new login.
  return projectRequired(transport, 'provider_b_project_required', []);
}

/** `operations/<id>`-style names only: the name becomes part of a URL path. */
function isOperationName(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9/_.-]{0,255}$/.test(name) && !name.includes('..');
}

function unsupported(transport: DiscoveryTransport, ineligible: string[]): never {
  logUnavailable(transport, 'provider_b_account_unsupported', ineligible);
  throw new GatewayError('provider_account_unsupported', {
    detail: `provider_b loadCodeAssist: no usable tier (${ineligible.map((code) => sanitizeIdentifier(code)).join(',')})`,
    fix: PROVIDER_B_FIXES.provider_b_account_unsupported,
    upstreamStatus: 403,
  });
}

/** The account needs a one-time fix that is not a new login (a project, a validation): the login stays usable. */
function projectRequired(
  transport: DiscoveryTransport,
  reason: 'provider_b_project_required' | 'provider_b_validation_required',
  ineligible: string[],
  fix: string = PROVIDER_B_FIXES[reason],
): never {
  logUnavailable(transport, reason, ineligible, fix);
  throw new GatewayError('provider_project_required', {
    publicMessage: `provider_b: ${fix}; see ${PROJECT_SETUP_DOC}`,
    detail: reason,
    fix,
    provider: 'provider_b',
  });
}

function onboardingFailed(transport: DiscoveryTransport, why: string): never {
  logUnavailable(transport, 'provider_b_onboarding_failed', []);
  throw new GatewayError('auth', {
    detail: `provider_b_onboarding_failed: ${why}`,
    fix: PROVIDER_B_FIXES.provider_b_onboarding_failed,
  });
}

function logUnavailable(
  transport: DiscoveryTransport,
  reason: ProviderBFixReason,
  ineligible: string[],
  fix: string = PROVIDER_B_FIXES[reason],
): void {
  // At info: the turn's failure carries the same fix to the request's one warning.
  transport.logger.info(
    {
      event: 'provider_b_project_unavailable',
      reason,
      ineligibleReasons: ineligible.map((code) => sanitizeIdentifier(code)),
      fix,
    },
    'provider_b_project_unavailable',
  );
}

/**
 * The project of each login (docs/upstream/provider-b.md §4.4): discovered once per login (the configured project goes
 * through `loadCodeAssist` too). One discovery per login is in flight at a time (concurrent
 * requests await it); a success is cached for the process lifetime, an "account unsupported"
 * answer for a minute, and any other failure not at all.
 */
export class ProviderBProjectResolver {
  private readonly cache = new Map<string, string>();
  private readonly unsupported = new Map<string, { readonly error: GatewayError; readonly until: number }>();
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(
    private readonly configured: string | undefined,
    /** PROVIDER_B_ONBOARDING_POLL_INTERVAL. */
    private readonly onboardingPollIntervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async resolve(loginKey: string, transport: DiscoveryTransport): Promise<string> {
    for (;;) {
      const cached = this.cache.get(loginKey);
      if (cached !== undefined) return cached;
      const refused = this.unsupported.get(loginKey);
      if (refused && refused.until > this.now()) throw refused.error;
      const shared = this.inFlight.get(loginKey);
      const pending = shared ?? this.start(loginKey, transport);
      try {
        return await untilAborted(pending, transport.signal);
      } catch (error) {
        // The discovery we joined belonged to a request whose client left: try again ourselves.
        if (shared && !transport.signal.aborted && isAbortError(error)) continue;
        throw error;
      }
    }
  }

  private start(loginKey: string, transport: DiscoveryTransport): Promise<string> {
    const pending = discoverProject(transport, this.configured, this.onboardingPollIntervalMs)
      .then(
        (project) => {
          this.cache.set(loginKey, project);
          this.unsupported.delete(loginKey);
          return project;
        },
        (error: unknown) => {
          if (error instanceof GatewayError && error.code === 'provider_account_unsupported') {
            this.unsupported.set(loginKey, { error, until: this.now() + UNSUPPORTED_CACHE_MS });
          }
          throw error;
        },
      )
      .finally(() => this.inFlight.delete(loginKey));
    this.inFlight.set(loginKey, pending);
    return pending;
  }
}
