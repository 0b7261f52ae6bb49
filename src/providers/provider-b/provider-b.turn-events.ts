import { closingEvents, sleep, withIdleTimeout } from '../../common/async/abortable';
import type { ChatEvent } from '../../core/chat-event';
import { GatewayError } from '../../core/gateway.error';
import { RETRY_DELAYS_MS, retryDelayMs } from '../shared/retry-policy';
import { parseSseJson, SsePayload } from '../shared/sse-event-parser';
import { OpenedResponse, readJsonResponse } from './provider-b.http';
import { createProviderBStreamState, finishProviderBStream, providerBPayloadError, ProviderBStreamState, translateProviderBPayload } from './provider-b.stream';
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
  /** Sends the same request again (with the usual retries before acceptance): a new accepted turn. */
  readonly reopen: () => Promise<AcceptedTurn>;
  /** Told about every invisible retry of an accepted turn (for the log line). */
  readonly onInvalidTurnRetry?: (reason: string, retry: number, delayMs: number) => void;
}

/**
 * The pinned Gemini CLI retries a turn that ends with nothing to show — no finish reason, an
 * empty or thoughts-only answer, MALFORMED_FUNCTION_CALL / UNEXPECTED_TOOL_CALL, an empty answer
 * cut by MAX_TOKENS or a filter — up to 3 more times (4 attempts), waiting 1 s, 2 s, 4 s
 * (`MID_STREAM_RETRY_OPTIONS` in geminiChat.ts). So do we, as long as nothing visible (text or a
 * tool call) reached the client; the reasoning of such a turn is held back until the turn shows
 * something, so a retried turn's reasoning is never sent.
 */
export const INVALID_TURN_RETRY = { maxRetries: 3, initialDelayMs: 1000 };

/**
 * Test seam: shortens the invalid-turn backoff for this process. Returns a restore function.
 * Production code never calls it.
 */
export function overrideInvalidTurnDelay(initialDelayMs: number): () => void {
  const previous = INVALID_TURN_RETRY.initialDelayMs;
  INVALID_TURN_RETRY.initialDelayMs = initialDelayMs;
  return () => {
    INVALID_TURN_RETRY.initialDelayMs = previous;
  };
}

/** How one accepted attempt ended, when it showed the client nothing. */
interface InvisibleEnd {
  /** What the client gets if no retry happens: held reasoning, usage, finish or error. */
  readonly tail: ChatEvent[];
  /** Why it is retryable (for the log), or undefined when it must not be retried. */
  readonly retryReason?: string;
  /** A retryable upstream error: its own backoff hint. */
  readonly error?: GatewayError;
}

/**
 * The accepted turn as typed events. A turn that ends without anything visible is sent again
 * (INVALID_TURN_RETRY; a retryable upstream error before anything visible uses the shared retry
 * rule instead) — invisible to the client, whose headers only promised a turn. Once something
 * visible went out, nothing is retried: a failure is one terminal `error` event. The iterable
 * only throws when the client aborted. Leaving early closes the upstream response at once.
 */
export function turnEvents(first: AcceptedTurn, turn: ProviderBTurn, hooks: TurnEventHooks): AsyncIterable<ChatEvent> {
  // Never iterated (the client left before the first chunk): close the response and the turn anyway.
  return closingEvents(acceptedTurnEvents(first, turn, hooks), async () => {
    await closeQuietly(first.rest, first.opened);
    turn.dispose();
  });
}

async function* acceptedTurnEvents(first: AcceptedTurn, turn: ProviderBTurn, hooks: TurnEventHooks): AsyncGenerator<ChatEvent> {
  let accepted = first;
  let invalidRetries = 0;
  let errorRetries = 0;
  try {
    for (;;) {
      const end = yield* attemptEvents(accepted, turn, hooks);
      if (end === undefined) return;
      const delayMs = retryDelay(end, invalidRetries, errorRetries);
      if (delayMs === undefined || Date.now() + delayMs >= turn.deadlineAt) {
        yield* end.tail;
        return;
      }
      if (end.error) errorRetries++;
      else invalidRetries++;
      hooks.onInvalidTurnRetry?.(end.retryReason ?? 'upstream', invalidRetries + errorRetries, delayMs);
      try {
        await sleep(delayMs, turn.signal);
        accepted = await hooks.reopen();
      } catch (error) {
        const normalized = turn.normalize(error);
        if (turn.clientAborted) throw normalized;
        yield { type: 'error', error: normalized instanceof GatewayError ? normalized : new GatewayError('upstream', { cause: normalized }) };
        return;
      }
    }
  } finally {
    turn.dispose();
  }
}

