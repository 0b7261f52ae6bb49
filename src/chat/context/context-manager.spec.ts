import fc from 'fast-check';
import { loadConfig } from '../../config/app-config';
import type { ChatMessage, ContentPart } from '../../core/chat-message';
import { imageUrlOf, isImagePart, messageText, textOfPart } from '../../core/chat-message';
import type { ContextSettings } from './context-manager';
import { compactionBoundary, manageContext } from './context-manager';
import { utf8Prefix } from './utf8-prefix';

// The documented defaults (their values are asserted in app-config.spec.ts).
const DEFAULTS: ContextSettings = loadConfig({}).contextManagement;
const settings = (overrides: Partial<ContextSettings> = {}): ContextSettings => ({ ...DEFAULTS, ...overrides });
const bytes = (text: unknown) => Buffer.byteLength(String(text), 'utf8');
const partsOf = (message: ChatMessage): readonly ContentPart[] =>
  Array.isArray(message.content) ? (message.content as readonly ContentPart[]) : [];
const imagesOf = (message: ChatMessage) => partsOf(message).filter((part) => isImagePart(part));
/** What `context_manage` counts: the UTF-8 size of the tool results' text and image URLs. */
const toolBytes = (messages: readonly ChatMessage[]) =>
  messages
    .filter((message) => message.role === 'tool')
    .reduce(
      (sum, message) =>
        sum +
        bytes(messageText(message)) +
        imagesOf(message).reduce((urls, part) => urls + bytes(imageUrlOf(part) ?? ''), 0),
      0,
    );
const IMAGE_OMITTED = '[gateway: image of older tool output omitted]';
const image = (url: string): ContentPart => ({ type: 'image_url', image_url: { url } });
const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object') {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
};

/**
 * An agent history: system, user, then `pairs` × (assistant call, tool result), then a user
 * message. Each tool result is `resultBytes` long.
 */
function history(pairs: number, resultBytes: number, fill = 'r'): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'you are an agent' },
    { role: 'user', content: 'fix the build' },
  ];
  for (let index = 0; index < pairs; index++) {
    const id = `call_${index}`;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: `{"path":"f${index}"}` } }],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: fill.repeat(resultBytes) });
  }
  messages.push({ role: 'user', content: 'continue' });
  return messages;
}

