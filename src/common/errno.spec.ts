import { errnoAlong, errnoOf } from './errno';

describe(errnoOf.name, () => {
  it.each([
    'EACCES',
    'EAI_AGAIN',
    'EISDIR',
    'UND_ERR_CONNECT_TIMEOUT',
    'ERR_SSL_WRONG_VERSION_NUMBER',
    'CERT_HAS_EXPIRED',
  ])('keeps the code %s', (code) => {
    expect(errnoOf(Object.assign(new Error('at /secret/path'), { code }))).toBe(code);
  });

  it.each([
    undefined,
    null,
    'EACCES',
    {},
    { code: 42 },
    { code: 'ERR_INVALID_ARG_TYPE x' },
    { code: 'eacces' },
    { code: 'Invalid' },
    { code: 'EAcces' },
  ])('finds no code in %p', (error) => {
    expect(errnoOf(error)).toBeUndefined();
  });
});

describe(errnoAlong.name, () => {
  it("reads the code of a failure's cause, or of an aggregate's first error", () => {
    const socket = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    expect(errnoAlong(new TypeError('fetch failed', { cause: socket }))).toBe('ECONNREFUSED');
    expect(errnoAlong(new TypeError('fetch failed', { cause: new AggregateError([socket]) }))).toBe('ECONNREFUSED');
    expect(errnoAlong(new TypeError('fetch failed'))).toBeUndefined();
  });
});
