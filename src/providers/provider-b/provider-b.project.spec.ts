import { recordingLogger } from '../../../test/support/recorders';
import { ClientDisconnectedError, GatewayError } from '../../core/gateway.error';
import { UpstreamRefusal } from '../shared/upstream-failure';
import type { DiscoveryTransport } from './provider-b.project';
import {
  decideFromLoadResponse,
  discoverProject,
  isPerimeterRefusal,
  loadCodeAssistBody,
  onboardUserBody,
  ProviderBProjectResolver,
  projectIdOf,
} from './provider-b.project';
import { PROVIDER_B_FIXES } from './provider-b.refusals';

/** PROVIDER_B_ONBOARDING_POLL_INTERVAL's default. */
const POLL_MS = 5_000;

interface FakeDiscovery extends DiscoveryTransport {
  /** Every upstream call in order: the method, or `GET <operation name>`. */
  readonly calls: string[];
  readonly abort: (reason: unknown) => void;
}

/**
 * A transport whose `loadCodeAssist` and `onboardUser` answer `answers` (a function answers per
 * call), whose operation GETs answer `operations` in turn, and whose waits end at once. Every
 * call rejects with the abort reason once the transport is aborted, as the adapter's does.
 */
function fakeTransport(
  answers: { loadCodeAssist?: unknown; onboardUser?: unknown; operations?: unknown[] },
  deadlineAt = Date.now() + 60_000,
): FakeDiscovery {
  const controller = new AbortController();
  const calls: string[] = [];
  const operations = [...(answers.operations ?? [])];
  const aborted = new Promise<never>((_resolve, reject) =>
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true }),
  );
  aborted.catch(() => undefined);
  const settle = (answer: unknown): Promise<unknown> =>
    Promise.race([aborted, typeof answer === 'function' ? (answer as () => Promise<unknown>)() : answer]);
  return {
    calls,
    abort: (reason) => controller.abort(reason),
    call: (method) => {
      calls.push(method);
      return settle(answers[method]);
    },
    getOperation: (name) => {
      calls.push(`GET ${name}`);
      return settle(operations.shift());
    },
    wait: () => settle(undefined).then(() => undefined),
    deadlineAt,
    signal: controller.signal,
    logger: recordingLogger(),
  };
}