function retryDelay(end: InvisibleEnd, invalidRetries: number, errorRetries: number): number | undefined {
  if (end.error) return errorRetries < RETRY_DELAYS_MS.length ? retryDelayMs(errorRetries, end.error.retryAfterSeconds) : undefined;
  if (end.retryReason === undefined || invalidRetries >= INVALID_TURN_RETRY.maxRetries) return undefined;
  return INVALID_TURN_RETRY.initialDelayMs * 2 ** invalidRetries;
}

/**
 * One accepted attempt. Returns undefined when the client got the whole turn, or how the attempt
 * ended when nothing visible was sent (its events are then held in `tail`).
 */
async function* attemptEvents(accepted: AcceptedTurn, turn: ProviderBTurn, hooks: TurnEventHooks): AsyncGenerator<ChatEvent, InvisibleEnd | undefined> {
  const { state, rest, opened } = accepted;
  const held: ChatEvent[] = [];
  let visible = false;
  try {
    let payload: unknown = accepted.first;
    for (;;) {
      for (const event of translateProviderBPayload(payload, state)) {
        if (event.type === 'error') return visible ? yield* finalEvent(event) : { tail: [...held, event], ...retryableError(event.error) };
        if (!visible && event.type === 'reasoning-delta') {
          held.push(event);
          continue;
        }
        if (!visible) {
          visible = true;
          yield* held.splice(0);
        }
        if (event.type === 'tool-call' && event.call.id && event.call.thoughtSignature) hooks.onToolCall(event.call.id, event.call.thoughtSignature);
        yield event;
      }
      let next: IteratorResult<SsePayload>;
      try {
        next = await rest.next();
      } catch (error) {
        const normalized = turn.normalize(error);
        if (turn.clientAborted) throw normalized;
        const failure: ChatEvent = { type: 'error', error: normalized instanceof GatewayError ? normalized : new GatewayError('upstream', { cause: normalized }) };
        return visible ? yield* finalEvent(failure) : { tail: [...held, failure], ...retryableError(failure.error) };
      }
      if (next.done) break;
      if (!next.value.ok) {
        const failure: ChatEvent = { type: 'error', error: new GatewayError('upstream', { detail: 'provider_b non-JSON stream data', retryable: true }) };
        return visible ? yield* finalEvent(failure) : { tail: [...held, failure], ...retryableError(failure.error) };
      }
      payload = next.value.value;
    }
    const tail = finishProviderBStream(state);
    if (visible) {
      yield* tail;
      return undefined;
    }
    return { tail: [...held, ...tail], retryReason: invalidTurnReason(state, held.length > 0) };
  } finally {
    await closeQuietly(rest, opened);
  }
}

async function* finalEvent(event: ChatEvent): AsyncGenerator<ChatEvent, undefined> {
  yield event;
  return undefined;
}

/** A retryable upstream error before anything visible is retried like one before acceptance. */
function retryableError(error: GatewayError): Pick<InvisibleEnd, 'error' | 'retryReason'> {
  return error.retryable ? { error, retryReason: error.code } : {};
}

/** The CLI's InvalidStreamError types, for the log line (every invisible end is one of them). */
function invalidTurnReason(state: ProviderBStreamState, thoughts: boolean): string {
  if (state.finishReason === undefined) return 'NO_FINISH_REASON';
  if (state.finishReason === 'MALFORMED_FUNCTION_CALL' || state.finishReason === 'UNEXPECTED_TOOL_CALL') return state.finishReason;
  if (thoughts) return 'THINKING_ONLY_RESPONSE';
  return state.finishReason === 'STOP' ? 'NO_RESPONSE_TEXT' : `EMPTY_${state.finishReason}`;
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
