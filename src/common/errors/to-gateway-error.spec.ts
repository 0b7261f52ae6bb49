import { toGatewayError } from './to-gateway-error';

describe(toGatewayError.name, () => {
  // What raw-body raises for a body other than its Content-Length, and for a client that left
  // mid-body: Node's HTTP parser usually answers both first, so no e2e request reaches them.
  it.each([
    [
      'request.size.invalid',
      'the body is shorter or longer than its Content-Length; send the length of the bytes sent (compressed, when compressed), or send the body chunked without Content-Length',
    ],
    ['request.aborted', 'the connection closed before the whole body arrived; send the request again'],
  ])('words the body reader error %s as what happened and the fix', (type, message) => {
    const error = toGatewayError(Object.assign(new Error('raw-body'), { status: 400, statusCode: 400, type }));
    expect([error.code, error.publicMessage]).toEqual(['invalid_request', message]);
  });
});
