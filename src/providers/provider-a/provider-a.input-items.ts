import { sha256Hex } from '../../common/hashing';
import { isJsonObject, type JsonObject } from '../../common/json';
import type { ChatMessage, HistoryToolCall, NormalizedTool, ToolDefinition } from '../../core/chat-message';
import {
  imageDetailOf,
  imageInRole,
  imageUrlOf,
  isImagePart,
  partTypeName,
  textOfPart,
  toolSource,
  unsupportedPartFix,
} from '../../core/chat-message';
import { GatewayError } from '../../core/gateway.error';
import type { ResolvedModel } from '../../core/resolved-model';
import { clientExecutedTool } from '../shared/hosted-tools';
import { dataImageUrl, inlineImageFault, inlineImageOf } from '../shared/inline-image';
import { pairToolResults } from '../shared/tool-pairing';
import type { ToolNameMap, ToolNameRule } from '../shared/tool-names';
import { buildToolNameMap } from '../shared/tool-names';
import { quoted } from '../../core/quoted';

/*
 * What the chat request's messages and tools become on the Responses wire (docs/upstream/provider-a.md §7):
 * content parts and input items, tool calls paired with their results, the client's tool
 * definitions flattened, and the tool names mapped to ones the backend accepts and back.
 * provider-a.request.ts assembles them into the body of an attempt.
 */

// Messages: content parts, input items, call pairing ----------------------------------------------

/** Call-id normalization N(id) (docs/upstream/provider-a.md §7.4): ids over 64 characters become their SHA-256 hex. */
export function normalizeCallId(id: string): string {
  return id.length <= 64 ? id : sha256Hex(id);
}

/** Chat messages split into the parts of a Responses request (docs/upstream/provider-a.md §7.2). */
export interface ConversationInput {
  /** Texts of `system` and `developer` messages, in order (one entry per non-empty message). */
  readonly systemTexts: string[];
  /** The conversation as Responses input items, in order. */
  readonly items: JsonObject[];
  /** Calls no tool message answered, sent with an `aborted` output. */
  readonly abortedCalls: number;
  /** Tool messages that answer no call, dropped. */
  readonly orphanOutputs: number;
}

/**
 * Pure: messages → instructions texts and input items, of content assertCarriedContent passed.
 * Each assistant message's calls are followed by their outputs in call order, found by id
 * wherever the client sent them (shared/tool-pairing.ts), each of its call's kind
 * (function/custom); a call without one gets an `aborted` output, as the Codex CLI records a call
 * the user interrupted, since the backend refuses unpaired items.
 */
export function conversationInput(
  messages: readonly ChatMessage[],
  customNames: ReadonlySet<string>,
): ConversationInput {
  const paired = pairToolResults(messages, customNames);
  const systemTexts: string[] = [];
  const items: JsonObject[] = [];

  for (const { message, calls, results } of paired.messages) {
    const parts = responsesParts(message);
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textsOf(parts).join('\n');
        if (text !== '') systemTexts.push(text);
        break;
      }
      case 'user': {
        const content = parts.filter((part) => part.type !== 'input_text' || part.text !== '');
        if (content.length > 0) items.push({ type: 'message', role: 'user', content });
        break;
      }
      case 'assistant':
        items.push(...assistantItems(parts, calls));
        calls.forEach((call, index) => items.push(outputItem(call, results[index])));
        break;
    }
  }
  return { systemTexts, items, abortedCalls: paired.cancelledCalls, orphanOutputs: paired.orphanResults };
}

/**
 * An assistant message as input items: its text (`parts`, its responsesParts), then its calls;
 * their outputs are not part of it.
 */
export function assistantItems(parts: readonly ResponsesPart[], calls: readonly HistoryToolCall[]): JsonObject[] {
  const items: JsonObject[] = [];
  const text = textsOf(parts).join('\n');
  if (text !== '') items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
  for (const call of calls) {
    const callId = normalizeCallId(call.id);
    items.push(
      call.kind === 'custom'
        ? { type: 'custom_tool_call', call_id: callId, name: call.name, input: call.payload }
        : {
            type: 'function_call',
            call_id: callId,
            name: call.name,
            arguments: call.payload === '' ? '{}' : call.payload,
          },
    );
  }
  return items;
}

