import { GatewayError } from '../../core/gateway.error';
import type { FrameStep } from '../shared/turn-runner';
import type { ChatEvent, FinishReason, ToolCallEvent, UsageEvent } from '../../core/chat-event';
import { isEmptyToolCall } from '../../core/chat-event';
import type { ToolNameMap } from '../shared/tool-names';
import { UpstreamErrorEvent } from '../shared/upstream-failure';
import { isJsonObject, type JsonObject, str, num } from '../../common/json';
import type {
  CodeAssistResponse,
  ResponseCandidate,
  ResponseFunctionCall,
  ResponsePart,
  UsageMetadata,
} from './provider-b.wire-types';

/**
 * Per-stream state of one provider_b turn (created per call, never kept on the adapter). The
 * tool-call sequence counts calls across all frames, so two id-less calls in two frames get
 * distinct ids (docs/upstream/provider-b.md §9.2).
 */
export interface ProviderBStreamState {
  /** The client's custom tools, by the client's names. */
  readonly customToolNames: ReadonlySet<string>;
  /** The names the request sent ↔ the client's (provider-b.tool-names.ts): returned calls take the client's. */
  readonly toolNames: Pick<ToolNameMap, 'toClient'>;
  /** Last resort for synthesized call ids: the gateway request id. */
  readonly requestId: string;
  callSeq: number;
  /** A call with a name or arguments was emitted: an empty `functionCall: {}` is no call (the chat layer drops it). */
  madeCall: boolean;
  readonly emittedCallIds: Set<string>;
  frames: number;
  finishReason?: string;
  usage?: UsageMetadata;
  blocked: boolean;
}

export function createProviderBStreamState(
  customToolNames: ReadonlySet<string>,
  toolNames: Pick<ToolNameMap, 'toClient'>,
  requestId: string,
): ProviderBStreamState {
  return {
    customToolNames,
    toolNames,
    requestId,
    callSeq: 0,
    madeCall: false,
    emittedCallIds: new Set(),
    frames: 0,
    blocked: false,
  };
}

/**
 * One upstream payload → the turn runner's step (candidate 0 only): its events, or an `{"error": …}`
 * payload handed over unclassified, for the family's `classify` to read (its quota against the
 * runner's time). Finish reason and usage are only remembered here; `finishProviderBStream` emits
 * them at EOF.
 */
export function translateProviderBPayload(payload: unknown, state: ProviderBStreamState): FrameStep {
  if (isJsonObject(payload) && payload.error !== undefined) {
    // What the frames before the error reported was billed all the same: counted, never shown.
    const billed = state.usage ? mapUsage(state.usage) : undefined;
    return { events: [], unclassified: new UpstreamErrorEvent(payload), ...(billed ? { billed } : {}) };
  }
  return { events: payloadEvents(payload, state), accepted: true };
}

function payloadEvents(payload: unknown, state: ProviderBStreamState): ChatEvent[] {
  state.frames++;
  if (!isJsonObject(payload)) return [];
  const { response, traceId } = readCodeAssistResponse(payload);
  if (response.usageMetadata) state.usage = latestUsage(state.usage, response.usageMetadata);
  const candidates = response.candidates ?? [];
  const blockReason = response.promptFeedback?.blockReason;
  if (candidates.length === 0 && blockReason !== undefined && blockReason !== '') state.blocked = true;
  const candidate = candidates.at(0);
  if (!candidate) return [];
  if (candidate.finishReason !== undefined && candidate.finishReason !== '')
    state.finishReason = candidate.finishReason;
  const idBase = firstString(response.responseId, traceId, response.traceId) ?? state.requestId;

  const events: ChatEvent[] = [];
  for (const part of candidate.content?.parts ?? []) {
    if (part.functionCall) {
      const call = toolCall(part.functionCall, part.thoughtSignature, idBase, state);
      if (call) {
        events.push({ type: 'tool-call', call });
        if (!state.madeCall && !isEmptyToolCall(call)) state.madeCall = true;
      }
    } else if (part.text !== undefined && part.text !== '') {
      events.push({ type: part.thought === true ? 'reasoning-delta' : 'text-delta', text: part.text });
    }
    // executableCode, codeExecutionResult, inlineData and empty text carry nothing for chat.
  }
  return events;
}

/**
 * The boundary of the response types (`provider-b.wire-types.ts`): a payload read as the Code
 * Assist response, each field kept only when it has its declared JSON type (otherwise it reads as
 * absent). A payload without the `response` wrapper is the response itself (docs/upstream/provider-b.md §9.1).
 */
function readCodeAssistResponse(payload: JsonObject): CodeAssistResponse {
  const raw = isJsonObject(payload.response) ? payload.response : payload;
  const { candidates, usageMetadata, promptFeedback } = raw;
  return {
    traceId: str(payload.traceId),
    response: {
      candidates: Array.isArray(candidates) ? candidates.map(readCandidate) : undefined,
      usageMetadata: isJsonObject(usageMetadata) ? readUsageMetadata(usageMetadata) : undefined,
      promptFeedback: isJsonObject(promptFeedback) ? { blockReason: str(promptFeedback.blockReason) } : undefined,
      responseId: str(raw.responseId),
      traceId: str(raw.traceId),
    },
  };
}

function readCandidate(raw: unknown): ResponseCandidate {
  if (!isJsonObject(raw)) return {};
  const { content } = raw;
  const parts = isJsonObject(content) && Array.isArray(content.parts) ? (content.parts as unknown[]) : undefined;
  return {
    finishReason: str(raw.finishReason),
    content: isJsonObject(content) ? { parts: parts?.filter(isJsonObject).map(readPart) } : undefined,
  };
}

