import { HttpException, HttpStatus } from '@nestjs/common';
import { GatewayError } from '../../core/gateway.error';

/** Maps anything thrown into the error table: GatewayError as is, HTTP and body-parser errors by status. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  const status = httpStatusOf(error);
  if (status === HttpStatus.NOT_FOUND || status === HttpStatus.METHOD_NOT_ALLOWED)
    return new GatewayError('route_not_found');
  if (status === HttpStatus.PAYLOAD_TOO_LARGE) return new GatewayError('request_too_large');
  if (status === HttpStatus.UNSUPPORTED_MEDIA_TYPE) {
    return new GatewayError('invalid_request', { publicMessage: 'Content-Type must be application/json' });
  }
  if (status !== undefined && status >= 400 && status < 500) {
    const isJsonSyntax = (error as { type?: string }).type === 'entity.parse.failed';
    return new GatewayError('invalid_request', {
      publicMessage: isJsonSyntax ? 'the request body is not valid JSON' : validationMessage(error),
    });
  }
  return new GatewayError('internal', { cause: error });
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
