import { NotFoundException, type ArgumentsHost } from '@nestjs/common';
import type { Request, Response } from 'express';
import { errorSpec } from '../../core/error-codes';
import type { EventLogger } from '../../core/event-logger';
import { ClientDisconnectedError, GatewayError } from '../../core/gateway.error';
import type { DrainService } from '../lifecycle/drain.service';
import { AllExceptionsFilter } from './all-exceptions.filter';
import { markStructuredRoute } from './error-writer';

/** The OpenAI `code` of what was written. */
const codeOf = (written: { body?: unknown }) => (written.body as { error: { code: string } }).error.code;

/** A bare request and a response that records what was written, behind a hand-made ArgumentsHost. */
function exchange(
  requestPath = '/v1/models/x',
  structured = false,
  destroyed = false,
): { host: ArgumentsHost; request: Request; written: { status?: number; body?: unknown } } {
  const written: { status?: number; body?: unknown } = {};
  const request = { path: requestPath, headers: {} } as unknown as Request;
  if (structured) markStructuredRoute()(request, {} as Response, () => undefined);
  const response = {
    headersSent: false,
    destroyed,
    setHeader: () => undefined,
    status(status: number) {
      written.status = status;
      return this;
    },
    json(body: unknown) {
      written.body = body;
      return this;
    },
  } as unknown as Response;
  const host = {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => response }),
  } as unknown as ArgumentsHost;
  return { host, request, written };
}

function recordingLogger(): { logger: EventLogger; lines: Array<[string, Record<string, unknown>]> } {
  const lines: Array<[string, Record<string, unknown>]> = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>): void => {
      lines.push([level, fields]);
    };
  return { logger: { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') }, lines };
}

describe(AllExceptionsFilter.name, () => {
  it("logs a bug once, as the request's one failure line: status, error_code and the error with its stack", () => {
    const { logger, lines } = recordingLogger();
    const { host, written } = exchange();
    const bug = new TypeError('x is not a function');
    new AllExceptionsFilter(logger).catch(bug, host);
    expect(written.status).toBe(500);
    expect(lines).toEqual([['error', { event: 'unhandled_error', status: 500, error_code: 'internal', err: bug }]]);
  });

  it('logs nothing of a GatewayError: the answer is written, and the access line says it', () => {
    const { logger, lines } = recordingLogger();
    const { host, written } = exchange();
    new AllExceptionsFilter(logger).catch(new GatewayError('model_not_found'), host);
    expect(written.status).toBe(404);
    expect(lines).toEqual([]);
  });
});

describe(`${AllExceptionsFilter.name} answers`, () => {
  const notFound = () => new NotFoundException();

  it('an unknown path with the 404 not_found, and a path of the Responses API with the way back to Chat Completions', () => {
    const { logger } = recordingLogger();
    for (const [requestPath, message] of [
      ['/v1/responsesx', 'no such route'],
      ['/v1/responses', errorSpec('responses_api_not_served').message],
      ['/v1/responses/resp_1/cancel', errorSpec('responses_api_not_served').message],
    ]) {
      const { host, written } = exchange(requestPath);
      new AllExceptionsFilter(logger).catch(notFound(), host);
      expect({ requestPath, status: written.status, body: written.body }).toEqual({
        requestPath,
        status: 404,
        body: { error: { message, type: 'invalid_request_error', code: 'not_found', param: null } },
      });
    }
  });

  it('a path no route takes with the draining 503 once the drain deadline passed', () => {
    const { logger } = recordingLogger();
    const draining = { pastDeadline: true } as DrainService;
    const { host, written } = exchange('/v1/nothing');
    new AllExceptionsFilter(logger, undefined, draining).catch(notFound(), host);
    expect([written.status, codeOf(written)]).toEqual([503, 'service_unavailable']);
    const { host: before, written: answered } = exchange('/v1/nothing');
    new AllExceptionsFilter(logger, undefined, { pastDeadline: false } as DrainService).catch(notFound(), before);
    expect([answered.status, codeOf(answered)]).toEqual([404, 'not_found']);
  });

  it("a structured request through the structured route's own answer, and every other in the OpenAI shape", () => {
    const { logger } = recordingLogger();
    const answered: Request[] = [];
    const structured = { answer: (request: Request) => void answered.push(request) };
    const marked = exchange('/v1/structured/inference', true);
    new AllExceptionsFilter(logger, structured).catch(new GatewayError('invalid_schema'), marked.host);
    expect(answered).toEqual([marked.request]);
    expect(marked.written).toEqual({});
    const other = exchange('/v1/models/x');
    new AllExceptionsFilter(logger, structured).catch(new GatewayError('model_not_found'), other.host);
    expect(answered).toHaveLength(1);
    expect(other.written.status).toBe(404);
  });

  it('nothing to a client that left (its disconnect, or a response already destroyed), and logs nothing of it', () => {
    const { logger, lines } = recordingLogger();
    const { host, written } = exchange();
    new AllExceptionsFilter(logger).catch(new ClientDisconnectedError(), host);
    expect(written).toEqual({});
    expect(lines).toEqual([]);
    const gone = exchange('/v1/models/x', false, true);
    new AllExceptionsFilter(logger).catch(new GatewayError('model_not_found'), gone.host);
    expect(gone.written).toEqual({});
  });

  it('an internal GatewayError with its 500 without calling it a bug: it was recorded where it was raised', () => {
    const { logger, lines } = recordingLogger();
    const { host, written } = exchange();
    new AllExceptionsFilter(logger).catch(new GatewayError('internal'), host);
    expect(written.status).toBe(500);
    expect(lines).toEqual([]);
  });
});
