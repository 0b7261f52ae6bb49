import type { Request, Response } from 'express';
import { onPostToMountPath, requestIdMiddleware } from './http-middleware';

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

describe(requestIdMiddleware.name, () => {
  it('assigns its own UUID and ignores a caller-supplied x-request-id', () => {
    const request = { headers: { 'x-request-id': 'evil\n{"level":60}' } } as unknown as Request & { id?: string };
    const headers: Record<string, string> = {};
    const response = { setHeader: (name: string, value: string) => (headers[name] = value) } as unknown as Response;
    const next = jest.fn();
    requestIdMiddleware()(request, response, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(request.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(headers['x-request-id']).toBe(request.id);
  });
});
