import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import { loadConfig } from '../../config/app-config';
import { GatewayError } from '../../core/gateway.error';
import * as hashing from '../hashing';
import { sha256Hex } from '../hashing';
import { BearerAuthGuard, callerHash, chatScope, resolveCaller } from './bearer-auth.guard';
import { jsonBodyMiddleware } from '../http/http-middleware';
import { BearerCheck, bearerToken } from './bearer-check';
import { Public } from './public.decorator';

// Wrap (not replace) timingSafeEqual so the test can see every comparison.
jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return { ...actual, timingSafeEqual: jest.fn(actual.timingSafeEqual) };
});

class ProtectedController {
  handle(): void {}
}

@Public()
class HealthLikeController {
  handle(): void {}
}

/** A hand-made ExecutionContext for an HTTP request with the given Authorization header. */
function httpContext(
  authorization: string | undefined,
  controller: new () => { handle(): void } = ProtectedController,
  request: object = { headers: authorization === undefined ? {} : { authorization } },
): ExecutionContext {
  return {
    getHandler: () => controller.prototype.handle,
    getClass: () => controller,
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}), getNext: () => undefined }),
  } as unknown as ExecutionContext;
}

function guard(secret?: string): BearerAuthGuard {
  const config = loadConfig({ HOME: '/tmp', ...(secret === undefined ? {} : { GATEWAY_BEARER_SECRET: secret }) });
  return new BearerAuthGuard(config, new Reflector());
}

/** The internal error code the guard rejected with, or 'allowed'. */
function outcome(
  subject: BearerAuthGuard,
  authorization: string | undefined,
  controller?: new () => { handle(): void },
): string {
  try {
    return subject.canActivate(httpContext(authorization, controller)) ? 'allowed' : 'denied';
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return (error as GatewayError).code;
  }
}

