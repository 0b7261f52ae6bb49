import type { ChatMessage, ContentPart } from './chat-message';

const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);

/**
 * The text parts of a message: a string content is one part; from an array, every part with a
 * string `text` (types text/input_text/output_text, or untyped) is kept; images, audio and files
 * are dropped; null is no part. Shared by all three adapters (provider_a.md §7.1, provider_b.md §6,
 * provider_c.md §4).
 */
export function messageTextParts(message: Pick<ChatMessage, 'content'>): string[] {
  const content = message.content;
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const part of content as readonly ContentPart[]) {
    if (part && typeof part.text === 'string' && (part.type === undefined || TEXT_PART_TYPES.has(String(part.type)))) {
      texts.push(part.text);
    }
  }
  return texts;
}

/** The text of a message as one string (parts joined with `\n`). */
export function messageText(message: Pick<ChatMessage, 'content'>): string {
  return messageTextParts(message).join('\n');
}
