import type { AppConfig } from '../../config/app-config';
import type { ChatMessage } from '../../core/chat-message';
import type { TextCut, ToolResult } from './tool-result';
import { imageBytes, readToolResult, rewriteContent } from './tool-result';
import { utf8Length, utf8Prefix } from './utf8-prefix';

export type ContextSettings = AppConfig['contextManagement'];

/**
 * Counts for the `context_manage` log record (docs/design/behaviours.md §5.5); never any text.
 * `bytes_before` and `bytes_after` are the UTF-8 size of the tool results' text and image URLs.
 */
export interface ContextStats {
  messages: number;
  bytes_before: number;
  bytes_after: number;
  tool_messages: number;
  truncated: number;
  compacted: number;
  images_omitted: number;
  recent_kept: number;
}

const truncationMarker = (originalBytes: number, keptBytes: number) =>
  `[gateway: tool output truncated from ${originalBytes} bytes; kept ${keptBytes} bytes]`;
const compactionMarker = (originalBytes: number, keptBytes: number) =>
  `[gateway: older tool output compacted from ${originalBytes} bytes; kept ${keptBytes} bytes]`;
const SEPARATOR = '\n\n';

/**
 * The largest prefix budget K with `K + "\n\n" + marker(K)` within `cap`. The marker's length
 * depends on K's digit count, so start from the widest marker and grow K while it still fits.
 */
function truncationBudget(cap: number, originalBytes: number): number {
  const total = (kept: number) => kept + SEPARATOR.length + truncationMarker(originalBytes, kept).length;
  let kept = Math.max(0, cap - SEPARATOR.length - truncationMarker(originalBytes, cap).length);
  while (total(kept + 1) <= cap) kept++;
  return kept;
}

/**
 * docs/design/behaviours.md §5.1: prefix, blank line, marker; the whole string is at most `cap`
 * bytes. A cap too small to hold even the marker (under about 70 bytes) keeps the first `cap`
 * bytes and no marker: the bound is the operator's, and a marker alone would break it.
 */
function truncate(text: string, originalBytes: number, cap: number): TextCut {
  if (SEPARATOR.length + truncationMarker(originalBytes, 0).length > cap) {
    const prefix = utf8Prefix(text, cap);
    return { kept: prefix.text, suffix: '', bytes: prefix.bytes };
  }
  // The kept prefix may come out shorter than the budget (a multi-byte character is never
  // split); the marker then names the bytes really kept, and is never longer than budgeted.
  const prefix = utf8Prefix(text, truncationBudget(cap, originalBytes));
  return withMarker(prefix, truncationMarker(originalBytes, prefix.bytes));
}

/** docs/design/behaviours.md §5.3: a prefix of `keepBytes`, blank line, marker. */
function compact(text: string, originalBytes: number, keepBytes: number): TextCut {
  const prefix = utf8Prefix(text, keepBytes);
  return withMarker(prefix, compactionMarker(originalBytes, prefix.bytes));
}

/** The markers are ASCII: their length is their size. */
const withMarker = (prefix: { text: string; bytes: number }, marker: string): TextCut => ({
  kept: prefix.text,
  suffix: SEPARATOR + marker,
  bytes: prefix.bytes + SEPARATOR.length + marker.length,
});

const hasCallId = (message: ChatMessage) =>
  typeof message.tool_call_id === 'string' && message.tool_call_id.trim() !== '';

/**
 * Where the protected tail starts in a history of `length` messages: at least `recent` messages
 * before the end, moved in steps of half of `recent`. A growing agent history then keeps its
 * compacted part byte-identical for several turns, so the upstream's prompt cache and a chained
 * upstream's response chain continue across them; a boundary moving one message a turn would change the
 * history a few dozen messages from its end on every turn.
 */
export function compactionBoundary(length: number, recent: number): number {
  const step = Math.max(1, Math.floor(recent / 2));
  return Math.max(0, Math.floor((length - recent) / step) * step);
}

/** UTF-8 size of one message as `JSON.stringify` renders it inside an array. */
const jsonSize = (message: ChatMessage) => utf8Length(JSON.stringify(message) ?? 'null');

/**
 * Whether `JSON.stringify(messages)` is longer than `limit` UTF-8 bytes. Messages are measured
 * one at a time and the walk stops once the bound is crossed, so the trigger costs at most about
 * `limit` bytes of serializing however long the history is.
 */
