import type { ChatMessage } from '../../core/chat-message';
import { GatewayError } from '../../core/gateway.error';
import { isJsonObject } from '../../common/json';

/** One part of a Responses message or tool output, in the backend's spelling. */
export type ResponsesPart = { readonly type: 'input_text'; readonly text: string } | { readonly type: 'input_image'; readonly image_url: string; readonly detail?: string };

const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);
const IMAGE_DETAILS = new Set(['auto', 'low', 'high', 'original']);
/** What the backend fetches or decodes itself: an https URL or an inline base64 image. */
const CARRIED_IMAGE_URL = /^(https:\/\/\S+|data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+)$/i;
const SAFE_TYPE = /^[a-z_]{1,32}$/;

const refuse = (where: string, what: string) =>
  new GatewayError('invalid_request', { publicMessage: `${where}: ${what} is not supported by provider_a` });

/** A part's type for an error message: our own words for anything that is not a plain identifier. */
const typeName = (type: unknown) => (typeof type === 'string' && SAFE_TYPE.test(type) ? `part type "${type}"` : 'this part type');

function imagePart(part: Readonly<Record<string, unknown>>, where: string): ResponsesPart {
  const nested = part.image_url;
  const url = typeof nested === 'string' ? nested : isJsonObject(nested) && typeof nested.url === 'string' ? nested.url : undefined;
  const detail = isJsonObject(nested) ? nested.detail : part.detail;
  if (url === undefined || !CARRIED_IMAGE_URL.test(url)) throw refuse(where, 'an image that is not an https URL or a base64 data:image URL');
  return typeof detail === 'string' && IMAGE_DETAILS.has(detail) ? { type: 'input_image', image_url: url, detail } : { type: 'input_image', image_url: url };
}

/**
 * The parts of one chat message as the backend takes them, in order: texts (string content, or
 * parts of type text/input_text/output_text or untyped with a string `text`) and, where
 * `imagesAllowed`, `image_url` / `input_image` parts as `input_image` items (https and data URLs;
 * detail kept). Nothing is dropped silently: any other part (audio, files, an image where the
 * backend takes none) is a 400 naming where it is, before any upstream call.
 */
export function responsesParts(message: Pick<ChatMessage, 'content'>, messageIndex: number, imagesAllowed: boolean): ResponsesPart[] {
  const content = message.content;
  if (typeof content === 'string') return [{ type: 'input_text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part, partIndex): ResponsesPart => {
    const where = `messages[${messageIndex}].content[${partIndex}]`;
    if (!isJsonObject(part)) throw refuse(where, 'a part that is not an object');
    if (typeof part.text === 'string' && (part.type === undefined || TEXT_PART_TYPES.has(String(part.type)))) return { type: 'input_text', text: part.text };
    if (part.type === 'image_url' || part.type === 'input_image') {
      if (!imagesAllowed) throw refuse(where, 'an image in this message role');
      return imagePart(part, where);
    }
    throw refuse(where, typeName(part.type));
  });
}

/** The texts of the parts (for roles that take text only). */
export const textsOf = (parts: readonly ResponsesPart[]) => parts.flatMap((part) => (part.type === 'input_text' ? [part.text] : []));
