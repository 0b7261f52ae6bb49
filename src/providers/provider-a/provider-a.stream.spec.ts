import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChatEvent } from '../../core/chat-event';
import type { StreamStep } from './provider-a.stream';
import { createStreamState, readUsage, translateEvent } from './provider-a.stream';
import type { JsonObject } from '../../common/json';
import { UpstreamErrorEvent } from '../shared/upstream-failure';
import { classifyUpstreamFailure } from './provider-a.errors';

function frames(name: string): JsonObject[] {
  return fs
    .readFileSync(path.join(__dirname, '__fixtures__', `provider-a-${name}.chunks.txt`), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as JsonObject);
}

function run(events: JsonObject[]): {
  events: ChatEvent[];
  steps: StreamStep[];
  state: ReturnType<typeof createStreamState>;
} {
  const state = createStreamState();
  const steps = events.map((event) => translateEvent(state, event));
  return { events: steps.flatMap((step) => step.events), steps, state };
}

describe('provider_a stream translation', () => {
  it('translates text, reasoning summaries (blank line between parts), telemetry and usage', () => {
    const { events, steps, state } = run(frames('text'));
    expect(events).toEqual([
      { type: 'reasoning-delta', text: 'Thinking about' },
      { type: 'reasoning-delta', text: ' the question.' },
      { type: 'reasoning-delta', text: '\n\nSecond part.' },
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo!' },
      // msg_2 never streamed deltas, so its finished item supplies the text once.
      { type: 'text-delta', text: ' Done.' },
      {
        type: 'usage',
        usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17, cachedPromptTokens: 4, reasoningTokens: 2 },
      },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(steps[0].accepted).toBe(true);
    expect(steps.at(-1)!.terminal).toBe(true);
    expect(steps.find((step) => step.rateLimits)?.rateLimits?.primary).toEqual({
      usedPercent: 12.5,
      windowMinutes: 300,
      resetAt: 1900000000,
    });
    expect(state.responseId).toBe('resp_t1');
    expect(state.model).toBe('gpt-5.6-sol-2026');
  });

  it('emits each tool call once, complete, in first-seen order; open calls are flushed at completion', () => {
    const { events } = run(frames('tool-calls'));
    expect(events).toEqual([
      { type: 'text-delta', text: 'Let me look.' },
      { type: 'tool-call', call: { id: 'call_b', name: 'read_file', kind: 'function', arguments: '{"path":"a.ts"}' } },
      { type: 'tool-call', call: { id: 'call_a', name: 'list_dir', kind: 'function', arguments: '{"path":"."}' } },
      {
        type: 'tool-call',
        call: { id: 'call_c', name: 'apply_patch', kind: 'custom', input: '*** Begin Patch\n*** End Patch' },
      },
      { type: 'tool-call', call: { id: 'call_open', name: 'grep', kind: 'function', arguments: '{"q":"x"}' } },
      { type: 'usage', usage: { promptTokens: 40, completionTokens: 20, totalTokens: 60 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('joins 2 000 argument fragments into one call', () => {
    const args = JSON.stringify({ text: 'ab'.repeat(1994) + 'c' });
    const fragments = Array.from({ length: 2000 }, (_, index) => args.slice(index * 2, index * 2 + 2));
    expect(fragments.join('')).toBe(args);
    const { events } = run([
      { type: 'response.created', response: { id: 'r' } },
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'write' },
      },
      ...fragments.map((delta) => ({
        type: 'response.function_call_arguments.delta',
        item_id: 'fc_1',
        output_index: 0,
        delta,
      })),
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'write' },
      },
      { type: 'response.completed', response: { id: 'r' } },
    ]);
    const calls = events.filter((event) => event.type === 'tool-call');
    expect(calls).toEqual([
      { type: 'tool-call', call: { id: 'call_1', name: 'write', kind: 'function', arguments: args } },
    ]);
  });

  describe('tool-call records', () => {
    const added = (id: string, outputIndex: number, callId: string, name = 'f') => ({
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { id, type: 'function_call', call_id: callId, name },
    });
    const argsDelta = (where: { item_id?: string; output_index?: number }, delta: string) => ({
      type: 'response.function_call_arguments.delta',
      ...where,
      delta,
    });
    const itemDone = (id: string, outputIndex: number, callId: string, args?: string) => ({
      type: 'response.output_item.done',
      output_index: outputIndex,
      item: {
        id,
        type: 'function_call',
        call_id: callId,
        name: 'f',
        ...(args !== undefined ? { arguments: args } : {}),
      },
    });
    const completed = { type: 'response.completed', response: { id: 'r' } };
    const callsOf = (events: ChatEvent[]) => events.filter((event) => event.type === 'tool-call');

    it('takes the arguments of function_call_arguments.done in place of the fragments when the item never finishes', () => {
      const { events } = run([
        added('fc_1', 0, 'call_1'),
        argsDelta({ item_id: 'fc_1' }, '{"a"'),
        argsDelta({ item_id: 'fc_1' }, ':1}'),
        { type: 'response.function_call_arguments.done', item_id: 'fc_1', arguments: '{"a":1}' },
        completed,
      ]);
      expect(callsOf(events)).toEqual([
        { type: 'tool-call', call: { id: 'call_1', name: 'f', kind: 'function', arguments: '{"a":1}' } },
      ]);
    });

    it('finds a call opened with an item id from a fragment that names only its output index', () => {
      const { events } = run([added('fc_1', 3, 'call_1'), argsDelta({ output_index: 3 }, '{"a":1}'), completed]);
      expect(callsOf(events)).toEqual([
        { type: 'tool-call', call: { id: 'call_1', name: 'f', kind: 'function', arguments: '{"a":1}' } },
      ]);
    });

    it('gives a finished call held behind an open one no later fragments', () => {
      const { events } = run([
        added('fc_1', 0, 'call_1'),
        added('fc_2', 1, 'call_2'),
        itemDone('fc_2', 1, 'call_2', '{"b":2}'),
        argsDelta({ item_id: 'fc_2' }, 'late'),
        itemDone('fc_1', 0, 'call_1', '{"a":1}'),
        completed,
      ]);
      expect(callsOf(events)).toEqual([
        { type: 'tool-call', call: { id: 'call_1', name: 'f', kind: 'function', arguments: '{"a":1}' } },
        { type: 'tool-call', call: { id: 'call_2', name: 'f', kind: 'function', arguments: '{"b":2}' } },
      ]);
    });

    it('emits a call id once even when two finished items carry it', () => {
      const { events } = run([
        itemDone('fc_1', 0, 'call_1', '{"a":1}'),
        itemDone('fc_1_again', 1, 'call_1', '{"a":1}'),
        completed,
      ]);
      expect(callsOf(events)).toEqual([
        { type: 'tool-call', call: { id: 'call_1', name: 'f', kind: 'function', arguments: '{"a":1}' } },
      ]);
    });
  });

  it('discards open calls at response.incomplete and finishes with length', () => {
    const { events, steps } = run(frames('incomplete'));
    expect(events).toEqual([
      { type: 'text-delta', text: 'Partial' },
      { type: 'usage', usage: { promptTokens: 3, completionTokens: 9, totalTokens: 12 } },
      { type: 'finish', reason: 'length' },
    ]);
    expect(steps.at(-1)!.terminal).toBe(true);
  });

  it('maps content_filter incompleteness and refusals', () => {
    const { events } = run([
      { type: 'response.refusal.delta', item_id: 'm', delta: 'No.' },
      { type: 'response.incomplete', response: { incomplete_details: { reason: 'content_filter' } } },
    ]);
    expect(events).toEqual([
      { type: 'text-delta', text: 'No.' },
      { type: 'finish', reason: 'content_filter' },
    ]);
  });

  it("hands response.failed and error events over as they came: terminal, not accepting, for the family's classify", () => {
    const failed = {
      type: 'response.failed',
      response: { id: 'x', status: 'failed', error: { code: 'server_error', message: 'boom' } },
    };
    const failedStep = translateEvent(createStreamState(), failed);
    expect(failedStep).toMatchObject({ accepted: false, terminal: true, events: [] });
    expect(failedStep.unclassified).toEqual(new UpstreamErrorEvent(failed));
    expect(classifyUpstreamFailure({ payload: failedStep.unclassified!.payload })).toMatchObject({ code: 'upstream' });
    const limit = {
      type: 'error',
      status: 429,
      error: { type: 'usage_limit_reached', message: 'limit', resets_in_seconds: 30 },
    };
    const usage = translateEvent(createStreamState(), limit);
    expect(usage.unclassified).toEqual(new UpstreamErrorEvent(limit));
    expect(classifyUpstreamFailure({ payload: usage.unclassified!.payload })).toMatchObject({
      code: 'usage_limit',
      retryAfterSeconds: 30,
    });
  });

  it('hands the usage a response.failed reports over as billed, for the counters only; an error event has none', () => {
    const usage = {
      input_tokens: 30,
      output_tokens: 7,
      total_tokens: 37,
      output_tokens_details: { reasoning_tokens: 2 },
    };
    const failedStep = translateEvent(createStreamState(), {
      type: 'response.failed',
      response: { id: 'x', status: 'failed', error: { code: 'server_error', message: 'boom' }, usage },
    });
    expect(failedStep).toMatchObject({ events: [], terminal: true });
    expect(failedStep.billed).toEqual({ promptTokens: 30, completionTokens: 7, totalTokens: 37, reasoningTokens: 2 });
    const without = translateEvent(createStreamState(), {
      type: 'response.failed',
      response: { id: 'x', status: 'failed' },
    });
    expect(without).not.toHaveProperty('billed');
    const error = translateEvent(createStreamState(), { type: 'error', error: { code: 'server_error' }, usage });
    expect(error).not.toHaveProperty('billed');
  });

  it('never turns web_search, reasoning or message items into tool calls and ignores unknown events', () => {
    const { events } = run([
      { type: 'response.output_item.added', output_index: 0, item: { id: 'ws', type: 'web_search_call' } },
      { type: 'response.output_item.done', output_index: 0, item: { id: 'ws', type: 'web_search_call' } },
      { type: 'response.output_item.done', output_index: 1, item: { id: 'rs', type: 'reasoning' } },
      { type: 'something.new', delta: 'x' },
      { type: 'response.reasoning_text.delta', delta: 'raw reasoning' },
    ]);
    expect(events).toEqual([{ type: 'reasoning-delta', text: 'raw reasoning' }]);
  });

  it('reads a field of another JSON type as absent and ignores a frame without a string type', () => {
    const { events, steps, state } = run([
      { type: 'response.created', response: { id: 7, model: 'gpt-5.6-sol' } },
      { type: 7, delta: 'no type' },
      // A numeric item id: the delta is still text, but the finished message is not known as streamed.
      { type: 'response.output_text.delta', item_id: 1, delta: 'Hel' },
      { type: 'response.output_text.delta', item_id: 'msg_1', delta: 5 },
      { type: 'response.output_item.done', item: { type: 'message', id: 'msg_1', content: 'lo' } },
      {
        type: 'response.output_item.done',
        item: { type: 'message', id: 'msg_2', content: [{ text: 1 }, 'x', { refusal: 'No.' }] },
      },
      { type: 'response.output_item.added', output_index: 1.5, item: { id: 'fc_1', type: 'function_call', name: 3 } },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: { path: 1 } },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '{}' },
      { type: 'response.output_item.done', item: { id: 'fc_1', type: 'function_call', call_id: 9, arguments: 2 } },
      {
        type: 'response.completed',
        response: { usage: { input_tokens: '2', output_tokens: 3, input_tokens_details: [] } },
      },
    ]);
    expect(events).toEqual([
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'No.' },
      { type: 'tool-call', call: { id: 'fc_1', name: '', kind: 'function', arguments: '{}' } },
      { type: 'usage', usage: { promptTokens: 0, completionTokens: 3, totalTokens: 3 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(steps.every((step) => step.accepted)).toBe(true);
    expect(state).toMatchObject({ responseId: undefined, model: 'gpt-5.6-sol' });
  });

  it("keeps the upstream's total tokens when it differs from the sum", () => {
    expect(readUsage({ input_tokens: 2, output_tokens: 3, total_tokens: 9 })).toEqual({
      promptTokens: 2,
      completionTokens: 3,
      totalTokens: 9,
    });
  });

  it('sums total tokens when absent', () => {
    expect(readUsage({ input_tokens: 2, output_tokens: 3 })).toEqual({
      promptTokens: 2,
      completionTokens: 3,
      totalTokens: 5,
    });
    expect(readUsage(undefined)).toBeUndefined();
  });
});
