import { decideFromLoadResponse, projectIdOf } from './provider-b.project';

describe(decideFromLoadResponse.name, () => {
  it('uses the project of an onboarded account, in string or object form', () => {
    expect(decideFromLoadResponse({ currentTier: { id: 'free-tier' }, cloudaicompanionProject: 'p-1' })).toEqual({ kind: 'project', project: 'p-1' });
    expect(decideFromLoadResponse({ currentTier: { id: 'standard-tier' }, cloudaicompanionProject: { id: 'p-9', name: 'n' } })).toEqual({
      kind: 'project',
      project: 'p-9',
    });
  });

  it('requires PROVIDER_B_PROJECT when an onboarded account has no project', () => {
    expect(decideFromLoadResponse({ currentTier: { id: 'standard-tier' }, ineligibleTiers: [{ reasonCode: 'RESTRICTED_AGE' }] })).toEqual({
      kind: 'fail',
      reason: 'provider_b_project_required',
      ineligible: ['RESTRICTED_AGE'],
    });
  });

  it('fails with validation_required instead of onboarding an account that must be validated', () => {
    expect(decideFromLoadResponse({ ineligibleTiers: [{ reasonCode: 'VALIDATION_REQUIRED', tierId: 'free-tier' }] })).toMatchObject({
      kind: 'fail',
      reason: 'provider_b_validation_required',
    });
  });

  it('onboards with the default tier, else legacy-tier', () => {
    expect(decideFromLoadResponse({ allowedTiers: [{ id: 'standard-tier' }, { id: 'free-tier', isDefault: true }] })).toEqual({ kind: 'onboard', tierId: 'free-tier' });
    expect(decideFromLoadResponse({})).toEqual({ kind: 'onboard', tierId: 'legacy-tier' });
  });
});

describe(projectIdOf.name, () => {
  it('rejects blanks and shapes without an id', () => {
    expect(projectIdOf('  ')).toBeUndefined();
    expect(projectIdOf({ name: 'x' })).toBeUndefined();
    expect(projectIdOf(7)).toBeUndefined();
  });
});
