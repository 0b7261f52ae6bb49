import { Headers as UndiciHeaders } from 'undici';
import { lowerCaseHeaders } from './http-body';

describe('lowerCaseHeaders', () => {
  it.each([
    ['the built-in fetch', (init: Record<string, string>) => new Headers(init)],
    // The proxy's fetch is the undici package's: its Headers is not an instance of the global one.
    ['the undici package', (init: Record<string, string>) => new UndiciHeaders(init)],
  ])('reads the Headers of %s', (_source, make) => {
    expect(lowerCaseHeaders(make({ 'Retry-After': '60', 'X-Codex-Primary-Used-Percent': '12' }))).toEqual({
      'retry-after': '60',
      'x-codex-primary-used-percent': '12',
    });
  });

  it('reads a node header record, joining repeated values and skipping absent ones', () => {
    expect(lowerCaseHeaders({ 'Set-Cookie': ['a=1', 'b=2'], 'Retry-After': '5', Absent: undefined })).toEqual({
      'set-cookie': 'a=1, b=2',
      'retry-after': '5',
    });
  });
});
