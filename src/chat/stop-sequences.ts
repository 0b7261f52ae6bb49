import type { ChatEvent } from '../core/chat-event';

/**
 * Finds the first of a request's stop sequences in streamed answer text, for families whose
 * upstream cannot stop by itself (the parameter table in chat-parameters.ts, `stop`). Text that cannot be the start of
 * a match is released at once; only the longest suffix that could still grow into a match is held
 * back, so a stop sequence split across two deltas never reaches the client and nothing else is
 * delayed longer than it must be.
 */
export class StopSequenceMatcher {
  private held = '';
  private matched = false;

  constructor(private readonly stops: readonly string[]) {}

  /** True once a stop sequence was found: nothing after it may be written. */
  get stopped(): boolean {
    return this.matched;
  }

  /** One delta in; the text that is safe to write now (everything before a match, when one is found). */
  push(delta: string): string {
    if (this.matched) return '';
    const text = this.held + delta;
    let first = -1;
    for (const stop of this.stops) {
      const at = text.indexOf(stop);
      if (at >= 0 && (first < 0 || at < first)) first = at;
    }
    if (first >= 0) {
      this.matched = true;
      this.held = '';
      return text.slice(0, first);
    }
    const keep = this.partialSuffix(text);
    this.held = keep > 0 ? text.slice(text.length - keep) : '';
    return keep > 0 ? text.slice(0, text.length - keep) : text;
  }

  /** The held-back text when the answer ended without a match. */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }

  /** Length of the longest suffix of `text` that is a proper prefix of some stop sequence (0: none). */
  private partialSuffix(text: string): number {
    let longest = 0;
    for (const stop of this.stops) {
      for (let length = Math.min(stop.length - 1, text.length); length > longest; length--) {
        if (startsAt(text, text.length - length, stop)) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}

/** Whether `text` from `start` to its end equals the same number of leading characters of `stop` (no copies). */
function startsAt(text: string, start: number, stop: string): boolean {
  for (let index = start; index < text.length; index++)
    if (text.charCodeAt(index) !== stop.charCodeAt(index - start)) return false;
  return true;
}

/**
 * A request's stop sequences as the gateway enforces them (docs/chat.md "Stop sequences"): each
 * attempt of a turn gets its own cut, before anything judges or writes it.
 */
export class StopRule {
  /**
   * `callsMayFollow`: the request offers the model tools it may call. A stop sequence cuts the
   * answer's text, never a tool call: the turn is then read to its end after a match, for the calls.
   */
  constructor(
    readonly stops: readonly string[],
    private readonly callsMayFollow: boolean,
  ) {}

  /** One attempt's events cut at the first match; `matcher.stopped` tells afterwards whether one was found. */
  cut(events: AsyncIterable<ChatEvent>, matcher = new StopSequenceMatcher(this.stops)): AsyncGenerator<ChatEvent> {
    return stopAtSequences(events, matcher, this.callsMayFollow);
  }
}

/**
 * An adapter's events with the answer's text cut before the first stop sequence. Without calls to
 * wait for, the turn ends there: `finish: stop`, and the upstream turn is closed (leaving the loop
 * returns the source iterator). With them, the rest of the turn is read for its tool calls, usage
 * and end: text and reasoning after the match are dropped, and the finish is `stop` (the renderer
 * makes it `tool_calls` when a call came), or the upstream's error, or its refusal
 * (`content_filter`, which a held answer never asks again). Held-back text that turned out not to be
 * a match is written before the finish or error that ends the turn. Reasoning before the match is
 * never cut: stop sequences apply to the answer.
 */
export async function* stopAtSequences(
  events: AsyncIterable<ChatEvent>,
  matcher: StopSequenceMatcher,
  callsMayFollow: boolean,
): AsyncGenerator<ChatEvent> {
  for await (const event of events) {
    if (matcher.stopped) {
      if (event.type === 'text-delta' || event.type === 'reasoning-delta') continue;
      yield event.type === 'finish' && event.reason !== 'content_filter' ? STOPPED : event;
      if (event.type === 'finish' || event.type === 'error') return;
      continue;
    }
    if (event.type === 'text-delta') {
      const text = matcher.push(event.text);
      if (text !== '') yield { type: 'text-delta', text };
      if (matcher.stopped && !callsMayFollow) {
        yield STOPPED;
        return;
      }
      continue;
    }
    if (event.type === 'finish' || event.type === 'error') {
      const rest = matcher.flush();
      if (rest !== '') yield { type: 'text-delta', text: rest };
    }
    yield event;
  }
  const rest = matcher.flush();
  if (rest !== '') yield { type: 'text-delta', text: rest };
}

const STOPPED: ChatEvent = { type: 'finish', reason: 'stop' };
