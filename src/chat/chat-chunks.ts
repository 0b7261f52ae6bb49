import { randomUUID } from 'node:crypto';
import type { FinishReason, UsageEvent } from '../core/chat-event';
import type { RenderedToolCall } from './tool-call-collector';

export type ClientFinishReason = FinishReason | 'tool_calls';

/** OpenAI usage object, with cached/reasoning details when the upstream reported them. */
export function usageBody(usage: UsageEvent | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = {
    prompt_tokens: usage?.promptTokens ?? 0,
    completion_tokens: usage?.completionTokens ?? 0,
    total_tokens: usage?.totalTokens ?? 0,
  };
  if (usage?.cachedPromptTokens !== undefined) body.prompt_tokens_details = { cached_tokens: usage.cachedPromptTokens };
  if (usage?.reasoningTokens !== undefined) body.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return body;
}

/**
 * Builds `chat.completion.chunk` objects that all share one `id`, `created` and the `model` the
 * client sent (gateway-behaviours.md §1.2).
 */
export class ChunkFactory {
  readonly id = `chatcmpl-${randomUUID()}`;
  readonly created = Math.floor(Date.now() / 1000);

  constructor(private readonly model: string) {}

  private chunk(delta: Record<string, unknown>, finishReason: ClientFinishReason | null = null): Record<string, unknown> {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
  }

  role() {
    return this.chunk({ role: 'assistant' });
  }

  content(text: string) {
    return this.chunk({ content: text });
  }

  reasoning(text: string) {
    return this.chunk({ reasoning_content: text });
  }

  toolCall(call: RenderedToolCall) {
    return this.chunk({ tool_calls: [call] });
  }

  finish(reason: ClientFinishReason) {
    return this.chunk({}, reason);
  }

  /** The contract's in-stream error: `[error: <public text>]`, finish `stop`. */
  error(publicText: string) {
    return this.chunk({ content: `[error: ${publicText}]` }, 'stop');
  }

  usage(usage: UsageEvent | undefined) {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: usageBody(usage) };
  }
}
