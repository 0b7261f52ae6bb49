import type { Type } from '@nestjs/common';
import type { PolledEvents, UsageEvent } from '../../core/chat-event';
import type { ChatMessage, NormalizedTool, ToolDefinition } from '../../core/chat-message';
import type { EventLogger } from '../../core/event-logger';
import type { ProviderId } from '../../core/provider-id';
import type { ResolvedModel } from '../../core/resolved-model';

/**
 * Sampling fields of the chat request. The chat layer passes an adapter only the ones its family
 * honours upstream (the family's `parameters` declaration is the one statement of which), so a
 * builder forwards whatever it is given.
 */
export interface SamplingOptions {
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxTokens?: number;
  readonly stop?: readonly string[];
  readonly seed?: number;
  readonly presencePenalty?: number;
  readonly frequencyPenalty?: number;
}

/**
 * The chat request's `response_format` when it asks for JSON (`text` is no format at all).
 * `json_schema` carries the client's schema as sent and its name already checked against
 * `^[A-Za-z0-9_-]{1,64}$`; without a schema it is `json_object`.
 */
export type ResponseFormat =
  | { readonly type: 'json_object' }
  | {
      readonly type: 'json_schema';
      readonly name: string;
      readonly schema: Record<string, unknown>;
      readonly strict: boolean;
      readonly description?: string;
    };

/** A validated chat request, after context management, as adapters receive it. */
export interface ChatRequest {
  readonly model: ResolvedModel;
  readonly messages: readonly ChatMessage[];
  /** The client's tool definitions as sent (nested and flat forms); `[]` when none. */
  readonly tools: readonly ToolDefinition[];
  /**
   * The same tools read once by the chat layer's parser (nested and flat forms, nameless ones
   * dropped): what families build their tool lists from. Hosted types without a name (web
   * search…) are only in `tools`.
   */
  readonly normalizedTools: readonly NormalizedTool[];
  /** As sent; `undefined` when absent. The gateway never invents one. */
  readonly toolChoice?: unknown;
  readonly parallelToolCalls?: boolean;
  /** provider_a faithful mode (`faithful: true` in the body). */
  readonly faithful: boolean;
  readonly sampling: SamplingOptions;
  /** Present only when the client asked for JSON and the family honours it upstream. */
  readonly responseFormat?: ResponseFormat;
  /**
   * The conversation this turn belongs to: opaque, the same on every turn of one chat, different
   * across chats and callers (src/queue/chat-identity.ts, CONVERSATION_ID_VERSION). Adapters derive their own
   * upstream identities from it with a versioned, documented prefix (provider_a
   * `prompt_cache_key`, provider_b `session_id`; docs/providers.md "Conversation identity") and
   * never parse it. It is not the queue key: queue modes may change without touching it.
   */
  readonly conversationId: string;
}

/** What the pre-queue check (`ProviderAdapter.checkContent`) reads of a turn: the same values `stream` gets. */
export type CheckedRequest = Pick<ChatRequest, 'model' | 'messages' | 'tools' | 'normalizedTools' | 'faithful'>;

/** What an adapter is given with a call. `retried` and `note` are called on the context, so it may be a class. */
export interface CallContext {
  /** Required: aborted on client disconnect, deadline or drain timeout. */
  readonly signal: AbortSignal;
  /**
   * The controller behind `signal`, handed over when the request ends with the turn (the chat
   * route): the turn ends it with its own reason (its deadline) instead of linking a second one.
   * The route tells that apart from the client's leaving by the reason (`clientLeft`).
   */
  readonly controller?: AbortController;
  readonly requestId: string;
  readonly logger: EventLogger;
  /** Absolute deadline (epoch ms) beyond the adapter's own turn timeout, e.g. structured deadline_ms. */
  readonly deadlineAt?: number;
  /** Told of each retry before output (the internal code that caused it), so the caller can meter it. */
  readonly retried?: (code: string) => void;
  /**
   * Told of the usage an upstream reported for an attempt the client never gets (one the runner
   * sends again), so the caller can count what was billed; the client's usage stays the
   * delivered attempt's.
   */
  readonly billed?: (usage: UsageEvent) => void;
  /**
   * Told when an attempt fails before output and the turn goes on without it (retried, reopened
   * or moved to another login, or ended with the error): usage the attempt's events already handed
   * over was billed all the same, and the next attempt's usage is its own.
   */
  readonly attemptDropped?: () => void;
  /**
   * Adds counts and flags about the upstream side of the turn (provider_a: how its connection was
   * used) to the turn's one `chat_completion` line, instead of a line of their own.
   */
  readonly note?: (fields: Readonly<Record<string, string | number | boolean>>) => void;
  /**
   * Leave the upstream's error message out of the `upstream_*` log lines (status, type and code
   * stay): structured extraction, whose input and schema are never logged, while an upstream's
   * refusal of a schema quotes it and a refusal of a request may echo its input.
   */
  readonly omitUpstreamMessage?: boolean;
}

/** Structured extraction request (provider_a only; docs/upstream/provider-a.md §6). */
export interface ExtractionRequest {
  readonly model: ResolvedModel;
  readonly input: string;
  readonly schema: Record<string, unknown>;
  /** Already sanitized to `[A-Za-z0-9_-]{1,64}`. */
  readonly schemaName: string;
  /**
   * Neutral id of the extraction's cache scope (caller, operation and schema; computed by the
   * structured layer). Adapters derive their upstream cache identity from it, as for chat.
   */
  readonly conversationId: string;
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
  /**
   * Pure: throws the 400 `invalid_request` for what this family can never send to `model`: a
   * content part it cannot carry (`messages[i].content[j]`), a hosted tool it cannot take
   * (`tools.i`), a history call it cannot replay. The chat layer calls it once per turn, on the
   * request the adapter will get, before the turn waits in the agent queue or takes a login, so a
   * request whose only answer is that 400 gets it at once; `stream` and `complete` then trust it.
   */
  checkContent?(request: CheckedRequest): void;
  /** A turn whose events are written to the client as they arrive (an async generator will do; the turn runner's also poll). */
  stream(request: ChatRequest, context: CallContext): Promise<PolledEvents>;
  /** A turn the chat layer aggregates into one `chat.completion` (same events). */
  complete(request: ChatRequest, context: CallContext): Promise<PolledEvents>;
  /** Strict JSON-schema extraction; only families that honour strict schemas implement it. */
  extract?(request: ExtractionRequest, context: CallContext): Promise<ExtractionResult>;
}

declare module '../../core/family' {
  interface Family {
    /**
     * The family's adapter class, loaded only when the family is enabled (a disabled family's code
     * is never loaded); Nest builds it with its dependencies like any provider.
     */
    readonly adapter: () => Promise<Type<ProviderAdapter>>;
  }
}
