import type { Request, Response } from 'express';
import { GatewayError } from '../../core/gateway.error';
import { onPostToMountPath, parseJsonBody } from './http-middleware';

describe(onPostToMountPath.name, () => {
  it('runs the handler only for a POST to exactly the mounted path; everything else goes on to its 404', () => {
    const seen: string[] = [];
    const guarded = onPostToMountPath((request, _response, next) => {
      seen.push(`${request.method} ${request.path}`);
      next();
    });
    const next = jest.fn();
    guarded({ method: 'POST', path: '/' } as Request, {} as Response, next);
    guarded({ method: 'GET', path: '/' } as Request, {} as Response, next);
    guarded({ method: 'POST', path: '/extra' } as Request, {} as Response, next);
    expect(seen).toEqual(['POST /']);
    expect(next).toHaveBeenCalledTimes(3);
  });
});

describe(parseJsonBody.name, () => {
  const message = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return error instanceof GatewayError ? `${error.code}: ${error.publicMessage}` : String(error);
    }
    return 'parsed';
  };

  it('reads UTF-8 by default and as declared, without a leading byte-order mark', () => {
    expect(parseJsonBody(Buffer.from('{"a":"é"}'), undefined)).toEqual({ a: 'é' });
    expect(parseJsonBody(Buffer.from('\ufeff [1]'), 'application/json; charset=UTF-8')).toEqual([1]);
  });

  it('reads UTF-16 as declared', () => {
    expect(parseJsonBody(Buffer.from('{"a":1}', 'utf16le'), 'application/json; charset=utf-16le')).toEqual({ a: 1 });
  });

  it('takes an empty body as {} and refuses anything but an object or array at the top', () => {
    expect(parseJsonBody(Buffer.alloc(0), 'application/json')).toEqual({});
    for (const text of [' ', '{"a":', '{a:1}', 'nul', '"open'])
      expect(message(() => parseJsonBody(Buffer.from(text), 'application/json'))).toBe(
        'invalid_request: the request body is not valid JSON',
      );
    for (const text of ['"text"', '42', ' null ', 'true'])
      expect(message(() => parseJsonBody(Buffer.from(text), 'application/json'))).toBe(
        'invalid_request: the request body must be a JSON object',
      );
  });

  it('refuses a charset that is neither UTF-8 nor UTF-16, naming it', () => {
    expect(message(() => parseJsonBody(Buffer.from('{}'), 'application/json; charset=latin1'))).toBe(
      'invalid_request: Content-Type must be application/json in UTF-8 or UTF-16 (charset latin1 is not supported)',
    );
  });
});
