import { GatewayError } from '../../core/gateway.error';
import { sanitizeIdentifier } from '../../common/logging/sanitize';
import { awaitUnlessAborted, isAbortError } from '../shared/abort';
import type { EventLogger } from '../../core/event-logger';
import { CODE_ASSIST_METADATA, onboardingMaxPolls, onboardingPollIntervalMs } from './provider-b.constants';
import { isJsonObject } from '../../common/json';

/** How discovery talks to the upstream; the adapter binds it to one turn. */
export interface DiscoveryTransport {
  /** POST `{base}:<method>` with auth (incl. the §3 401 retry); resolves with the JSON body. */
  call(method: 'loadCodeAssist' | 'onboardUser', body: unknown): Promise<unknown>;
  /** Sleeps, rejecting as soon as the turn is aborted. */
  wait(ms: number): Promise<void>;
  readonly deadlineAt: number;
  readonly signal: AbortSignal;
  readonly logger: EventLogger;
}

type Json = Record<string, unknown>;
/** What a `loadCodeAssist` answer tells us to do (provider_b.md §4.2). */
export type LoadDecision =
  | { readonly kind: 'project'; readonly project: string }
  | { readonly kind: 'onboard'; readonly tierId: string }
  | { readonly kind: 'fail'; readonly reason: 'provider_b_project_required' | 'provider_b_validation_required'; readonly ineligible: string[] };

/** `cloudaicompanionProject` is a string id or an object `{id, name}`; both are accepted. */
export function projectIdOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (isJsonObject(value) && typeof value.id === 'string' && value.id.trim() !== '') return value.id.trim();
  return undefined;
}

export function decideFromLoadResponse(response: unknown): LoadDecision {
  const body = isJsonObject(response) ? response : {};
  const project = projectIdOf(body.cloudaicompanionProject);
  const ineligible = (Array.isArray(body.ineligibleTiers) ? body.ineligibleTiers : [])
    .map((tier) => (isJsonObject(tier) && typeof tier.reasonCode === 'string' ? tier.reasonCode : undefined))
    .filter((code): code is string => code !== undefined);
  if (isJsonObject(body.currentTier)) {
    return project ? { kind: 'project', project } : { kind: 'fail', reason: 'provider_b_project_required', ineligible };
  }
  if (ineligible.includes('VALIDATION_REQUIRED')) return { kind: 'fail', reason: 'provider_b_validation_required', ineligible };
  const tiers = Array.isArray(body.allowedTiers) ? body.allowedTiers.filter(isJsonObject) : [];
  const defaultTier = tiers.find((tier) => tier.isDefault === true && typeof tier.id === 'string');
  return { kind: 'onboard', tierId: (defaultTier?.id as string | undefined) ?? 'legacy-tier' };
}

/** §4.2–§4.3: `loadCodeAssist`, then onboarding with polling when the account has no tier yet. */
export async function discoverProject(transport: DiscoveryTransport): Promise<string> {
  const decision = decideFromLoadResponse(await transport.call('loadCodeAssist', { metadata: CODE_ASSIST_METADATA }));
  if (decision.kind === 'project') return decision.project;
  if (decision.kind === 'fail') {
    transport.logger.warn(
      { event: 'provider_b_project_unavailable', reason: decision.reason, ineligibleReasons: decision.ineligible.map((code) => sanitizeIdentifier(code)) },
      'provider_b_project_unavailable',
    );
    const hint = decision.reason === 'provider_b_project_required' ? 'set PROVIDER_B_PROJECT' : 'open the Gemini CLI once to validate the account';
    throw new GatewayError('auth', { detail: `${decision.reason}: ${hint}` });
  }
  return onboard(transport, decision.tierId);
}

async function onboard(transport: DiscoveryTransport, tierId: string): Promise<string> {
  const body = { tierId, metadata: CODE_ASSIST_METADATA };
  let operation = await transport.call('onboardUser', body);
  for (let polls = 0; !(isJsonObject(operation) && operation.done === true); polls++) {
    const interval = onboardingPollIntervalMs();
    if (polls >= onboardingMaxPolls()) return onboardingFailed(transport, 'not done after polling');
    if (Date.now() + interval >= transport.deadlineAt) throw new GatewayError('timeout', { detail: 'provider_b onboarding outlived the turn deadline' });
    await transport.wait(interval);
    operation = await transport.call('onboardUser', body);
  }
  const response = isJsonObject(operation) && isJsonObject(operation.response) ? operation.response : {};
  return projectIdOf(response.cloudaicompanionProject) ?? onboardingFailed(transport, 'done without a project');
}

function onboardingFailed(transport: DiscoveryTransport, why: string): never {
  transport.logger.warn({ event: 'provider_b_project_unavailable', reason: 'provider_b_onboarding_failed' }, 'provider_b_project_unavailable');
  throw new GatewayError('auth', { detail: `provider_b_onboarding_failed: ${why}` });
}

/**
 * The project of each login (§4.1, §4.4): the configured one verbatim, else discovered once.
 * One discovery per login is in flight at a time (concurrent requests await it); a success is
 * cached for the process lifetime under the login key; failures are never cached.
 */
export class ProviderBProjectResolver {
  private readonly cache = new Map<string, string>();
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(private readonly configured: string | undefined) {}

  get isConfigured(): boolean {
    return this.configured !== undefined;
  }

  async resolve(loginKey: string, transport: DiscoveryTransport): Promise<string> {
    if (this.configured !== undefined) return this.configured;
    for (;;) {
      const cached = this.cache.get(loginKey);
      if (cached !== undefined) return cached;
      const shared = this.inFlight.get(loginKey);
      const pending = shared ?? this.start(loginKey, transport);
      try {
        return await awaitUnlessAborted(pending, transport.signal);
      } catch (error) {
        // The discovery we joined belonged to a request whose client left: try again ourselves.
        if (shared && !transport.signal.aborted && isAbortError(error)) continue;
        throw error;
      }
    }
  }

  private start(loginKey: string, transport: DiscoveryTransport): Promise<string> {
    const pending = discoverProject(transport).then(
      (project) => {
        this.cache.set(loginKey, project);
        return project;
      },
    ).finally(() => this.inFlight.delete(loginKey));
    this.inFlight.set(loginKey, pending);
    return pending;
  }
}
