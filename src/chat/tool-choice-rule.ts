import type { ChatEvent, PolledEvents, ToolCallEvent } from '../core/chat-event';
import { isEmptyToolCall, isRefusalFinish, unfinishedTurn } from '../core/chat-event';
import { forcedToolName } from '../core/chat-message';
import type { EventLogger } from '../core/event-logger';
import { GatewayError } from '../core/gateway.error';
import { toolCallProblem } from './chat-completion.renderer';
import { quoted } from '../core/quoted';
import type { StrictTools } from './strict-tools';

/*
 * A `tool_choice` the gateway enforces itself, for families whose upstream takes it only as an
 * instruction to the model (their `tool_choice` fate is `enforced`: chat-parameters.ts).
 * `required` asks for at least one tool call, a forced tool for a call of that tool. A call of
 * another tool than the forced one never reaches the client. An answer without the call asked for
 * is asked again, within the bound of a held `response_format` (MAX_JSON_ATTEMPTS), then refused
 * with 422 `output_validation_failed` saying which call was missing.
 *
 * Text cannot be taken back once streamed, so nothing is: what the answer says before the call
 * (text, reasoning) is held until a call that meets the choice arrived; only then is the turn
 * written, the held part first and the rest as it comes. A stream's headers are held too, until a
 * keep-alive comment must go out (the orchestrator's HeldAnswerKeepAlive). An answer asked again
 * was never seen by the client. Tool calls reach the ToolCallCollector as before, which writes
 * them at the end of the turn. An answer the upstream's safety system stopped (`content_filter`)
 * is not asked again: asking bills another turn for what was refused, so it is the answer. A call
 * the gateway holds to its strict tool's schema (strict-tools.ts) meets the choice only when the
 * schema accepts it: the answer is held, so it can be asked again rather than failed. With strict
 * tools the orchestrator holds the whole answer (`select`), so a refused call after the one that
 * met the choice has it asked again too.
 */

/** What a turn read up to the call the choice asks for amounts to. */
export type ToolChoiceVerdict =
  /** The call arrived: the turn to write, from its start, calls of other tools left out. */
  | { readonly kind: 'answer'; readonly events: PolledEvents }
  /** The turn failed upstream before the call: nothing was written, so it is answered with its own status. */
  | { readonly kind: 'failed'; readonly error: GatewayError }
  /** The turn ended without the call (and was not refused): worth asking again. */
  | { readonly kind: 'unmet' };

/** A buffered turn as the choice reads it (`select`). */
export interface ChosenTurn {
  /** The turn without the calls the choice does not admit. */
  readonly events: ChatEvent[];
  /** It holds a call that meets the choice. */
  readonly met: boolean;
  /** It holds an admitted call its strict tool's schema refuses. */
  readonly offSchema: boolean;
}

/** How dropped calls are reported: the request's logger (no closure per turn). */
type DropLogger = Pick<EventLogger, 'warn'>;

export class ToolChoiceRule {
  /**
   * The rule for a `tool_choice`; undefined when it asks for no call (absent, `auto`, `none`).
   * `strict`: the request's strict tools the gateway holds calls to (strict-tools.ts).
   */
  static of(toolChoice: unknown, strict?: StrictTools): ToolChoiceRule | undefined {
    if (toolChoice === 'required') return new ToolChoiceRule(undefined, strict);
    const forced = forcedToolName(toolChoice);
    return forced === undefined ? undefined : new ToolChoiceRule(forced, strict);
  }

  /** `forced`: the one tool a forced choice names; undefined for `required`. */
  private constructor(
    private readonly forced: string | undefined,
    private readonly strict: StrictTools | undefined,
  ) {}

  /**
   * Whether the call may reach the client: any call for `required`, only the forced tool's for a
   * forced choice. An empty call passes, for the collector to drop it as it drops every empty call;
   * it never meets the choice.
   */
  private admits(call: ToolCallEvent): boolean {
    return this.forced === undefined || call.name === this.forced || isEmptyToolCall(call);
  }

  /** Whether the call may reach the client, a call left out reported as `tool_call_unchosen`. */
  passes(call: ToolCallEvent, logger: DropLogger): boolean {
    if (this.admits(call)) return true;
    logger.warn({ event: 'tool_call_unchosen' }, 'tool_call_unchosen');
    return false;
  }

  /**
   * How the call answers the choice: it meets it when admitted and one the collector passes on. An
   * admitted call its strict tool's schema refuses would fail the answer there, so it does not
   * (`off_schema`), and the answer is asked again like one without the call.
   */
  private readingOf(call: ToolCallEvent): 'meets' | 'off_schema' | 'misses' {
    if (!this.admits(call) || toolCallProblem(call) !== undefined) return 'misses';
    return this.strict?.accepts(call) === false ? 'off_schema' : 'meets';
  }

