/**
 * The stdout lines of `claude -p --output-format stream-json` that provider_c reads (docs/upstream/provider-c.md
 * docs/upstream/provider-c.md §6), as Claude Code 2.1.332 prints them (`__fixtures__/claude-code-2.1.332/`): the fields the
 * translation reads, named once. Type-only: no runtime module.
 *
 * The lines arrive as parsed JSON, so `readLine` (`provider-c.stream.ts`) is the one place that
 * checks them: a field with another JSON type than the one declared here (the CLI prints `null`
 * for some) reads as absent, as it always did. A line of any other `type` is not read.
 */

/** Token counts of `message_start`, `message_delta` and the `result` line (docs/upstream/provider-c.md §8.1). */
export interface StreamJsonUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/**
 * `system` lines: `init` names the session, the model and the CLI's own version; `status`,
 * `api_retry`, `ui_invalidate`, hooks… say nothing we use.
 */
export interface SystemLine {
  readonly type: 'system';
  readonly subtype?: string;
  readonly session_id?: string;
  readonly model?: string;
  /** The version of the binary that runs this turn (`init`): named when the API refuses it as too old. */
  readonly claude_code_version?: string;
}

/** The Messages API's stream events, as the CLI relays them with `--include-partial-messages`. */
export interface StreamEventLine {
  readonly type: 'stream_event';
  /** Absent for an event the translation ignores (`content_block_stop`, `ping`…). */
  readonly event?: ApiStreamEvent;
  /** On a `message_stop` the CLI printed itself after the API's stream broke: the blocks it gave up. */
  readonly abandoned_blocks?: AbandonedBlocks;
}

/**
 * The response `api_message_id` (its `message_start` id) lost its content blocks from
 * `from_block_index` on (an `index` of the `content_block_*` events; 0 = all of them): they get
 * no `assistant` line and the CLI answers again (docs/upstream/provider-c.md §6.1). The CLI
 * states nothing about lower blocks.
 */
export interface AbandonedBlocks {
  readonly api_message_id: string;
  readonly from_block_index: number;
}

export type ApiStreamEvent =
  MessageStartEvent | ContentBlockStartEvent | ContentBlockDeltaEvent | MessageDeltaEvent | MessageStopEvent;

/** The API answered: the message's id and model, and the input side of its usage. */
export interface MessageStartEvent {
  readonly type: 'message_start';
  readonly message: { readonly id?: string; readonly model?: string; readonly usage?: StreamJsonUsage };
}

/** A content block opens at `index`; its kind (`text`, `thinking`, …) types the deltas that follow. */
export interface ContentBlockStartEvent {
  readonly type: 'content_block_start';
  readonly index?: number;
  readonly content_block: ContentBlock;
}

export interface ContentBlockDeltaEvent {
  readonly type: 'content_block_delta';
  /**
   * The block the delta belongs to, read with `Number()` whatever JSON type it has: it only
   * types a delta without a `type` of its own.
   */
  readonly index: number;
  /** `text_delta` carries `text`, `thinking_delta` carries `thinking`; signature and tool-input deltas are ignored. */
  readonly delta: { readonly type?: string; readonly text?: string; readonly thinking?: string };
}

export interface MessageDeltaEvent {
  readonly type: 'message_delta';
  readonly delta: { readonly stop_reason?: string };
  readonly usage?: StreamJsonUsage;
}

/** The end of a response: the API's own, or one the CLI printed when it stopped reading a broken stream. */
export interface MessageStopEvent {
  readonly type: 'message_stop';
}

/** A block of a message: `text` has `text`, `thinking` has `thinking`. */
export interface ContentBlock {
  readonly type?: string;
  readonly text?: string;
  readonly thinking?: string;
}