function readPart(raw: JsonObject): ResponsePart {
  const { functionCall } = raw;
  return {
    text: str(raw.text),
    thought: typeof raw.thought === 'boolean' ? raw.thought : undefined,
    functionCall: isJsonObject(functionCall)
      ? {
          id: str(functionCall.id),
          name: str(functionCall.name),
          // Absent or null is no arguments (`{}`); another value is not a Struct, kept to be refused.
          args: functionCall.args ?? undefined,
        }
      : undefined,
    thoughtSignature: str(raw.thoughtSignature),
  };
}

function readUsageMetadata(raw: JsonObject): UsageMetadata {
  return {
    promptTokenCount: num(raw.promptTokenCount),
    candidatesTokenCount: num(raw.candidatesTokenCount),
    thoughtsTokenCount: num(raw.thoughtsTokenCount),
    toolUsePromptTokenCount: num(raw.toolUsePromptTokenCount),
    totalTokenCount: num(raw.totalTokenCount),
    cachedContentTokenCount: num(raw.cachedContentTokenCount),
  };
}

/**
 * Gemini's counts are running totals, and a frame may carry only some of them (the prompt early,
 * the candidates at the end): each count is the latest frame's that has it, so a later partial
 * `usageMetadata` does not erase what an earlier one said.
 */
function latestUsage(previous: UsageMetadata | undefined, next: UsageMetadata): UsageMetadata {
  if (!previous) return next;
  return {
    promptTokenCount: next.promptTokenCount ?? previous.promptTokenCount,
    candidatesTokenCount: next.candidatesTokenCount ?? previous.candidatesTokenCount,
    thoughtsTokenCount: next.thoughtsTokenCount ?? previous.thoughtsTokenCount,
    toolUsePromptTokenCount: next.toolUsePromptTokenCount ?? previous.toolUsePromptTokenCount,
    totalTokenCount: next.totalTokenCount ?? previous.totalTokenCount,
    cachedContentTokenCount: next.cachedContentTokenCount ?? previous.cachedContentTokenCount,
  };
}

function toolCall(
  functionCall: ResponseFunctionCall,
  signature: string | undefined,
  idBase: string,
  state: ProviderBStreamState,
): ToolCallEvent | undefined {
  const upstreamId = functionCall.id !== '' ? functionCall.id : undefined;
  if (upstreamId !== undefined) {
    if (state.emittedCallIds.has(upstreamId)) return undefined;
    state.emittedCallIds.add(upstreamId);
  }
  const id = upstreamId ?? `call_${idBase.replace(/[^A-Za-z0-9_-]/g, '')}_${state.callSeq}`;
  state.callSeq++;
  const name = state.toolNames.toClient(functionCall.name ?? '');
  const args = functionCall.args ?? {};
  const thoughtSignature = signature !== '' ? signature : undefined;
  const common = { id, name, ...(thoughtSignature ? { thoughtSignature } : {}) };
  if (state.customToolNames.has(name)) {
    const input = isJsonObject(args) && typeof args.input === 'string' ? args.input : JSON.stringify(args);
    return { ...common, kind: 'custom', input };
  }
  return { ...common, kind: 'function', arguments: JSON.stringify(args) };
}

const FILTER_REASONS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);
const INVALID_CALL_REASONS = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL']);

/**
 * EOF (docs/upstream/provider-b.md §9.3): `usage` when seen, then `finish` or a terminal `error`.
 * MALFORMED_FUNCTION_CALL and UNEXPECTED_TOOL_CALL fail the turn only when it made no call: with
 * a call the Gemini CLI runs the calls it got, and so the turn ends normally. An empty call is no
 * call here: the client never gets it, so the turn would read as an empty answer that stops.
 */
export function finishProviderBStream(state: ProviderBStreamState): ChatEvent[] {
  if (state.frames === 0)
    return [
      { type: 'error', error: new GatewayError('upstream', { detail: 'provider_b empty response', retryable: true }) },
    ];
  const events: ChatEvent[] = [];
  const usage = state.usage ? mapUsage(state.usage) : undefined;
  if (usage) events.push({ type: 'usage', usage });
  const reason = state.finishReason;
  if (reason !== undefined && INVALID_CALL_REASONS.has(reason) && !state.madeCall) {
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

/**
 * Gemini usage → ours (docs/upstream/provider-b.md §9.3): the prompt counts the tool-use prompt
 * too, completion counts thoughts too, and total is always their sum (Gemini's `totalTokenCount`
 * is the same sum when every count is there).
 */
export function mapUsage(metadata: UsageMetadata): UsageEvent {
  const prompt = (metadata.promptTokenCount ?? 0) + (metadata.toolUsePromptTokenCount ?? 0);
  const thoughts = metadata.thoughtsTokenCount;
  const completion = (metadata.candidatesTokenCount ?? 0) + (thoughts ?? 0);
  const cached = metadata.cachedContentTokenCount;
  return {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: prompt + completion,
    ...(cached !== undefined ? { cachedPromptTokens: cached } : {}),
    ...(thoughts !== undefined ? { reasoningTokens: thoughts } : {}),
  };
}

function firstString(...values: (string | undefined)[]): string | undefined {
  for (const value of values) if (value !== undefined && value !== '') return value;
  return undefined;
}
