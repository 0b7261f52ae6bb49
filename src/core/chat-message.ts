/*
 * The OpenAI chat shapes the gateway accepts, as adapters see them after validation (unknown
 * fields are kept: clients send many; only the ones below are interpreted), and the readings of
 * them every family shares: a message's text, the tool calls of the history, the client's tools
 * once normalised (the chat layer's parser normalises them, before any family sees the request).
 */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface ContentPart {
  readonly type?: string;
  readonly text?: unknown;
  readonly [key: string]: unknown;
}

export interface ChatToolCall {
  readonly id?: string;
  readonly type?: string;
  readonly function?: { readonly name?: string; readonly arguments?: string };
  readonly custom?: { readonly name?: string; readonly input?: string };
  readonly extra_content?: { readonly google?: { readonly thought_signature?: string } };
  readonly [key: string]: unknown;
}

export interface ChatMessage {
  readonly role: ChatRole;
  readonly content?: string | readonly ContentPart[] | null;
  readonly tool_calls?: readonly ChatToolCall[];
  readonly tool_call_id?: string;
  readonly name?: string;
  readonly [key: string]: unknown;
}

/** A client tool definition, nested (`{type, function:{…}}`) or flat (`{type, name, …}`). */
export type ToolDefinition = Readonly<Record<string, unknown>>;

/**
 * A client tool definition read from either the nested or the flat form (the chat parser's
 * `normalizeTools`): ChatRequest.normalizedTools holds the request's, read once.
 */
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

// Reading messages --------------------------------------------------------------------------------

const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);

/** The text of a text part (a string `text`, typed text/input_text/output_text or untyped); else undefined. */
export function textOfPart(part: Readonly<Record<string, unknown>>): string | undefined {
  return typeof part.text === 'string' && (part.type === undefined || TEXT_PART_TYPES.has(String(part.type)))
    ? part.text
    : undefined;
}

/** An image part, in the chat (`image_url`) or the Responses (`input_image`) spelling. */
export function isImagePart(part: Readonly<Record<string, unknown>>): boolean {
  return part.type === 'image_url' || part.type === 'input_image';
}

/**
 * OpenAI's image detail levels (the `openai` SDK's `image_url.detail` type; the parser spec holds
 * the two equal). The chat body rules refuse any other value on every family.
 */
export const IMAGE_DETAILS: readonly string[] = ['auto', 'low', 'high', 'original'];

/** An image part's `detail` and where it sits: `image_url.detail`, or `detail` beside an `input_image`'s URL. */
export function imageDetailOf(part: Readonly<Record<string, unknown>>): { value: unknown; field: string } {
  const nested = part.image_url;
  return isObject(nested)
    ? { value: nested.detail, field: 'image_url.detail' }
    : { value: part.detail, field: 'detail' };
}

/** An image part's URL: `image_url` as a string or as `{url}`; undefined when it has none. */
export function imageUrlOf(part: Readonly<Record<string, unknown>>): string | undefined {
  const nested = part.image_url;
  if (typeof nested === 'string') return nested;
  return isObject(nested) && typeof nested.url === 'string' ? nested.url : undefined;
}

const SAFE_PART_TYPE = /^[a-z_]{1,32}$/;

/** A part's type for a refusal message: our own words for anything that is not a plain identifier. */
export function partTypeName(type: unknown): string {
  return typeof type === 'string' && SAFE_PART_TYPE.test(type) ? `part type "${type}"` : 'this part type';
}

/**
 * The fix a family's refusal of a content part names, for a part no family carries (audio, files,
 * anything but text and images): what to send instead.
 */
export function unsupportedPartFix(type: unknown): string {
  if (type === 'input_audio') return 'send its transcript as a text part (no family takes audio)';
  if (type === 'file' || type === 'input_file')
    return "send the file's text as a text part, or an image as an image_url part (no family takes files)";
  return 'send its content as a text part';
}

