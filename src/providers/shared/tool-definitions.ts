import type { ChatMessage, ChatToolCall, ToolDefinition } from '../../core/chat-message';
import { isJsonObject } from '../../common/json';

/** A client tool definition read from either the nested or the flat form. */
export interface NormalizedTool {
  readonly name: string;
  /** `function` unless the definition says `custom`; other types (web_search…) keep their type. */
  readonly type: string;
  readonly description?: string;
  readonly parameters?: Record<string, unknown>;
  readonly format?: unknown;
  readonly strict?: boolean;
  /** The definition as the client sent it. */
  readonly raw: ToolDefinition;
}

/** Each request's tool list is read once, however many builders of a turn (and its retries) ask. */
const normalizedByList = new WeakMap<readonly ToolDefinition[], readonly NormalizedTool[]>();

/**
 * Reads nested (`{type:"function", function:{…}}`, `{type:"custom", custom:{…}}`) and flat
 * (`{type, name, parameters}`) definitions; a missing type means `function`. Nameless entries
 * are dropped. One request may mix the forms. The result is shared: never mutate it.
 */
export function normalizeTools(tools: readonly ToolDefinition[]): readonly NormalizedTool[] {
  if (tools.length === 0) return NO_TOOLS;
  let normalized = normalizedByList.get(tools);
  if (!normalized) normalizedByList.set(tools, (normalized = readTools(tools)));
  return normalized;
}

const NO_TOOLS: readonly NormalizedTool[] = Object.freeze([]);

function readTools(tools: readonly ToolDefinition[]): NormalizedTool[] {
  const result: NormalizedTool[] = [];
  for (const raw of tools) {
    if (!isJsonObject(raw)) continue;
    const type = typeof raw.type === 'string' && raw.type !== '' ? raw.type : 'function';
    const nested = isJsonObject(raw[type]) ? (raw[type] as Record<string, unknown>) : undefined;
    const source = nested ?? raw;
    const name = typeof source.name === 'string' ? source.name.trim() : '';
    if (name === '') continue;
    result.push({
      name,
      type,
      description: typeof source.description === 'string' ? source.description : undefined,
      parameters: isJsonObject(source.parameters) ? source.parameters : undefined,
      format: source.format,
      strict: typeof source.strict === 'boolean' ? source.strict : undefined,
      raw,
    });
  }
  return result;
}

/** Names of the tools declared with type `custom` in this request. */
export function customToolNames(tools: readonly NormalizedTool[]): Set<string> {
  return new Set(tools.filter((tool) => tool.type === 'custom').map((tool) => tool.name));
}

/** A tool call found in the history, with its kind decided (provider_a.md §7.3). */
export interface HistoryToolCall {
  readonly id: string;
  readonly name: string;
  readonly kind: 'function' | 'custom';
  /** Function kind: the argument string. Custom kind: the raw input text. */
  readonly payload: string;
  readonly thoughtSignature?: string;
}

/**
 * A history call is custom when it has `type: "custom"` with a `custom` object (custom wire), or
 * when it is a `function` call whose name is declared as a custom tool in this request (what the
 * function wire produced); its input is then `function.arguments` taken as raw text.
 */
export function readHistoryToolCall(call: ChatToolCall, customNames: ReadonlySet<string>): HistoryToolCall | undefined {
  const id = typeof call.id === 'string' ? call.id : '';
  const signature = call.extra_content?.google?.thought_signature;
  if (call.type === 'custom' && isJsonObject(call.custom)) {
    const name = typeof call.custom.name === 'string' ? call.custom.name : '';
    if (name === '') return undefined;
    return {
      id,
      name,
      kind: 'custom',
      payload: typeof call.custom.input === 'string' ? call.custom.input : '',
      thoughtSignature: signature,
    };
  }
  const name = typeof call.function?.name === 'string' ? call.function.name : '';
  if (name === '') return undefined;
  const payload = typeof call.function?.arguments === 'string' ? call.function.arguments : '';
  return { id, name, kind: customNames.has(name) ? 'custom' : 'function', payload, thoughtSignature: signature };
}

/** Map of tool-call id → call for every assistant `tool_calls` entry in the history. */
export function historyToolCallsById(
  messages: readonly ChatMessage[],
  customNames: ReadonlySet<string>,
): Map<string, HistoryToolCall> {
  const byId = new Map<string, HistoryToolCall>();
  for (const message of messages) {
    if (message.role !== 'assistant' || !Array.isArray(message.tool_calls)) continue;
    for (const call of message.tool_calls) {
      const read = readHistoryToolCall(call, customNames);
      if (read && read.id !== '' && !byId.has(read.id)) byId.set(read.id, read);
    }
  }
  return byId;
}
