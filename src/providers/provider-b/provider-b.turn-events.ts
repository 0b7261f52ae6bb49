import { GatewayError } from '../../core/gateway.error';
import type { ChatEvent } from '../../core/chat-event';
import { closingEvents } from '../shared/closing-events';
import { withIdleTimeout } from '../shared/idle-timeout';
import { parseSseJson, SsePayload } from '../shared/sse-event-parser';
import { OpenedResponse, readJsonResponse } from './provider-b.http';
import {
  createProviderBStreamState,
  finishProviderBStream,
  providerBPayloadError,
  ProviderBStreamState,
  translateProviderBPayload,
} from './provider-b.stream';
import type { ProviderBTurn } from './provider-b.turn';

/** A turn the upstream accepted: its first non-error payload and the rest still to read. */
export interface AcceptedTurn {
  readonly first: unknown;
  readonly rest: AsyncIterator<SsePayload>;
  readonly state: ProviderBStreamState;
  readonly opened: OpenedResponse;
}

export interface OpenTurnOptions {
  readonly customToolNames: ReadonlySet<string>;
  readonly requestId: string;
  /** GATEWAY_STREAM_IDLE_TIMEOUT: longest silence between SSE frames (0 = off). */
  readonly idleTimeoutMs: number;
}

/**
 * Reads up to the first payload that is not an error (provider_b.md §9.2: that is when the turn
 * counts as accepted). An error frame, non-JSON data or an empty stream before it rejects with
 * the classified error, so the retry loop and the chat layer can still answer with a status.
 */
export async function openTurn(opened: OpenedResponse, streaming: boolean, turn: ProviderBTurn, options: OpenTurnOptions): Promise<AcceptedTurn> {
  const state = createProviderBStreamState(options.customToolNames, options.requestId);
  if (!streaming) {
    const body = await readJsonResponse(opened, turn);
    const error = providerBPayloadError(body);
    if (error) throw error;
    return { first: body, rest: emptyPayloads(), state, opened };
  }
  const body = opened.response.body ?? emptyBytes();
  const onIdle = () => opened.abort(new GatewayError('timeout', { detail: 'provider_b stream idle' }));
  const rest = withIdleTimeout(parseSseJson(body), options.idleTimeoutMs, onIdle)[Symbol.asyncIterator]();
  try {
    const next = await rest.next();
    if (next.done) throw new GatewayError('upstream', { detail: 'provider_b empty response', retryable: true });
    if (!next.value.ok) throw new GatewayError('upstream', { detail: 'provider_b non-JSON stream data', retryable: true });
    const error = providerBPayloadError(next.value.value);
    if (error) throw error;
    return { first: next.value.value, rest, state, opened };
  } catch (error) {
    await closeQuietly(rest, opened);
    throw turn.normalize(error);
  }
}

export interface TurnEventHooks {
  /** A tool call with a thought signature was emitted (the adapter remembers it, §8). */
  readonly onToolCall: (callId: string, signature: string) => void;
}

/**
 * The accepted turn as typed events. After acceptance nothing is retried: a failure is one
 * terminal `error` event. The iterable only throws when the client aborted. Leaving early
 * (the consumer stops iterating) closes the upstream response at once.
 */
export function turnEvents(accepted: AcceptedTurn, turn: ProviderBTurn, hooks: TurnEventHooks): AsyncIterable<ChatEvent> {
  // Never iterated (the client left before the first chunk): close the response and the turn anyway.
  return closingEvents(acceptedTurnEvents(accepted, turn, hooks), async () => {
    await closeQuietly(accepted.rest, accepted.opened);
    turn.dispose();
  });
}

async function* acceptedTurnEvents(accepted: AcceptedTurn, turn: ProviderBTurn, hooks: TurnEventHooks): AsyncGenerator<ChatEvent> {
  const { state, rest, opened } = accepted;
  try {
    let payload: unknown = accepted.first;
    for (;;) {
      for (const event of translateProviderBPayload(payload, state)) {
        if (event.type === 'tool-call' && event.call.id && event.call.thoughtSignature) hooks.onToolCall(event.call.id, event.call.thoughtSignature);
        yield event;
        if (event.type === 'error') return;
      }
      let next: IteratorResult<SsePayload>;
      try {
        next = await rest.next();
      } catch (error) {
        const normalized = turn.normalize(error);
        if (turn.clientAborted) throw normalized;
        yield { type: 'error', error: normalized instanceof GatewayError ? normalized : new GatewayError('upstream', { cause: normalized }) };
        return;
      }
      if (next.done) break;
      if (!next.value.ok) {
        yield { type: 'error', error: new GatewayError('upstream', { detail: 'provider_b non-JSON stream data' }) };
        return;
      }
      payload = next.value.value;
    }
    yield* finishProviderBStream(state);
  } finally {
    await closeQuietly(rest, opened);
    turn.dispose();
  }
}

async function closeQuietly(rest: AsyncIterator<SsePayload>, opened: OpenedResponse): Promise<void> {
  // Abort first so a read still pending on the socket ends at once; then unwind the parsers.
  opened.abort();
  await rest.return?.().catch(() => undefined);
}

async function* emptyPayloads(): AsyncGenerator<SsePayload> {
  // generateContent: the whole answer was the first payload.
}

async function* emptyBytes(): AsyncGenerator<Uint8Array> {
  // A 2xx without a body reads as an empty stream.
}
