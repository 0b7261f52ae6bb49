import { GatewayError } from '../core/gateway.error';
import type { ChatEvent, FinishReason, UsageEvent } from '../core/chat-event';
import type { ToolCallCollector } from './tool-call-collector';

export interface TurnHooks {
  /** First text, reasoning or tool-call event (time to first token). */
  onFirstOutput(): void;
}

export interface TurnResult {
  readonly finish?: FinishReason;
  /** Terminal failure: an `error` event, or a turn that ended without `finish`. */
  readonly failure?: GatewayError;
  readonly usage?: UsageEvent;
  /** `onText` asked to stop (the client went away). */
  readonly stopped: boolean;
}

/**
 * Reads one adapter turn, the one place the event union is interpreted: text and reasoning go
 * to `onText` as they arrive (it returns false to stop, e.g. when the client left), tool calls
 * to the collector, usage and the finish reason are kept, and an `error` event or a stream that
 * ends without `finish` becomes `failure`. Used by both the SSE responder and the aggregator.
 */
export async function readTurn(
  events: AsyncIterable<ChatEvent>,
  collector: ToolCallCollector,
  hooks: TurnHooks,
  onText: (channel: 'content' | 'reasoning', text: string) => boolean | Promise<boolean>,
): Promise<TurnResult> {
  let usage: UsageEvent | undefined;
  let sawOutput = false;
  const firstOutput = () => {
    if (!sawOutput) hooks.onFirstOutput();
    sawOutput = true;
  };
  for await (const event of events) {
    switch (event.type) {
      case 'text-delta':
      case 'reasoning-delta':
        if (event.text === '') continue;
        firstOutput();
        if (!(await onText(event.type === 'text-delta' ? 'content' : 'reasoning', event.text))) return { usage, stopped: true };
        break;
      case 'tool-call':
        firstOutput();
        collector.add(event.call);
        break;
      case 'usage':
        usage = event.usage;
        break;
      case 'finish':
        return { finish: event.reason, usage, stopped: false };
      case 'error':
        return { failure: event.error, usage, stopped: false };
    }
  }
  return { failure: new GatewayError('upstream', { detail: 'turn ended without a finish event' }), usage, stopped: false };
}
