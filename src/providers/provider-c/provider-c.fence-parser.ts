/** Opener of a tool-call fence (docs/upstream/provider-c.md §7): three backticks + `agent_tool_call`. */
export const FENCE_OPENER = '```agent_tool_call';
/** docs/upstream/provider-c.md §7.2 step 5: a fence body over this many UTF-8 bytes is dropped. */
export const MAX_FENCE_BODY_BYTES = 8 * 1024 * 1024;

const BACKTICK = '`';
const WHITESPACE = /\s/;
const BLANK = /^\s*$/;

/**
 * Why a fence yields no parsed object: `empty` (only white space before its closing fence: an empty
 * call, which the chat layer drops), `not_object` (words but no JSON object), `invalid_json`,
 * `too_large`, `unclosed`.
 */
export type DroppedReason = 'empty' | 'not_object' | 'invalid_json' | 'too_large' | 'unclosed';

/** What a parser produced from its input, in order. */
export type FenceOutput =
  /** Visible text for this channel. */
  | { readonly type: 'text'; readonly text: string }
  /** A complete fence whose object text parsed as JSON; `unclosed` when accepted at end of stream without its closing backticks. */
  | { readonly type: 'block'; readonly value: unknown; readonly unclosed: boolean }
  /** A fence that yields no call; `bytes` is the body size seen. Nothing of it is visible. */
  | { readonly type: 'dropped'; readonly reason: DroppedReason; readonly bytes: number };

/** One channel's parser (content or reasoning); one instance per channel per turn. */
export interface ChannelParser {
  push(delta: string): FenceOutput[];
  /** End of stream (terminal line, exit or error): releases held text, settles an open fence. */
  end(): FenceOutput[];
}

type Mode =
  /** Outside a fence; at most 17 characters (a partial opener) are held, or exactly the opener while the next character is unknown. */
  | 'text'
  /** After the opener: whitespace and stray words are skipped until `{`; a closing fence here means the fence was empty. */
  | 'before-object'
  /** Inside the JSON object: a string-aware depth scanner, so braces and backticks in strings are ignored. */
  | 'object'
  /** After the object (or after a body was given up on): waiting for the closing triple backtick. */
  | 'after-object';

/**
 * The streaming `agent_tool_call` fence parser (docs/upstream/provider-c.md §7). Incremental: every input
 * character is examined once; the scanner keeps its position (depth, string and escape state)
 * between deltas, so nothing is rescanned. Hand-written because this text protocol is ours.
 */
export class FenceParser implements ChannelParser {
  private mode: Mode = 'text';
  private held = '';
  /**
   * Whitespace-only text since the start or the last fence, not yet shown: it is only the gap
   * around a fence (`"\n"` between two blocks) unless real text follows (docs/upstream/provider-c.md §7.1).
   */
  private gap = '';
  /** Text other than whitespace was shown since the last fence (or the start). */
  private shownSinceFence = false;
  private sawFence = false;
  // Fence state (reset at every opener).
  private objectParts: string[] = [];
  private depth = 0;
  private inString = false;
  private escaped = false;
  private backticks = 0;
  private bodyBytes = 0;
  private tooLarge = false;
  /** after-object: the parsed object, or undefined when it was dropped (invalid or too large). */
  private pendingValue: { value: unknown } | undefined;
  /** after-object: something other than whitespace and backticks came before the close. */
  private junkAfterObject = false;
  /** before-object: something other than whitespace came (a stray word): the fence is not empty. */
  private strayBeforeObject = false;

  constructor(private readonly maxBodyBytes: number = MAX_FENCE_BODY_BYTES) {}

  push(delta: string): FenceOutput[] {
    const output = new OutputList();
    let rest = delta;
    while (rest !== '') rest = this.mode === 'text' ? this.consumeText(rest, output) : this.consumeFence(rest, output);
    return output.items;
  }

  end(): FenceOutput[] {
    const output = new OutputList();
    if (this.mode === 'text') {
      this.show(this.held, output);
      // Whitespace after the last fence is no answer; an answer with no fence keeps it.
      if (!this.sawFence) output.text(this.gap);
    } else if (this.mode === 'after-object' && this.pendingValue && !this.junkAfterObject) {
      output.push({ type: 'block', value: this.pendingValue.value, unclosed: true });
    } else {
      // A body already reported as too large or as broken JSON is not reported twice.
      const alreadyDropped = this.tooLarge || (this.mode === 'after-object' && !this.pendingValue);
      if (!alreadyDropped) output.push({ type: 'dropped', reason: 'unclosed', bytes: this.bodyBytes });
    }
    this.mode = 'text';
    this.held = '';
    this.gap = '';
    this.objectParts = [];
    return output.items;
  }

  /** docs/upstream/provider-c.md §7.1: emit text up to a real opener, hold a possible partial opener, else emit everything. */
  private consumeText(input: string, output: OutputList): string {
    const buffer = this.held + input;
    this.held = '';
    let from = 0;
    for (;;) {
      const index = buffer.indexOf(FENCE_OPENER, from);
      if (index === -1) break;
      const after = index + FENCE_OPENER.length;
      if (after === buffer.length) {
        // `agent_tool_call` or `agent_tool_calls`? Undecided until the next character arrives.
        this.show(buffer.slice(0, index), output);
        this.held = buffer.slice(index);
        return '';
      }
      const next = buffer[after];
      if (next === '{' || WHITESPACE.test(next)) {
        this.show(buffer.slice(0, index), output);
        this.enterFence();
        return buffer.slice(after);
      }
      // `agent_tool_calls`, `agent_tool_call_v2`…: ordinary text; keep searching after it.
      from = index + 1;
    }
    const holdLength = partialOpenerLength(buffer);
    this.show(buffer.slice(0, buffer.length - holdLength), output);
    this.held = buffer.slice(buffer.length - holdLength);
    return '';
  }

