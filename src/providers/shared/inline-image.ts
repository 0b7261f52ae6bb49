import { imageUrlOf } from '../../core/chat-message';
import { orList } from '../../common/text';

/*
 * Base64 `data:image/…` URLs as both HTTP families carry them. Clients wrap base64 at 76 columns
 * (the `base64` tool's default, MIME encoders), which no upstream decodes, so the payload goes up
 * without its whitespace.
 */

/** An inline image: its media type in lowercase and its base64 payload without whitespace. */
export interface InlineImage {
  readonly mimeType: string;
  readonly data: string;
}

const DATA_IMAGE_URL = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]+)$/i;
const WHITESPACE = /\s+/g;

/**
 * `url` read as a base64 `data:image/…` URL; undefined for anything else. `image/jpg`, a common
 * misspelling no registry knows, is read as `image/jpeg`, the type upstreams take.
 */
export function readDataImageUrl(url: string): InlineImage | undefined {
  const match = DATA_IMAGE_URL.exec(url);
  if (match === null) return undefined;
  const mimeType = match[1].toLowerCase();
  return { mimeType: mimeType === 'image/jpg' ? 'image/jpeg' : mimeType, data: match[2].replace(WHITESPACE, '') };
}

/**
 * What is wrong with an inline image for a family that takes the media types `accepted`, as the
 * words of a refusal (`messages[i].content[j]: <words> is not supported by …`, then `fix`);
 * undefined when nothing is. The payload's shape is looked at, not decoded: base64 of any bytes
 * has a length that is a multiple of 4 and `=` padding only at its end (at most two), which
 * catches a cut or mangled payload at the cost of one scan for `=`, while the upstream decodes it.
 */
export function inlineImageFault(
  image: InlineImage,
  accepted: readonly string[],
): { readonly what: string; readonly fix: string } | undefined {
  if (!accepted.includes(image.mimeType))
    return {
      what: `an image of type ${image.mimeType.slice(0, 64)}`,
      fix: `send it as ${orList(accepted)}`,
    };
  if (!isBase64Shaped(image.data))
    return {
      what: 'an image whose data is not base64',
      fix: 'send the whole image base64-encoded: its length is a multiple of 4, with "=" padding only at the end',
    };
  return undefined;
}

function isBase64Shaped(data: string): boolean {
  const length = data.length;
  if (length === 0 || length % 4 !== 0) return false;
  const padding = data.indexOf('=');
  if (padding < 0) return true;
  return padding >= length - 2 && data.endsWith('='.repeat(length - padding));
}

// Each image part read once per request: the content check before the queue and the translation
// after it read the same part object, and an image may be megabytes. Held weakly, so it goes with
// the request.
const readParts = new WeakMap<object, InlineImage | null>();

/** An image part's URL read as a base64 `data:image/…` URL (readDataImageUrl), once per part. */
export function inlineImageOf(part: Readonly<Record<string, unknown>>): InlineImage | undefined {
  let image = readParts.get(part);
  if (image === undefined) {
    const url = imageUrlOf(part);
    image = (url === undefined ? undefined : readDataImageUrl(url)) ?? null;
    readParts.set(part, image);
  }
  return image ?? undefined;
}

/** The data URL of an inline image, as the Responses wire takes it. */
export function dataImageUrl(image: InlineImage): string {
  return `data:${image.mimeType};base64,${image.data}`;
}
