import { isJsonObject } from '../../common/json';
import { parseSseJson } from '../shared/sse-event-parser';
import { ERROR_BODY_MAX_BYTES } from './provider-a.constants';
import { connectionFailure } from './provider-a.errors';
import { lowerCaseHeaders, parseJsonOrUndefined, readBodyCapped } from '../../common/egress/http-body';
import type { AttemptInput, UpstreamConnection, UpstreamFrame } from './provider-a.transport';
import { UpstreamRefusal } from '../shared/upstream-failure';

/** Bytes of a fetch body that stop (with the abort reason) as soon as `signal` aborts. */
async function* bodyChunks(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    // A reset mid-body is an early close: the turn reports "stream closed before completion".
    void error;
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

async function* sseFrames(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<UpstreamFrame> {
  for await (const payload of parseSseJson(bodyChunks(body, signal))) {
    const value = payload.ok ? payload.value : undefined;
    yield isJsonObject(value) ? { ok: true, value } : { ok: false, reason: 'not_json' };
  }
}

/**
 * One HTTP + SSE attempt (docs/upstream/provider-a.md §4.2): POST the body without `type`, classify a non-2xx
 * status with at most 64 KiB of its body, else read `data:` lines through the shared SSE parser
 * (the JSON `type` is authoritative; `event:` lines are ignored). Closing aborts the fetch.
 */
export async function openSseConnection(input: AttemptInput): Promise<UpstreamConnection> {
  const { signal } = input;
  if (signal.aborted) throw signal.reason;
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const close = () => {
    signal.removeEventListener('abort', onAbort);
    controller.abort();
  };
  let response: Response;
  try {
    const init: RequestInit = {
      method: 'POST',
      headers: input.headers,
      body: JSON.stringify(input.body),
      signal: controller.signal,
      redirect: 'manual',
    };
    // Through the egress proxy unless NO_PROXY says otherwise.
    response = await (input.proxy ? input.proxy.fetch(input.url, init) : fetch(input.url, init));
  } catch (error) {
    close();
    if (signal.aborted) throw signal.reason;
    throw connectionFailure('sse connection failed', error, { url: input.url, proxy: input.proxy });
  }
  const headers = lowerCaseHeaders(response.headers);
  if (response.status < 200 || response.status >= 300 || !response.body) {
    const text = await readBodyCapped(response, ERROR_BODY_MAX_BYTES).catch(() => '');
    close();
    if (signal.aborted) throw signal.reason;
    throw new UpstreamRefusal(response.status, parseJsonOrUndefined(text), headers);
  }
  const frames = sseFrames(response.body, signal);
  return {
    responseHeaders: headers,
    frames: {
      [Symbol.asyncIterator]: () => {
        const iterator = frames[Symbol.asyncIterator]();
        return {
          next: async () => {
            try {
              return await iterator.next();
            } catch (error) {
              if (signal.aborted) throw signal.reason;
              throw error;
            }
          },
          return: async () => {
            close();
            await iterator.return(undefined).catch(() => undefined);
            return { value: undefined, done: true };
          },
        };
      },
    },
    close,
  };
}
