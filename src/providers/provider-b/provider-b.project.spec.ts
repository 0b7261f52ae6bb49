import { UpstreamRefusal } from '../shared/upstream-failure';
import {
  decideFromLoadResponse,
  isPerimeterRefusal,
  loadCodeAssistBody,
  onboardUserBody,
  projectIdOf,
} from './provider-b.project';

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
