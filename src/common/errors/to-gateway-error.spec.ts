import { toGatewayError } from './to-gateway-error';

describe(toGatewayError.name, () => {
  // What raw-body raises for a body other than its Content-Length: Node's HTTP parser usually
  // answers it first, so no e2e request reaches it.
  it('words the body reader error request.size.invalid as what happened and the fix', () => {
    const error = toGatewayError(rawBodyError('request.size.invalid'));
    expect([error.code, error.publicMessage]).toEqual([
      'invalid_request',
      'the body is shorter or longer than its Content-Length; send the length of the bytes sent (compressed, when compressed), or send the body chunked without Content-Length',
    ]);
  });

  it('takes a body whose connection closed before it ended for the client leaving (canceled), not a refusal', () => {
    expect(toGatewayError(rawBodyError('request.aborted')).code).toBe('canceled');
  });
});

function rawBodyError(type: string): Error {
  return Object.assign(new Error('raw-body'), { status: 400, statusCode: 400, type });
}
