import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChatEvent } from '../../core/chat-event';
import { createStreamState, endWithoutResult, LineOutcome, mapStopReason, parseStreamLine, StreamStateOptions, toUsageEvent, translateLine } from './provider-c.stream';

const FENCE = (name: string, args: unknown) => '```agent_tool_call\n' + JSON.stringify({ name, arguments: args }) + '\n```';

interface Translation {
  readonly events: ChatEvent[];
  readonly nonJson: number;
  readonly outcome?: LineOutcome;
  readonly diagnostics: string[];
}

function translateLines(lines: readonly string[], options: Partial<StreamStateOptions> = {}): Translation {
  const diagnostics: string[] = [];
  let counter = 0;
  const state = createStreamState({
    toolKinds: new Map(),
    fenceDetection: true,
    diagnostic: (event, fields) => diagnostics.push(`${event}${fields.accepted !== undefined ? `:${String(fields.accepted)}` : ''}`),
    newId: () => `call_${String(++counter).padStart(24, '0')}`,
    ...options,
  });
  const events: ChatEvent[] = [];
  let nonJson = 0;
  for (const line of lines) {
    const message = parseStreamLine(line);
    if (!message) {
      nonJson++;
      continue;
    }
    const result = translateLine(message, state);
    events.push(...result.events);
    if (result.outcome) return { events, nonJson, outcome: result.outcome, diagnostics };
  }
  return { events: [...events, ...endWithoutResult(state)], nonJson, diagnostics };
}

