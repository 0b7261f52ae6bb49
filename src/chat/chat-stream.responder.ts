import { GatewayError } from '../core/gateway.error';
import { SseWriter } from '../common/sse/sse-writer';
import type { ChatEvent, UsageEvent } from '../core/chat-event';
import { ChunkFactory, ClientFinishReason } from './chat-chunks';
import { ToolCallCollector } from './tool-call-collector';
import { readTurn, TurnHooks, TurnResult } from './turn-reader';

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
  options: { includeUsage: boolean; signal: AbortSignal; hooks: TurnHooks },
): Promise<StreamOutcome> {
  const gone = (usage?: UsageEvent): StreamOutcome => ({ clientGone: true, toolCalls: collector.valid.length, usage });
  writer.open();
  if (!(await writer.sendJson(chunks.role()))) return gone();
  let turn: TurnResult;
  try {
    turn = await readTurn(events, collector, options.hooks, (channel, text) =>
      writer.sendJson(channel === 'content' ? chunks.content(text) : chunks.reasoning(text)),
    );
  } catch (error) {
    if (options.signal.aborted) return gone();
    turn = { failure: error instanceof GatewayError ? error : new GatewayError('upstream', { cause: error }), stopped: false };
  }
  const usage = turn.usage;
  if (turn.stopped || options.signal.aborted || writer.isClosed) return gone(usage);
  const failure = turn.failure ?? (collector.allInvalid ? new GatewayError('invalid_tool_call') : undefined);

  if (failure) {
    await writer.sendJson(chunks.error(failure.spec.streamText));
    await writer.sendDone();
    writer.end();
    return { errorCode: failure.code, clientGone: false, toolCalls: 0, usage };
  }
  for (const call of collector.valid) {
    if (!(await writer.sendJson(chunks.toolCall(call)))) return gone(usage);
  }
  const finishReason: ClientFinishReason = collector.valid.length > 0 ? 'tool_calls' : turn.finish!;
  if (!(await writer.sendJson(chunks.finish(finishReason)))) return gone(usage);
  if (options.includeUsage && !(await writer.sendJson(chunks.usage(usage)))) return gone(usage);
  await writer.sendDone();
  writer.end();
  return { finishReason, clientGone: false, toolCalls: collector.valid.length, usage };
}
