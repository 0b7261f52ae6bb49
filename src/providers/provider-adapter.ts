import type { CustomToolWire, ProviderId } from '../config/app-config';
import type { GatewayError } from '../common/errors/gateway.error';
import type { ChatMessage, ToolDefinition } from './chat-types';

export type { ProviderId } from '../config/app-config';

/** A model id resolved against the catalog (design.md §3). */
export interface ResolvedModel {
  /** The id exactly as the client sent it (echoed in responses). */
  readonly requestedId: string;
  /** Catalog id, or `null` for an explicit `provider_x/<model>` passthrough. */
  readonly catalogId: string | null;
  readonly provider: ProviderId;
  readonly upstreamModel: string;
  /** Effective effort: request override, else the catalog default; `null` = none. */
  readonly reasoningEffort: string | null;
  /** Effective verbosity: request override, else the catalog default. */
  readonly verbosity: string | null;
  /** `priority` for `-fast` ids; taken from the id only. */
  readonly serviceTier: 'priority' | null;
}

/** Sampling fields some upstreams honour (provider_b); others ignore them. */
export interface SamplingOptions {
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxTokens?: number;
  readonly stop?: readonly string[];
}

/** A validated chat request, after context management, as adapters receive it. */
export interface ChatRequest {
  readonly model: ResolvedModel;
  readonly messages: readonly ChatMessage[];
  /** The client's tool definitions as sent (nested and flat forms); `[]` when none. */
  readonly tools: readonly ToolDefinition[];
  /** As sent; `undefined` when absent. The gateway never invents one. */
  readonly toolChoice?: unknown;
  readonly parallelToolCalls?: boolean;
  /** provider_a faithful mode (`faithful: true` in the body). */
  readonly faithful: boolean;
  readonly sampling: SamplingOptions;
  /**
   * The `chat`-mode queue key value (gateway-behaviours.md §3.4), whatever the configured queue
   * mode: provider_a derives `prompt_cache_key`, provider_b `session_id` from it.
   */
  readonly chatKey: string;
  readonly customToolWire: CustomToolWire;
}

/** One complete tool call from the upstream (gateway-behaviours.md §1.1). */
export interface ToolCallEvent {
  /** Upstream call id; the chat layer synthesizes one when missing. */
  readonly id?: string;
  readonly name: string;
  readonly kind: 'function' | 'custom';
  /** Function kind: the full argument string (validated as JSON by the chat layer). */
  readonly arguments?: string;
  /** Custom kind: the raw input text. */
  readonly input?: string;
  /** provider_b thought signature, echoed to the client as extra_content. */
  readonly thoughtSignature?: string;
}

export interface UsageEvent {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  readonly cachedPromptTokens?: number;
  readonly reasoningTokens?: number;
}

export type FinishReason = 'stop' | 'length' | 'content_filter';

/** The typed event union every adapter yields; SSE text exists only in the chat layer. */
export type ChatEvent =
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'reasoning-delta'; readonly text: string }
  | { readonly type: 'tool-call'; readonly call: ToolCallEvent }
  | { readonly type: 'usage'; readonly usage: UsageEvent }
  | { readonly type: 'finish'; readonly reason: FinishReason }
  /** Terminal; `error.code` is an internal upstream code; never carries upstream text. */
  | { readonly type: 'error'; readonly error: GatewayError };

/** Minimal structured logger (pino-compatible); adapters never log prompts, arguments or tokens. */
export interface EventLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface CallContext {
  /** Required: aborted on client disconnect, deadline or drain timeout. */
  readonly signal: AbortSignal;
  readonly requestId: string;
  readonly logger: EventLogger;
  /** Absolute deadline (epoch ms) beyond the adapter's own turn timeout, e.g. structured deadline_ms. */
  readonly deadlineAt?: number;
}

/** Structured extraction request (provider_a only; provider_a.md §6). */
export interface ExtractionRequest {
  readonly model: ResolvedModel;
  readonly input: string;
  readonly schema: Record<string, unknown>;
  /** Already sanitized to `[A-Za-z0-9_-]{1,64}`. */
  readonly schemaName: string;
  /** UUID-formatted cache key (provider_a.md §6.4). */
  readonly promptCacheKey: string;
}

export interface ExtractionResult {
  /** All text deltas joined. */
  readonly text: string;
  readonly upstreamResponseId: string;
  readonly upstreamModel: string | null;
  readonly usage: UsageEvent;
}

/**
 * One upstream family. `stream()` and `complete()` resolve only once the upstream accepted the
 * turn (first non-error upstream event), so the chat layer can still answer a plain JSON error
 * with the real status; they reject with a classified GatewayError otherwise. After acceptance,
 * failures arrive as a terminal `error` event (the iterable never throws, except when the
 * context's signal was aborted). Retries before the first output happen inside the adapter.
 * State is per call, never on the instance.
 */
export interface ProviderAdapter {
  readonly id: ProviderId;
  /** A turn whose events are written to the client as they arrive. */
  stream(request: ChatRequest, context: CallContext): Promise<AsyncIterable<ChatEvent>>;
  /** A turn the chat layer aggregates into one `chat.completion` (same events). */
  complete(request: ChatRequest, context: CallContext): Promise<AsyncIterable<ChatEvent>>;
  /** Strict JSON-schema extraction; only families that honour strict schemas implement it. */
  extract?(request: ExtractionRequest, context: CallContext): Promise<ExtractionResult>;
}
