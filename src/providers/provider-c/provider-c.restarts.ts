import type { ChatEvent, ToolCallEvent } from '../../core/chat-event';
import { GatewayError } from '../../core/gateway.error';
import type { Channel } from './provider-c.tool-calls';

/**
 * docs/upstream/provider-c.md §6.1: when the API's stream breaks mid-answer, Claude Code gives up
 * the blocks it streamed from some index on (`abandoned_blocks` on the `message_stop` it prints
 * itself) and answers again: the same request without streaming (one whole `assistant` message
 * under a new id) or a new streamed message that resumes after the blocks it kept.
 *
 * This is the text the client was sent of a streamed message, per channel, and how far the CLI's
 * current answer has reproduced it. Normally the answer is "live": its text goes out at once.
 * After a restart the answer is rewound to where the abandoned blocks began: the text it writes
 * again is compared with what was sent and not sent twice, and once it has caught up it is live
 * again. An answer that writes other text has diverged: what the client holds cannot be taken back,
 * so the turn ends with `restartFailure`. Tool calls reach a client only at the turn's end, so a
 * streamed message's calls are kept until it ends and those of abandoned blocks dropped.
 * Non-streaming turns hold every output until the end instead, so a restart simply drops the
 * abandoned part.
 *
 * docs/upstream/provider-c.md §6.2: an answer that ended without any text is asked again by the
 * CLI, which takes the new answer. That is a restart of the whole message (`retry`), compared
 * leniently: the new answer is a fresh one, so writing other text than was sent is no failure.
 * While it repeats what was sent, it is held; once it writes something else, what it held and the
 * rest go out after what was sent, whole; when it stops short, what it held was only a repeat.
 */

/** One text piece sent on a channel. Tool calls are never sent mid-answer: the client gets them at its end. */
interface Sent {
  readonly text: string;
}

/** A place in a channel's sent outputs: before `item`, `offset` characters into it when it is text. */
interface Position {
  readonly item: number;
  readonly offset: number;
}

/** Where the answer stood when a block started: what a restart from that block rewinds to. */
export interface RestartMark {
  readonly positions: Readonly<Record<Channel, Position>>;
  /** Where each channel's lenient replay began, while one is under way. */
  readonly lenientFrom: Readonly<Record<Channel, Position | undefined>>;
  /** How many outputs a non-streaming turn held. */
  readonly held: number;
  /** How many tool calls of the open streamed message were kept. */
  readonly calls: number;
}

const START: Position = { item: 0, offset: 0 };
const CHANNELS: readonly Channel[] = ['content', 'reasoning'];

export class AnswerRestarts {
  private readonly sent: Record<Channel, Sent[]> = { content: [], reasoning: [] };
  /** How far the current answer reproduced `sent`; at its end the channel is live. */
  private readonly replayed: Record<Channel, Position> = { content: START, reasoning: START };
  /** A channel replayed leniently (after `retry`): from where what it reproduced is held, not dropped. */
  private readonly lenientFrom: Record<Channel, Position | undefined> = { content: undefined, reasoning: undefined };
  /** A streamed message is open: what goes out now may be abandoned, so it is kept. */
  private recording = false;
  /** Outputs of a non-streaming turn, released when it ends. */
  private readonly held: ChatEvent[] = [];
  /**
   * Tool calls of the open streamed message. Clients get tool calls only once the turn ended, so
   * none is out yet: a call the CLI abandons is dropped, and the new answer's calls count instead.
   */
  private readonly calls: ChatEvent[] = [];
  /** The answer wrote something other than what was sent. */
  diverged = false;

  constructor(private readonly holdUntilEnd: boolean) {}

  /** A streamed message starts: what it sends may be abandoned, so it is kept. */
  messageStarted(): void {
    this.recording = true;
  }

  /**
   * The streamed message ended, whole or cut (`rewound`: after `rewind`, when the CLI abandoned
   * some of it): its kept tool calls go out, and once the answer is live again, what was kept is
   * dropped. A whole message that repeated only part of what was sent leniently wrote nothing new:
   * the rest of what was sent stays the answer's.
   */
  messageEnded(rewound: boolean): ChatEvent[] {
    this.recording = false;
    if (!rewound) for (const channel of CHANNELS) if (this.lenientFrom[channel]) this.goLive(channel);
    this.forgetSettled();
    return this.calls.splice(0);
  }

  mark(): RestartMark {
    return {
      positions: { ...this.replayed },
      lenientFrom: { ...this.lenientFrom },
      held: this.held.length,
      calls: this.calls.length,
    };
  }

  /** The CLI gave up what `channels` got since `mark`: it must be written again before anything new goes out. */
  rewind(mark: RestartMark, channels: readonly Channel[]): void {
    if (this.holdUntilEnd) {
      this.held.length = Math.min(this.held.length, mark.held);
      return;
    }
    for (const channel of channels) {
      this.replayed[channel] = mark.positions[channel];
      this.lenientFrom[channel] = mark.lenientFrom[channel];
    }
    this.calls.length = Math.min(this.calls.length, mark.calls);
  }

