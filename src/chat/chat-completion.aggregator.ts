import { GatewayError } from '../core/gateway.error';
import type { ChatEvent, UsageEvent } from '../core/chat-event';
import { ChunkFactory, ClientFinishReason, usageBody } from './chat-chunks';
import { readTurn, TurnHooks } from './turn-reader';
import { ToolCallCollector } from './tool-call-collector';

export interface CompletionOutcome {
  readonly body: Record<string, unknown>;
  readonly finishReason: ClientFinishReason;
  readonly toolCalls: number;
  readonly usage?: UsageEvent;
}

/**
 * Gathers a whole turn into one `chat.completion` (design.md §4, gateway-behaviours.md §1.4):
 * all text as `content` (null when empty and there are tool calls), `reasoning_content` when
 * any, each valid tool call once, the finish reason and usage (zeros when none was reported).
 * A terminal error event, or a turn whose calls were all invalid, is thrown as a GatewayError:
 * nothing was written yet, so the client gets a JSON error with the real status.
 */
export async function aggregateCompletion(
  events: AsyncIterable<ChatEvent>,
  ids: ChunkFactory,
  model: string,
  collector: ToolCallCollector,
  hooks: TurnHooks,
): Promise<CompletionOutcome> {
  let text = '';
  let reasoning = '';
  const turn = await readTurn(events, collector, hooks, (channel, delta) => {
    if (channel === 'content') text += delta;
    else reasoning += delta;
    return true;
  });
  if (turn.failure) throw turn.failure;
  if (collector.allInvalid) throw new GatewayError('invalid_tool_call');
  const usage = turn.usage;
  const toolCalls = collector.valid.map(({ index: _index, ...call }) => call);
  const finishReason: ClientFinishReason = toolCalls.length > 0 ? 'tool_calls' : turn.finish!;
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
  };
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    body: {
      id: ids.id,
      object: 'chat.completion',
      created: ids.created,
      model,
      choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
      usage: usageBody(usage),
    },
    finishReason,
    toolCalls: toolCalls.length,
    usage,
  };
}
