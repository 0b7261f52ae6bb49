import type { ArgumentsHost } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { EventLogger } from '../../core/event-logger';
import { GatewayError } from '../../core/gateway.error';
import { AllExceptionsFilter } from './all-exceptions.filter';

/** A bare request and a response that records what was written, behind a hand-made ArgumentsHost. */
function exchange(): { host: ArgumentsHost; written: { status?: number; body?: unknown } } {
  const written: { status?: number; body?: unknown } = {};
  const request = { path: '/v1/models/x', headers: {} } as unknown as Request;
  const response = {
    headersSent: false,
    destroyed: false,
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
  return { host, written };
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