  /**
   * The CLI asks again for the answer that started at `mark` and ended without text: all of it is
   * given up, and what it sent is replayed leniently by the new answer (docs/upstream/provider-c.md §6.2).
   */
  retry(mark: RestartMark): void {
    this.rewind(mark, CHANNELS);
    if (this.holdUntilEnd) return;
    for (const channel of CHANNELS) if (!this.live(channel)) this.lenientFrom[channel] ??= this.replayed[channel];
  }

  /** The events of a text output: sent, held, or nothing when it only repeats what was sent. */
  text(channel: Channel, text: string): ChatEvent[] {
    const event: ChatEvent = channel === 'content' ? { type: 'text-delta', text } : { type: 'reasoning-delta', text };
    if (this.holdUntilEnd) return this.hold(event);
    const rest = this.replayText(channel, text);
    if (rest === '') return [];
    this.record(channel, { text: rest });
    return [rest === text ? event : { ...event, text: rest }];
  }

  /** The events of a tool call: at once, or kept until its streamed message ends, or held to the turn's end. */
  call(call: ToolCallEvent): ChatEvent[] {
    const event: ChatEvent = { type: 'tool-call', call };
    if (this.holdUntilEnd) return this.hold(event);
    if (this.diverged) return [];
    if (!this.recording) return [event];
    this.calls.push(event);
    return [];
  }

  /** What the turn kept, once it ends well: a non-streaming turn's outputs, an unended message's calls. */
  release(): ChatEvent[] {
    return [...this.held.splice(0), ...this.calls.splice(0)];
  }

  /**
   * At the end of the turn: why what the client was sent is not the answer (it diverged, or the
   * answer stopped short of what was sent), else undefined.
   */
  restartFailure(): GatewayError | undefined {
    if (!this.diverged && CHANNELS.every((channel) => this.live(channel) || this.lenientFrom[channel]))
      return undefined;
    return new GatewayError('upstream', {
      detail: this.diverged
        ? 'the Claude Code CLI restarted an answer after the API stream broke, and the new answer does not continue what the client was already sent'
        : 'the Claude Code CLI restarted an answer after the API stream broke, and the new answer is shorter than what the client was already sent',
      publicMessage:
        "provider_c: the upstream's answer broke off mid-stream and the Claude Code CLI wrote a different one; the part already sent cannot be taken back, so send the request again",
    });
  }

  private live(channel: Channel): boolean {
    return this.replayed[channel].item === this.sent[channel].length;
  }

  /**
   * `text` compared with what was sent at the replay position: the part beyond it ('' when it is
   * all a repeat). A lenient replay that writes something else releases what it held with `text`.
   */
  private replayText(channel: Channel, text: string): string {
    if (this.diverged) return '';
    const sent = this.sent[channel];
    let { item, offset } = this.replayed[channel];
    let rest = text;
    while (rest !== '' && item < sent.length) {
      const expected = sent[item];
      const length = Math.min(rest.length, expected.text.length - offset);
      if (rest.slice(0, length) !== expected.text.slice(offset, offset + length)) {
        const from = this.lenientFrom[channel];
        if (!from) return this.divergeText();
        const held = this.sentBetween(channel, from, this.replayed[channel]);
        this.goLive(channel);
        return held + text;
      }
      rest = rest.slice(length);
      offset += length;
      if (offset === expected.text.length) {
        item++;
        offset = 0;
      }
    }
    this.replayed[channel] = { item, offset };
    if (this.live(channel)) this.lenientFrom[channel] = undefined;
    return rest;
  }

  /** The text sent on `channel` between two places in it. */
  private sentBetween(channel: Channel, from: Position, to: Position): string {
    let text = '';
    for (let item = from.item; item <= to.item && item < this.sent[channel].length; item++) {
      const whole = this.sent[channel][item].text;
      text += whole.slice(item === from.item ? from.offset : 0, item === to.item ? to.offset : whole.length);
    }
    return text;
  }

  /** The channel's replay is over: what comes next is new. */
  private goLive(channel: Channel): void {
    this.replayed[channel] = { item: this.sent[channel].length, offset: 0 };
    this.lenientFrom[channel] = undefined;
  }

  private record(channel: Channel, output: Sent): void {
    if (!this.recording) return;
    this.sent[channel].push(output);
    this.replayed[channel] = { item: this.sent[channel].length, offset: 0 };
  }

  /** Outputs of ended messages can no longer be abandoned: dropped once every channel is live. */
  private forgetSettled(): void {
    if (!CHANNELS.every((channel) => this.live(channel))) return;
    for (const channel of CHANNELS) {
      this.sent[channel] = [];
      this.replayed[channel] = START;
    }
  }

  private hold(event: ChatEvent): ChatEvent[] {
    this.held.push(event);
    return [];
  }

  private divergeText(): string {
    this.diverged = true;
    return '';
  }
}