describe('manageContext', () => {
  describe('per-result cap (docs/design/behaviours.md §5.1)', () => {
    it('cuts a 40 000-byte result to exactly 32 768 bytes with K = 32 699', () => {
      const messages: ChatMessage[] = [
        { role: 'user', content: 'go' },
        { role: 'tool', tool_call_id: 'c1', content: 'x'.repeat(40_000) },
      ];
      const result = manageContext(messages, settings());
      const content = result.messages[1].content as string;
      expect(bytes(content)).toBe(32_768);
      expect(content.endsWith('\n\n[gateway: tool output truncated from 40000 bytes; kept 32699 bytes]')).toBe(true);
      expect(content.startsWith('x'.repeat(32_699) + '\n\n')).toBe(true);
      expect(result.messages[1]).toEqual({ role: 'tool', tool_call_id: 'c1', content });
      expect(result.stats).toMatchObject({ truncated: 1, compacted: 0, tool_messages: 1, messages: 2 });
    });

    it('cuts multi-byte text on a character boundary and names the bytes really kept', () => {
      // 'é' is 2 bytes, '😀' 4: a budget of 32 699 bytes falls inside a character either way.
      for (const character of ['é', '😀', '中']) {
        const text = character.repeat(Math.ceil(40_000 / bytes(character)));
        const result = manageContext([{ role: 'tool', tool_call_id: 'c', content: text }], settings());
        const content = result.messages[0].content as string;
        const match = /\n\n\[gateway: tool output truncated from (\d+) bytes; kept (\d+) bytes\]$/.exec(content)!;
        expect(Number(match[1])).toBe(bytes(text));
        const prefix = content.slice(0, match.index);
        expect(prefix).not.toContain('\uFFFD');
        expect(prefix).toBe(character.repeat(prefix.length / character.length));
        expect(bytes(prefix)).toBe(Number(match[2]));
        expect(Number(match[2])).toBeGreaterThan(32_699 - bytes(character));
        expect(bytes(content)).toBeLessThanOrEqual(32_768);
      }
    });

    it('measures the text parts joined with newlines, and a result of text parts only becomes one string', () => {
      const content = [
        { type: 'text', text: 'a'.repeat(60) },
        { type: 'text', text: 'b'.repeat(60) },
      ];
      const result = manageContext(
        [{ role: 'tool', tool_call_id: 'c', content }],
        settings({ toolOutputMaxBytes: 100 }),
      );
      const text = result.messages[0].content as string;
      expect(typeof text).toBe('string');
      expect(text).toMatch(/^a+\n\n\[gateway: tool output truncated from 121 bytes; kept \d+ bytes\]$/);
      expect(bytes(text)).toBeLessThanOrEqual(100);
    });

    it('keeps every part that is not text, in its place, and cuts only the text parts', () => {
      const audio: ContentPart = { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } };
      const content: ContentPart[] = [
        { type: 'text', text: 'a'.repeat(60), cache_control: { type: 'ephemeral' } },
        image('data:image/png;base64,AAAA'),
        { type: 'text', text: 'b'.repeat(60) },
        audio,
        { type: 'text', text: 'c'.repeat(60) },
        image('https://example.test/2.png'),
      ];
      const result = manageContext(
        [{ role: 'tool', tool_call_id: 'c', content }],
        settings({ toolOutputMaxBytes: 140 }),
      );
      const sent = result.messages[0];
      const parts = partsOf(sent);
      // The cut falls in the second text part: it ends with the marker, the third is past it.
      expect(parts).toEqual([
        content[0],
        content[1],
        {
          type: 'text',
          text: expect.stringMatching(/^b+\n\n\[gateway: tool output truncated from 182 bytes; kept \d+ bytes\]$/),
        },
        audio,
        content[5],
      ]);
      expect(parts[1]).toBe(content[1]);
      expect(parts[3]).toBe(content[3]);
      expect(bytes(messageText(sent))).toBeLessThanOrEqual(140);
      // The images count on both sides; only the text shrank.
      expect(result.stats).toMatchObject({ truncated: 1, images_omitted: 0 });
      expect(result.stats!.bytes_before - result.stats!.bytes_after).toBe(182 - bytes(messageText(sent)));
    });

    it('reads the same text from the cut parts as from the cut string, wherever the cut falls', () => {
      // The join between two parts is a character of the text: a cut ending on it keeps it.
      const text = (first: number) => [
        { type: 'text', text: 'x'.repeat(first) },
        image('data:image/png;base64,AAAA'),
        { type: 'text', text: 'y'.repeat(200 - first) },
      ];
      for (let first = 0; first <= 200; first++) {
        const parts = manageContext(
          [{ role: 'tool', tool_call_id: 'c', content: text(first) }],
          settings({ toolOutputMaxBytes: 120 }),
        ).messages[0];
        const string = manageContext(
          [{ role: 'tool', tool_call_id: 'c', content: 'x'.repeat(first) + '\n' + 'y'.repeat(200 - first) }],
          settings({ toolOutputMaxBytes: 120 }),
        ).messages[0];
        expect(messageText(parts)).toBe(string.content);
        expect(imagesOf(parts)).toHaveLength(1);
      }
    });

    it('leaves results at or under the cap alone and applies the cap without any trigger', () => {
      const messages: ChatMessage[] = [
        { role: 'tool', tool_call_id: 'a', content: 'y'.repeat(32_768) },
        { role: 'tool', tool_call_id: 'b', content: 'y'.repeat(32_769) },
      ];
      const result = manageContext(messages, settings({ maxBytes: 0, maxMessages: 0 }));
      expect(result.messages[0]).toBe(messages[0]);
      expect(bytes(result.messages[1].content)).toBe(32_768);
      expect(result.stats).toMatchObject({ truncated: 1, compacted: 0, recent_kept: 0 });
    });

    it('applies TOOL_OUTPUT_MAX_BYTES as set, and 0 switches the cap off', () => {
      const messages: ChatMessage[] = [{ role: 'tool', tool_call_id: 'a', content: 'z'.repeat(5_000) }];
      expect(bytes(manageContext(messages, settings({ toolOutputMaxBytes: 1_000 })).messages[0].content)).toBe(1_000);
      const off = manageContext(messages, settings({ toolOutputMaxBytes: 0 }));
      expect(off.messages[0]).toBe(messages[0]);
      expect(off.stats).toBeUndefined();
    });

    it('keeps a cap too small for the marker: the first cap bytes, no marker; a cap that just holds it: the marker alone', () => {
      const messages: ChatMessage[] = [{ role: 'tool', tool_call_id: 'a', content: 'é'.repeat(40) }];
      // The marker for an 80-byte result, with its blank line, takes 62 bytes.
      for (const cap of [1, 10, 61]) {
        const content = manageContext(messages, settings({ toolOutputMaxBytes: cap })).messages[0].content as string;
        expect(bytes(content)).toBeLessThanOrEqual(cap);
        expect(content).toBe('é'.repeat(Math.floor(cap / 2)));
      }
      // A cap of exactly 62 holds the marker and no text.
      const exact = manageContext(messages, settings({ toolOutputMaxBytes: 62 })).messages[0].content as string;
      expect(exact).toBe('\n\n[gateway: tool output truncated from 80 bytes; kept 0 bytes]');
      const roomy = manageContext(messages, settings({ toolOutputMaxBytes: 66 })).messages[0].content as string;
      expect(roomy).toBe('éé\n\n[gateway: tool output truncated from 80 bytes; kept 4 bytes]');
    });

    it('caps a tool message even without tool_call_id (the cap is per result, always)', () => {
      const result = manageContext([{ role: 'tool', content: 'q'.repeat(40_000) }], settings());
      expect(bytes(result.messages[0].content)).toBe(32_768);
    });
  });

  describe('compaction (docs/design/behaviours.md §5.2–§5.3)', () => {
    it('with 130 messages shrinks tool results before the boundary (96: the last 24 and up to 11 more) and keeps the tail byte-identical', () => {
      const messages = history(63, 2_000); // 2 + 126 + 1 = 129 messages; one more makes 130
      messages.push({ role: 'user', content: 'really continue' });
      expect(messages).toHaveLength(130);
      const before = JSON.stringify(messages);
      const result = manageContext(messages, settings());
      const tailStart = 96;
      expect(JSON.stringify(result.messages.slice(tailStart))).toBe(JSON.stringify(messages.slice(tailStart)));
      result.messages.slice(tailStart).forEach((message, offset) => expect(message).toBe(messages[tailStart + offset]));
      const old = result.messages.slice(0, tailStart).filter((message) => message.role === 'tool');
      expect(old.length).toBeGreaterThan(0);
      for (const message of old) {
        expect(message.content).toBe(
          'r'.repeat(512) + '\n\n[gateway: older tool output compacted from 2000 bytes; kept 512 bytes]',
        );
      }
      expect(result.stats).toEqual({
        messages: 130,
        bytes_before: 63 * 2_000,
        bytes_after: toolBytes(result.messages),
        tool_messages: 63,
        truncated: 0,
        compacted: old.length,
        images_omitted: 0,
        recent_kept: 34,
      });
      expect(JSON.stringify(messages)).toBe(before);
    });

    it('never drops, reorders or merges messages and keeps every call/result pair', () => {
      const messages = deepFreeze(history(70, 5_000));
      const result = manageContext(messages, settings());
      expect(result.messages).toHaveLength(messages.length);
      result.messages.forEach((message, index) => {
        const original = messages[index];
        expect(message.role).toBe(original.role);
        expect(message.tool_call_id).toBe(original.tool_call_id);
        expect(message.tool_calls).toBe(original.tool_calls);
        if (message.role !== 'tool') expect(message).toBe(original);
      });
      const callIds = result.messages.flatMap((message) => (message.tool_calls ?? []).map((call) => call.id));
      const resultIds = result.messages
        .filter((message) => message.role === 'tool')
        .map((message) => message.tool_call_id);
      expect(callIds).toEqual(resultIds);
      expect(result.stats!.compacted).toBeGreaterThan(0);
    });

    it('leaves a tool message without tool_call_id (or with a blank one) and a small old result alone', () => {
      const messages = history(70, 3_000);
      const orphan: ChatMessage = { role: 'tool', content: 'o'.repeat(3_000) };
      const small: ChatMessage = { role: 'tool', tool_call_id: 'call_small', content: 'tiny result' };
      const blank: ChatMessage = { role: 'tool', tool_call_id: ' \t', content: 'b'.repeat(3_000) };
      messages.splice(3, 0, orphan, small, blank);
      const result = manageContext(messages, settings());
      expect(result.messages[3]).toBe(orphan);
      expect(result.messages[4]).toBe(small);
      expect(result.messages[5]).toBe(blank);
      expect(result.stats!.compacted).toBeGreaterThan(0);
    });

    it('compacts only when that makes a result shorter', () => {
      // 600 bytes: a 512-byte prefix plus marker (≈ 580 bytes) is still shorter → compacted.
      // 560 bytes: prefix plus marker would be longer → left alone.
      const messages: ChatMessage[] = [
        { role: 'tool', tool_call_id: 'a', content: 'm'.repeat(600) },
        { role: 'tool', tool_call_id: 'b', content: 'm'.repeat(560) },
        { role: 'user', content: 'tail' },
      ];
      const result = manageContext(messages, settings({ maxMessages: 1, recentMessages: 1 }));
      expect(result.messages[0].content).toMatch(/compacted from 600 bytes; kept 512 bytes\]$/);
      expect(result.messages[1]).toBe(messages[1]);
    });

    it('never replaces a result already cut to the per-result cap with a longer compaction', () => {
      // COMPACTED_TOOL_OUTPUT_BYTES above TOOL_OUTPUT_MAX_BYTES: the compaction would be longer than the cut.
      const messages: ChatMessage[] = [
        { role: 'tool', tool_call_id: 'a', content: 'k'.repeat(5_000) },
        { role: 'user', content: 'tail' },
      ];
      const result = manageContext(
        messages,
        settings({ maxMessages: 1, recentMessages: 1, toolOutputMaxBytes: 1_000, compactedToolOutputBytes: 2_000 }),
      );
      const content = result.messages[0].content as string;
      expect(bytes(content)).toBe(1_000);
      expect(content).toMatch(/\[gateway: tool output truncated from 5000 bytes; kept \d+ bytes\]$/);
      expect(result.stats).toMatchObject({ truncated: 1, compacted: 0 });
    });

    it('compacts multi-byte text on a character boundary', () => {
      const messages: ChatMessage[] = [
        { role: 'tool', tool_call_id: 'a', content: '€'.repeat(1_000) },
        { role: 'user', content: 'tail' },
      ];
      const result = manageContext(messages, settings({ maxMessages: 1, recentMessages: 1 }));
      // 512 is not a multiple of 3: 170 whole euro signs = 510 bytes.
      expect(result.messages[0].content).toBe(
        '€'.repeat(170) + '\n\n[gateway: older tool output compacted from 3000 bytes; kept 510 bytes]',
      );
    });

    it('names the original size when an old result was also truncated', () => {
      const messages: ChatMessage[] = [
        { role: 'tool', tool_call_id: 'a', content: 'w'.repeat(40_000) },
        { role: 'user', content: 'tail' },
      ];
      const result = manageContext(messages, settings({ maxMessages: 1, recentMessages: 1 }));
      expect(result.messages[0].content).toBe(
        'w'.repeat(512) + '\n\n[gateway: older tool output compacted from 40000 bytes; kept 512 bytes]',
      );
      expect(result.stats).toMatchObject({ truncated: 1, compacted: 1, recent_kept: 1 });
    });

    it('replaces every image of an old result with a marker, and keeps those of the tail and of results without a call id', () => {
      const shot = 'data:image/png;base64,' + 'A'.repeat(100_000);
      const audio: ContentPart = { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } };
      const screenshots = (text: string): ContentPart[] => [{ type: 'text', text }, image(shot), audio, image(shot)];
      const messages: ChatMessage[] = [
        { role: 'tool', tool_call_id: 'a', content: screenshots('shot') },
        { role: 'tool', tool_call_id: 'b', content: screenshots('t'.repeat(2_000)) },
        { role: 'tool', tool_call_id: 'c', content: [image(shot)] },
        { role: 'tool', content: screenshots('no id') },
        { role: 'tool', tool_call_id: 'd', content: screenshots('tail') },
      ];
      const result = manageContext(messages, settings({ maxMessages: 1, recentMessages: 1 }));
      const omitted = { type: 'text', text: IMAGE_OMITTED };
      // Short text stays as it is; only the images go.
      expect(result.messages[0].content).toEqual([{ type: 'text', text: 'shot' }, omitted, audio, omitted]);
      // Long text is compacted as well.
      expect(result.messages[1].content).toEqual([
        {
          type: 'text',
          text: 't'.repeat(512) + '\n\n[gateway: older tool output compacted from 2000 bytes; kept 512 bytes]',
        },
        omitted,
        audio,
        omitted,
      ]);
      expect(result.messages[2].content).toEqual([omitted]);
      expect(result.messages[3]).toBe(messages[3]);
      expect(result.messages[4]).toBe(messages[4]);
      expect(result.stats).toEqual({
        messages: 5,
        bytes_before: toolBytes(messages),
        bytes_after: toolBytes(result.messages),
        tool_messages: 5,
        truncated: 0,
        compacted: 3,
        images_omitted: 5,
        recent_kept: 1,
      });
      expect(toolBytes(messages) - toolBytes(result.messages)).toBeGreaterThan(5 * 100_000);
      // Deterministic: the same input gives the same bytes.
      expect(JSON.stringify(manageContext(messages, settings({ maxMessages: 1, recentMessages: 1 })).messages)).toBe(
        JSON.stringify(result.messages),
      );
    });

    it('leaves the images of old results alone below both triggers', () => {
      const messages: ChatMessage[] = [
        {
          role: 'tool',
          tool_call_id: 'a',
          content: [{ type: 'text', text: 'shot' }, image('data:image/png;base64,AA')],
        },
        { role: 'user', content: 'tail' },
      ];
      const result = manageContext(messages, settings({ recentMessages: 1 }));
      expect(result.messages[0]).toBe(messages[0]);
      expect(result.stats).toBeUndefined();
    });

    it('does nothing below both triggers (beyond the per-result cap)', () => {
      const messages = history(10, 2_000);
      const result = manageContext(messages, settings());
      expect(result.messages).toEqual(messages);
      result.messages.forEach((message, index) => expect(message).toBe(messages[index]));
      expect(result.stats).toBeUndefined();
    });
  });

  describe('settings', () => {
    const long = () => history(20, 4_000); // 43 messages, ~82 KB serialized

    it('ENABLED=false changes nothing, not even the per-result cap', () => {
      const messages: ChatMessage[] = [{ role: 'tool', tool_call_id: 'a', content: 'x'.repeat(40_000) }];
      const result = manageContext(messages, settings({ enabled: false, maxMessages: 0, maxBytes: 1 }));
      expect(result.messages).toEqual(messages);
      expect(result.messages).not.toBe(messages);
      expect(result.stats).toBeUndefined();
    });

    it('MAX_BYTES triggers on the serialized size; 0 switches that trigger off', () => {
      const messages = long();
      const size = bytes(JSON.stringify(messages));
      expect(manageContext(messages, settings({ maxBytes: size })).stats).toBeUndefined();
      expect(manageContext(messages, settings({ maxBytes: size - 1 })).stats?.compacted).toBeGreaterThan(0);
      expect(manageContext(messages, settings({ maxBytes: 0, maxMessages: 0 })).stats).toBeUndefined();
    });

    it('MAX_MESSAGES triggers on the count; 0 switches that trigger off', () => {
      const messages = long();
      expect(manageContext(messages, settings({ maxMessages: 43 })).stats).toBeUndefined();
      expect(manageContext(messages, settings({ maxMessages: 42 })).stats?.compacted).toBeGreaterThan(0);
      expect(manageContext(messages, settings({ maxMessages: 0, maxBytes: 0 })).stats).toBeUndefined();
    });

    it('RECENT_MESSAGES sets the protected tail; 0 leaves no tail', () => {
      const messages = long();
      const toolsBefore = (boundary: number) =>
        messages.filter((message, index) => message.role === 'tool' && index < boundary).length;
      for (const recent of [0, 5, 24, 100]) {
        const result = manageContext(messages, settings({ maxMessages: 1, recentMessages: recent }));
        const boundary = compactionBoundary(messages.length, recent);
        expect(result.stats?.compacted ?? 0).toBe(toolsBefore(boundary));
        if (recent < messages.length) expect(result.stats!.recent_kept).toBe(messages.length - boundary);
      }
    });

    it('moves the boundary in steps of half RECENT_MESSAGES, keeping at least RECENT_MESSAGES behind it', () => {
      expect([24, 25, 35, 36, 47, 48].map((length) => compactionBoundary(length, 24))).toEqual([0, 0, 0, 12, 12, 24]);
      expect(compactionBoundary(130, 24)).toBe(96);
      expect(compactionBoundary(10, 0)).toBe(10);
      expect(compactionBoundary(10, 1)).toBe(9);
      for (let length = 0; length < 300; length++) {
        expect(length - compactionBoundary(length, 24)).toBeGreaterThanOrEqual(Math.min(length, 24));
        expect(length - compactionBoundary(length, 24)).toBeLessThan(36);
      }
    });

    it('keeps what it sent of a growing agent history byte-identical between the boundary moves', () => {
      const turns = Array.from({ length: 14 }, (_, turn) => manageContext(history(60 + turn, 2_000), settings()));
      const sentPrefix = (index: number, length: number) => JSON.stringify(turns[index].messages.slice(0, length));
      let unchanged = 0;
      for (let turn = 1; turn < turns.length; turn++) {
        // What the previous turn sent, but for its closing user message (the next turn has a call there).
        const previous = turns[turn - 1].messages.length - 1;
        if (sentPrefix(turn, previous) === sentPrefix(turn - 1, previous)) unchanged++;
      }
      // Each turn adds a call and its result; the boundary moves every 12 messages: every sixth turn.
      expect(unchanged).toBe(11);
    });

    it('COMPACTED_TOOL_OUTPUT_BYTES sets the kept prefix', () => {
      const messages = long();
      const result = manageContext(
        messages,
        settings({ maxMessages: 1, recentMessages: 2, compactedToolOutputBytes: 100 }),
      );
      expect(result.messages[3].content).toBe(
        'r'.repeat(100) + '\n\n[gateway: older tool output compacted from 4000 bytes; kept 100 bytes]',
      );
      const none = manageContext(
        messages,
        settings({ maxMessages: 1, recentMessages: 2, compactedToolOutputBytes: 0 }),
      );
      expect(none.messages[3].content).toBe('\n\n[gateway: older tool output compacted from 4000 bytes; kept 0 bytes]');
    });
  });

  it('triggers on the history exactly as JSON.stringify renders it, and counts the tool text, whatever it holds', () => {
    // The trigger measures message by message and stops at the bound; it must still decide as the
    // UTF-8 length of the whole serialized array does.
    const text = fc.string({ unit: 'grapheme', maxLength: 300 });
    const part = fc.oneof(
      fc.record({ type: fc.constant('text'), text }),
      fc.record({ type: fc.constant('image_url'), image_url: fc.record({ url: fc.string({ maxLength: 200 }) }) }),
      fc.record({ type: fc.constant('input_audio'), input_audio: fc.constant({ data: 'AAAA', format: 'wav' }) }),
    );
    const message = fc.oneof(
      fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: text }),
      fc.record({ role: fc.constant('tool'), tool_call_id: fc.constantFrom('c1', 'c2', ' '), content: text }),
      fc.record({
        role: fc.constant('tool'),
        content: fc.string({ unit: 'grapheme', minLength: 200, maxLength: 600 }),
      }),
      fc.record({
        role: fc.constant('tool'),
        tool_call_id: fc.constantFrom('c1', ' '),
        content: fc.array(part, { maxLength: 5 }),
      }),
    );
    const limits = fc.record({
      maxBytes: fc.nat({ max: 4_000 }),
      maxMessages: fc.nat({ max: 12 }),
      recentMessages: fc.nat({ max: 6 }),
      toolOutputMaxBytes: fc.constantFrom(0, 150, 400),
      compactedToolOutputBytes: fc.nat({ max: 100 }),
    });
    fc.assert(
      fc.property(fc.array(message, { maxLength: 16 }), limits, (messages, overrides) => {
        const result = manageContext(messages, settings(overrides));
        const serializedBefore = bytes(JSON.stringify(messages));
        if (result.stats) {
          expect(result.stats.bytes_before).toBe(toolBytes(messages));
          expect(result.stats.bytes_after).toBe(toolBytes(result.messages));
        }
        // Every part that is not text keeps its place among the others; images all stay or all
        // become the marker.
        const skeleton = (message: ChatMessage) =>
          partsOf(message).flatMap((part): (ContentPart | 'omitted')[] =>
            part.text === IMAGE_OMITTED ? ['omitted'] : textOfPart(part) === undefined ? [part] : [],
          );
        result.messages.forEach((sent, index) => {
          const kept = skeleton(messages[index]);
          const omitted = kept.map((part) => (part !== 'omitted' && isImagePart(part) ? 'omitted' : part));
          expect([kept, omitted]).toContainEqual(skeleton(sent));
        });
        // Only the byte trigger, no per-result cap: compaction ran exactly when the serialized size
        // is over the bound (a ran compaction reports its tail, even when it changed nothing it
        // could shrink, so compare with a run whose trigger surely fires).
        if (overrides.toolOutputMaxBytes === 0 && overrides.maxMessages === 0 && overrides.maxBytes > 0) {
          const forced = manageContext(messages, settings({ ...overrides, maxBytes: 1 }));
          const compactable = (forced.stats?.compacted ?? 0) > 0;
          expect((result.stats?.compacted ?? 0) > 0).toBe(compactable && serializedBefore > overrides.maxBytes);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never mutates its input', () => {
    const messages = deepFreeze([...history(70, 40_000)]);
    expect(() => manageContext(messages, settings())).not.toThrow();
  });
});

