import type { LinkedAbort } from '../../../src/common/async/abortable';
import { linkedAbort } from '../../../src/common/async/abortable';
import { readBodyWithin, readJsonCapped } from '../../../src/common/egress/http-body';
import { isJsonObject } from '../../../src/common/json';
import type { ChatEvent, UsageEvent } from '../../../src/core/chat-event';
import { messageText } from '../../../src/core/chat-message';
import type { ErrorCode } from '../../../src/core/error-codes';
import { GatewayError } from '../../../src/core/gateway.error';
import type { ProviderId } from '../../../src/core/provider-id';
import type { ChatRequest } from '../../../src/providers/shared/provider-adapter';
import type { SsePayload } from '../../../src/providers/shared/sse-event-parser';
import { parseSseJson } from '../../../src/providers/shared/sse-event-parser';
import type {
  AttemptInfo,
  FrameStep,
  UpstreamAttempt,
  UpstreamFamily,
} from '../../../src/providers/shared/turn-runner';
import { transportFailure } from '../../../src/providers/shared/turn-runner';
import { unreadableFrame } from '../../../src/providers/shared/unreadable-frame';
import { UpstreamRefusal } from '../../../src/providers/shared/upstream-failure';
import { ECHO_MODEL_RETIRED } from './echo.constants';

/** What the pool holds per echo login: the bearer its upstream knows it by. */
export interface EchoLogin {
  readonly token: string;
}

/** One echo attempt: its frames (SSE payloads, or the JSON answer cut into the same payloads) and the usage seen. */
export interface EchoAttempt extends UpstreamAttempt<SsePayload> {
  usage?: UsageEvent;
}

/** One echo attempt's request, built for its login. */
export interface EchoRequest {
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Bound on an error body read before classifying it, and on a whole non-streamed answer. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The echo family as an upstream of the shared turn runner (the same contract the built-in
 * families implement): an attempt's request is one POST with the login's bearer; a refusal is
 * classified into the gateway's error codes by `classify`, and the runner decides retries, login
 * moves and what the client sees.
 */
export class EchoUpstream implements UpstreamFamily<EchoLogin, SsePayload, EchoAttempt, EchoRequest> {
  constructor(
    readonly provider: ProviderId,
    private readonly url: string,
    private readonly chat: ChatRequest,
    private readonly streaming: boolean,
  ) {}

  request(attempt: AttemptInfo<EchoLogin>): EchoRequest {
    const lastUser = [...this.chat.messages].reverse().find((message) => message.role === 'user');
    return {
      headers: { authorization: `Bearer ${attempt.login.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: this.chat.model.upstreamModel,
        prompt: lastUser ? messageText(lastUser) : '',
        stream: this.streaming,
      }),
    };
  }

  async send(request: EchoRequest, _attempt: AttemptInfo<EchoLogin>, signal: AbortSignal): Promise<EchoAttempt> {
    // The attempt's own signal: the turn's, plus the attempt's close.
    const own = linkedAbort([signal]);
    try {
      return await this.post(request, own);
    } catch (error) {
      own.dispose();
      throw error;
    }
  }

  classify(failure: unknown): GatewayError {
    return failure instanceof UpstreamRefusal
      ? classifyEchoRefusal(this.provider, failure.status, failure.body)
      : transportFailure(this.provider, failure);
  }

  private async post(request: EchoRequest, own: LinkedAbort): Promise<EchoAttempt> {
    const { headers, body } = request;
    const response = await fetch(this.url, { method: 'POST', headers, body, signal: own.signal });
    if (!response.ok) throw new UpstreamRefusal(response.status, await readJsonCapped(response, MAX_BODY_BYTES));
    if (this.streaming && response.body) {
      const frames = parseSseJson(response.body);
      return {
        frames,
        close: async () => {
          // Abort first so a read still pending on the socket ends at once; then unwind the parser.
          own.abort(undefined);
          await frames.return(undefined).catch(() => undefined);
        },
      };
    }
    const text = await readBodyWithin(response, MAX_BODY_BYTES);
    let answer: unknown;
    try {
      answer = JSON.parse(text ?? '');
    } catch {
      throw new GatewayError('upstream', { detail: `${this.provider} answered with non-JSON`, retryable: true });
    }
    // The whole answer as the stream's payloads: one translation serves both.
    const payloads: SsePayload[] = isJsonObject(answer)
      ? [{ delta: answer.text }, { usage: answer.usage }, { finish: answer.finish }].map((value) => ({
          ok: true,
          value,
        }))
      : [{ ok: false, raw: '' }];
    return { frames: replay(payloads), close: () => own.abort(undefined) };
  }

  translate(payload: SsePayload, attempt: EchoAttempt): FrameStep {
    if (!payload.ok || !isJsonObject(payload.value)) return unreadableFrame(this.provider, 'non-JSON frame');
    const frame = payload.value;
    if (typeof frame.delta === 'string') return { events: [{ type: 'text-delta', text: frame.delta }], accepted: true };
    if (isJsonObject(frame.usage)) {
      const input = Number(frame.usage.input) || 0;
      const output = Number(frame.usage.output) || 0;
      attempt.usage = { promptTokens: input, completionTokens: output, totalTokens: input + output };
      return { events: [], accepted: true };
    }
    if (frame.finish === 'stop') {
      const events: ChatEvent[] = attempt.usage ? [{ type: 'usage', usage: attempt.usage }] : [];
      events.push({ type: 'finish', reason: 'stop' });
      return { events, accepted: true, terminal: true };
    }
    return unreadableFrame(this.provider, 'frame of no known kind');
  }

  end(): FrameStep {
    return {
      events: [],
      failure: new GatewayError('upstream', {
        detail: `${this.provider} stream ended before its finish`,
        retryable: true,
      }),
    };
  }
}

/** Payloads already read, as the frames of an attempt. */
async function* replay(payloads: readonly SsePayload[]): AsyncGenerator<SsePayload> {
  yield* payloads;
}

/**
 * A refusal of the echo upstream as the gateway's error (docs/error-codes.md): 401/403 the login
 * (`auth`, which the family's fix text words), a 429 `usage_limit` a spent limit until its reset,
 * any other 429 a rate limit, 5xx the upstream (retried before output), any other 4xx the request.
 */
export function classifyEchoRefusal(provider: ProviderId, status: number, body: unknown): GatewayError {
  const error = isJsonObject(body) && isJsonObject(body.error) ? body.error : {};
  const code = typeof error.code === 'string' ? error.code : undefined;
  const resets = typeof error.resets_in_seconds === 'number' ? error.resets_in_seconds : undefined;
  const base = {
    provider,
    upstreamStatus: status,
    detail: `${provider} upstream status ${status}`,
    upstream: { code },
  };
  if (status === 401 || status === 403) return new GatewayError('auth', base);
  if (status === 429 && code === 'usage_limit')
    return new GatewayError('usage_limit', { ...base, retryAfterSeconds: resets });
  if (status === 429) return new GatewayError('rate_limited', { ...base, retryable: true });
  if (status >= 500) return new GatewayError('upstream', { ...base, retryable: true });
  if (status === 410) return new GatewayError(ECHO_MODEL_RETIRED as ErrorCode, base);
  return new GatewayError('bad_request', base);
}
