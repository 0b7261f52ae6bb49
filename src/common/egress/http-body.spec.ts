import { Headers as UndiciHeaders } from 'undici';
import { lowerCaseHeaders, readBodyCapped, readBodyWithin, usageReadRefused } from './http-body';

/** A fetch response whose body arrives in `chunks`, noting whether the reader cancelled the rest. */
function streamedResponse(chunks: string[], status = 200) {
  const pending = chunks.map((chunk) => new TextEncoder().encode(chunk));
  const body = { canceled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = pending.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
    cancel() {
      body.canceled = true;
    },
  });
  return { response: new Response(stream, { status }), body };
}

describe('readBodyCapped', () => {
  it('keeps exactly the first maxBytes, cutting inside a chunk, and cancels the rest of the body', async () => {
    const { response, body } = streamedResponse(['0123', '456789', 'abcdef']);
    await expect(readBodyCapped(response, 7)).resolves.toBe('0123456');
    // A hostile upstream's endless error body is not read into nowhere.
    expect(body.canceled).toBe(true);
  });

  it('reads a body shorter than the cap whole', async () => {
    const { response } = streamedResponse(['{"error":', '"x"}']);
    await expect(readBodyCapped(response, 1024)).resolves.toBe('{"error":"x"}');
  });
});

describe('readBodyWithin', () => {
  it('gives a body of exactly maxBytes whole, and undefined for one byte more', async () => {
    await expect(readBodyWithin(streamedResponse(['0123', '4567']).response, 8)).resolves.toBe('01234567');
    const over = streamedResponse(['0123', '45678', 'more']);
    await expect(readBodyWithin(over.response, 8)).resolves.toBeUndefined();
    expect(over.body.canceled).toBe(true);
  });
});

describe('usageReadRefused', () => {
  it.each([
    [401, 'auth'],
    [403, 'auth'],
    [429, 'upstream'],
    [500, 'upstream'],
  ])('reads a usage endpoint status %i as %s, keeping the status', (status, code) => {
    const error = usageReadRefused(streamedResponse(['body'], status).response, 'provider_c');
    expect(error.code).toBe(code);
    expect(error.upstreamStatus).toBe(status);
  });
});

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
