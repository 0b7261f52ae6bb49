import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import { sha256Hex } from '../hashing';
import type { BearerRequest } from './bearer-check';
import { BearerCheck, bearerDigest } from './bearer-check';
import { IS_PUBLIC_ROUTE } from './public.decorator';

/**
 * Inbound bearer (docs/endpoints.md "Authentication", docs/design/decisions.md §5) on `/v1/*` and `/metrics`. With a
 * secret: exactly `Bearer <secret>`, compared in constant time. Without: no header, or any
 * non-empty bearer, is let in; a malformed header is rejected.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly check: BearerCheck;
  private readonly callerHeader?: string;
  /**
   * Whether a route is `@Public`, by controller class and handler. Route metadata is fixed once the
   * app has started, and reading it through the Reflector walks both prototype chains on every
   * request.
   */
  private readonly publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly reflector: Reflector,
  ) {
    this.check = new BearerCheck(config.server.bearerSecret);
    this.callerHeader = config.server.callerHeader;
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.isPublic(context)) return true;
    this.authorize(context.switchToHttp().getRequest<Request>());
    return true;
  }

  private isPublic(context: ExecutionContext): boolean {
    const type = context.getClass();
    const handler = context.getHandler();
    let handlers = this.publicRoutes.get(type);
    if (handlers === undefined) this.publicRoutes.set(type, (handlers = new WeakMap()));
    let isPublic = handlers.get(handler);
    if (isPublic === undefined) {
      isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_ROUTE, [handler, type]) === true;
      handlers.set(handler, isPublic);
    }
    return isPublic;
  }

  /** The check itself: attaches the caller; throws `invalid_api_key` when the bearer is refused. */
  private authorize(request: Request): void {
    // The caller is resolved here once, refused or not (a refusal's audit record names it too).
    attachCaller(request, resolveCaller(request, this.callerHeader));
    if (this.check.refuses(request)) throw this.check.refusal();
  }
}

/**
 * The caller (docs/design/decisions.md §5, docs/design/behaviours.md §3.1): `header:<value>` of
 * GATEWAY_CALLER_HEADER when set and non-blank, else `bearer:<sha256 of the bearer>`, else
 * `anonymous`. The raw value is never logged; use `callerHash` in logs.
 */
export function resolveCaller(request: BearerRequest, callerHeader: string | undefined): string {
  if (callerHeader) {
    const raw = request.headers[callerHeader];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (typeof value === 'string' && value.trim() !== '') return `header:${value}`;
  }
  // The same digest the bearer check compares: one hash of the bearer per request.
  const digest = bearerDigest(request);
  return digest === undefined ? ANONYMOUS : `${BEARER_CALLER}${digest.toString('hex')}`;
}

const ANONYMOUS = 'anonymous';
const BEARER_CALLER = 'bearer:';

/**
 * The caller a chat's identity is scoped to (docs/providers.md "Conversation identity"), where
 * callers can be told apart: a caller header's value always, a bearer's digest only without
 * GATEWAY_BEARER_SECRET. Behind a secret every bearer is that secret, and `anonymous` is everyone
 * without a bearer: each is one caller, so their chats keep the unscoped identity.
 */
export function chatScope(caller: string, bearerSecretSet: boolean): string | undefined {
  if (caller === ANONYMOUS || (bearerSecretSet && caller.startsWith(BEARER_CALLER))) return undefined;
  return caller;
}

const CALLER = Symbol('caller');
type RequestWithCaller = { [CALLER]?: string };

/** Keeps the caller the bearer guard resolved on the request, so nothing parses the bearer again. */
export function attachCaller(request: object, caller: string): void {
  (request as RequestWithCaller)[CALLER] = caller;
}

/** The caller the guard attached; resolved from the headers for a request the guard did not see. */
export function callerOf(request: BearerRequest, callerHeader: string | undefined): string {
  return (request as RequestWithCaller)[CALLER] ?? resolveCaller(request, callerHeader);
}

/** What logs may show of a caller: the first 16 hex characters of SHA-256 of the caller string. */
export function callerHash(caller: string): string {
  return sha256Hex(caller).slice(0, 16);
}
