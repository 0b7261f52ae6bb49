import canonicalize from 'canonicalize';
import { randomBytes } from 'node:crypto';
import type { ToolCallEvent } from '../../core/chat-event';
import { isJsonObject } from '../../common/json';

/** docs/upstream/provider-c.md §7.5: `call_` + 24 lowercase hex from a cryptographic source; never derived from content. */
export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

export type InvalidBlockReason = 'not_object';

export type BlockConversion =
  { readonly ok: true; readonly call: ToolCallEvent } | { readonly ok: false; readonly reason: InvalidBlockReason };

/**
 * docs/upstream/provider-c.md §7.4: a parsed fence object → one complete tool call. The kind is the declared type of the
 * tool with that name; an undeclared name is still returned as a function call (the client
 * reports the unknown tool back to the model). An object without a name is a call with a blank
 * one: the chat layer judges it as it judges every family's, dropping it when it has no arguments
 * either and failing the turn on it otherwise. The name is the declared one the model wrote
 * (`declaredName`).
 */
export function blockToToolCall(
  value: unknown,
  kindsByName: ReadonlyMap<string, 'function' | 'custom'>,
  newId: () => string = newToolCallId,
): BlockConversion {
  if (!isJsonObject(value)) return { ok: false, reason: 'not_object' };
  const name = typeof value.name === 'string' ? declaredName(value.name, kindsByName) : '';
  const argumentsValue = value.arguments;
  if (kindsByName.get(name) === 'custom') {
    let input: string;
    if (typeof argumentsValue === 'string') input = argumentsValue;
    else if (typeof value.input === 'string') input = value.input;
    else input = JSON.stringify(argumentsValue ?? {});
    return { ok: true, call: { id: newId(), name, kind: 'custom', input } };
  }
  let argumentsText: string;
  if (typeof argumentsValue === 'string')
    argumentsText = argumentsValue; // the chat layer validates it as JSON
  else if (argumentsValue === undefined || argumentsValue === null) argumentsText = '{}';
  else argumentsText = JSON.stringify(argumentsValue);
  return { ok: true, call: { id: newId(), name, kind: 'function', arguments: argumentsText } };
}

/**
 * The client's name of the tool a block names: the name as written when a tool is declared under
 * it (names are exact, white space and all: docs/chat.md, `tools`), else the declared name it
 * matches once white space around both is dropped, as a model may add or drop a space the listed
 * JSON name had; else the written name without that white space. The scan over the declared names
 * runs only for a name the model did not copy exactly.
 */
function declaredName(written: string, kindsByName: ReadonlyMap<string, unknown>): string {
  if (kindsByName.has(written)) return written;
  const bare = written.trim();
  if (kindsByName.has(bare)) return bare;
  for (const name of kindsByName.keys()) if (name.trim() === bare) return name;
  return bare;
}

export type Channel = 'content' | 'reasoning';

/**
 * docs/upstream/provider-c.md §7.5: the same call drafted in thinking and then written in text is emitted once. A call
 * whose (name, canonical arguments) was already emitted from the OTHER channel in this turn is
 * skipped; identical calls on one channel are all kept. One instance per turn.
 */
export class CrossChannelDuplicates {
  private readonly seen: Record<Channel, Set<string>> = { content: new Set(), reasoning: new Set() };

  /** True when the call should be emitted; records it for its channel. */
  admit(channel: Channel, call: ToolCallEvent): boolean {
    const key = callIdentity(call);
    const other: Channel = channel === 'content' ? 'reasoning' : 'content';
    if (this.seen[other].has(key)) return false;
    this.seen[channel].add(key);
    return true;
  }

  /** How many distinct calls each channel has recorded: what `rewind` goes back to. */
  mark(): Readonly<Record<Channel, number>> {
    return { content: this.seen.content.size, reasoning: this.seen.reasoning.size };
  }

  /** Forgets the calls recorded since `mark`: the CLI gave up the blocks that wrote them. */
  rewind(mark: Readonly<Record<Channel, number>>): void {
    for (const channel of ['content', 'reasoning'] as const) {
      for (const key of [...this.seen[channel]].slice(mark[channel])) this.seen[channel].delete(key);
    }
  }
}

/** Name plus RFC 8785 form of the arguments, so key order and spacing do not matter (not the id). */
export function callIdentity(call: ToolCallEvent): string {
  const payload = call.kind === 'custom' ? (call.input ?? '') : (call.arguments ?? '');
  let canonical = payload;
  if (call.kind === 'function') {
    try {
      canonical = canonicalize(JSON.parse(payload)) ?? payload;
    } catch {
      // Unparsable arguments compare as written.
    }
  }
  return JSON.stringify([call.kind, call.name, canonical]);
}
