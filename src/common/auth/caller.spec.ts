import { sha256Hex } from '../hashing';
import { bearerToken, callerHash, resolveCaller } from './caller';

describe(bearerToken.name, () => {
  it('returns the token of "Bearer <token>", trimmed, for any scheme case', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc  ')).toBe('abc');
    expect(bearerToken('BEARER\tabc')).toBe('abc');
  });

  it('returns undefined when absent, empty, bare or of another scheme', () => {
    for (const header of [undefined, '', 'Bearer', 'Bearer   ', 'Basic abc', 'abc', 'Bearerabc']) {
      expect(bearerToken(header)).toBeUndefined();
    }
  });
});

describe(resolveCaller.name, () => {
  const bearer = { authorization: 'Bearer team-token' };

  it('uses the caller header when configured and present (gateway-behaviours.md §3.1)', () => {
    expect(resolveCaller({ ...bearer, 'x-tenant': 'acme' }, 'x-tenant')).toBe('header:acme');
  });

  it('makes two tenants with the same bearer two different callers', () => {
    const first = resolveCaller({ ...bearer, 'x-tenant': 'acme' }, 'x-tenant');
    const second = resolveCaller({ ...bearer, 'x-tenant': 'globex' }, 'x-tenant');
    expect(first).not.toBe(second);
  });

  it('falls back to the SHA-256 of the bearer when the header is absent or blank', () => {
    const expected = `bearer:${sha256Hex('team-token')}`;
    expect(resolveCaller(bearer, 'x-tenant')).toBe(expected);
    expect(resolveCaller({ ...bearer, 'x-tenant': '   ' }, 'x-tenant')).toBe(expected);
    expect(resolveCaller(bearer, undefined)).toBe(expected);
  });

  it('is anonymous without a header or bearer', () => {
    expect(resolveCaller({}, 'x-tenant')).toBe('anonymous');
    expect(resolveCaller({ authorization: 'Bearer' }, undefined)).toBe('anonymous');
  });
});

describe(callerHash.name, () => {
  it('shows only 16 hex characters of SHA-256 of the caller string', () => {
    expect(callerHash('header:acme')).toBe(sha256Hex('header:acme').slice(0, 16));
    expect(callerHash('header:acme')).toMatch(/^[0-9a-f]{16}$/);
    expect(callerHash('header:acme')).not.toContain('acme');
  });
});