/** The output answering `call`: its result, or `aborted` when the client sent none. */
function outputItem(call: HistoryToolCall, result: ChatMessage | undefined): JsonObject {
  const type = call.kind === 'custom' ? 'custom_tool_call_output' : 'function_call_output';
  const callId = normalizeCallId(call.id);
  if (!result) return { type, call_id: callId, output: ABORTED_CALL_OUTPUT };
  const parts = responsesParts(result);
  // A result with images goes up as a list of parts, else as one string (texts joined).
  return {
    type,
    call_id: callId,
    output: parts.some((part) => part.type === 'input_image') ? parts : textsOf(parts).join('\n'),
  };
}

/** One part of a Responses message or tool output, in the backend's spelling. */
export type ResponsesPart =
  | { readonly type: 'input_text'; readonly text: string }
  | { readonly type: 'input_image'; readonly image_url: string; readonly detail?: string };

/**
 * The media types of the inline images the backend decodes: OpenAI's image inputs (PNG, JPEG,
 * WEBP, non-animated GIF; developers.openai.com/api/docs/guides/images-vision), as docs/providers.md
 * lists them. Anything else (SVG, BMP, HEIC…) the backend refuses.
 */
export const PROVIDER_A_IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];
/** What the backend fetches itself (an inline base64 image is the other image it takes). */
const HTTPS_URL = /^https:\/\/\S+$/i;

const refuse = (where: string, what: string, fix?: string) =>
  new GatewayError('invalid_request', {
    publicMessage: `${where}: ${what} is not supported by provider_a${fix === undefined ? '' : `; ${fix}`}`,
    param: 'messages',
  });

/** The 400 for an image part at `where` (a content part path), when it cannot go up. */
export type ImageRefusal = (where: string) => GatewayError;

/** The backend takes images only in user messages and tool results. */
const refuseImageInRole =
  (role: string): ImageRefusal =>
  (where) => {
    const { what, fix } = imageInRole(role);
    return refuse(where, what, fix);
  };

/**
 * The refusal of every image part when the model's input modalities (its live-list entry, else
 * the bundled catalog's) are known and lack `image`: the Codex CLI sends no image to such a
 * model. `undefined` when it takes images or nothing says (an unlisted model: the backend's
 * answer is the answer). The message is written only for an image it refuses.
 */
export function modelImageRefusal(
  model: Pick<ResolvedModel, 'requestedId' | 'upstreamModel'>,
  inputModalities: readonly string[] | undefined,
): ImageRefusal | undefined {
  if (inputModalities === undefined || inputModalities.includes('image')) return undefined;
  return (where) => {
    const requested = quoted(model.requestedId, 128);
    const named =
      model.requestedId === model.upstreamModel
        ? requested
        : `${requested} (upstream ${model.upstreamModel.slice(0, 128)})`;
    return new GatewayError('invalid_request', {
      publicMessage: `${where}: an image is not supported by model ${named}, whose input_modalities are ${JSON.stringify(inputModalities)}; remove the image, or choose a model whose input_modalities include image, see GET /v1/models`,
      param: 'messages',
    });
  };
}

/**
 * The family's content check (the adapter's `checkContent`, run by the chat layer before the agent
 * queue): every part is one the backend can carry — texts (string content, or parts of type
 * text/input_text/output_text or untyped with a string `text`) anywhere, and `image_url` /
 * `input_image` parts with an https or base64 data URL in user messages and tool results, unless
 * `imageRefusal` is given (the model takes no images, `modelImageRefusal`); their `detail` the
 * chat body rules checked. Nothing is dropped
 * silently: any other part (audio, files, an image where the backend or the model takes none) is
 * a 400 naming where it is, before any upstream call. Pure; the translation then trusts it.
 */