  /** Visible text, except whitespace that so far only borders a fence (held in `gap` until real text follows). */
  private show(text: string, output: OutputList): void {
    if (this.shownSinceFence) {
      output.text(text);
    } else if (BLANK.test(text)) {
      this.gap += text;
    } else {
      output.text(this.gap + text);
      this.gap = '';
      this.shownSinceFence = true;
    }
  }

  private enterFence(): void {
    // Whitespace right before a block is dropped with it unless real text came before.
    this.gap = '';
    this.shownSinceFence = false;
    this.sawFence = true;
    this.mode = 'before-object';
    this.objectParts = [];
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.backticks = 0;
    this.bodyBytes = 0;
    this.tooLarge = false;
    this.pendingValue = undefined;
    this.junkAfterObject = false;
    this.strayBeforeObject = false;
  }

  /** docs/upstream/provider-c.md §7.2: consume fence body characters; returns the input left after the fence closed. */
  private consumeFence(input: string, output: OutputList): string {
    let objectStart = this.mode === 'object' ? 0 : -1;
    let countedTo = 0;
    // Body bytes are counted at checkpoints (fence closed, object complete, end of delta).
    const count = (upTo: number) => {
      this.bodyBytes += Buffer.byteLength(input.slice(countedTo, upTo), 'utf8');
      countedTo = upTo;
      if (!this.tooLarge && this.bodyBytes > this.maxBodyBytes) {
        this.tooLarge = true;
        this.objectParts = [];
        this.pendingValue = undefined;
        output.push({ type: 'dropped', reason: 'too_large', bytes: this.bodyBytes });
      }
    };
    for (let index = 0; index < input.length; index++) {
      const character = input[index];
      if (this.mode === 'before-object') {
        if (character === BACKTICK) {
          if (++this.backticks === 3) {
            count(index + 1);
            const reason = this.strayBeforeObject ? 'not_object' : 'empty';
            if (!this.tooLarge) output.push({ type: 'dropped', reason, bytes: this.bodyBytes });
            this.mode = 'text';
            return input.slice(index + 1);
          }
          continue;
        }
        // Backticks that closed nothing are a stray word too.
        if (this.backticks > 0) this.strayBeforeObject = true;
        this.backticks = 0;
        if (character === '{') {
          this.mode = 'object';
          this.depth = 1;
          objectStart = index;
        } else if (!WHITESPACE.test(character)) {
          this.strayBeforeObject = true;
        }
        // Whitespace, and a stray word the model wrote before the JSON, are discarded.
        continue;
      }
      if (this.mode === 'object') {
        if (this.escaped) {
          this.escaped = false;
        } else if (this.inString) {
          if (character === '\\') this.escaped = true;
          else if (character === '"') this.inString = false;
        } else if (character === '"') {
          this.inString = true;
        } else if (character === '{' || character === '[') {
          this.depth++;
        } else if ((character === '}' || character === ']') && --this.depth === 0) {
          if (!this.tooLarge) this.objectParts.push(input.slice(objectStart, index + 1));
          objectStart = -1;
          count(index + 1);
          this.settleObject(output);
        }
        continue;
      }
      // after-object: whitespace, then the closing triple backtick; anything else is discarded
      // up to and including the next triple backtick (we are outside any JSON string now).
      if (character === BACKTICK) {
        if (++this.backticks === 3) {
          count(index + 1);
          if (this.pendingValue) output.push({ type: 'block', value: this.pendingValue.value, unclosed: false });
          this.mode = 'text';
          return input.slice(index + 1);
        }
        continue;
      }
      if (this.backticks > 0 || !WHITESPACE.test(character)) this.junkAfterObject = true;
      this.backticks = 0;
    }
    if (objectStart !== -1 && !this.tooLarge) this.objectParts.push(input.slice(objectStart));
    count(input.length);
    return '';
  }

  /** The object's depth returned to zero: parse it, unless the body already went over the cap. */
  private settleObject(output: OutputList): void {
    this.mode = 'after-object';
    this.backticks = 0;
    this.junkAfterObject = false;
    const text = this.objectParts.join('');
    this.objectParts = [];
    if (this.tooLarge) return;
    try {
      this.pendingValue = { value: JSON.parse(text) as unknown };
    } catch {
      output.push({ type: 'dropped', reason: 'invalid_json', bytes: this.bodyBytes });
    }
  }
}

/** Length of the longest suffix of `buffer` that is a proper prefix of the opener (0–17). */
function partialOpenerLength(buffer: string): number {
  for (let length = Math.min(FENCE_OPENER.length - 1, buffer.length); length > 0; length--) {
    if (FENCE_OPENER.startsWith(buffer.slice(buffer.length - length))) return length;
  }
  return 0;
}

/** Collects outputs, merging adjacent text pieces and dropping empty ones. */
class OutputList {
  readonly items: FenceOutput[] = [];

  text(text: string): void {
    if (text === '') return;
    const last = this.items[this.items.length - 1];
    if (last?.type === 'text') this.items[this.items.length - 1] = { type: 'text', text: last.text + text };
    else this.items.push({ type: 'text', text });
  }

  push(item: FenceOutput): void {
    if (item.type === 'text') this.text(item.text);
    else this.items.push(item);
  }
}
