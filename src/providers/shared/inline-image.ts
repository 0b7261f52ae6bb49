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

/** The data URL of an inline image, as the Responses wire takes it. */
export function dataImageUrl(image: InlineImage): string {
  return `data:${image.mimeType};base64,${image.data}`;
}