const fixture = (name: string) =>
  fs
    .readFileSync(path.join(__dirname, '__fixtures__', `provider-c-${name}.chunks.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line !== '');

const line = (value: unknown) => JSON.stringify(value);
const textLine = (text: string) => line({ type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } });
const thinkingLine = (thinking: string) => line({ type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking } } });
const RESULT = line({ type: 'result', subtype: 'success', is_error: false, result: '' });

describe(translateLine.name, () => {
  it('streams text deltas as they come, skips non-JSON lines, ignores the streamed assistant copy, and reports usage (§6, §8.1)', () => {
    const result = translateLines(fixture('text'));
    expect(result.nonJson).toBe(1);
    expect(result.outcome).toEqual({ type: 'success' });
    expect(result.events).toEqual([
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'usage', usage: { promptTokens: 5, completionTokens: 2, totalTokens: 7, cachedPromptTokens: 2 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('turns fences in thinking and text into one tool call when both channels write the same call (§7.5)', () => {
    const result = translateLines(fixture('thinking-fence'), { toolKinds: new Map([['read_file', 'function']]) });
    expect(result.events).toEqual([
      { type: 'reasoning-delta', text: 'I should read it.\n' },
      { type: 'tool-call', call: { id: 'call_000000000000000000000001', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' } },
      { type: 'text-delta', text: 'Reading.\n' },
      { type: 'usage', usage: { promptTokens: 10, completionTokens: 30, totalTokens: 40 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(result.diagnostics).toEqual(['tool_fence_duplicate']);
  });

  it('keeps identical calls written twice on the same channel', () => {
    const text = FENCE('ls', {}) + FENCE('ls', {});
    const calls = translateLines([textLine(text), RESULT]).events.filter((event) => event.type === 'tool-call');
    expect(calls).toHaveLength(2);
  });

  it('reads an older CLI without partial messages from the assistant line', () => {
    const result = translateLines(fixture('older-cli'));
    expect(result.events).toEqual([
      { type: 'reasoning-delta', text: 'Hmm.' },
      { type: 'text-delta', text: 'Hi ' },
      { type: 'tool-call', call: { id: 'call_000000000000000000000001', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' } },
      { type: 'usage', usage: { promptTokens: 4, completionTokens: 5, totalTokens: 9 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('ends on an error result with its text for classification and no events', () => {
    const result = translateLines(fixture('error-result'));
    expect(result.outcome).toEqual({ type: 'error', text: 'Invalid API key · Please run /login' });
    expect(result.events).toEqual([]);
  });

  it('treats a subtype starting with "error" as an error result', () => {
    expect(translateLines([line({ type: 'result', subtype: 'error_max_turns', is_error: false })]).outcome).toEqual({ type: 'error', text: '' });
  });

  it('passes fences through unchanged when fence detection is off (no tools, tool_choice none)', () => {
    const text = FENCE('ls', {});
    const result = translateLines([textLine(text), RESULT], { fenceDetection: false });
    expect(result.events.filter((event) => event.type === 'text-delta')).toEqual([{ type: 'text-delta', text }]);
    expect(result.events.some((event) => event.type === 'tool-call')).toBe(false);
  });

  it('shows unfenced JSON as text', () => {
    const text = '{"name":"ls","arguments":{}}\n';
    expect(translateLines([textLine(text), RESULT]).events[0]).toEqual({ type: 'text-delta', text });
  });

  it('maps custom tools to custom calls with the raw input (§7.4)', () => {
    const patch = '*** Begin Patch\n*** End Patch';
    const events = translateLines([textLine(FENCE('apply_patch', patch)), RESULT], { toolKinds: new Map([['apply_patch', 'custom']]) }).events;
    expect(events[0]).toEqual({ type: 'tool-call', call: { id: expect.any(String), name: 'apply_patch', kind: 'custom', input: patch } });
  });

  it('ends with invalid_tool_call when blocks were dropped and no call was valid', () => {
    const result = translateLines([textLine('```agent_tool_call\n{"name":"ls","arguments":{,}}\n```'), RESULT]);
    const last = result.events[result.events.length - 1];
    expect(last).toMatchObject({ type: 'error', error: { code: 'invalid_tool_call' } });
    expect(result.events.some((event) => event.type === 'finish')).toBe(false);
    expect(result.diagnostics).toEqual(['tool_fence_invalid']);
  });

  it('accepts an unclosed complete fence at the result and logs it as accepted', () => {
    const result = translateLines([textLine('```agent_tool_call\n{"name":"ls","arguments":{}}\n'), RESULT]);
    expect(result.events[0]).toMatchObject({ type: 'tool-call', call: { name: 'ls', arguments: '{}' } });
    expect(result.diagnostics).toEqual(['tool_fence_unclosed:true']);
  });

  it('drops a truncated fence at the result, logs accepted=false, and reports invalid_tool_call', () => {
    const result = translateLines([textLine('ok ```agent_tool_call\n{"name":"ls","argu'), RESULT]);
    expect(result.events[0]).toEqual({ type: 'text-delta', text: 'ok ' });
    expect(result.diagnostics).toEqual(['tool_fence_unclosed:false']);
    expect(result.events[result.events.length - 1]).toMatchObject({ type: 'error', error: { code: 'invalid_tool_call' } });
  });

  it('without a result line, flushes and finishes from the streamed usage and stop reason', () => {
    const result = translateLines([
      line({ type: 'stream_event', event: { type: 'message_start', message: { id: 'm', usage: { input_tokens: 7, cache_read_input_tokens: 1 } } } }),
      textLine('Hi `'),
      line({ type: 'stream_event', event: { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 4 } } }),
    ]);
    expect(result.events).toEqual([
      { type: 'text-delta', text: 'Hi ' },
      { type: 'text-delta', text: '`' },
      { type: 'usage', usage: { promptTokens: 8, completionTokens: 4, totalTokens: 12, cachedPromptTokens: 1 } },
      { type: 'finish', reason: 'length' },
    ]);
  });
});

describe(mapStopReason.name, () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    [undefined, 'stop'],
    ['max_tokens', 'length'],
    ['refusal', 'content_filter'],
  ])('%s → %s (§8.2)', (stopReason, reason) => {
    expect(mapStopReason(stopReason)).toBe(reason);
  });
});

describe(toUsageEvent.name, () => {
  it('adds cache creation and cache reads to the prompt (§8.1)', () => {
    expect(toUsageEvent({ input_tokens: 3, cache_creation_input_tokens: 4, cache_read_input_tokens: 2, output_tokens: 2 })).toEqual({
      promptTokens: 9,
      completionTokens: 2,
      totalTokens: 11,
      cachedPromptTokens: 2,
    });
    expect(toUsageEvent({})).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
  });
});
