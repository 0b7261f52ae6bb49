import { GatewayError } from '../common/errors/gateway.error';
import { SseWriter } from '../common/sse/sse-writer';
import type { ChatEvent, FinishReason, UsageEvent } from '../providers/provider-adapter';
import { ChunkFactory, ClientFinishReason } from './chat-chunks';
import { ToolCallCollector } from './tool-call-collector';

export interface StreamOutcome {
  /** Finish reason written to the client; undefined when the stream ended in an error chunk. */
  readonly finishReason?: ClientFinishReason;
  /** Internal code of the error written as an error chunk. */
  readonly errorCode?: GatewayError['code'];
  /** The client left; nothing more was written. */
  readonly clientGone: boolean;
  readonly toolCalls: number;
  readonly usage?: UsageEvent;
}

export interface StreamHooks {
  /** First text, reasoning or tool-call event (time to first token). */
  onFirstOutput(): void;
}

/**
 * Writes one accepted turn as the contract's SSE sequence (gateway-behaviours.md §1.2): role
 * chunk; content and reasoning chunks as they arrive; after the adapter finished, one complete
 * frame per valid tool call; the finish chunk; the optional usage chunk; `[DONE]`. An error after
 * the headers becomes the `[error: …]` chunk and `[DONE]`. Events are pulled one at a time and
 * each write waits for the socket to drain, so backpressure reaches the upstream reader.
 */
export async function writeChatStream(
  writer: SseWriter,
  events: AsyncIterable<ChatEvent>,
  chunks: ChunkFactory,
  collector: ToolCallCollector,
  options: { includeUsage: boolean; signal: AbortSignal; hooks: StreamHooks },
): Promise<StreamOutcome> {
  let finish: FinishReason | undefined;
  let failure: GatewayError | undefined;
  let usage: UsageEvent | undefined;
  let sawOutput = false;
  const gone = (): StreamOutcome => ({ clientGone: true, toolCalls: collector.valid.length, usage });
  const firstOutput = () => {
    if (!sawOutput) options.hooks.onFirstOutput();
    sawOutput = true;
  };

  writer.open();
  if (!(await writer.sendJson(chunks.role()))) return gone();
  try {
    for await (const event of events) {
      if (event.type === 'text-delta' || event.type === 'reasoning-delta') {
        if (event.text === '') continue;
        firstOutput();
        const chunk = event.type === 'text-delta' ? chunks.content(event.text) : chunks.reasoning(event.text);
        if (!(await writer.sendJson(chunk))) return gone();
      } else if (event.type === 'tool-call') {
        firstOutput();
        collector.add(event.call);
      } else if (event.type === 'usage') {
        usage = event.usage;
      } else if (event.type === 'finish') {
        finish = event.reason;
        break;
      } else {
        failure = event.error;
        break;
      }
    }
  } catch (error) {
    if (options.signal.aborted) return gone();
    failure = error instanceof GatewayError ? error : new GatewayError('upstream', { cause: error });
  }
  if (options.signal.aborted || writer.isClosed) return gone();
  if (!failure && finish === undefined) failure = new GatewayError('upstream', { detail: 'stream ended without a finish event' });
  if (!failure && collector.allInvalid) failure = new GatewayError('invalid_tool_call');

  if (failure) {
    await writer.sendJson(chunks.error(failure.spec.streamText));
    await writer.sendDone();
    writer.end();
    return { errorCode: failure.code, clientGone: false, toolCalls: 0, usage };
  }
  for (const call of collector.valid) {
    if (!(await writer.sendJson(chunks.toolCall(call)))) return gone();
  }
  const finishReason: ClientFinishReason = collector.valid.length > 0 ? 'tool_calls' : finish!;
  if (!(await writer.sendJson(chunks.finish(finishReason)))) return gone();
  if (options.includeUsage && !(await writer.sendJson(chunks.usage(usage)))) return gone();
  await writer.sendDone();
  writer.end();
  return { finishReason, clientGone: false, toolCalls: collector.valid.length, usage };
}