function serializedOver(messages: readonly ChatMessage[], limit: number): boolean {
  let size = 2; // the brackets
  for (let index = 0; index < messages.length; index++) {
    size += jsonSize(messages[index]) + (index > 0 ? 1 : 0);
    if (size > limit) return true;
  }
  return false;
}

/**
 * Context management for tool-capable chat requests (docs/design/behaviours.md §5). Pure: the input
 * array and its messages are never mutated; a changed message is a shallow copy with a new
 * `content`. Only `tool` message content is ever rewritten — no message is dropped, reordered or
 * merged, and ids, `tool_calls` and `tool_call_id` are untouched, so every call/result pair
 * survives. The result may still exceed the budget; it is sent as is.
 *
 * 1. Per-result cap (always): a tool result whose text is over `toolOutputMaxBytes` has its text
 *    truncated; its images stay (they are not its text).
 * 2. Trigger: message count over `maxMessages` or serialized size over `maxBytes` (0 = off); the
 *    count is read first, and the size is only measured as far as the bound.
 * 3. Compaction: tool results with a `tool_call_id` before the compaction boundary (at least the
 *    last `recentMessages` messages behind it) have their text shrunk to
 *    `compactedToolOutputBytes`, when that makes it shorter, and every image replaced by a
 *    fixed text.
 *
 * The same input always gives the same output, byte for byte: the upstream's prompt cache and a
 * chained upstream's response chain depend on it. `stats` is present only when something changed.
 * Its byte counts are the UTF-8 size of the tool results' text and image URLs, the only things
 * this rewrites: sizing the whole history would serialize it all.
 */
export function manageContext(
  messages: readonly ChatMessage[],
  settings: ContextSettings,
): { messages: ChatMessage[]; stats?: ContextStats } {
  const output = [...messages];
  if (!settings.enabled) return { messages: output };

  // What each tool result holds as the client sent it; markers always name the original text's size.
  const results = new Map<number, ToolResult>();
  messages.forEach((message, index) => {
    if (message?.role === 'tool') results.set(index, readToolResult(message));
  });
  // How the text of a rewritten result is cut; results absent here keep their text as it came.
  const cuts = new Map<number, TextCut>();
  // Results whose images are replaced by a marker.
  const withoutImages = new Set<number>();

  let truncated = 0;
  const cap = settings.toolOutputMaxBytes;
  if (cap > 0) {
    for (const [index, result] of results) {
      if (result.bytes <= cap) continue;
      cuts.set(index, truncate(result.text, result.bytes, cap));
      truncated++;
    }
  }

  const triggered =
    (settings.maxMessages > 0 && output.length > settings.maxMessages) ||
    (settings.maxBytes > 0 && serializedOver(output, settings.maxBytes));

  let compacted = 0;
  let imagesOmitted = 0;
  const tailStart = compactionBoundary(output.length, settings.recentMessages);
  if (triggered) {
    for (const [index, result] of results) {
      if (index >= tailStart || !hasCallId(messages[index])) continue;
      const candidate = compact(result.text, result.bytes, settings.compactedToolOutputBytes);
      // Compared with what would be sent otherwise (possibly already truncated): never grow a text.
      const shorter = candidate.bytes < (cuts.get(index)?.bytes ?? result.bytes);
      if (shorter) cuts.set(index, candidate);
      if (result.images > 0) {
        withoutImages.add(index);
        imagesOmitted += result.images;
      }
      if (shorter || result.images > 0) compacted++;
    }
  }

  if (truncated === 0 && compacted === 0) return { messages: output };
  let bytesBefore = 0;
  let bytesAfter = 0;
  for (const [index, result] of results) {
    const before = result.bytes + imageBytes(result);
    bytesBefore += before;
    const cut = cuts.get(index);
    const omitImages = withoutImages.has(index);
    if (cut === undefined && !omitImages) {
      bytesAfter += before;
      continue;
    }
    const sent: ChatMessage = { ...messages[index], content: rewriteContent(result, cut, omitImages) };
    output[index] = sent;
    // The images' markers are text now: measure what is sent rather than add up its pieces.
    bytesAfter += omitImages ? readToolResult(sent).bytes : (cut?.bytes ?? 0) + imageBytes(result);
  }
  return {
    messages: output,
    stats: {
      messages: output.length,
      bytes_before: bytesBefore,
      bytes_after: bytesAfter,
      tool_messages: results.size,
      truncated,
      compacted,
      images_omitted: imagesOmitted,
      recent_kept: triggered ? output.length - tailStart : 0,
    },
  };
}
