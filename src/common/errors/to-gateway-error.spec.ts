import { BadRequestException, HttpException, MethodNotAllowedException, NotFoundException } from '@nestjs/common';
import { toGatewayError, undecodableBody } from './to-gateway-error';

/** The code and public message an error maps to. */
const mapped = (thrown: unknown) => {
  const error = toGatewayError(thrown);
  return [error.code, error.publicMessage];
};

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

  it('words a body that is not JSON, and one that does not inflate as its Content-Encoding names, with the fix', () => {
    expect(mapped(rawBodyError('entity.parse.failed'))).toEqual([
      'invalid_request',
      'the request body is not valid JSON',
    ]);
    expect([undecodableBody('gzip').code, undecodableBody('gzip').publicMessage]).toEqual([
      'invalid_request',
      'the body is not valid gzip data (Content-Encoding: gzip); send it compressed as that header says, or uncompressed without Content-Encoding',
    ]);
  });

  it('takes a body whose connection closed before it ended for the client leaving (canceled), not a refusal', () => {
    expect(toGatewayError(rawBodyError('request.aborted')).code).toBe('canceled');
  });
});

describe(`${toGatewayError.name} by status`, () => {
  it('takes a 404 or a 405 for no such route, and a 413 for a body too large, whether the status is `status` or `statusCode`', () => {
    expect(mapped(new NotFoundException())).toEqual(['route_not_found', undefined]);
    expect(mapped(new MethodNotAllowedException())).toEqual(['route_not_found', undefined]);
    expect(mapped(new HttpException('too large', 413))).toEqual(['request_too_large', undefined]);
    expect(mapped(Object.assign(new Error('too large'), { statusCode: 413 }))).toEqual([
      'request_too_large',
      undefined,
    ]);
  });

  it("words a validation refusal in the validator's own words, one after another, and any other 4xx as a bad request", () => {
    expect(mapped(new BadRequestException(['model must be a string', 'messages must be an array']))).toEqual([
      'invalid_request',
      'model must be a string; messages must be an array',
    ]);
    expect(mapped(new BadRequestException('stream must be a boolean'))).toEqual([
      'invalid_request',
      'stream must be a boolean',
    ]);
    expect(mapped(new HttpException('unsupported', 415))).toEqual([
      'invalid_request',
      'Content-Type must be application/json',
    ]);
  });

  it('takes anything else for a bug (500 internal): a 5xx, or an error without a status', () => {
    expect(toGatewayError(new HttpException('boom', 500)).code).toBe('internal');
    expect(toGatewayError(new Error('boom')).code).toBe('internal');
  });

  it('quotes a Content-Encoding the body reader does not inflate only while it is a short list of names', () => {
    const unsupported = (encoding: string) =>
      toGatewayError(Object.assign(rawBodyError('encoding.unsupported'), { encoding }));
    expect(unsupported('compress, gzip').publicMessage).toBe(
      'Content-Encoding "compress, gzip" is not supported; send the body uncompressed, or compressed once with gzip, deflate, br or zstd (and Content-Encoding naming it)',
    );
    expect(unsupported('x'.repeat(25)).publicMessage).toMatch(/^this Content-Encoding is not supported; /);
    expect(unsupported('gzip; q=<script>').publicMessage).toMatch(/^this Content-Encoding is not supported; /);
  });
});

function rawBodyError(type: string): Error {
  return Object.assign(new Error('raw-body'), { status: 400, statusCode: 400, type });
}
