import type { Request, Response } from 'express';
import { onPostToMountPath } from './http-middleware';

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