/** What a promise rejected with (fails the test when it resolved). */
async function rejectionOf(promise: Promise<unknown>): Promise<GatewayError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`resolved with ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(GatewayError);
  return outcome.error as GatewayError;
}

/** A `loadCodeAssist` answer that sends the account to onboarding on the standard tier. */
const TO_ONBOARD = { allowedTiers: [{ id: 'standard-tier', isDefault: true }] };

describe(decideFromLoadResponse.name, () => {
  it('uses the project of an onboarded account, in string or object form', () => {
    expect(decideFromLoadResponse({ currentTier: { id: 'free-tier' }, cloudaicompanionProject: 'p-1' })).toEqual({
      kind: 'project',
      project: 'p-1',
    });
    expect(
      decideFromLoadResponse({
        currentTier: { id: 'standard-tier' },
        cloudaicompanionProject: { id: 'p-9', name: 'n' },
      }),
    ).toEqual({
      kind: 'project',
      project: 'p-9',
    });
  });

  it('requires PROVIDER_B_PROJECT when an onboarded account has no project, and uses the configured one', () => {
    expect(decideFromLoadResponse({ currentTier: { id: 'standard-tier' } })).toEqual({
      kind: 'fail',
      reason: 'provider_b_project_required',
      ineligible: [],
    });
    expect(decideFromLoadResponse({ currentTier: { id: 'standard-tier' } }, 'mine')).toEqual({
      kind: 'project',
      project: 'mine',
    });
  });

  it('calls an account unsupported when Google refuses the client or every tier (the CLI: IneligibleTierError)', () => {
    const unsupportedClient = { ineligibleTiers: [{ reasonCode: 'UNSUPPORTED_CLIENT', tierId: 'free-tier' }] };
    expect(decideFromLoadResponse(unsupportedClient)).toEqual({
      kind: 'unsupported',
      ineligible: ['UNSUPPORTED_CLIENT'],
    });
    expect(
      decideFromLoadResponse({ ...unsupportedClient, allowedTiers: [{ id: 'standard-tier', isDefault: true }] }),
    ).toMatchObject({ kind: 'unsupported' });
    expect(decideFromLoadResponse({ ineligibleTiers: [{ reasonCode: 'INELIGIBLE_ACCOUNT' }] })).toEqual({
      kind: 'unsupported',
      ineligible: ['INELIGIBLE_ACCOUNT'],
    });
    expect(
      decideFromLoadResponse({
        currentTier: { id: 'standard-tier' },
        ineligibleTiers: [{ reasonCode: 'RESTRICTED_AGE' }],
      }),
    ).toEqual({
      kind: 'unsupported',
      ineligible: ['RESTRICTED_AGE'],
    });
  });

  it('still onboards to an allowed tier when only another tier is ineligible (a licensed Workspace account)', () => {
    const answer = {
      allowedTiers: [{ id: 'standard-tier', isDefault: true }],
      ineligibleTiers: [{ reasonCode: 'UNSUPPORTED_LOCATION', tierId: 'free-tier' }],
    };
    expect(decideFromLoadResponse(answer, 'p')).toEqual({
      kind: 'onboard',
      tier: { id: 'standard-tier' },
      ineligible: ['UNSUPPORTED_LOCATION'],
    });
  });

  it('fails with validation_required instead of onboarding an account that must be validated', () => {
    expect(
      decideFromLoadResponse({ ineligibleTiers: [{ reasonCode: 'VALIDATION_REQUIRED', tierId: 'free-tier' }] }),
    ).toMatchObject({
      kind: 'fail',
      reason: 'provider_b_validation_required',
    });
  });

  it('onboards with the default tier, else legacy-tier', () => {
    expect(
      decideFromLoadResponse({ allowedTiers: [{ id: 'standard-tier' }, { id: 'free-tier', isDefault: true }] }),
    ).toEqual({ kind: 'onboard', tier: { id: 'free-tier' }, ineligible: [] });
    expect(decideFromLoadResponse({})).toEqual({ kind: 'onboard', tier: { id: 'legacy-tier' }, ineligible: [] });
  });
});

describe('setup bodies (captured from Gemini CLI 0.61.0)', () => {
  const metadata = { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI' };
  it('names a configured project in loadCodeAssist and in onboardUser for a non-free tier only', () => {
    expect(loadCodeAssistBody(undefined)).toEqual({ metadata });
    expect(loadCodeAssistBody('p-1')).toEqual({
      cloudaicompanionProject: 'p-1',
      metadata: { ...metadata, duetProject: 'p-1' },
    });
    expect(onboardUserBody({ id: 'free-tier' }, 'p-1')).toEqual({ tierId: 'free-tier', metadata });
    expect(onboardUserBody({ id: 'standard-tier' }, 'p-1')).toEqual({
      tierId: 'standard-tier',
      cloudaicompanionProject: 'p-1',
      metadata: { ...metadata, duetProject: 'p-1' },
    });
  });
});

describe(projectIdOf.name, () => {
  it('trims the project id in string and object form', () => {
    expect(projectIdOf('  p-1 ')).toBe('p-1');
    expect(projectIdOf({ id: ' p-2  ' })).toBe('p-2');
  });

  it('rejects blanks and shapes without an id', () => {
    expect(projectIdOf('  ')).toBeUndefined();
    expect(projectIdOf({ name: 'x' })).toBeUndefined();
    expect(projectIdOf(7)).toBeUndefined();
  });
});

describe(isPerimeterRefusal.name, () => {
  const refusal = (status: number, details: unknown[]) =>
    new UpstreamRefusal(status, { error: { code: status, status: 'PERMISSION_DENIED', details } });

  it("reads any detail's reason, whatever the status, as the CLI's isVpcScAffectedUser does", () => {
    const info = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'SECURITY_POLICY_VIOLATED' };
    expect(isPerimeterRefusal(refusal(403, [info]))).toBe(true);
    expect(isPerimeterRefusal(refusal(403, [{ reason: 'OTHER' }, { reason: 'SECURITY_POLICY_VIOLATED' }]))).toBe(true);
    expect(isPerimeterRefusal(refusal(400, [info]))).toBe(true);
  });

  it('takes nothing else for a perimeter', () => {
    expect(isPerimeterRefusal(refusal(403, [{ reason: 'IAM_PERMISSION_DENIED' }]))).toBe(false);
    expect(isPerimeterRefusal(refusal(403, []))).toBe(false);
    expect(isPerimeterRefusal(new UpstreamRefusal(403, undefined))).toBe(false);
    expect(isPerimeterRefusal(new Error('SECURITY_POLICY_VIOLATED'))).toBe(false);
  });
});

describe(discoverProject.name, () => {
  it('polls the onboarding operation until done and uses its project', async () => {
    const transport = fakeTransport({
      loadCodeAssist: TO_ONBOARD,
      onboardUser: { name: 'operations/op-1', done: false },
      operations: [{ name: 'operations/op-1' }, { done: true, response: { cloudaicompanionProject: { id: 'p-7' } } }],
    });
    await expect(discoverProject(transport, undefined, POLL_MS)).resolves.toBe('p-7');
    expect(transport.calls).toEqual(['loadCodeAssist', 'onboardUser', 'GET operations/op-1', 'GET operations/op-1']);
  });

  it.each([
    ['without a name', { done: false }],
    ["whose name climbs out of the operations path with '..'", { name: 'operations/../v1/x', done: false }],
  ])(
    'fails as a login needing the onboarding fix, without polling, when onboardUser answers a pending operation %s',
    async (_why, operation) => {
      const transport = fakeTransport({
        loadCodeAssist: TO_ONBOARD,
        onboardUser: operation,
        operations: [{ done: true, response: { cloudaicompanionProject: 'p-polled' } }],
      });
      const error = await rejectionOf(discoverProject(transport, undefined, POLL_MS));
      expect(error).toMatchObject({ code: 'auth', fix: PROVIDER_B_FIXES.provider_b_onboarding_failed });
      expect(error.detail).toMatch(/^provider_b_onboarding_failed: /);
      expect(transport.calls).toEqual(['loadCodeAssist', 'onboardUser']);
    },
  );

  it('gives up with a timeout before a poll that would end past the turn deadline', async () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_000_000);
    try {
      const transport = fakeTransport(
        {
          loadCodeAssist: TO_ONBOARD,
          onboardUser: { name: 'operations/op-1', done: false },
          operations: [{ done: true, response: { cloudaicompanionProject: 'p-late' } }],
        },
        1_000_000 + POLL_MS - 1,
      );
      const error = await rejectionOf(discoverProject(transport, undefined, POLL_MS));
      expect(error).toMatchObject({ code: 'timeout', detail: 'provider_b onboarding outlived the turn deadline' });
      expect(transport.calls).toEqual(['loadCodeAssist', 'onboardUser']);
    } finally {
      now.mockRestore();
    }
  });

  it('calls the account unsupported (403), not project-less, when onboarding ends without a project and a tier was ineligible', async () => {
    const transport = fakeTransport({
      loadCodeAssist: { ...TO_ONBOARD, ineligibleTiers: [{ reasonCode: 'UNSUPPORTED_LOCATION', tierId: 'free-tier' }] },
      onboardUser: { done: true, response: {} },
    });
    const error = await rejectionOf(discoverProject(transport, undefined, POLL_MS));
    expect(error).toMatchObject({
      code: 'provider_account_unsupported',
      fix: PROVIDER_B_FIXES.provider_b_account_unsupported,
      upstreamStatus: 403,
    });
  });
});

describe(ProviderBProjectResolver.name, () => {
  const UNSUPPORTED = { ineligibleTiers: [{ reasonCode: 'UNSUPPORTED_CLIENT', tierId: 'free-tier' }] };

  it("reuses an 'account unsupported' answer for one minute, then asks again", async () => {
    let now = 5_000_000;
    const resolver = new ProviderBProjectResolver(undefined, POLL_MS, () => now);
    const transport = fakeTransport({ loadCodeAssist: UNSUPPORTED });
    const first = await rejectionOf(resolver.resolve('login-1', transport));
    expect(first).toMatchObject({ code: 'provider_account_unsupported', upstreamStatus: 403 });
    now += 60_000 - 1;
    expect(await rejectionOf(resolver.resolve('login-1', transport))).toBe(first);
    expect(transport.calls).toEqual(['loadCodeAssist']);
    now += 1;
    await rejectionOf(resolver.resolve('login-1', transport));
    expect(transport.calls).toEqual(['loadCodeAssist', 'loadCodeAssist']);
  });

  it('starts its own discovery when the discovery it joined ends because that request was aborted', async () => {
    const resolver = new ProviderBProjectResolver(undefined, POLL_MS);
    const first = fakeTransport({ loadCodeAssist: () => new Promise(() => undefined) });
    const second = fakeTransport({
      loadCodeAssist: { currentTier: { id: 'free-tier' }, cloudaicompanionProject: 'p-2' },
    });
    const firstResult = resolver.resolve('login-1', first).catch((error: unknown) => error);
    const secondResult = resolver.resolve('login-1', second);
    // The first request's client leaves: the discovery it started fails with the abort reason.
    first.abort(new ClientDisconnectedError());
    await expect(secondResult).resolves.toBe('p-2');
    expect(await firstResult).toBeInstanceOf(ClientDisconnectedError);
    expect(first.calls).toEqual(['loadCodeAssist']);
    expect(second.calls).toEqual(['loadCodeAssist']);
  });
});
