import { GatewayError } from '../core/gateway.error';
import type { ChatEvent } from '../core/chat-event';
import { ChunkFactory } from './chat-chunks';
import { aggregateCompletion } from './chat-completion.aggregator';
import { ToolCallCollector } from './tool-call-collector';

async function* from(events: ChatEvent[]) {
  for (const event of events) yield event;
}

const run = (events: ChatEvent[]) =>
  aggregateCompletion(from(events), new ChunkFactory('gpt-5.6-sol'), 'gpt-5.6-sol', new ToolCallCollector('r', 'function'), { onFirstOutput: () => undefined });

describe(aggregateCompletion.name, () => {
  it('builds a chat.completion with text, reasoning, usage and the finish reason', async () => {
    const { body } = await run([
      { type: 'reasoning-delta', text: 'think' },
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'usage', usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-5.6-sol',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello', reasoning_content: 'think' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    });
    expect((body.choices as { message: object }[])[0].message).not.toHaveProperty('tool_calls');
  });

  it('keeps text next to tool calls, each call once, finish tool_calls, and null content when only calls', async () => {
    const withText = await run([
      { type: 'text-delta', text: 'Checking.' },
      { type: 'tool-call', call: { id: 'call_1', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' } },
      { type: 'tool-call', call: { id: 'call_1', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' } },
      { type: 'finish', reason: 'stop' },
    ]);
    const message = (withText.body.choices as { message: Record<string, unknown>; finish_reason: string }[])[0];
    expect(message.message.content).toBe('Checking.');
    expect(message.message.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }]);
    expect(message.finish_reason).toBe('tool_calls');

    const onlyCalls = await run([
      { type: 'tool-call', call: { id: 'c', name: 'ls', kind: 'function', arguments: '{}' } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect((onlyCalls.body.choices as { message: Record<string, unknown> }[])[0].message.content).toBeNull();
  });

  it('reports zero usage when the upstream gave none', async () => {
    const { body } = await run([{ type: 'finish', reason: 'stop' }]);
    expect(body.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('throws the error event, and invalid_tool_call when every call was invalid', async () => {
    await expect(run([{ type: 'error', error: new GatewayError('rate_limited', { retryAfterSeconds: 3 }) }])).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(
      run([
        { type: 'tool-call', call: { id: 'c', name: 'ls', kind: 'function', arguments: 'nope' } },
        { type: 'finish', reason: 'stop' },
      ]),
    ).rejects.toMatchObject({ code: 'invalid_tool_call' });
  });
});
