import { isExpired } from '../login-token-cache';
import {
  accountIdFromJwt,
  applyRefresh,
  decodeJwtClaims,
  LoginFileError,
  parseLoginFile,
  tokenExpiry,
} from './provider-a.login-file';
import { makeJwt } from '../../../test/support/provider-a-fixtures';

describe('provider_a login file', () => {
  it('decodes JWT claims without verifying and tolerates garbage', () => {
    expect(decodeJwtClaims(makeJwt({ exp: 5 }))).toEqual({ exp: 5 });
    expect(decodeJwtClaims('not-a-jwt')).toBeUndefined();
    expect(decodeJwtClaims('a.@@@.b')).toBeUndefined();
  });

  it('reads the account id from tokens, else the id token claim, else the access token claim', () => {
    const claim = (id: string) => ({ 'https://api.openai.com/auth': { chatgpt_account_id: id } });
    expect(parseLoginFile({ tokens: { access_token: makeJwt({}), account_id: 'acct-file' } }).accountId).toBe(
      'acct-file',
    );
    expect(
      parseLoginFile({ tokens: { access_token: makeJwt(claim('acct-access')), id_token: makeJwt(claim('acct-id')) } })
        .accountId,
    ).toBe('acct-id');
    expect(parseLoginFile({ tokens: { access_token: makeJwt(claim('acct-access')) } }).accountId).toBe('acct-access');
    expect(accountIdFromJwt(undefined)).toBeUndefined();
  });

  it.each([
    [{}, 'no tokens object'],
    [{ tokens: { account_id: 'a' } }, 'no access token'],
    [{ tokens: { access_token: makeJwt({}) } }, 'no account id'],
  ])('rejects an unusable file %j', (document, reason) => {
    expect(() => parseLoginFile(document)).toThrow(new LoginFileError(reason));
  });

  it('prefers a positive expires_at, else the access token exp, else unknown', () => {
    expect(tokenExpiry(100, makeJwt({ exp: 200 }))).toBe(100_000);
    expect(tokenExpiry(0, makeJwt({ exp: 200 }))).toBe(200_000);
    expect(tokenExpiry(undefined, makeJwt({}))).toBeUndefined();
  });

  it('counts a token as expired 60 s before its expiry; unknown never expires', () => {
    expect(isExpired(100_000, 39_999)).toBe(false);
    expect(isExpired(100_000, 40_000)).toBe(true);
    expect(isExpired(undefined, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('applies a refresh keeping unknown keys, the old refresh token when none came back, and expires_at only if present', () => {
    const now = new Date('2026-02-01T00:00:00.000Z');
    const document = {
      OPENAI_API_KEY: null,
      custom: { x: 1 },
      tokens: { access_token: 'old', refresh_token: 'rt-old', account_id: 'a', other: true },
    };
    expect(applyRefresh(document, { accessToken: 'new', expiresAt: 1_000_000 }, now)).toEqual({
      OPENAI_API_KEY: null,
      custom: { x: 1 },
      tokens: { access_token: 'new', refresh_token: 'rt-old', account_id: 'a', other: true },
      last_refresh: '2026-02-01T00:00:00.000Z',
    });
    const withExpiry = applyRefresh(
      { tokens: { access_token: 'old', expires_at: 1 } },
      { accessToken: 'n', refreshToken: 'rt-2', idToken: 'id', expiresAt: 5_000 },
      now,
    );
    expect(withExpiry.tokens).toEqual({ access_token: 'n', refresh_token: 'rt-2', id_token: 'id', expires_at: 5 });
  });
});