export function assertCarriedContent(messages: readonly ChatMessage[], imageRefusal: ImageRefusal | undefined): void {
  messages.forEach((message, messageIndex) => {
    if (!Array.isArray(message.content)) return;
    const refusal = message.role === 'user' || message.role === 'tool' ? imageRefusal : refuseImageInRole(message.role);
    message.content.forEach((part: unknown, partIndex) => {
      const where = `messages[${messageIndex}].content[${partIndex}]`;
      if (!isJsonObject(part)) throw refuse(where, 'a part that is not an object', unsupportedPartFix(undefined));
      if (textOfPart(part) !== undefined) return;
      if (!isImagePart(part)) throw refuse(where, partTypeName(part.type), unsupportedPartFix(part.type));
      if (refusal) throw refusal(where);
      if (carriedImageUrl(part) === undefined)
        throw refuse(where, 'an image that is not an https URL or a base64 data:image URL');
      const inline = inlineImageOf(part);
      const fault = inline && inlineImageFault(inline, PROVIDER_A_IMAGE_TYPES);
      if (fault) throw refuse(where, fault.what, fault.fix);
    });
  });
}

/** An image part's URL as the backend takes it: an https URL as given, a data URL without whitespace. */
function carriedImageUrl(part: Readonly<Record<string, unknown>>): string | undefined {
  const given = imageUrlOf(part);
  if (given === undefined || HTTPS_URL.test(given)) return given;
  const inline = inlineImageOf(part);
  return inline === undefined ? undefined : dataImageUrl(inline);
}

function imagePart(part: Readonly<Record<string, unknown>>): ResponsesPart[] {
  const url = carriedImageUrl(part);
  if (url === undefined) return [];
  // The chat body rules let only OpenAI's detail levels through, the ones the backend takes.
  const detail = imageDetailOf(part).value;
  return typeof detail === 'string'
    ? [{ type: 'input_image', image_url: url, detail }]
    : [{ type: 'input_image', image_url: url }];
}

/**
 * The parts of one chat message as the backend takes them, in order, of content
 * assertCarriedContent passed: texts, and image parts as `input_image` items (https and data
 * URLs; detail kept). Roles that take text only read the texts of these.
 */
export function responsesParts(message: Pick<ChatMessage, 'content'>): ResponsesPart[] {
  const content = message.content;
  if (typeof content === 'string') return [{ type: 'input_text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: unknown): ResponsesPart[] => {
    if (!isJsonObject(part)) return [];
    const text = textOfPart(part);
    if (text !== undefined) return [{ type: 'input_text', text }];
    return isImagePart(part) ? imagePart(part) : [];
  });
}

/** The texts of the parts (for roles that take text only). */
export const textsOf = (parts: readonly ResponsesPart[]) =>
  parts.flatMap((part) => (part.type === 'input_text' ? [part.text] : []));

/** The output the Codex CLI records for a call that never got one (the user interrupted it). */
export const ABORTED_CALL_OUTPUT = 'aborted';

// Tools: definitions and names --------------------------------------------------------------------

const EMPTY_PARAMETERS = { type: 'object', properties: {} };

/**
 * Client tools → Responses tools (docs/upstream/provider-a.md §7.5): nested function/custom definitions are
 * flattened (a function without parameters gets an empty object schema); flat ones keep their
 * fields, under the type the chat parser read (a flat tool without `type` is a function, as on
 * every family, and the backend refuses a tool without one) and, for a function without
 * parameters, with the same empty schema; nameless function/custom entries are dropped, and
 * other types (web_search…) pass unchanged whether or not they carry a name. Order is kept.
 * Which entries are function or custom tools is read as the body rules and the hosted-tool
 * checks read it (`toolSource`: a missing, `null`, empty or non-string type is `function`), so
 * an entry those let through as a function tool is never sent as a hosted one.
 * `normalized` is the same list as the chat parser read it (in order, nameless entries left
 * out), so each definition's reading is the next one whose `raw` is that definition.
 */
