import type { ChatMessage, ContentPart, NormalizedTool, ToolDefinition } from '../core/chat-message';
import { forcedToolName, messageTextParts } from '../core/chat-message';
import { BODY_NOT_AN_OBJECT } from '../common/http/http-middleware';
import { GatewayError } from '../core/gateway.error';
import { chatBodyErrors } from './chat-body-rules';
import type { ChatParameterValues } from './chat-parameters';
import { CHECKED_PARAMETERS } from './chat-parameters';
import { normalizeTools } from './chat-tools';

/*
 * The chat request body as the gateway reads it: checked by the body rules (chat-body-rules.ts),
 * its tools read once (chat-tools.ts), its parameters read by the request-parameter table
 * (chat-parameters.ts), into the parsed body the orchestrator works with.
 */

/** A chat body after validation, in the terms the chat service works with. */
export interface ParsedChatBody {
  readonly model: string;
  /** The client's messages, untouched (unknown fields kept). */
  readonly messages: ChatMessage[];
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** The client's tool definitions as sent; `[]` when none. */
  readonly tools: ToolDefinition[];
  /** The same tools read once (`normalizeTools`): what every family builds its tools from. */
  readonly normalizedTools: readonly NormalizedTool[];
  readonly toolChoice?: unknown;
  readonly parallelToolCalls?: boolean;
  readonly faithful: boolean;
  readonly reasoningEffort?: string;
  readonly verbosity?: string;
  /**
   * Sampling fields and `response_format`, as the parameter table reads them; only the fields
   * the client sent (one shared empty object when none). The orchestrator hands each family
   * the ones it honours.
   */
  readonly parameters: ChatParameterValues;
}

/**
 * What a body asks for, as far as it can be read before it is validated: for the log line and
 * metrics of a body refused as invalid (the model as `modelAskedFor` reads it).
 */
export function askedFor(body: unknown, defaultModel: string): { model?: string; stream: boolean } {
  if (typeof body !== 'object' || body === null) return { stream: false };
  const fields = body as Record<string, unknown>;
  return { model: modelAskedFor(fields, defaultModel), stream: fields.stream === true };
}

/**
 * The model a body names; `defaultModel` when it names none (absent or null); undefined when its
 * `model` is some other value, which the body rules refuse.
 */
function modelAskedFor(body: Record<string, unknown>, defaultModel: string): string | undefined {
  if (body.model === undefined || body.model === null) return defaultModel;
  return typeof body.model === 'string' ? body.model : undefined;
}

/**
 * Validates a chat body; failures are 400 `invalid_request` naming fields and rules, never values
 * but the tool name a rule is about (a repeated one).
 * A body without `model` (or with `null`) asks for `defaultModel` (the catalog's `default_model`).
 */
export function parseChatBody(body: unknown, defaultModel: string): ParsedChatBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_request', { publicMessage: BODY_NOT_AN_OBJECT });
  }
  const errors = chatBodyErrors(body as Record<string, unknown>);
  if (errors.messages.length > 0)
    throw new GatewayError('invalid_request', { publicMessage: errors.messages.join('; '), param: errors.field });
  const raw = body as Record<string, unknown>;
  // The body rules refuse a model that is not a string, and an empty or blank one.
  const model = modelAskedFor(raw, defaultModel)!;
  const streamOptions = raw.stream_options as { include_usage?: unknown } | undefined;
  const tools = Array.isArray(raw.tools) ? (raw.tools as ToolDefinition[]) : [];
  const normalizedTools = normalizeTools(tools);
  const toolChoice = raw.tool_choice ?? undefined;
  checkToolChoice(toolChoice, tools, normalizedTools);
  return {
    model,
    // The raw objects, not the DTO instances: adapters must see every field the client sent.
    messages: withRefusalsAsContent(raw.messages as ChatMessage[]),
    stream: raw.stream === true,
    includeUsage: raw.stream === true && streamOptions?.include_usage === true,
    tools,
    normalizedTools,
    toolChoice,
    parallelToolCalls: typeof raw.parallel_tool_calls === 'boolean' ? raw.parallel_tool_calls : undefined,
    faithful: raw.faithful === true,
    reasoningEffort: typeof raw.reasoning_effort === 'string' ? raw.reasoning_effort : undefined,
    verbosity: typeof raw.verbosity === 'string' ? raw.verbosity : undefined,
    parameters: readParameters(raw),
  };
}

