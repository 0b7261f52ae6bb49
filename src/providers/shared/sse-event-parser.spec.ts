import type { SsePayload } from './sse-event-parser';
import { parseSseJson } from './sse-event-parser';

async function collect(chunks: string[]): Promise<SsePayload[]> {
  const encoder = new TextEncoder();
  async function* source() {
    for (const chunk of chunks) yield encoder.encode(chunk);
  }
  const result: SsePayload[] = [];
  for await (const payload of parseSseJson(source())) result.push(payload);
  return result;
}

describe(parseSseJson.name, () => {
  it('parses events split across arbitrary chunk boundaries and ignores event:/comment lines', async () => {
    const payloads = await collect(['event: a\nda', 'ta: {"x":', '1}\n\n: comment\n', 'data: {"y":2}\n\n']);
    expect(payloads).toEqual([
      { ok: true, value: { x: 1 } },
      { ok: true, value: { y: 2 } },
    ]);
  });

  it('joins multi-line data with a newline', async () => {
    expect(await collect(['data: {"a":\ndata: 1}\n\n'])).toEqual([{ ok: true, value: { a: 1 } }]);
  });

  it('reports non-JSON data as a failure result instead of throwing', async () => {
    expect(await collect(['data: not json\n\n'])).toEqual([{ ok: false, raw: 'not json' }]);
  });

  it('stops at the [DONE] sentinel', async () => {
    expect(await collect(['data: {"a":1}\n\ndata: [DONE]\n\ndata: {"b":2}\n\n'])).toEqual([
      { ok: true, value: { a: 1 } },
    ]);
  });

  it('stops at a [DONE] sentinel with whitespace around it', async () => {
    expect(await collect(['data: {"a":1}\n\ndata: [DONE] \n\ndata: {"b":2}\n\n'])).toEqual([
      { ok: true, value: { a: 1 } },
    ]);
  });

  it('skips an event with empty data, as a keep-alive, instead of reporting it as non-JSON', async () => {
    expect(await collect(['data: {"a":1}\n\ndata:\n\ndata: {"b":2}\n\n'])).toEqual([
      { ok: true, value: { a: 1 } },
      { ok: true, value: { b: 2 } },
    ]);
  });

  it('dispatches data left at EOF without a blank line', async () => {
    expect(await collect(['data: {"tail":true}'])).toEqual([{ ok: true, value: { tail: true } }]);
  });

  it('decodes a multi-byte character split across chunks', async () => {
    const bytes = new TextEncoder().encode('data: {"t":"é"}\n\n');
    // 'é' is bytes 12 and 13 (0xC3 0xA9); cut between them.
    expect([bytes[12], bytes[13]]).toEqual([0xc3, 0xa9]);
    async function* source() {
      yield bytes.slice(0, 13);
      yield bytes.slice(13);
    }
    const result: SsePayload[] = [];
    for await (const payload of parseSseJson(source())) result.push(payload);
    expect(result).toEqual([{ ok: true, value: { t: 'é' } }]);
  });
});
