import { isJsonObject } from '../../common/json';
import { parseSseJson } from '../shared/sse-event-parser';
import { ERROR_BODY_MAX_BYTES } from './provider-a.constants';
import { connectionFailure } from './provider-a.errors';
import { lowerCaseHeaders, parseJsonOrUndefined, readBodyCapped } from '../../common/egress/http-body';
import { providerFetch } from '../../common/egress/upstream-proxy';
import type { AttemptInput, UpstreamConnection, UpstreamFrame } from './provider-a.transport';
import type { CloseReason } from '../shared/turn-runner';
import { UpstreamRefusal } from '../shared/upstream-failure';

/**
 * What a completed turn's body may still bring after its terminal event (the end of the chunked
 * body, at most a stray comment): read so the connection goes back to fetch's pool for the next
 * turn, within these bounds; past them the fetch is aborted, which closes the connection.
 */
const BODY_END_MAX_BYTES = 64 * 1024;
const BODY_END_MAX_MS = 1000;

/**
 * Bytes of a fetch body that stop (with the abort reason) as soon as `signal` aborts. A read that
 * fails otherwise (a reset, undici's body timeout) is the early close it is: "stream closed before
 * completion", with the read's error as its cause (the log names its code).
 */
async function* bodyChunks(
  body: ReadableStream<Uint8Array>,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  signal: AbortSignal,
  input: AttemptInput,
): AsyncGenerator<Uint8Array> {
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw connectionFailure('stream closed before completion', error, { url: input.url, proxy: input.proxy });
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

async function* sseFrames(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamFrame> {
  for await (const payload of parseSseJson(chunks)) {
    const value = payload.ok ? payload.value : undefined;
    yield isJsonObject(value) ? { ok: true, value } : { ok: false, reason: 'not_json' };
  }
}

/**
 * Reads a completed turn's body to its end (bounded by BODY_END_MAX_BYTES and BODY_END_MAX_MS),
 * then aborts the fetch unless the body ended: an ended body leaves its connection to fetch's pool.
 */
async function finishBody(reader: ReadableStreamDefaultReader<Uint8Array>, controller: AbortController): Promise<void> {
  const timer = setTimeout(() => controller.abort(), BODY_END_MAX_MS);
  timer.unref();
  let bytes = 0;
  try {
    while (bytes <= BODY_END_MAX_BYTES) {
      const { done, value } = await reader.read();
      if (done) return;
      bytes += value.byteLength;
    }
    controller.abort();
  } catch {
    controller.abort();
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One HTTP + SSE attempt (docs/upstream/provider-a.md §4.2): POST the body without `type`, classify a non-2xx
 * status with at most 64 KiB of its body, else read `data:` lines through the shared SSE parser
 * (the JSON `type` is authoritative; `event:` lines are ignored). Closing aborts the fetch, except
 * after a completed turn (`done`): its body is read to the end first, so the next turn may reuse
 * the connection.
 */
export async function openSseConnection(input: AttemptInput): Promise<UpstreamConnection> {
  const { signal } = input;
  if (signal.aborted) throw signal.reason;
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let closed = false;
  const close = (reason?: CloseReason) => {
    if (closed) return;
    closed = true;
    signal.removeEventListener('abort', onAbort);
    if (reason === 'done' && reader && !signal.aborted) void finishBody(reader, controller);
    else controller.abort();
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
    response = await providerFetch(input.url, init, input.proxy);
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
  reader = response.body.getReader();
  const frames = sseFrames(bodyChunks(response.body, reader, signal, input));
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
