import { CallHandler, ExecutionContext, Injectable, NestInterceptor, UseInterceptors } from '@nestjs/common';
import compression from 'compression';
import type { Request, Response } from 'express';
import type { ServerResponse } from 'node:http';
import onHeaders from 'on-headers';
import type { Observable } from 'rxjs';

/** One compression middleware for every route (its own state is per response). */
const compress = compression({ filter: compressible });

/**
 * gzip/brotli/deflate for JSON when the client asks (the `compression` package); never for SSE or
 * `stream: true` requests (docs/endpoints.md), which compression would buffer (nestjs/nest#5762).
 * It is set up on the response before the handler runs: compression wraps the response's writes
 * and decides when the headers go out. What is answered before a handler runs (a refused bearer,
 * an unknown route, a body the body middleware refused) is a small JSON error that compression's
 * 1 KiB threshold would leave alone anyway.
 *
 * A request without `Accept-Encoding` can never be compressed (compression's default encoding is
 * identity), yet the library would still wrap every write and end of the response to find that
 * out. Those requests skip it and only get the one visible trace it would leave, the
 * `Vary: Accept-Encoding` header on a compressible response, set under the same conditions.
 */
export function compressUnlessStream(request: Request, response: Response): void {
  // A streamed request (`stream: true`) is never compressed, and compression then leaves no trace
  // (no `Vary`): nothing to set up for it, so `compressible` never sees one.
  if ((request.body as { stream?: unknown } | undefined)?.stream === true) return;
  // compression sets up its wrappers and calls `next` synchronously.
  if (request.headers['accept-encoding'] !== undefined) compress(request, response, ignore);
  else onHeaders(response, varyLikeCompression);
}

/**
 * `compressUnlessStream` as an interceptor, applied per controller with `@CompressJson()`. It is
 * not global: Nest builds an Observable chain (and keeps it for as long as the handler runs) for
 * every request of a route that has any interceptor, which measurably costs the chat route, whose
 * controller writes its own response and so calls `compressUnlessStream` itself.
 */
@Injectable()
export class CompressionInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    compressUnlessStream(http.getRequest<Request>(), http.getResponse<Response>());
    return next.handle();
  }
}

/** Compression for a controller's JSON answers (see CompressionInterceptor). */
export const CompressJson = (): ClassDecorator & MethodDecorator => UseInterceptors(CompressionInterceptor);

/** Streams are never compressed: an SSE answer here (one asked for is skipped before). */
function compressible(request: Request, response: Response): boolean {
  const type = String(response.getHeader('Content-Type') ?? '');
  if (type.startsWith('text/event-stream')) return false;
  return compression.filter(request, response);
}

/** compression's own test for `Cache-Control: no-transform` (it then leaves the response alone). */
const NO_TRANSFORM = /(?:^|,)\s*?no-transform\s*?(?:,|$)/;

/** The `Vary` compression would have set, as an on-headers listener (`this` is the response). */
function varyLikeCompression(this: ServerResponse): void {
  const response = this as Response;
  if (compressible(response.req, response) && !NO_TRANSFORM.test(String(response.getHeader('Cache-Control') ?? '')))
    response.vary('Accept-Encoding');
}

function ignore(): void {}
