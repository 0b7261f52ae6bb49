import { GatewayError } from '../core/gateway.error';
import type { ChatMessage, ToolDefinition } from '../core/chat-message';
import type { SamplingOptions } from '../providers/provider-adapter';
import { chatBodyErrors } from './chat-request.validator';

/** A chat body after validation, in the terms the chat service works with. */
export interface ParsedChatBody {
  readonly model: string;
  /** The client's messages, untouched (unknown fields kept). */
  readonly messages: ChatMessage[];
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly tools: ToolDefinition[];
  readonly toolChoice?: unknown;
  readonly parallelToolCalls?: boolean;
  readonly faithful: boolean;
  readonly reasoningEffort?: string;
  readonly verbosity?: string;
  readonly sampling: SamplingOptions;
}

/**
 * Validates a chat body; failures are 400 `invalid_request` naming fields and rules, never values.
 * A body without `model` asks for `defaultModel` (the catalog's `default_model`).
 */
export function parseChatBody(body: unknown, defaultModel: string): ParsedChatBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_request', { publicMessage: 'the request body must be a JSON object' });
  }
  const errors = chatBodyErrors(body as Record<string, unknown>);
  if (errors.length > 0) throw new GatewayError('invalid_request', { publicMessage: errors.join('; ') });
  const raw = body as Record<string, unknown>;
  const model = typeof raw.model === 'string' && raw.model.trim() !== '' ? raw.model : defaultModel;
  const streamOptions = raw.stream_options as { include_usage?: unknown } | undefined;
  return {
    model,
    // The raw objects, not the DTO instances: adapters must see every field the client sent.
    messages: raw.messages as ChatMessage[],
    stream: raw.stream === true,
    includeUsage: raw.stream === true && streamOptions?.include_usage === true,
    tools: Array.isArray(raw.tools) ? (raw.tools as ToolDefinition[]) : [],
    toolChoice: raw.tool_choice,
    parallelToolCalls: typeof raw.parallel_tool_calls === 'boolean' ? raw.parallel_tool_calls : undefined,
    faithful: raw.faithful === true,
    reasoningEffort: typeof raw.reasoning_effort === 'string' ? raw.reasoning_effort : undefined,
    verbosity: typeof raw.verbosity === 'string' ? raw.verbosity : undefined,
    sampling: readSampling(raw),
  };
}

/** Sampling fields are optional hints: well-typed values are kept, anything else ignored. */
function readSampling(raw: Record<string, unknown>): SamplingOptions {
  const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  const maxTokens = number(raw.max_completion_tokens) ?? number(raw.max_tokens);
  const stop = typeof raw.stop === 'string' ? [raw.stop] : Array.isArray(raw.stop) ? raw.stop.filter((item): item is string => typeof item === 'string') : undefined;
  return {
    temperature: number(raw.temperature),
    topP: number(raw.top_p),
    maxTokens,
    stop: stop && stop.length > 0 ? stop : undefined,
  };
}
