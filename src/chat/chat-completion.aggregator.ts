import { GatewayError } from '../common/errors/gateway.error';
import type { ChatEvent, FinishReason, UsageEvent } from '../providers/provider-adapter';
import { ChunkFactory, ClientFinishReason, usageBody } from './chat-chunks';
import type { StreamHooks } from './chat-stream.responder';
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
  hooks: StreamHooks,
): Promise<CompletionOutcome> {
  let text = '';
  let reasoning = '';
  let usage: UsageEvent | undefined;
  let finish: FinishReason | undefined;
  let sawOutput = false;
  const firstOutput = () => {
    if (!sawOutput) hooks.onFirstOutput();
    sawOutput = true;
  };
  for await (const event of events) {
    if (event.type === 'text-delta') {
      firstOutput();
      text += event.text;
    } else if (event.type === 'reasoning-delta') {
      firstOutput();
      reasoning += event.text;
    } else if (event.type === 'tool-call') {
      firstOutput();
      collector.add(event.call);
    } else if (event.type === 'usage') {
      usage = event.usage;
    } else if (event.type === 'finish') {
      finish = event.reason;
      break;
    } else {
      throw event.error;
    }
  }
  if (finish === undefined) throw new GatewayError('upstream', { detail: 'turn ended without a finish event' });
  if (collector.allInvalid) throw new GatewayError('invalid_tool_call');
  const toolCalls = collector.valid.map(({ index: _index, ...call }) => call);
  const finishReason: ClientFinishReason = toolCalls.length > 0 ? 'tool_calls' : finish;
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
