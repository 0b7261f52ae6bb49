import type { GatewayError } from '../../core/gateway.error';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChatEvent } from '../../core/chat-event';
import {
  createProviderBStreamState,
  finishProviderBStream,
  mapUsage,
  translateProviderBPayload,
} from './provider-b.stream';
import { classifyProviderBFailure } from './provider-b.errors';

/** The runner's time an error payload is classified at. */
const NOW = Date.UTC(2026, 0, 1);

/** One upstream payload per line of a `.chunks.txt` fixture. */
function chunks(name: string): unknown[] {
  const text = fs.readFileSync(path.join(__dirname, '__fixtures__', name), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);
}

function run(payloads: unknown[], customNames: string[] = []): ChatEvent[] {
  const state = createProviderBStreamState(new Set(customNames), { toClient: (name) => name }, 'req-9');
  const events: ChatEvent[] = [];
  for (const payload of payloads) {
    const step = translateProviderBPayload(payload, state);
    if (step.failure) return [...events, { type: 'error', error: step.failure }];
    // An error payload is the family's `classify` to read, at the runner's time.
    if (step.unclassified)
      return [...events, { type: 'error', error: classifyProviderBFailure(step.unclassified, NOW) }];
    events.push(...step.events);
  }
  return [...events, ...finishProviderBStream(state)];
}

const candidate = (extra: Record<string, unknown>) => ({
  response: { candidates: [{ content: { role: 'model', parts: [] }, ...extra }] },
});

