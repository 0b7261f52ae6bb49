import type { EventSourceMessage } from 'eventsource-parser';
import { createParser } from 'eventsource-parser';

/** One upstream SSE payload: parsed JSON, or the raw text when it was not JSON. */
export type SsePayload = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly raw: string };

/**
 * The one upstream SSE reader all HTTP adapters share: bytes → text (streaming UTF-8 decode) →
 * `eventsource-parser` (joins multi-line `data:`, ignores comments and `event:`/`id:`) → JSON
 * parse that returns a result instead of throwing. The `[DONE]` sentinel ends the stream.
 */
export async function* parseSseJson(body: AsyncIterable<Uint8Array>): AsyncGenerator<SsePayload> {
  const decoder = new TextDecoder();
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const drain = function* (): Generator<SsePayload | 'done'> {
    while (pending.length > 0) {
      const data = pending.shift()!.data;
      if (data.trim() === '[DONE]') {
        yield 'done';
        return;
      }
      if (data === '') continue;
      try {
        yield { ok: true, value: JSON.parse(data) };
      } catch {
        yield { ok: false, raw: data };
      }
    }
  };
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    for (const payload of drain()) {
      if (payload === 'done') return;
      yield payload;
    }
  }
  // Data left without a closing blank line at EOF is still dispatched (docs/upstream/provider-b.md §9.1).
  parser.feed(decoder.decode() + '\n\n');
  for (const payload of drain()) {
    if (payload === 'done') return;
    yield payload;
  }
}
