import type { TestGateway } from './create-test-app';

/** One SSE `data:` payload and when it arrived (ms since the request was sent). */
export interface SseEvent {
  readonly data: string;
  readonly at: number;
}

/** A chat answer read to the end: SSE events and chunks, or the JSON body when it was not SSE. */
export interface ChatStreamResult {
  readonly status: number;
  readonly headers: Headers;
  readonly events: SseEvent[];
  readonly chunks: Record<string, any>[];
  readonly done: boolean;
  /** JSON body when the answer was not SSE. */
  readonly body?: any;
  /** Everything the client received, for "this text never appears" checks. */
  readonly raw: string;
}

/** How a chat body is sent: extra headers (a bearer, a conversation id) and an abort signal. */
export interface ChatPostOptions {
  readonly headers?: Record<string, string>;
  readonly signal?: AbortSignal;
}

/** The `data:` payloads of SSE text, in order. */
export function sseData(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6));
}

/** A whole SSE answer as chat chunks (every payload but `[DONE]`), and whether `[DONE]` ended it. */
export function sseChunks(text: string): { data: string[]; chunks: Record<string, any>[]; done: boolean } {
  const data = sseData(text);
  return { data, ...chatChunks(data) };
}

/** Chat chunks from `data:` payloads: every payload but `[DONE]`, and whether `[DONE]` came last. */
function chatChunks(data: readonly string[]): { chunks: Record<string, any>[]; done: boolean } {
  return {
    chunks: data.filter((item) => item !== '[DONE]').map((item) => JSON.parse(item) as Record<string, any>),
    done: data.at(-1) === '[DONE]',
  };
}

/** POST /v1/chat/completions with `body` as JSON, as it is, to an in-process or child gateway. */
export function postChatBody(
  gateway: { readonly url: string },
  body: unknown,
  options: ChatPostOptions = {},
): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify(body),
    signal: options.signal,
  });
}

/**
 * Reads a response body until the text read so far holds `needle`, and returns that text; the
 * reader stays usable. A stream that ends first fails the test instead of spinning on `done`.
 */
export async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, needle: string): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(needle)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before ${JSON.stringify(needle)}: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

/** Reads a response body from where `reader` stands to its end, as text. */
export async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for (let step = await reader.read(); !step.done; step = await reader.read())
    text += decoder.decode(step.value, { stream: true });
  return text + decoder.decode();
}

/** POST /v1/chat/completions with `model` and a one-message conversation unless the body overrides them. */
export function postChat(
  gateway: TestGateway,
  body: Record<string, unknown>,
  signal?: AbortSignal,
  headers: Record<string, string> = {},
): Promise<Response> {
  return postChatBody(
    gateway,
    { model: 'claude-fable-5', messages: [{ role: 'user', content: 'Hi' }], ...body },
    { headers, signal },
  );
}

/** Sends a streaming chat request and reads the answer event by event, noting when each arrived. */
export async function streamChat(
  gateway: TestGateway,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<ChatStreamResult> {
  const sent = Date.now();
  const response = await postChat(gateway, { stream: true, ...body }, undefined, headers);
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const raw = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      events: [],
      chunks: [],
      done: false,
      body: JSON.parse(raw),
      raw,
    };
  }
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  let raw = '';
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    const text = decoder.decode(bytes, { stream: true });
    raw += text;
    buffer += text;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = sseData(frame).join('\n');
      if (data !== '') events.push({ data, at: Date.now() - sent });
    }
  }
  const { chunks, done } = chatChunks(events.map((event) => event.data));
  return { status: response.status, headers: response.headers, events, chunks, done, raw };
}

const deltaField = (result: ChatStreamResult, field: string) =>
  result.chunks
    .map((chunk) => chunk.choices?.[0]?.delta?.[field])
    .filter((text): text is string => typeof text === 'string');
export const contents = (result: ChatStreamResult) => deltaField(result, 'content');
export const reasonings = (result: ChatStreamResult) => deltaField(result, 'reasoning_content');
export const toolFrames = (result: ChatStreamResult) =>
  result.chunks.flatMap((chunk) => (chunk.choices?.[0]?.delta?.tool_calls ?? []) as Record<string, any>[]);
export const finishReason = (result: ChatStreamResult) =>
  result.chunks.map((chunk) => chunk.choices?.[0]?.finish_reason).find((reason) => reason);