export function responsesTools(tools: readonly ToolDefinition[], normalized: readonly NormalizedTool[]): JsonObject[] {
  const result: JsonObject[] = [];
  let next = 0;
  for (const raw of tools) {
    const tool = normalized[next]?.raw === raw ? normalized[next++] : undefined;
    if (!isJsonObject(raw)) continue;
    if (!clientExecutedTool(tool?.type ?? toolSource(raw).type)) {
      result.push({ ...raw });
      continue;
    }
    if (!tool) continue;
    if (!isJsonObject(raw[tool.type])) {
      // The type leads, as in the Codex CLI's own tools, whether or not the client wrote one.
      const flat: JsonObject = Object.assign({ type: tool.type }, raw, { type: tool.type });
      if (tool.type === 'function' && tool.parameters === undefined) flat.parameters = EMPTY_PARAMETERS;
      result.push(flat);
    } else if (tool.type === 'custom') {
      result.push(
        withoutUndefined({ type: 'custom', name: tool.name, description: tool.description, format: tool.format }),
      );
    } else {
      result.push(
        withoutUndefined({
          type: 'function',
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters ?? EMPTY_PARAMETERS,
          strict: tool.strict,
        }),
      );
    }
  }
  return result;
}

/**
 * `tool_choice` as the Responses API spells it: strings unchanged, nested
 * `{type, function|custom: {name}}` flattened to `{type, name}`, flat objects unchanged.
 */
export function responsesToolChoice(choice: unknown, customNames: ReadonlySet<string>): unknown {
  if (!isJsonObject(choice)) return choice;
  const type = typeof choice.type === 'string' ? choice.type : undefined;
  const nested = type !== undefined ? choice[type] : undefined;
  if ((type === 'function' || type === 'custom') && isJsonObject(nested) && typeof nested.name === 'string') {
    // Tool names are unique, so the declaration says the type: a client may force a custom tool
    // as the function it was shown as (PRIMARY_CUSTOM_TOOL_WIRE=function), and the backend wants
    // the declared one.
    return { type: customNames.has(nested.name) ? 'custom' : 'function', name: nested.name };
  }
  return choice;
}

function withoutUndefined(value: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined));
}

/** The backend's rule for function and custom tool names (the OpenAI function-name rule). */
export const VALID_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const RESPONSES_TOOL_NAMES: ToolNameRule = {
  valid: VALID_TOOL_NAME,
  badCharacter: /[^a-zA-Z0-9_-]/g,
  maxLength: 64,
};

const NAMED_ITEM_TYPES = new Set(['function_call', 'custom_tool_call']);
const NAMED_TOOL_TYPES = new Set(['function', 'custom']);

/** Every function/custom tool name of a Responses body: tools, tool_choice and history calls. */
function toolNamesOf(body: JsonObject): string[] {
  const names: string[] = [];
  const visit = (entry: unknown, types: ReadonlySet<string>) => {
    if (isJsonObject(entry) && types.has(String(entry.type)) && typeof entry.name === 'string') names.push(entry.name);
  };
  if (Array.isArray(body.tools)) body.tools.forEach((tool) => visit(tool, NAMED_TOOL_TYPES));
  visit(body.tool_choice, NAMED_TOOL_TYPES);
  if (Array.isArray(body.input)) body.input.forEach((item) => visit(item, NAMED_ITEM_TYPES));
  return names;
}

/**
 * Renames every function/custom tool name in a built Responses body (tools, tool_choice, history
 * calls) to one the backend accepts; returns the new body and the map that turns the names of
 * calls coming back into the client's names.
 */
export function withUpstreamToolNames(body: JsonObject): { body: JsonObject; names: ToolNameMap } {
  const names = buildToolNameMap(toolNamesOf(body), RESPONSES_TOOL_NAMES);
  if (names.renamed === 0) return { body, names };
  const rename = (entry: unknown, types: ReadonlySet<string>) =>
    isJsonObject(entry) && types.has(String(entry.type)) && typeof entry.name === 'string'
      ? { ...entry, name: names.toUpstream(entry.name) }
      : entry;
  const renamedBody: JsonObject = { ...body };
  if (Array.isArray(body.tools)) renamedBody.tools = body.tools.map((tool) => rename(tool, NAMED_TOOL_TYPES));
  if (body.tool_choice !== undefined) renamedBody.tool_choice = rename(body.tool_choice, NAMED_TOOL_TYPES);
  if (Array.isArray(body.input)) renamedBody.input = body.input.map((item) => rename(item, NAMED_ITEM_TYPES));
  return { body: renamedBody, names };
}