  /**
   * Reads a turn until a call that meets the choice, holding everything before it; the turn's
   * events are not closed here (the caller owns them).
   */
  async hold(events: PolledEvents, logger: DropLogger): Promise<ToolChoiceVerdict> {
    const held: ChatEvent[] = [];
    for (;;) {
      const event = events.poll?.() ?? (await nextEvent(events));
      if (event === undefined) return { kind: 'failed', error: unfinishedTurn() };
      if (event.type === 'error') return { kind: 'failed', error: event.error };
      if (isRefusalFinish(event))
        return { kind: 'answer', events: new ChosenEvents([...held, event], events, this, logger) };
      if (event.type === 'finish') return { kind: 'unmet' };
      if (event.type === 'tool-call' && !this.passes(event.call, logger)) continue;
      held.push(event);
      if (event.type === 'tool-call' && this.readingOf(event.call) === 'meets')
        return { kind: 'answer', events: new ChosenEvents(held, events, this, logger) };
    }
  }

  /**
   * A whole buffered turn (one held to `response_format` or for strict calls too) without the
   * calls the choice does not admit, whether it holds a call that meets the choice, and whether
   * it holds an admitted call its strict tool's schema refuses.
   */
  select(events: readonly ChatEvent[], logger: DropLogger): ChosenTurn {
    let met = false;
    let offSchema = false;
    const kept = events.filter((event) => {
      if (event.type !== 'tool-call') return true;
      if (!this.passes(event.call, logger)) return false;
      const reading = this.readingOf(event.call);
      met ||= reading === 'meets';
      offSchema ||= reading === 'off_schema';
      return true;
    });
    return { events: kept, met, offSchema };
  }

  /**
   * The refusal once every attempt answered without the call: what was missing (`offSchema`: the
   * last answer's call was refused by its strict schema) and what the client can do.
   */
  unmet(attempts: number, offSchema = false): GatewayError {
    const asked = offSchema
      ? this.forced === undefined
        ? `the model's tool calls had arguments their strict tools' parameters schemas refuse in ${attempts} attempts, though tool_choice "required" asks for a call`
        : `the model's calls of the tool ${quoted(this.forced, 64)} that tool_choice forces had arguments its strict parameters schema refuses in ${attempts} attempts`
      : this.forced === undefined
        ? `the model answered without a tool call in ${attempts} attempts, though tool_choice "required" asks for one`
        : `the model did not call the tool ${quoted(this.forced, 64)} that tool_choice forces in ${attempts} attempts`;
    const simpler = offSchema ? ', make the schema simpler or say in the messages what to pass' : '';
    return new GatewayError('output_validation_failed', {
      param: 'tool_choice',
      publicMessage: `${asked}; send the request again${simpler}, or send tool_choice "auto" to take the model's answer as it comes`,
      // A forced choice's message names the client's tool.
      quotesRequest: this.forced !== undefined,
    });
  }
}

async function nextEvent(events: PolledEvents): Promise<ChatEvent | undefined> {
  const step = await events.next();
  return step.done ? undefined : step.value;
}

/**
 * A turn whose call met the choice, as the renderer reads it: the held events first, then the rest
 * of the turn, calls the choice does not admit left out. `return` closes the turn.
 */
class ChosenEvents implements PolledEvents {
  private heldRead = 0;

  constructor(
    private readonly held: readonly ChatEvent[],
    private readonly source: PolledEvents,
    private readonly rule: ToolChoiceRule,
    private readonly logger: DropLogger,
  ) {}

  async next(): Promise<IteratorResult<ChatEvent>> {
    if (this.heldRead < this.held.length) return { done: false, value: this.held[this.heldRead++] };
    for (;;) {
      const step = await this.source.next();
      if (step.done || this.passes(step.value)) return step;
    }
  }

  poll(): ChatEvent | undefined {
    if (this.heldRead < this.held.length) return this.held[this.heldRead++];
    for (let event = this.source.poll?.(); event !== undefined; event = this.source.poll?.()) {
      if (this.passes(event)) return event;
    }
    return undefined;
  }

  async return(): Promise<IteratorResult<ChatEvent>> {
    return (await this.source.return?.()) ?? { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): PolledEvents {
    return this;
  }

  private passes(event: ChatEvent): boolean {
    return event.type !== 'tool-call' || this.rule.passes(event.call, this.logger);
  }
}
