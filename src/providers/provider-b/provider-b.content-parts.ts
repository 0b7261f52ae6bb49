import type { ChatMessage } from '../../core/chat-message';
import { GatewayError } from '../../core/gateway.error';
import { isJsonObject } from '../../common/json';
import type { CodeAssistPart } from './provider-b.wire-types';

const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);
/** An inline base64 image: Gemini takes it as `inlineData`. */
const DATA_IMAGE_URL = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]+)$/i;
const SAFE_TYPE = /^[a-z_]{1,32}$/;

const refuse = (where: string, what: string, hint = '') =>
  new GatewayError('invalid_request', { publicMessage: `${where}: ${what} is not supported by provider_b${hint}` });

/** A part's type for an error message: our own words for anything that is not a plain identifier. */
const typeName = (type: unknown) =>
  typeof type === 'string' && SAFE_TYPE.test(type) ? `part type "${type}"` : 'this part type';

/**
 * The parts of one user message as Code Assist takes them, in order: texts as `text` parts and
 * `image_url` / `input_image` parts with a base64 `data:image/…` URL as `inlineData` (the Gemini
 * CLI sends pasted images the same way). Code Assist does not fetch URLs, so an https image, like
 * audio, files or any other part, is a 400 naming where it is — before any upstream call, never a
 * silent drop. Empty texts are left out.
 */
export function userParts(message: Pick<ChatMessage, 'content'>, messageIndex: number): CodeAssistPart[] {
  const content = message.content;
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part, partIndex): CodeAssistPart[] => {
    const where = `messages[${messageIndex}].content[${partIndex}]`;
    if (!isJsonObject(part)) throw refuse(where, 'a part that is not an object');
    if (typeof part.text === 'string' && (part.type === undefined || TEXT_PART_TYPES.has(String(part.type))))
      return part.text === '' ? [] : [{ text: part.text }];
    if (part.type === 'image_url' || part.type === 'input_image') return [inlineImage(part, where)];
    throw refuse(where, typeName(part.type));
  });
}

/**
 * For roles whose content Code Assist takes as text only (system, developer, assistant, tool):
 * refuses any part that is not text, so nothing is dropped silently.
 */
export function assertTextOnly(message: Pick<ChatMessage, 'content'>, messageIndex: number): void {
  if (!Array.isArray(message.content)) return;
  message.content.forEach((part, partIndex) => {
    const where = `messages[${messageIndex}].content[${partIndex}]`;
    if (!isJsonObject(part)) throw refuse(where, 'a part that is not an object');
    const isText = typeof part.text === 'string' && (part.type === undefined || TEXT_PART_TYPES.has(String(part.type)));
    if (!isText) throw refuse(where, `${typeName(part.type)} in this message role`);
  });
}

function inlineImage(part: Readonly<Record<string, unknown>>, where: string): CodeAssistPart {
  const nested = part.image_url;
  const url =
    typeof nested === 'string'
      ? nested
      : isJsonObject(nested) && typeof nested.url === 'string'
        ? nested.url
        : undefined;
  const match = url === undefined ? null : DATA_IMAGE_URL.exec(url);
  if (!match)
    throw refuse(
      where,
      'an image that is not a base64 data:image URL',
      ' (Code Assist does not fetch image URLs; send the image inline)',
    );
  return { inlineData: { mimeType: match[1].toLowerCase(), data: match[2].replace(/\s+/g, '') } };
}
