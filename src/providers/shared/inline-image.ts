import { imageUrlOf } from '../../core/chat-message';

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

/** `url` read as a base64 `data:image/…` URL; undefined for anything else. */
export function readDataImageUrl(url: string): InlineImage | undefined {
  const match = DATA_IMAGE_URL.exec(url);
  if (match === null) return undefined;
  return { mimeType: match[1].toLowerCase(), data: match[2].replace(WHITESPACE, '') };
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
