import type { CustomToolWire } from '../config/app-config';
import type { ToolCallEvent } from '../core/chat-event';

/** A tool call as written to the client, in a stream frame or a chat.completion message. */
export interface RenderedToolCall {
  readonly index: number;
  readonly id: string;
  readonly type: 'function' | 'custom';
  readonly function?: { readonly name: string; readonly arguments: string };
  readonly custom?: { readonly name: string; readonly input: string };
  readonly extra_content?: { readonly google: { readonly thought_signature: string } };
}

export type InvalidReason = 'empty_name' | 'invalid_json_arguments';

/**
 * Validates and renders complete tool calls once for all families (gateway-behaviours.md §1.3):
 * ids synthesized when missing, a repeated id ignored, function arguments must parse as JSON
 * (blank → `{}`), custom calls rendered per PRIMARY_CUSTOM_TOOL_WIRE, indices 0…n−1 in arrival
 * order. Invalid calls are dropped and reported to `onInvalid` (index and reason only).
 */
export class ToolCallCollector {
  private readonly calls: RenderedToolCall[] = [];
  private readonly seenIds = new Set<string>();
  private invalid = 0;
  private received = 0;

  constructor(
    private readonly requestId: string,
    private readonly wire: CustomToolWire,
    private readonly onInvalid: (index: number, reason: InvalidReason) => void = () => undefined,
  ) {}

  add(call: ToolCallEvent): void {
    const position = this.received++;
    const name = call.name?.trim() ?? '';
    if (name === '') return this.reject(position, 'empty_name');
    let argumentsText = '';
    if (call.kind === 'function') {
      argumentsText = (call.arguments ?? '').trim() === '' ? '{}' : (call.arguments as string);
      try {
        JSON.parse(argumentsText);
      } catch {
        return this.reject(position, 'invalid_json_arguments');
      }
    }
    const index = this.calls.length;
    const id = call.id && call.id !== '' ? call.id : `call_${this.requestId.replace(/[^A-Za-z0-9_-]/g, '')}_${index}`;
    if (this.seenIds.has(id)) return;
    this.seenIds.add(id);
    const signature = call.thoughtSignature ? { extra_content: { google: { thought_signature: call.thoughtSignature } } } : {};
    if (call.kind === 'custom' && this.wire === 'custom') {
      this.calls.push({ index, id, type: 'custom', custom: { name, input: call.input ?? '' }, ...signature });
    } else {
      const text = call.kind === 'custom' ? (call.input ?? '') : argumentsText;
      this.calls.push({ index, id, type: 'function', function: { name, arguments: text }, ...signature });
    }
  }

  get valid(): readonly RenderedToolCall[] {
    return this.calls;
  }

  /** True when calls arrived but every one of them was invalid. */
  get allInvalid(): boolean {
    return this.invalid > 0 && this.calls.length === 0;
  }

  private reject(position: number, reason: InvalidReason): void {
    this.invalid++;
    this.onInvalid(position, reason);
  }
}