/**
 * What the CLI says about a failed API call, on its synthetic `assistant` message and again on
 * the `result` line: `error` (`authentication_failed`, `rate_limit`, `server_error`,
 * `invalid_request`, `billing_error`, `unknown`), the API's status and error type, `api_error`
 * (`usage_limit_reached`, `claude_code_version_too_old`, `long_context_credits_required`, … — an
 * open set: a value the gateway does not know classifies by the other fields), and the reset of a
 * rejected limit (Unix seconds).
 */
export interface ApiErrorFields {
  readonly error?: string;
  readonly api_error_status?: number;
  readonly api_error_type?: string;
  readonly api_error?: string;
  readonly api_error_params?: {
    readonly rate_limit_info?: { readonly resetsAt?: number; readonly dailyCapPaused?: boolean };
  };
}

/**
 * A whole assistant message: model output from a CLI without partial messages (already streamed
 * with them), or a message the CLI made up to report a failure (`error`, `is_api_error_message`,
 * model `<synthetic>`).
 */
export interface AssistantLine extends ApiErrorFields {
  readonly type: 'assistant';
  readonly is_api_error_message?: boolean;
  readonly message: {
    readonly id?: string;
    readonly model?: string;
    /** A block that is not a JSON object reads as `{}` (it still counts in the synthetic text's lines). */
    readonly content?: readonly ContentBlock[];
    /** The message's usage: read only for a message that was not streamed (docs/upstream/provider-c.md §8.1). */
    readonly usage?: StreamJsonUsage;
  };
}

/**
 * What the CLI read of the subscription's meters from the API's `anthropic-ratelimit-unified-*`
 * headers, printed after the answer of a run that saw them (docs/upstream/provider-c.md "Plan
 * meters"). `status` is the plan's (`allowed`, `allowed_warning`, `rejected` = spent, with the
 * reset); `rateLimitType` names the limiting window (`five_hour`, `seven_day`, …, or `overage`);
 * the `overage*` fields and `isUsingOverage` (plan `rejected` and overage allowed) are the extra
 * usage behind the plan. Times are Unix seconds.
 */
export interface RateLimitInfo {
  readonly status?: string;
  readonly resetsAt?: number;
  readonly rateLimitType?: string;
  /** Share of the limiting window used (0..1, above 1 past the cap), when the CLI printed it. */
  readonly utilization?: number;
  readonly surpassedThreshold?: number;
  readonly overageStatus?: string;
  readonly overageResetsAt?: number;
  /** `out_of_credits`, `org_level_disabled`, `member_level_disabled`, … (an open set). */
  readonly overageDisabledReason?: string;
  readonly isUsingOverage?: boolean;
  readonly overageInUse?: boolean;
  readonly overageEnabled?: boolean;
  /**
   * `true` while Anthropic pauses all usage of the login's organization at its daily cap (the
   * `overage-daily-cap-paused` header): `status` is then `rejected` for the pause, not for the plan.
   */
  readonly dailyCapPaused?: boolean;
}

/** The state of the subscription's usage limits, as the CLI reports it. */
export interface RateLimitLine {
  readonly type: 'rate_limit_event';
  readonly rate_limit_info?: RateLimitInfo;
}

/** The last line of a run: success, or an error (`is_error`, or a subtype starting `error`). */
export interface ResultLine extends ApiErrorFields {
  readonly type: 'result';
  readonly subtype?: string;
  readonly is_error?: boolean;
  readonly stop_reason?: string;
  /** The sum over every API call of the run. */
  readonly usage?: StreamJsonUsage;
  /** The model turns of the run (more than one only when the CLI ran a tool). */
  readonly num_turns?: number;
  /** The answer, or the CLI's own error message (classified, never shown). */
  readonly result?: string;
  /** Error messages of an `error_during_execution` run (the string entries only). */
  readonly errors?: readonly string[];
  readonly terminal_reason?: string;
}

/** One stdout line the translation reads. */
export type StreamJsonLine = SystemLine | StreamEventLine | AssistantLine | RateLimitLine | ResultLine;
