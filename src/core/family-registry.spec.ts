import type { ErrorCode, ErrorSpec } from './error-codes';
import { errorSpec, errorTable, familyMessage } from './error-codes';
import type { Family } from './family';
import { familyOf, registerFamily } from './family-registry';
import { GatewayError } from './gateway.error';
import { loginFix } from './login-state';

const REFUSAL: ErrorSpec = {
  status: 403,
  type: 'permission_error',
  openaiCode: 'spec_refusal',
  structuredCode: 'auth_error',
  streamText: 'spec refusal',
  message: 'the spec family refuses',
  upstream: true,
  refusesAccount: true,
};

/** A family of this spec only: a built-in declaration with its own id, error rows, words and fixes. */
function specFamily(id: string, changes: Partial<Family>): Family {
  return { ...familyOf('provider_a'), errors: undefined, messages: undefined, loginFixes: undefined, id, ...changes };
}

describe('a family declares its own error codes, words and login fixes', () => {
  beforeAll(() => {
    registerFamily(
      specFamily('spec_family', {
        fix: { cli: 'Spec CLI', login: 'run `spec login`' },
        errors: { spec_refusal: REFUSAL },
        messages: {
          usage_limit: ({ provider, fix, reset, retry }) =>
            `${provider}: ${fix.cli} is spent${reset}; ${retry ?? 'wait'} (in the family's words)`,
        },
        loginFixes: { account_unsupported: 'use another kind of account' },
      }),
    );
  });

  it('serves its rows from the one lookup, after the core ones', () => {
    const code = 'spec_refusal' as ErrorCode;
    expect(errorSpec(code)).toBe(REFUSAL);
    expect(new GatewayError(code).spec.refusesAccount).toBe(true);
    const codes = [...errorTable().keys()];
    expect(codes.indexOf(code)).toBeGreaterThan(codes.indexOf('auth'));
    expect(codes).toContain('provider_cli_missing');
  });

  it('words a code its own way, given the generic parts; other codes keep the generic words', () => {
    const resetsAt = Date.UTC(2030, 2, 17, 17, 46, 40);
    expect(familyMessage('usage_limit', 'spec_family', resetsAt, 40)).toBe(
      "spec_family: Spec CLI is spent (resets 2030-03-17T17:46:40.000Z); retry in 40 s (in the family's words)",
    );
    expect(familyMessage('usage_limit', 'spec_family')).toBe(
      "spec_family: Spec CLI is spent; wait (in the family's words)",
    );
    expect(familyMessage('auth', 'spec_family')).toContain('run `spec login`');
  });

  it('names its own fix for a login state it declares one for, else its login', () => {
    expect(loginFix('spec_family', 'account_unsupported')).toBe('use another kind of account');
    expect(loginFix('spec_family', 'missing')).toBe('run `spec login`');
  });

  it('refuses a code another family declares, and fails the table on one the core table has', () => {
    expect(() => registerFamily(specFamily('spec_twice', { errors: { spec_refusal: REFUSAL } }))).toThrow(
      /"spec_refusal"/,
    );
    registerFamily(specFamily('spec_core', { errors: { auth: REFUSAL } }));
    expect(() => errorTable()).toThrow(/"auth"/);
  });
});