describe('utf8Prefix', () => {
  it('is the longest whole-character prefix of the UTF-8 encoding within the bound, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.nat({ max: 60 }), (text, maxBytes) => {
        const encoded = Buffer.from(text, 'utf8');
        const prefix = utf8Prefix(text, maxBytes);
        expect(prefix.bytes).toBeLessThanOrEqual(Math.max(maxBytes, 0));
        expect(Buffer.from(prefix.text, 'utf8').equals(encoded.subarray(0, prefix.bytes))).toBe(true);
        if (prefix.bytes < encoded.length) {
          // Cut on a boundary, and the next character would not have fitted.
          expect(encoded[prefix.bytes] & 0xc0).not.toBe(0x80);
          let next = prefix.bytes + 1;
          while (next < encoded.length && (encoded[next] & 0xc0) === 0x80) next++;
          expect(next).toBeGreaterThan(maxBytes);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps whole characters only', () => {
    expect(utf8Prefix('aé😀b', 0)).toEqual({ text: '', bytes: 0 });
    expect(utf8Prefix('aé😀b', 2)).toEqual({ text: 'a', bytes: 1 });
    expect(utf8Prefix('aé😀b', 3)).toEqual({ text: 'aé', bytes: 3 });
    expect(utf8Prefix('aé😀b', 6)).toEqual({ text: 'aé', bytes: 3 });
    expect(utf8Prefix('aé😀b', 7)).toEqual({ text: 'aé😀', bytes: 7 });
    expect(utf8Prefix('aé😀b', 99)).toEqual({ text: 'aé😀b', bytes: 8 });
  });
});
