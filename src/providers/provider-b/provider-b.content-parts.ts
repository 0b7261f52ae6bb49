import type { ChatMessage } from '../../core/chat-message';
import { imageUrlOf, isImagePart, partTypeName, textOfPart } from '../../core/chat-message';
import { GatewayError } from '../../core/gateway.error';
import { isJsonObject } from '../../common/json';
import { readDataImageUrl } from '../shared/inline-image';
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
    if (!isJsonObject(part)) throw historyRefusal(where, 'a part that is not an object');
    const text = textOfPart(part);
    if (text !== undefined) return text === '' ? [] : [{ text }];
    if (isImagePart(part)) return [inlineImage(part, where)];
    throw historyRefusal(where, partTypeName(part.type));
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
    if (!isJsonObject(part)) throw historyRefusal(where, 'a part that is not an object');
    if (textOfPart(part) === undefined) throw historyRefusal(where, `${partTypeName(part.type)} in this message role`);
  });
}

function inlineImage(part: Readonly<Record<string, unknown>>, where: string): CodeAssistPart {
  const url = imageUrlOf(part);
  // An inline base64 image: Gemini takes it as `inlineData`.
  const image = url === undefined ? undefined : readDataImageUrl(url);
  if (image === undefined)
    throw historyRefusal(
      where,
      'an image that is not a base64 data:image URL',
      ' (Code Assist does not fetch image URLs; send the image inline)',
    );
  return { inlineData: { mimeType: image.mimeType, data: image.data } };
}