describe(translateProviderBPayload.name, () => {
  it('hands the usage of the frames before an error payload over as billed, for the counters only', () => {
    const state = createProviderBStreamState(new Set(), { toClient: (name) => name }, 'req-9');
    const error = { error: { code: 500, message: 'internal', status: 'INTERNAL' } };
    expect(
      translateProviderBPayload(error, createProviderBStreamState(new Set(), { toClient: (name) => name }, 'r')),
    ).not.toHaveProperty('billed');
    translateProviderBPayload(
      {
        response: {
          ...candidate({}).response,
          usageMetadata: { promptTokenCount: 21, candidatesTokenCount: 4, totalTokenCount: 25 },
        },
      },
      state,
    );
    const step = translateProviderBPayload(error, state);
    expect(step.events).toEqual([]);
    expect(step.billed).toEqual(mapUsage({ promptTokenCount: 21, candidatesTokenCount: 4, totalTokenCount: 25 }));
    expect(step.billed).toMatchObject({ promptTokens: 21, completionTokens: 4 });
  });

  it('streams thoughts as reasoning, calls in two frames with distinct per-stream ids, then usage and finish (docs/upstream/provider-b.md §13.16, §13.18, §13.21)', () => {
    expect(run(chunks('provider-b-two-calls.chunks.txt'))).toEqual([
      { type: 'reasoning-delta', text: 'Let me think.' },
      { type: 'text-delta', text: 'Looking.' },
      {
        type: 'tool-call',
        call: {
          id: 'call_r-7_0',
          name: 'read_file',
          kind: 'function',
          arguments: '{"path":"a.ts"}',
          thoughtSignature: 'sig-1',
        },
      },
      {
        type: 'tool-call',
        call: { id: 'call_r-7_1', name: 'read_file', kind: 'function', arguments: '{"path":"b.ts"}' },
      },
      {
        type: 'usage',
        usage: { promptTokens: 10, completionTokens: 7, totalTokens: 17, cachedPromptTokens: 2, reasoningTokens: 3 },
      },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('emits a call repeated with the same upstream id once; custom calls carry raw input (docs/upstream/provider-b.md §13.14, §13.17)', () => {
    const events = run(chunks('provider-b-duplicate-call.chunks.txt'), ['apply_patch']);
    expect(events).toEqual([
      { type: 'tool-call', call: { id: 'fc-1', name: 'read_file', kind: 'function', arguments: '{"path":"a.ts"}' } },
      {
        type: 'tool-call',
        call: { id: 'call_req-9_1', name: 'apply_patch', kind: 'custom', input: '*** Begin Patch\n*** End Patch' },
      },
      { type: 'tool-call', call: { id: 'call_req-9_2', name: 'apply_patch', kind: 'custom', input: '{"patch":"x"}' } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('uses the traceId when the response has no responseId, and {} for absent or null args', () => {
    const events = run([
      { traceId: 't-5', response: { candidates: [{ content: { parts: [{ functionCall: { name: 'now' } }] } }] } },
      {
        traceId: 't-5',
        response: { candidates: [{ content: { parts: [{ functionCall: { name: 'now', args: null } }] } }] },
      },
    ]);
    expect(events.slice(0, 2)).toEqual([
      { type: 'tool-call', call: { id: 'call_t-5_0', name: 'now', kind: 'function', arguments: '{}' } },
      { type: 'tool-call', call: { id: 'call_t-5_1', name: 'now', kind: 'function', arguments: '{}' } },
    ]);
  });

  it('passes args that are not an object on as their JSON text, for the chat layer to refuse the call, never as {}', () => {
    const call = (id: string, args: unknown) => ({
      responseId: 'r',
      candidates: [{ content: { parts: [{ functionCall: { id, name: 'ls', args } }] } }],
    });
    const events = run([call('c', [1, 2]), call('d', 'x')]);
    expect(events.slice(0, 2)).toEqual([
      { type: 'tool-call', call: { id: 'c', name: 'ls', kind: 'function', arguments: '[1,2]' } },
      { type: 'tool-call', call: { id: 'd', name: 'ls', kind: 'function', arguments: '"x"' } },
    ]);
  });

  it.each([
    ['STOP', { type: 'finish', reason: 'stop' }],
    ['FINISH_REASON_UNSPECIFIED', { type: 'finish', reason: 'stop' }],
    ['OTHER', { type: 'finish', reason: 'stop' }],
    ['MAX_TOKENS', { type: 'finish', reason: 'length' }],
    ['SAFETY', { type: 'finish', reason: 'content_filter' }],
    ['RECITATION', { type: 'finish', reason: 'content_filter' }],
    ['PROHIBITED_CONTENT', { type: 'finish', reason: 'content_filter' }],
    ['BLOCKLIST', { type: 'finish', reason: 'content_filter' }],
    ['SPII', { type: 'finish', reason: 'content_filter' }],
    ['IMAGE_SAFETY', { type: 'finish', reason: 'content_filter' }],
  ])('maps finishReason %s (docs/upstream/provider-b.md §13.20)', (reason, expected) => {
    expect(run([candidate({ finishReason: reason })])).toEqual([expected]);
  });

  it.each(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL'])(
    'turns %s into a terminal invalid_tool_call error after usage (docs/upstream/provider-b.md §13.20)',
    (reason) => {
      const events = run([
        {
          response: {
            ...candidate({ finishReason: reason }).response,
            usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 0 },
          },
        },
      ]);
      expect(events.map((event) => event.type)).toEqual(['usage', 'error']);
      expect(events[1]).toMatchObject({ error: { code: 'invalid_tool_call' } });
    },
  );

  it('passes an empty functionCall on as an empty call (the chat layer drops it) that does not count as the call MALFORMED_FUNCTION_CALL needs', () => {
    const parts = (finishReason: string, ...list: object[]) => ({
      responseId: 'r',
      candidates: [{ content: { parts: list }, finishReason }],
    });
    const empty = run([parts('MALFORMED_FUNCTION_CALL', { functionCall: {} })]);
    expect(empty).toEqual([
      { type: 'tool-call', call: { id: 'call_r_0', name: '', kind: 'function', arguments: '{}' } },
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'invalid_tool_call' }) }),
    ]);
    const beside = run([
      parts('MALFORMED_FUNCTION_CALL', { functionCall: { name: 'ls', args: {} } }, { functionCall: {} }),
    ]);
    expect(beside.map((event) => event.type)).toEqual(['tool-call', 'tool-call', 'finish']);
  });

  it('keeps the last non-empty finishReason', () => {
    expect(run([candidate({ finishReason: 'MAX_TOKENS' }), candidate({ finishReason: '' })])).toEqual([
      { type: 'finish', reason: 'length' },
    ]);
  });

  it('treats a blocked prompt without candidates as content_filter', () => {
    expect(run([{ response: { promptFeedback: { blockReason: 'SAFETY' } } }])).toEqual([
      { type: 'finish', reason: 'content_filter' },
    ]);
  });

  it('finishes with stop when a prompt block arrives beside candidates that answered', () => {
    const answered = {
      response: {
        promptFeedback: { blockReason: 'SAFETY' },
        candidates: [{ content: { role: 'model', parts: [{ text: 'Fine.' }] } }],
      },
    };
    expect(run([answered])).toEqual([
      { type: 'text-delta', text: 'Fine.' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('streams a part marked thought: false as content, not reasoning', () => {
    const parts = [
      { text: 'Thinking.', thought: true },
      { text: 'Answer.', thought: false },
    ];
    expect(run([{ response: { candidates: [{ content: { role: 'model', parts } }] } }]).slice(0, 2)).toEqual([
      { type: 'reasoning-delta', text: 'Thinking.' },
      { type: 'text-delta', text: 'Answer.' },
    ]);
  });

  it('keeps the tool-use prompt and thought counts of an earlier frame when the last usageMetadata omits them', () => {
    const usage = (usageMetadata: Record<string, number>) => ({
      response: { candidates: [{ content: { role: 'model', parts: [] } }], usageMetadata },
    });
    const events = run([
      usage({ promptTokenCount: 10, toolUsePromptTokenCount: 6, thoughtsTokenCount: 3 }),
      usage({ candidatesTokenCount: 4 }),
    ]);
    expect(events).toEqual([
      { type: 'usage', usage: { promptTokens: 16, completionTokens: 7, totalTokens: 23, reasoningTokens: 3 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('keeps only [A-Za-z0-9_-] of the response id in the id of an id-less call', () => {
    const events = run([
      {
        response: {
          responseId: 'r/7=:+ x',
          candidates: [{ content: { parts: [{ functionCall: { name: 'now' } }] } }],
        },
      },
    ]);
    expect(events[0]).toEqual({
      type: 'tool-call',
      call: { id: 'call_r7x_0', name: 'now', kind: 'function', arguments: '{}' },
    });
  });

  it('ends with a classified error on an error frame and never echoes its text', () => {
    const events = run([
      candidate({}),
      { error: { code: 503, message: 'SECRET backend text', status: 'UNAVAILABLE' } },
    ]);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'error', error: { code: 'upstream' } });
    // Only the log's upstream_message may carry the upstream's words; nothing a client is shown does.
    const error = (events[0] as { error: GatewayError }).error;
    expect(JSON.stringify({ ...error, upstream: undefined, message: error.message })).not.toContain('SECRET');
    expect(error.upstream?.message).toContain('SECRET');
  });

  it('reads a field of another JSON type as absent, and a payload without the wrapper as the response', () => {
    const events = run([
      // Not a JSON object: a frame (the turn is not empty), nothing to read.
      7,
      { candidates: 'none', promptFeedback: { blockReason: 5 } },
      {
        traceId: 3,
        responseId: ['r'],
        candidates: [
          {
            finishReason: 1,
            content: {
              parts: [
                'text',
                { text: 5 },
                { text: 'Hi', thought: 'true' },
                { functionCall: { id: 4, name: 6, args: [1] }, thoughtSignature: 9 },
              ],
            },
          },
          'second',
        ],
        usageMetadata: { promptTokenCount: '10', candidatesTokenCount: 4, totalTokenCount: null },
      },
      { response: { candidates: [7] }, traceId: 't-2' },
    ]);
    expect(events).toEqual([
      { type: 'text-delta', text: 'Hi' },
      // Args that are not an object stay what they are: the chat layer refuses the call.
      { type: 'tool-call', call: { id: 'call_req-9_0', name: '', kind: 'function', arguments: '[1]' } },
      { type: 'usage', usage: { promptTokens: 0, completionTokens: 4, totalTokens: 4 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('reports an empty stream as a retryable upstream error', () => {
    expect(run([])).toEqual([{ type: 'error', error: expect.objectContaining({ code: 'upstream', retryable: true }) }]);
  });
});

describe(mapUsage.name, () => {
  it('adds thoughts to completion and sums the total when absent', () => {
    expect(mapUsage({ promptTokenCount: 10, candidatesTokenCount: 4, thoughtsTokenCount: 3 })).toEqual({
      promptTokens: 10,
      completionTokens: 7,
      totalTokens: 17,
      reasoningTokens: 3,
    });
  });

  it('adds the tool-use prompt to the prompt, and the total is prompt + completion', () => {
    expect(
      mapUsage({
        promptTokenCount: 10,
        candidatesTokenCount: 4,
        thoughtsTokenCount: 3,
        toolUsePromptTokenCount: 6,
        cachedContentTokenCount: 2,
        totalTokenCount: 23,
      }),
    ).toEqual({ promptTokens: 16, completionTokens: 7, totalTokens: 23, cachedPromptTokens: 2, reasoningTokens: 3 });
  });
});
