import type { ChatMessage, ChatToolCall, NormalizedTool } from '../../core/chat-message';
import {
  customToolNames,
  imageInRole,
  isImagePart,
  partTypeName,
  readHistoryToolCall,
  textOfPart,
  unsupportedPartFix,
} from '../../core/chat-message';
import { GatewayError } from '../../core/gateway.error';
import { isJsonObject } from '../../common/json';
import { inlineImageFault, inlineImageOf } from '../shared/inline-image';
import type { CodeAssistPart } from './provider-b.wire-types';

/**
 * 400 `invalid_request` (`param: "messages"`) for something in the history Code Assist cannot
 * carry, named by where it is: every provider_b history refusal has this shape.
 */
export const historyRefusal = (where: string, what: string, hint = '') =>
  new GatewayError('invalid_request', {
    publicMessage: `${where}: ${what} is not supported by provider_b${hint}`,
    param: 'messages',
  });

/**
 * The media types of the inline images Gemini takes: PNG, JPEG, WEBP, HEIC and HEIF (Google Cloud's
 * Gemini "Image understanding" page, docs.cloud.google.com/vertex-ai/docs/generative-ai/image/image-captioning),
 * as docs/providers.md lists them.
 */
export const PROVIDER_B_IMAGE_TYPES: readonly string[] = [
  'image/png',
  'image/jpeg',
  'image/webp',
  'image/heic',
  'image/heif',
];

/** Roles whose content Code Assist takes as text only; every other role is a user turn. */
const TEXT_ONLY_ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'assistant', 'tool']);

/**
 * The family's content check (the adapter's `checkContent`, run by the chat layer before the agent
 * queue): every part of every message is one Code Assist can carry in its role — texts anywhere,
 * and in user messages `image_url` / `input_image` parts with a base64 `data:image/…` URL (the
 * Gemini CLI sends pasted images the same way). Code Assist does not fetch URLs, so an https
 * image, like audio, files or any other part, is a 400 naming where it is — before any upstream
 * call, never a silent drop. So is a history function call whose arguments Gemini cannot take
 * (callArgumentsOf). Pure; the translation (userParts, the calls' `args`) then trusts it.
 * `tools` says which history calls are custom ones, whose input is raw text.
 */
export function assertCarriedContent(messages: readonly ChatMessage[], tools: readonly NormalizedTool[]): void {
  let customNames: ReadonlySet<string> | undefined;
  messages.forEach((message, index) => {
    if (TEXT_ONLY_ROLES.has(message.role)) assertTextOnly(message, index, message.role);
    else assertUserParts(message, index);
    if (message.role === 'assistant' && message.tool_calls?.length)
      assertCallArguments(message.tool_calls, index, (customNames ??= customToolNames(tools)));
  });
}

function assertCallArguments(
  calls: readonly ChatToolCall[],
  messageIndex: number,
  customNames: ReadonlySet<string>,
): void {
  calls.forEach((raw, callIndex) => {
    const call = readHistoryToolCall(raw, customNames);
    if (call?.kind !== 'function' || callArgumentsOf(raw, call.payload) !== undefined) return;
    throw historyRefusal(
      `messages.${messageIndex}.tool_calls.${callIndex}.function.arguments`,
      'text that is not a JSON object',
      ' (Gemini takes a call\'s arguments only as an object: send the JSON text of the object the call was made with, or "" for none)',
    );
  });
}

// Each history call's arguments parsed once per request: the check before the queue and the
// translation after it read the same call object, and arguments may be long (a whole file
// written). Held weakly, so they go with the request.
const parsedArguments = new WeakMap<object, Record<string, unknown> | null>();

/**
 * A function call's `args` as Gemini takes them, only as an object: the JSON text of an object
 * (`payload`, the call's `function.arguments`), or `{}` for blank arguments; `undefined` for
 * anything else (not JSON, an array, a string…), which is never sent as other arguments.
 */
export function callArgumentsOf(call: ChatToolCall, payload: string): Record<string, unknown> | undefined {
  let args = parsedArguments.get(call);
  if (args === undefined) {
    args = payload.trim() === '' ? {} : jsonObjectOrNull(payload);
    parsedArguments.set(call, args);
  }
  return args ?? undefined;
}

function jsonObjectOrNull(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return isJsonObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function assertUserParts(message: Pick<ChatMessage, 'content'>, messageIndex: number): void {
  if (!Array.isArray(message.content)) return;
  message.content.forEach((part, partIndex) => {
    const where = `messages[${messageIndex}].content[${partIndex}]`;
    if (!isJsonObject(part)) throw partRefusal(where, part);
    if (textOfPart(part) !== undefined) return;
    if (!isImagePart(part)) throw partRefusal(where, part);
    const image = inlineImageOf(part);
    if (image === undefined)
      throw historyRefusal(
        where,
        'an image that is not a base64 data:image URL',
        ' (Code Assist does not fetch image URLs; send the image inline)',
      );
    const fault = inlineImageFault(image, PROVIDER_B_IMAGE_TYPES);
    if (fault) throw historyRefusal(where, fault.what, `; ${fault.fix}`);
  });
}

/** The refusal of a part Code Assist takes in no role (audio, files, a non-object…), with what to send instead. */
function partRefusal(where: string, part: unknown) {
  const type = isJsonObject(part) ? part.type : undefined;
  const what = isJsonObject(part) ? partTypeName(type) : 'a part that is not an object';
  return historyRefusal(where, what, `; ${unsupportedPartFix(type)}`);
}

/**
 * For roles whose content Code Assist takes as text only (system, developer, assistant, tool):
 * refuses any part that is not text, so nothing is dropped silently; an image is named with its
 * role, since a user message would carry it.
 */
function assertTextOnly(message: Pick<ChatMessage, 'content'>, messageIndex: number, role: string): void {
  if (!Array.isArray(message.content)) return;
  message.content.forEach((part, partIndex) => {
    const where = `messages[${messageIndex}].content[${partIndex}]`;
    if (!isJsonObject(part)) throw partRefusal(where, part);
    if (textOfPart(part) !== undefined) return;
    if (!isImagePart(part)) throw partRefusal(where, part);
    const { what, fix } = imageInRole(role);
    throw historyRefusal(where, what, `; ${fix}`);
  });
}

/**
 * The parts of one user message as Code Assist takes them, in order, of content
 * assertCarriedContent passed: texts as `text` parts, images as `inlineData`. Empty texts are
 * left out.
 */
export function userParts(message: Pick<ChatMessage, 'content'>): CodeAssistPart[] {
  const content = message.content;
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part): CodeAssistPart[] => {
    if (!isJsonObject(part)) return [];
    const text = textOfPart(part);
    if (text !== undefined) return text === '' ? [] : [{ text }];
    const image = inlineImageOf(part);
    return image === undefined ? [] : [{ inlineData: { mimeType: image.mimeType, data: image.data } }];
  });
}
