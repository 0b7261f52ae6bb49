/**
 * The Responses events provider_a reads from its upstream (docs/upstream/provider-a.md §9.1), over the WebSocket
 * and over SSE alike: the fields the translation reads, named once. Type-only: no runtime module.
 *
 * The frames arrive as parsed JSON, so `readEvent` (`provider-a.stream.ts`) is the one place that
 * checks them: a field with another JSON type than the one declared here reads as absent, as it
 * always did. Every field is optional because the upstream may leave any of them out.
 */

/** `response.usage` (docs/upstream/provider-a.md §9.3). */
export interface ResponsesUsage {
  readonly input_tokens?: number;
  readonly output_tokens?: number;
  readonly total_tokens?: number;
  readonly input_tokens_details?: { readonly cached_tokens?: number };
  readonly output_tokens_details?: { readonly reasoning_tokens?: number };
}

/** The `response` object of the lifecycle events (only what the translation reads). */
export interface ResponseSnapshot {
  readonly id?: string;
  readonly model?: string;
  readonly usage?: ResponsesUsage;
  /** `max_output_tokens` or `content_filter` (at `response.incomplete`). */
  readonly incomplete_details?: { readonly reason?: string };
}

/** A client tool call item: `function_call` carries `arguments`, `custom_tool_call` carries `input`. */
export interface CallItem {
  readonly type: 'function_call' | 'custom_tool_call';
  readonly id?: string;
  readonly call_id?: string;
  readonly name?: string;
  readonly arguments?: string;
  readonly input?: string;
}

/** One part of a finished `message` item: `output_text` has `text`, `refusal` has `refusal`. */
export interface MessageContentPart {
  readonly text?: string;
  readonly refusal?: string;
}

export interface MessageItem {
  readonly type: 'message';
  readonly id?: string;
  /** Parts that are not JSON objects read as empty parts. */
  readonly content: readonly MessageContentPart[];
}

/**
 * The `item` of `response.output_item.added` / `.done` that the translation reads. Any other item
 * (reasoning, web search, image generation…) is never a client tool call and never text.
 */
export type OutputItem = CallItem | MessageItem;

/** `response.created` / `.in_progress` / `.completed` / `.incomplete`. */
export interface ResponseLifecycleEvent {
  readonly type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete';
  readonly response?: ResponseSnapshot;
}

/** A text, refusal or reasoning delta. */
export interface TextDeltaEvent {
  readonly type:
    | 'response.output_text.delta'
    | 'response.refusal.delta'
    | 'response.reasoning_summary_text.delta'
    | 'response.reasoning_text.delta';
  readonly item_id?: string;
  readonly delta?: string;
  /** Reasoning summaries: a new index starts a new paragraph. */
  readonly summary_index?: number;
}

export interface OutputItemEvent {
  readonly type: 'response.output_item.added' | 'response.output_item.done';
  readonly output_index?: number;
  readonly item?: OutputItem;
}

/** A fragment (`.delta`) or the whole (`.done`) of a call's arguments or custom input (docs/upstream/provider-a.md §9.2). */
export interface CallPayloadEvent {
  readonly type:
    | 'response.function_call_arguments.delta'
    | 'response.function_call_arguments.done'
    | 'response.custom_tool_call_input.delta'
    | 'response.custom_tool_call_input.done';
  /** The call's item id; `output_index` when absent. */
  readonly item_id?: string;
  readonly output_index?: number;
  readonly delta?: string;
  /** `response.function_call_arguments.done`. */
  readonly arguments?: string;
  /** `response.custom_tool_call_input.done`. */
  readonly input?: string;
}

/**
 * `response.failed` / `error`: classified as a whole by `classifyUpstreamFailure` (docs/upstream/provider-a.md §10), which
 * looks for the error object and retry hints anywhere in the frame, so no field is declared here.
 */
export interface FailureEvent {
  readonly type: 'response.failed' | 'error';
}

/** `codex.rate_limits` (docs/upstream/provider-a.md §4.3): read by `rateLimitsFromEvent` from the frame itself. */
export interface RateLimitsEvent {
  readonly type: 'codex.rate_limits';
}

/**
 * One upstream event as the translation reads it. Every other `type` (content parts, `*.done`
 * text events, reasoning parts, web search…) is ignored.
 */
export type ResponsesEvent =
  ResponseLifecycleEvent | TextDeltaEvent | OutputItemEvent | CallPayloadEvent | FailureEvent | RateLimitsEvent;