describe(BearerAuthGuard.name, () => {
  describe('with GATEWAY_BEARER_SECRET set', () => {
    const subject = guard('s3cret-value-0123');

    it('lets exactly "Bearer <secret>" in (scheme case-insensitive)', () => {
      expect(outcome(subject, 'Bearer s3cret-value-0123')).toBe('allowed');
      expect(outcome(subject, 'bearer s3cret-value-0123')).toBe('allowed');
    });

    it.each([
      ['no header', undefined],
      ['an empty header', ''],
      ['a wrong secret', 'Bearer s3cret-valuE'],
      ['a prefix of the secret', 'Bearer s3cret'],
      ['the secret with a suffix', 'Bearer s3cret-value-0123-and-more'],
      ['Bearer alone', 'Bearer'],
      ['another scheme', 'Basic czNjcmV0LXZhbHVl'],
      ['the bare secret', 's3cret-value-0123'],
    ])('rejects %s with invalid_api_key', (_name, header) => {
      expect(outcome(subject, header)).toBe('invalid_api_key');
    });

    it('never asks a @Public() route (health) for a bearer', () => {
      expect(outcome(subject, undefined, HealthLikeController)).toBe('allowed');
      expect(outcome(subject, 'Bearer wrong', HealthLikeController)).toBe('allowed');
    });

    it('keeps each route’s answer apart once it has read whether the route is public', () => {
      for (let round = 0; round < 3; round++) {
        expect(outcome(subject, undefined, HealthLikeController)).toBe('allowed');
        expect(outcome(subject, undefined, ProtectedController)).toBe('invalid_api_key');
      }
    });

    it('compares in constant time over equal-length digests, whatever the token length', () => {
      const spy = timingSafeEqual as jest.MockedFunction<typeof timingSafeEqual>;
      spy.mockClear();
      expect(outcome(subject, 'Bearer x')).toBe('invalid_api_key');
      expect(outcome(subject, `Bearer ${'y'.repeat(500)}`)).toBe('invalid_api_key');
      expect(outcome(subject, 'Bearer s3cret-value-0123')).toBe('allowed');
      expect(spy).toHaveBeenCalledTimes(3);
      for (const [left, right] of spy.mock.calls) {
        expect((left as Buffer).length).toBe(32);
        expect((right as Buffer).length).toBe(32);
      }
    });
  });

  describe('one admitted request with a body', () => {
    const secret = 's3cret-value-0123';

    /** A POST with a JSON body, as the body reader gets it from Node. */
    function postRequest(body: string): Request {
      const request = Readable.from([Buffer.from(body)]) as unknown as Request;
      Object.assign(request, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${secret}`,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        },
      });
      return request;
    }

    it('hashes the bearer once across the body reader, the check and the caller', async () => {
      const request = postRequest('{"model":"m"}');
      // Both digest the secret once, when built.
      const reader = jsonBodyMiddleware(1024, { bearer: new BearerCheck(secret) });
      const subject = guard(secret);
      // Watched where every digest of ours is made: the families' setup loads the hashing module
      // before this spec could mock node:crypto under it.
      const spy = jest.spyOn(hashing, 'sha256Digest');
      const readError = await new Promise<unknown>((resolve) =>
        reader(request, { headersSent: false } as Response, resolve),
      );
      expect(readError).toBeUndefined();
      expect(request.body).toEqual({ model: 'm' });
      expect(subject.canActivate(httpContext(undefined, ProtectedController, request))).toBe(true);
      const ofBearer = spy.mock.calls.filter(([value]) => value === secret);
      spy.mockRestore();
      expect(ofBearer).toHaveLength(1);
      // What the request keeps of it is the digest, never the token.
      const kept = Object.getOwnPropertySymbols(request).map(
        (key) => (request as unknown as Record<symbol, unknown>)[key],
      );
      expect(kept).not.toContain(secret);
    });
  });

  describe('without a secret', () => {
    const subject = guard();

    it('lets a request without an Authorization header in', () => {
      expect(outcome(subject, undefined)).toBe('allowed');
    });

    it('lets any non-empty bearer in', () => {
      expect(outcome(subject, 'Bearer anything-at-all')).toBe('allowed');
      expect(outcome(subject, 'Bearer sk-local')).toBe('allowed');
    });

    it.each([
      ['Bearer with nothing after it', 'Bearer'],
      ['Bearer followed by blanks', 'Bearer    '],
      ['another scheme', 'Basic Zm9vOmJhcg=='],
      ['a bare token', 'sk-local'],
      ['an empty header', ''],
    ])('rejects a malformed header: %s', (_name, header) => {
      expect(outcome(subject, header)).toBe('invalid_api_key');
    });
  });
});

describe(bearerToken.name, () => {
  it('returns the token of "Bearer <token>", trimmed, for any scheme case', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc  ')).toBe('abc');
    expect(bearerToken('BEARER\tabc')).toBe('abc');
    // White space other than the blanks and tabs after the scheme (a no-break space) is trimmed too.
    expect(bearerToken('Bearer \u00a0abc')).toBe('abc');
  });

  it('returns undefined when absent, empty, bare or of another scheme', () => {
    for (const header of [undefined, '', 'Bearer', 'Bearer   ', 'Basic abc', 'abc', 'Bearerabc']) {
      expect(bearerToken(header)).toBeUndefined();
    }
  });
});

describe(resolveCaller.name, () => {
  const bearer = { authorization: 'Bearer team-token' };

  it('uses the caller header when configured and present (docs/design/behaviours.md §3.1)', () => {
    expect(resolveCaller({ headers: { ...bearer, 'x-tenant': 'acme' } }, 'x-tenant')).toBe('header:acme');
  });

  it('makes two tenants with the same bearer two different callers', () => {
    const first = resolveCaller({ headers: { ...bearer, 'x-tenant': 'acme' } }, 'x-tenant');
    const second = resolveCaller({ headers: { ...bearer, 'x-tenant': 'globex' } }, 'x-tenant');
    expect(first).not.toBe(second);
  });

  it('falls back to the SHA-256 of the bearer when the header is absent or blank', () => {
    const expected = `bearer:${sha256Hex('team-token')}`;
    expect(resolveCaller({ headers: bearer }, 'x-tenant')).toBe(expected);
    expect(resolveCaller({ headers: { ...bearer, 'x-tenant': '   ' } }, 'x-tenant')).toBe(expected);
    expect(resolveCaller({ headers: bearer }, undefined)).toBe(expected);
  });

  it('is anonymous without a header or bearer', () => {
    expect(resolveCaller({ headers: {} }, 'x-tenant')).toBe('anonymous');
    expect(resolveCaller({ headers: { authorization: 'Bearer' } }, undefined)).toBe('anonymous');
  });
});

describe(chatScope.name, () => {
  const byBearer = (token: string) => resolveCaller({ headers: { authorization: `Bearer ${token}` } }, undefined);

  it('is the caller where callers differ: a caller header always, a bearer digest without a secret', () => {
    expect(chatScope('header:acme', false)).toBe('header:acme');
    expect(chatScope('header:acme', true)).toBe('header:acme');
    expect(chatScope(byBearer('alice'), false)).toBe(`bearer:${sha256Hex('alice')}`);
    expect(chatScope(byBearer('alice'), false)).not.toBe(chatScope(byBearer('bob'), false));
  });

  it('is none for the one caller every request would share: anonymous, or the bearer behind a secret', () => {
    expect(chatScope('anonymous', false)).toBeUndefined();
    expect(chatScope('anonymous', true)).toBeUndefined();
    expect(chatScope(byBearer('the-secret'), true)).toBeUndefined();
  });
});

describe(callerHash.name, () => {
  it('shows only 16 hex characters of SHA-256 of the caller string', () => {
    expect(callerHash('header:acme')).toBe(sha256Hex('header:acme').slice(0, 16));
    expect(callerHash('header:acme')).toMatch(/^[0-9a-f]{16}$/);
    expect(callerHash('header:acme')).not.toContain('acme');
  });
});
