import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import { GatewayError } from '../../core/gateway.error';
import { IS_PUBLIC_ROUTE } from './public.decorator';
import { attachCaller, bearerToken, resolveCaller } from './caller';

/**
 * Inbound bearer (contract "Authentication", design.md §5) on `/v1/*` and `/metrics`. With a
 * secret: exactly `Bearer <secret>`, compared in constant time. Without: no header, or any
 * non-empty bearer, is let in; a malformed header is rejected.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly secretDigest?: Buffer;
  private readonly callerHeader?: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly reflector: Reflector,
  ) {
    if (config.server.bearerSecret !== undefined) this.secretDigest = digest(config.server.bearerSecret);
    this.callerHeader = config.server.callerHeader;
  }

  canActivate(context: ExecutionContext): boolean {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_ROUTE, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const request = context.switchToHttp().getRequest<Request>();
    const header = request.headers.authorization;
    const token = bearerToken(header);
    // The caller is resolved here once, refused or not (a refusal's audit record names it too).
    attachCaller(request, resolveCaller(request.headers, this.callerHeader, token));
    if (this.secretDigest) {
      // Hashing both sides gives equal lengths, so timingSafeEqual never leaks the secret's length.
      if (token === undefined || !timingSafeEqual(digest(token), this.secretDigest)) throw new GatewayError('invalid_api_key');
      return true;
    }
    if (header === undefined) return true;
    if (token === undefined) throw new GatewayError('invalid_api_key');
    return true;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
