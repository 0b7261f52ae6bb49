import { sha256Hex } from '../common/hashing';
import { parseJsonObjectOutput } from '../common/json-schema/json-object-output';
import type { OutputValidator } from '../common/json-schema/output-validator';
import { uncheckableSchema } from '../common/json-schema/checkable-schema';
import type { ChatEvent } from '../core/chat-event';
import { isEmptyToolCall, isRefusalFinish, unfinishedTurn } from '../core/chat-event';
import type { ChatMessage } from '../core/chat-message';
import { GatewayError } from '../core/gateway.error';
import type { ResponseFormat } from '../providers/shared/provider-adapter';

/*
 * A `response_format` the gateway enforces itself, for families whose upstream has no JSON switch
 * (their `response_format` fate is `enforced`: chat-parameters.ts). The format goes to the model
 * as a last system message; the answer is buffered whole, read as one JSON object and checked with
 * the structured route's Ajv validator before anything is written, and the turn is asked again
 * when it fails. So a client gets a schema-valid object or an error, never prose passed off as JSON.
 *
 * A family whose upstream holds the model to the format (its fate is `honoured`) but whose `stop`
 * the gateway cuts has its JSON answer held too when the request sends both: a stop sequence inside
 * the object would cut it short. There the model gets no instruction and the schema is left to the
 * upstream; an answer the cut left a whole JSON object goes out as it came.
 */

/** Attempts per chat turn: one and up to 2 more, as the structured endpoint's upstream attempts. */
export const MAX_JSON_ATTEMPTS = 3;

/** What a buffered turn amounts to. */
export type JsonVerdict =
  /** Events to write: the answer reduced to the JSON object, the model's tool calls untouched, or a refusal as it came. */
  | { readonly kind: 'answer'; readonly events: readonly ChatEvent[] }
  /** The turn failed upstream: nothing was written, so it is answered with its own status. */
  | { readonly kind: 'failed'; readonly error: GatewayError }
  /** Not a JSON object, or not one the schema accepts: worth asking again. */
  | { readonly kind: 'invalid' };

export class JsonAnswer {
  /** The validator's cache key: one compiled validator per schema text. */
  private readonly schemaKey: string | undefined;

  /** `heldUpstream`: the upstream holds the model to the format; the gateway checks only what its stop cut left. */
  constructor(
    private readonly format: ResponseFormat,
    private readonly validator: OutputValidator,
    private readonly heldUpstream = false,
  ) {
    this.schemaKey =
      format.type === 'json_schema' && !heldUpstream ? sha256Hex(JSON.stringify(format.schema)) : undefined;
  }

  /**
   * Why the schema cannot be used, as the 400 to answer before the queue and any upstream call,
   * or undefined (common/json-schema/checkable-schema.ts: the size bounds, a property no answer
   * can be checked for, then what Ajv finds wrong compiling it).
   */
  schemaRefusal(): GatewayError | undefined {
    if (this.schemaKey === undefined || this.format.type !== 'json_schema') return undefined;
    const uncheckable = uncheckableSchema(this.format.schema, this.schemaKey, this.validator);
    if (uncheckable === undefined) return undefined;
    const fix = uncheckable.fix === undefined ? '' : `; ${uncheckable.fix} (docs/chat.md "Structured output")`;
    return new GatewayError('invalid_request', {
      param: 'response_format',
      publicMessage: `response_format.json_schema.schema ${uncheckable.problem}${fix}`,
      // The words name the schema's own keys.
      quotesRequest: true,
    });
  }

  /** The instruction the model gets, after the conversation (our own words; the schema as sent); none when held upstream. */
  instruction(): ChatMessage | undefined {
    if (this.heldUpstream) return undefined;
    const rule = 'Answer with exactly one JSON object and nothing else: no text before or after it, no code fences.';
    const content =
      this.format.type === 'json_schema'
        ? `${rule} The object must satisfy this JSON Schema (named ${this.format.name}):\n${JSON.stringify(this.format.schema)}`
        : rule;
    return { role: 'system', content };
  }

  /** Judges one whole turn (events up to its finish or error); `cut`: a stop sequence ended its text. */
  judge(events: readonly ChatEvent[], cut = false): JsonVerdict {
    let text = '';
    let ended = false;
    for (const event of events) {
      if (event.type === 'error') return { kind: 'failed', error: event.error };
      // A tool call is the model's answer too; its arguments are checked by the renderer as always.
      // An empty one is no answer: the renderer drops it, so the text is what is judged.
      if (event.type === 'tool-call' && !isEmptyToolCall(event.call)) return { kind: 'answer', events };
      // So is a refusal: the safety system stopped the answer, and asking again bills what was refused.
      if (isRefusalFinish(event)) return { kind: 'answer', events };
      if (event.type === 'text-delta') text += event.text;
      if (event.type === 'finish') ended = true;
    }
    if (!ended) return { kind: 'failed', error: unfinishedTurn() };
    if (this.heldUpstream && !cut) return { kind: 'answer', events };
    const parsed = parseJsonObjectOutput(text);
    if (!parsed.ok) return { kind: 'invalid' };
    if (this.heldUpstream) return { kind: 'answer', events };
    if (
      this.format.type === 'json_schema' &&
      !this.validator.check(this.schemaKey!, this.format.schema, parsed.value).valid
    )
      return { kind: 'invalid' };
    // Only the object goes out: reasoning first, then the JSON text, then usage and finish.
    const reasoning = events.filter((event) => event.type === 'reasoning-delta');
    const rest = events.filter((event) => event.type !== 'reasoning-delta' && event.type !== 'text-delta');
    return {
      kind: 'answer',
      events: [...reasoning, { type: 'text-delta', text: JSON.stringify(parsed.value) }, ...rest],
    };
  }
}

/**
 * A buffered turn held for its tool calls alone (no format to judge): the upstream failure it
 * ended in, or the answer as it came.
 */
export function wholeTurn(events: readonly ChatEvent[]): JsonVerdict {
  for (const event of events) {
    if (event.type === 'error') return { kind: 'failed', error: event.error };
    if (event.type === 'finish') return { kind: 'answer', events };
  }
  return { kind: 'failed', error: unfinishedTurn() };
}

/**
 * The 422 once no attempt satisfied the format; `cut`: a stop sequence ended the last attempt's
 * text, which names `stop` and its fix.
 */
export function formatUnmet(attempts: number, cut: boolean): GatewayError {
  const unmet = `the model's answer did not satisfy response_format in ${attempts} attempts`;
  if (!cut)
    return new GatewayError('output_validation_failed', {
      param: 'response_format',
      publicMessage: `${unmet}; send the request again, make the schema simpler or say in the messages what to answer, or choose a model whose family holds answers to the schema upstream (docs/chat.md "Structured output")`,
    });
  return new GatewayError('output_validation_failed', {
    param: 'stop',
    publicMessage: `${unmet}; the last one was cut short at a stop sequence: send stop sequences that cannot occur inside the JSON object, or none`,
  });
}

/** Reads a turn up to its finish or error event (what follows a terminal event is not part of it). */
export async function bufferTurn(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const buffered: ChatEvent[] = [];
  for await (const event of events) {
    buffered.push(event);
    if (event.type === 'finish' || event.type === 'error') break;
  }
  return buffered;
}

/** Buffered events as the renderer reads them. */
export async function* replay(events: readonly ChatEvent[]): AsyncGenerator<ChatEvent> {
  yield* events;
}
