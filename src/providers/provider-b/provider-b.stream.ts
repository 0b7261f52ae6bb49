import { GatewayError } from '../../core/gateway.error';
import type { ChatEvent, FinishReason, ToolCallEvent, UsageEvent } from '../../core/chat-event';
import { classifyProviderBError } from './provider-b.errors';
import { isJsonObject, type JsonObject } from '../../common/json';

/**
 * Per-stream state of one provider_b turn (created per call, never kept on the adapter). The
 * tool-call sequence counts calls across all frames, so two id-less calls in two frames get
 * distinct ids (provider_b.md §9.2).
 */
export interface ProviderBStreamState {
  readonly customToolNames: ReadonlySet<string>;
  /** Last resort for synthesized call ids: the gateway request id. */
  readonly requestId: string;
  callSeq: number;
  readonly emittedCallIds: Set<string>;
  frames: number;
  finishReason?: string;
  usage?: Record<string, unknown>;
  blocked: boolean;
}

export function createProviderBStreamState(
  customToolNames: ReadonlySet<string>,
  requestId: string,
): ProviderBStreamState {
  return { customToolNames, requestId, callSeq: 0, emittedCallIds: new Set(), frames: 0, blocked: false };
}

/** The classified error of an `{"error": …}` payload, else undefined. */
export function providerBPayloadError(payload: unknown): GatewayError | undefined {
  return isJsonObject(payload) && payload.error !== undefined ? classifyProviderBError(undefined, payload) : undefined;
}

/**
 * One upstream payload → typed events (candidate 0 only). An error payload yields one terminal
 * `error` event. Finish reason and usage are only remembered here; `finishProviderBStream`
 * emits them at EOF.
 */
export function translateProviderBPayload(payload: unknown, state: ProviderBStreamState): ChatEvent[] {
  const error = providerBPayloadError(payload);
  if (error) return [{ type: 'error', error }];
  state.frames++;
  if (!isJsonObject(payload)) return [];
  const response = isJsonObject(payload.response) ? payload.response : payload;
  if (isJsonObject(response.usageMetadata)) state.usage = response.usageMetadata;
  const candidates = Array.isArray(response.candidates) ? response.candidates : [];
  const feedback = isJsonObject(response.promptFeedback) ? response.promptFeedback : undefined;
  if (candidates.length === 0 && typeof feedback?.blockReason === 'string' && feedback.blockReason !== '')
    state.blocked = true;
  const candidate = isJsonObject(candidates[0]) ? candidates[0] : undefined;
  if (!candidate) return [];
  if (typeof candidate.finishReason === 'string' && candidate.finishReason !== '')
    state.finishReason = candidate.finishReason;
  const parts =
    isJsonObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
  const idBase = firstString(response.responseId, payload.traceId, response.traceId) ?? state.requestId;

  const events: ChatEvent[] = [];
  for (const part of parts) {
    if (!isJsonObject(part)) continue;
    if (isJsonObject(part.functionCall)) {
      const call = toolCall(part.functionCall, part.thoughtSignature, idBase, state);
      if (call) events.push({ type: 'tool-call', call });
    } else if (typeof part.text === 'string' && part.text !== '') {
      events.push({ type: part.thought === true ? 'reasoning-delta' : 'text-delta', text: part.text });
    }
    // executableCode, codeExecutionResult, inlineData and empty text carry nothing for chat.
  }
  return events;
}

function toolCall(
  functionCall: JsonObject,
  signature: unknown,
  idBase: string,
  state: ProviderBStreamState,
): ToolCallEvent | undefined {
  const upstreamId = typeof functionCall.id === 'string' && functionCall.id !== '' ? functionCall.id : undefined;
  if (upstreamId !== undefined) {
    if (state.emittedCallIds.has(upstreamId)) return undefined;
    state.emittedCallIds.add(upstreamId);
  }
  const id = upstreamId ?? `call_${idBase.replace(/[^A-Za-z0-9_-]/g, '')}_${state.callSeq}`;
  state.callSeq++;
  const name = typeof functionCall.name === 'string' ? functionCall.name : '';
  const args = isJsonObject(functionCall.args) ? functionCall.args : {};
  const thoughtSignature = typeof signature === 'string' && signature !== '' ? signature : undefined;
  const common = { id, name, ...(thoughtSignature ? { thoughtSignature } : {}) };
  if (state.customToolNames.has(name)) {
    return { ...common, kind: 'custom', input: typeof args.input === 'string' ? args.input : JSON.stringify(args) };
  }
  return { ...common, kind: 'function', arguments: JSON.stringify(args) };
}

const FILTER_REASONS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);
const INVALID_CALL_REASONS = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL']);

/** EOF (provider_b.md §9.3): `usage` when seen, then `finish` or a terminal `error`. */
export function finishProviderBStream(state: ProviderBStreamState): ChatEvent[] {
  if (state.frames === 0)
    return [
      { type: 'error', error: new GatewayError('upstream', { detail: 'provider_b empty response', retryable: true }) },
    ];
  const events: ChatEvent[] = [];
  const usage = state.usage ? mapUsage(state.usage) : undefined;
  if (usage) events.push({ type: 'usage', usage });
  const reason = state.finishReason;
  if (reason !== undefined && INVALID_CALL_REASONS.has(reason)) {
    events.push({
      type: 'error',
      error: new GatewayError('invalid_tool_call', { detail: `provider_b finishReason ${reason}` }),
    });
  } else {
    events.push({ type: 'finish', reason: mapFinishReason(reason, state.blocked) });
  }
  return events;
}

function mapFinishReason(reason: string | undefined, blocked: boolean): FinishReason {
  if (reason === undefined) return blocked ? 'content_filter' : 'stop';
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTER_REASONS.has(reason)) return 'content_filter';
  // STOP, FINISH_REASON_UNSPECIFIED, OTHER, and values this table does not know yet, end the
  // turn normally: the text was delivered.
  return 'stop';
}

/** Gemini usage → ours: completion counts thoughts too; total is summed when absent. */
export function mapUsage(metadata: Record<string, unknown>): UsageEvent {
  const count = (key: string): number | undefined => (typeof metadata[key] === 'number' ? metadata[key] : undefined);
  const prompt = count('promptTokenCount') ?? 0;
  const thoughts = count('thoughtsTokenCount');
  const completion = (count('candidatesTokenCount') ?? 0) + (thoughts ?? 0);
  const cached = count('cachedContentTokenCount');
  return {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: count('totalTokenCount') ?? prompt + completion,
    ...(cached !== undefined ? { cachedPromptTokens: cached } : {}),
    ...(thoughts !== undefined ? { reasoningTokens: thoughts } : {}),
  };
}

function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === 'string' && value !== '') return value;
  return undefined;
}
