import { HttpException, HttpStatus } from '@nestjs/common';
import { GatewayError } from '../../core/gateway.error';

/** Maps anything thrown into the error table: GatewayError as is, HTTP and body-parser errors by status. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  const status = httpStatusOf(error);
  if (status === HttpStatus.NOT_FOUND || status === HttpStatus.METHOD_NOT_ALLOWED)
    return new GatewayError('route_not_found');
  if (status === HttpStatus.PAYLOAD_TOO_LARGE) return new GatewayError('request_too_large');
  // Express's router could not decode a path parameter (`GET /v1/models/%E0%A4`): its own words
  // quote the raw segment and say nothing of the fix.
  if (error instanceof HttpException && error.cause instanceof URIError) {
    return new GatewayError('invalid_request', {
      publicMessage:
        'the request path is not valid percent-encoding (each % takes two hex digits, and the bytes must be UTF-8); encode the id with encodeURIComponent',
    });
  }
  const readError = bodyReaderError(error);
  if (readError) return readError;
  if (status === HttpStatus.UNSUPPORTED_MEDIA_TYPE) {
    return new GatewayError('invalid_request', { publicMessage: 'Content-Type must be application/json' });
  }
  if (status !== undefined && status >= 400 && status < 500) {
    return new GatewayError('invalid_request', { publicMessage: validationMessage(error) });
  }
  return new GatewayError('internal', { cause: error });
}

/**
 * The `type` raw-body gives the error of a body whose connection closed before it ended; the body
 * reader (http-middleware.ts) gives it to a compressed body's too, whose request raw-body never sees.
 */
export const CLIENT_LEFT_MID_BODY = 'request.aborted';

/** The encodings the body reader (body-parser) inflates, as a client reads them in a message. */
export const BODY_ENCODINGS = 'gzip, deflate, br or zstd';

/**
 * The body reader's own failures (body-parser and raw-body name each by its `type`), in words that
 * say what was wrong with the body and how to send it. `undefined` for anything else.
 */
function bodyReaderError(error: unknown): GatewayError | undefined {
  const { type, encoding } = (error ?? {}) as { type?: unknown; encoding?: unknown };
  switch (type) {
    case 'encoding.unsupported':
      return unsupportedEncoding(encoding);
    case 'entity.parse.failed':
      return new GatewayError('invalid_request', { publicMessage: 'the request body is not valid JSON' });
    case 'request.size.invalid':
      return new GatewayError('invalid_request', {
        publicMessage:
          'the body is shorter or longer than its Content-Length; send the length of the bytes sent (compressed, when compressed), or send the body chunked without Content-Length',
      });
    case CLIENT_LEFT_MID_BODY:
      // The client left before its body ended: no one reads an answer (docs/error-codes.md `canceled`).
      return new GatewayError('canceled');
    default:
      return undefined;
  }
}

/** A Content-Encoding value short and plain enough to quote back: encoding names, comma-separated. */
const QUOTABLE_ENCODING = /^[a-z0-9._+-]{1,24}(?:, ?[a-z0-9._+-]{1,24}){0,3}$/i;

function unsupportedEncoding(encoding: unknown): GatewayError {
  // A header value is the client's own input: quoted only when it is a short list of names.
  const what =
    typeof encoding === 'string' && QUOTABLE_ENCODING.test(encoding)
      ? `Content-Encoding "${encoding}"`
      : 'this Content-Encoding';
  return new GatewayError('invalid_request', {
    publicMessage: `${what} is not supported; send the body uncompressed, or compressed once with ${BODY_ENCODINGS} (and Content-Encoding naming it)`,
  });
}

/**
 * The answer to a body that does not inflate with the encoding its Content-Encoding names (the
 * decompressor's error: corrupt, truncated, or not compressed at all). `encoding` is one the body
 * reader supports, so it is one of a few known names.
 */
export function undecodableBody(encoding: string): GatewayError {
  return new GatewayError('invalid_request', {
    publicMessage: `the body is not valid ${encoding} data (Content-Encoding: ${encoding}); send it compressed as that header says, or uncompressed without Content-Encoding`,
  });
}

function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof HttpException) return error.getStatus();
  const candidate = error as { status?: unknown; statusCode?: unknown } | null;
  const status = candidate?.status ?? candidate?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** Nest validation messages name fields and rules only, never values, so they are safe to return. */
function validationMessage(error: unknown): string | undefined {
  if (!(error instanceof HttpException)) return undefined;
  const response = error.getResponse() as { message?: unknown };
  if (Array.isArray(response?.message)) return response.message.map(String).join('; ');
  return typeof response?.message === 'string' ? response.message : undefined;
}
