import type { ChatEvent } from '../../core/chat-event';
import { GatewayError } from '../../core/gateway.error';
import { sanitizeIdentifier } from '../../common/logging/request-log';
import type { SsePayload } from '../shared/sse-event-parser';
import { parseSseJson } from '../shared/sse-event-parser';
import type { FrameStep, UpstreamAttempt } from '../shared/turn-runner';
import type { OpenedResponse, TurnScope } from './provider-b.http';
import { readJsonResponse } from './provider-b.http';
import type { ProviderBStreamState } from './provider-b.stream';
import {
  createProviderBStreamState,
  finishProviderBStream,
  providerBPayloadError,
  translateProviderBPayload,
} from './provider-b.stream';

/**
 * provider_b's attempts as the turn runner reads them (provider_b.md §9): the SSE payloads of one
 * `streamGenerateContent` call (or the one body of `generateContent`), and what each means.
 */
export interface ProviderBAttempt extends UpstreamAttempt<SsePayload> {
  readonly stream: ProviderBStreamState;
  /** Reasoning held back until the turn shows something (a retried turn's reasoning is never sent). */
  readonly held: ChatEvent[];
  visible: boolean;
  /** A tool call with a thought signature was emitted (the adapter remembers it, §8). */
  readonly onToolCall: (callId: string, signature: string) => void;
}

/**
 * The pinned Gemini CLI retries a turn that ends with nothing to show — no finish reason, an
 * empty or thoughts-only answer, MALFORMED_FUNCTION_CALL / UNEXPECTED_TOOL_CALL, an empty answer
 * cut by MAX_TOKENS or a filter — up to 3 more times (4 attempts), waiting 1 s, 2 s, 4 s
 * (`MID_STREAM_RETRY_OPTIONS` in geminiChat.ts). So do we (the runner's `emptyTurnRetry`), as long
 * as nothing visible (text or a tool call) reached the client.
 */
export const INVALID_TURN_RETRY = {
  maxRetries: 3,
  delayMs: (retry: number): number => 1000 * 2 ** retry,
};

export interface AttemptShape {
  readonly streaming: boolean;
  readonly customToolNames: ReadonlySet<string>;
  readonly requestId: string;
  readonly onToolCall: (callId: string, signature: string) => void;
}

/** The attempt over an accepted (2xx) response; `generateContent`'s whole body is read here. */
export async function providerBAttempt(
  opened: OpenedResponse,
  scope: TurnScope,
  shape: AttemptShape,
): Promise<ProviderBAttempt> {
  const stream = createProviderBStreamState(shape.customToolNames, shape.requestId);
  const base = { stream, held: [], visible: false, onToolCall: shape.onToolCall };
  if (!shape.streaming) {
    const body = await readJsonResponse(opened, scope);
    let read = false;
    const frames: AsyncIterator<SsePayload> = {
      next: () => {
        const done = read;
        read = true;
        return Promise.resolve(
          done ? { done: true, value: undefined } : { done: false, value: { ok: true, value: body } },
        );
      },
    };
    return { ...base, frames, close: () => opened.abort() };
  }
  const frames = parseSseJson(opened.response.body ?? emptyBytes());
  return {
    ...base,
    frames,
    close: async () => {
      // Abort first so a read still pending on the socket ends at once; then unwind the parsers.
      opened.abort();
      await frames.return(undefined).catch(() => undefined);
    },
  };
}

/** One payload's meaning: an error payload fails the attempt; reasoning waits for something visible. */
export function translatePayload(payload: SsePayload, attempt: ProviderBAttempt): FrameStep {
  if (!payload.ok)
    return {
      events: [],
      failure: new GatewayError('upstream', { detail: 'provider_b non-JSON stream data', retryable: true }),
    };
  const failure = providerBPayloadError(payload.value);
  if (failure) return { events: [], failure };
  const events: ChatEvent[] = [];
  for (const event of translateProviderBPayload(payload.value, attempt.stream)) {
    if (!attempt.visible && event.type === 'reasoning-delta') {
      attempt.held.push(event);
      continue;
    }
    if (!attempt.visible) {
      attempt.visible = true;
      events.push(...attempt.held.splice(0));
    }
    if (event.type === 'tool-call' && event.call.id && event.call.thoughtSignature)
      attempt.onToolCall(event.call.id, event.call.thoughtSignature);
    events.push(event);
  }
  return { events, accepted: true };
}

/** End of the payloads (§9.3): usage and finish; a turn that showed nothing asks to be sent again. */
export function endOfPayloads(attempt: ProviderBAttempt): FrameStep {
  const { stream, held } = attempt;
  if (stream.frames === 0)
    return {
      events: [],
      failure: new GatewayError('upstream', { detail: 'provider_b empty response', retryable: true }),
    };
  const tail = finishProviderBStream(stream);
  if (attempt.visible) return { events: tail, terminal: true };
  return { events: [...held, ...tail], again: sanitizeIdentifier(invalidTurnReason(stream, held.length > 0)) };
}

/** The CLI's InvalidStreamError types, for the log line (every invisible end is one of them). */
function invalidTurnReason(state: ProviderBStreamState, thoughts: boolean): string {
  if (state.finishReason === undefined) return 'NO_FINISH_REASON';
  if (state.finishReason === 'MALFORMED_FUNCTION_CALL' || state.finishReason === 'UNEXPECTED_TOOL_CALL')
    return state.finishReason;
  if (thoughts) return 'THINKING_ONLY_RESPONSE';
  return state.finishReason === 'STOP' ? 'NO_RESPONSE_TEXT' : `EMPTY_${state.finishReason}`;
}

async function* emptyBytes(): AsyncGenerator<Uint8Array> {
  // A 2xx without a body reads as an empty stream.
}