/** What a family that takes images only in some roles says of one in `role`, and the fix. */
export function imageInRole(role: string): { what: string; fix: string } {
  const article = /^[aeiou]/.test(role) ? 'an' : 'a';
  return { what: `an image in ${article} ${role} message`, fix: 'move the image to a user message' };
}

/**
 * The text parts of a message: a string content is one part; from an array, every text part
 * (`textOfPart`) is kept, other parts skipped (each family refuses what it cannot carry before
 * this reads the message); null is no part. Shared by all
 * three adapters (docs/upstream/provider-a.md §7.1, docs/upstream/provider-b.md §6, docs/upstream/provider-c.md §4).
 */
export function messageTextParts(message: Pick<ChatMessage, 'content'>): string[] {
  const content = message.content;
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const part of content as readonly ContentPart[]) {
    const text = part ? textOfPart(part) : undefined;
    if (text !== undefined) texts.push(text);
  }
  return texts;
}

/** The text of a message as one string (parts joined with `\n`). */
export function messageText(message: Pick<ChatMessage, 'content'>): string {
  return messageTextParts(message).join('\n');
}

/** A plain object (not an array, not null); core imports nothing, so this is not common/json's. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const NO_NAMES: ReadonlySet<string> = new Set();

/**
 * Where one tool definition keeps its fields: `{type, [type]: {name, …}}` (nested) or the entry
 * itself (flat); a missing type means `function`. `path` is how a message names that place.
 */
export function toolSource(raw: Record<string, unknown>): {
  readonly type: string;
  readonly source: Record<string, unknown>;
  readonly path: string;
} {
  const type = typeof raw.type === 'string' && raw.type !== '' ? raw.type : 'function';
  const nested = raw[type];
  return isObject(nested) ? { type, source: nested, path: `.${type}` } : { type, source: raw, path: '' };
}

/**
 * The name of the tool a `tool_choice` object forces (`{"type":"function"|"custom", <type>: {"name"}}`
 * or the flat `{"type", "name"}`), exactly as sent, as every tool name is; `undefined` when it
 * forces none (a blank name forces none).
 */
export function forcedToolName(choice: unknown): string | undefined {
  if (!isObject(choice) || (choice.type !== 'function' && choice.type !== 'custom')) return undefined;
  const { source } = toolSource(choice);
  return typeof source.name === 'string' && source.name.trim() !== '' ? source.name : undefined;
}

/**
 * Names of the tools declared with type `custom` in this request; one shared empty set for the
 * many requests without any, which a kept chat holds for its life.
 */
export function customToolNames(tools: readonly NormalizedTool[]): ReadonlySet<string> {
  if (!tools.some((tool) => tool.type === 'custom')) return NO_NAMES;
  return new Set(tools.filter((tool) => tool.type === 'custom').map((tool) => tool.name));
}

/** A tool call found in the history, with its kind decided (docs/upstream/provider-a.md §7.3). */
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
 *
 * A client's calls have passed the body rules (chat/chat-body-rules.ts): an id, a name, and a
 * string payload or none. An absent payload reads as empty here; an empty name or id is still
 * read safely for the calls an adapter builds itself from upstream output (a chain's echoed
 * answer), where either may be empty.
 */
export function readHistoryToolCall(call: ChatToolCall, customNames: ReadonlySet<string>): HistoryToolCall | undefined {
  const id = typeof call.id === 'string' ? call.id : '';
  const signature = call.extra_content?.google?.thought_signature;
  if (call.type === 'custom' && isObject(call.custom)) {
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

/** An assistant message's calls, in order, each read by readHistoryToolCall (nameless entries left out). */
export function historyToolCalls(message: ChatMessage, customNames: ReadonlySet<string>): HistoryToolCall[] {
  const calls: HistoryToolCall[] = [];
  for (const raw of message.tool_calls ?? []) {
    const call = readHistoryToolCall(raw, customNames);
    if (call) calls.push(call);
  }
  return calls;
}