/**
 * An assistant message's `refusal` is what the model said instead of an answer, as the message's
 * field or as `{"type":"refusal","refusal"}` content parts: refusal parts become text parts, and an
 * assistant message without text of its own carries the field as its content, so every family
 * sends it back. The array and a message are copied only when there is one (a history rarely has any).
 */
function withRefusalsAsContent(messages: ChatMessage[]): ChatMessage[] {
  let result: ChatMessage[] | undefined;
  for (let index = 0; index < messages.length; index++) {
    const original = messages[index];
    if (original.role !== 'assistant') continue;
    let message = original;
    const content = refusalPartsAsText(message.content);
    if (content !== message.content) message = { ...message, content };
    const { refusal } = message;
    if (typeof refusal === 'string' && refusal !== '' && !hasText(message)) message = { ...message, content: refusal };
    if (message === original) continue;
    result ??= messages.slice();
    result[index] = message;
  }
  return result ?? messages;
}

const isRefusalPart = (part: ContentPart | null | undefined) =>
  part?.type === 'refusal' && typeof part.refusal === 'string';

/** The content with its refusal parts as text parts; the same value when it has none. */
function refusalPartsAsText(content: ChatMessage['content']): ChatMessage['content'] {
  if (!Array.isArray(content) || !content.some(isRefusalPart)) return content;
  return content.map((part) => (isRefusalPart(part) ? { type: 'text', text: part.refusal } : part));
}

const hasText = (message: ChatMessage) => messageTextParts(message).some((text) => text !== '');

/**
 * A `tool_choice` that asks for a tool call needs tools to call, and a forced tool must be one of
 * them (as OpenAI answers both), by its exact name and of the type it is declared with: otherwise
 * no family could obey it, and each would drop it or force a tool its upstream was never given. A
 * hosted tool (`web_search`…, nameless, so not among `normalized`) is a tool to call here, as it
 * is to the Responses API: whether the turn's model takes it is its family's to answer, with a 400
 * naming the tool when it cannot.
 */
function checkToolChoice(
  toolChoice: unknown,
  tools: readonly ToolDefinition[],
  normalized: readonly NormalizedTool[],
): void {
  if (toolChoice === undefined || toolChoice === 'auto' || toolChoice === 'none') return;
  if (tools.length === 0)
    throw new GatewayError('invalid_request', {
      publicMessage: 'tool_choice asks for a tool call, but the request has no tools',
      param: 'tool_choice',
    });
  const forced = forcedToolName(toolChoice);
  if (forced === undefined) return;
  const tool = normalized.find((entry) => entry.name === forced && isClientTool(entry));
  if (tool === undefined)
    throw new GatewayError('invalid_request', {
      publicMessage: 'tool_choice names a tool that is not in tools',
      param: 'tool_choice',
    });
  // Its type need not match the declaration's: names are unique, so each family sends the tool as
  // declared (a custom tool is shown to clients as a function under PRIMARY_CUSTOM_TOOL_WIRE=function).
}

/** A tool the client executes, the only kind a `tool_choice` can force by name. */
const isClientTool = (tool: NormalizedTool) => tool.type === 'function' || tool.type === 'custom';

const NO_PARAMETERS: ChatParameterValues = Object.freeze({});

/**
 * The parameter table's rules over the fields the client sent: a value breaking its shape rule is
 * 400 `invalid_request`, one no family can serve 400 `unsupported_parameter`, both with `param`
 * naming the field. The loop runs over the body's own keys (a handful) rather than the table (a
 * few dozen rows), so absent fields cost nothing and allocate nothing; the values object is
 * created only when a field carries one.
 */
function readParameters(raw: Record<string, unknown>): ChatParameterValues {
  let values: Record<string, unknown> | undefined;
  for (const name in raw) {
    const entry = CHECKED_PARAMETERS.get(name);
    if (entry === undefined) continue;
    const value = raw[name];
    if (value === undefined || value === null) continue;
    const broken = entry.invalid?.(value);
    if (broken !== undefined)
      throw new GatewayError('invalid_request', { publicMessage: `${entry.name} ${broken}`, param: entry.name });
    const unsupported = entry.unsupported?.(value);
    if (unsupported !== undefined)
      throw new GatewayError('unsupported_parameter', { publicMessage: unsupported, param: entry.name });
    if (entry.key === undefined || (entry.yields && values?.[entry.key] !== undefined)) continue;
    const read = entry.read!(value);
    if (read === undefined) continue;
    values ??= {};
    values[entry.key] = read;
  }
  return values ?? NO_PARAMETERS;
}
