import type { ChatMessage, ContentPart } from '../../core/chat-message';
import { imageUrlOf, isImagePart, textOfPart } from '../../core/chat-message';
import { utf8Length } from './utf8-prefix';

/** What context management reads of one tool result. */
export interface ToolResult {
  /** Its text as every family reads it: a string content, or its text parts joined with `\n`. */
  readonly text: string;
  /** UTF-8 size of `text`. */
  readonly bytes: number;
  /** The parts, when one of them is not text (an image…); undefined when the text is all there is. */
  readonly parts?: readonly ContentPart[];
  /** How many of those parts are images. */
  readonly images: number;
}

/** The text that replaces an image of a tool result before the compaction boundary. */
export const IMAGE_OMITTED = '[gateway: image of older tool output omitted]';

/**
 * How a rewritten result's text is sent: `kept`, a prefix of its text, then `suffix` (a blank line
 * and a marker, or nothing). `bytes` is their UTF-8 size together.
 */
export interface TextCut {
  readonly kept: string;
  readonly suffix: string;
  readonly bytes: number;
}

const readText = (part: ContentPart | null | undefined) => (part ? textOfPart(part) : undefined);
const isImage = (part: ContentPart | null | undefined) => !!part && isImagePart(part);

/**
 * One pass over the content, the same walk as `messageText` (the text is identical): a history
 * without images pays nothing more than reading its text.
 */
export function readToolResult(message: ChatMessage): ToolResult {
  const content = message.content;
  if (typeof content === 'string') return { text: content, bytes: utf8Length(content), images: 0 };
  if (!Array.isArray(content)) return { text: '', bytes: 0, images: 0 };
  const texts: string[] = [];
  let other = false;
  let images = 0;
  for (const part of content as readonly ContentPart[]) {
    const text = readText(part);
    if (text !== undefined) {
      texts.push(text);
      continue;
    }
    other = true;
    if (isImage(part)) images++;
  }
  const text = texts.join('\n');
  return { text, bytes: utf8Length(text), parts: other ? content : undefined, images };
}

/** UTF-8 size of the URLs of the result's images (a data URL is the image itself). */
export function imageBytes(result: ToolResult): number {
  if (result.images === 0 || !result.parts) return 0;
  let bytes = 0;
  for (const part of result.parts) if (isImage(part)) bytes += utf8Length(imageUrlOf(part) ?? '');
  return bytes;
}

/**
 * The content a rewritten result is sent with. Its text is `cut` (as it was when undefined); with
 * `omitImages` every image part becomes a text part holding `IMAGE_OMITTED`. A result whose text
 * is all there is becomes one string. Otherwise the parts keep their order and every part that is
 * not text is kept: the text parts before the cut stay, the one the cut falls in ends with
 * `suffix`, and those past it are left out, so the text parts joined with `\n` read exactly
 * `kept + suffix`. A cut that ends on the `\n` between two parts puts the suffix into an empty
 * copy of the next one, keeping that `\n`.
 */
export function rewriteContent(
  result: ToolResult,
  cut: TextCut | undefined,
  omitImages: boolean,
): string | ContentPart[] {
  if (!result.parts) return cut ? cut.kept + cut.suffix : result.text;
  const content: ContentPart[] = [];
  let end = -1; // where the previous text part ends in the joined text
  let cutPlaced = false;
  for (const part of result.parts) {
    const text = readText(part);
    if (text === undefined) content.push(omitImages && isImage(part) ? { type: 'text', text: IMAGE_OMITTED } : part);
    else if (cut === undefined) content.push(part);
    else if (!cutPlaced) {
      const start = end + 1;
      end = start + text.length;
      if (cut.kept.length > end) content.push(part);
      else {
        content.push({ ...part, text: cut.kept.slice(start) + cut.suffix });
        cutPlaced = true;
      }
    }
  }
  return content;
}
