import { chainAfterTurn, chainedBody, chainErrorCode, continuationItems } from './provider-a.chain';
import type { JsonObject } from '../../common/json';

const user = (text: string): JsonObject => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const body = (input: JsonObject[], extra: JsonObject = {}): JsonObject => ({
  model: 'm',
  instructions: 'Be brief.',
  input,
  stream: true,
  store: false,
  ...extra,
});
const messageItem = (text: string): JsonObject => ({
  id: 'msg_1',
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
});
const callItem: JsonObject = {
  id: 'fc_1',
  type: 'function_call',
  call_id: 'call_1',
  name: 'read_file',
  arguments: '{"path":"a.ts"}',
};
const noCustom = new Set<string>();

describe('provider_a response chains', () => {
  const first = body([user('Hi')]);

  it('continues with only the items after the sent input and the echo of the output', () => {
    const chain = chainAfterTurn(
      first,
      'resp_1',
      [{ type: 'reasoning', id: 'rs_1' }, messageItem('Hello.')],
      noCustom,
    )!;
    const next = body([
      user('Hi'),
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] },
      user('More'),
    ]);
    expect(continuationItems(chain, next)).toEqual([user('More')]);
    expect(chainedBody(next, chain.responseId, [user('More')])).toEqual({
      model: 'm',
      instructions: 'Be brief.',
      previous_response_id: 'resp_1',
      input: [user('More')],
      stream: true,
      store: false,
    });
    // The Codex CLI's key order: previous_response_id right before input.
    expect(Object.keys(chainedBody(next, chain.responseId, [user('More')]))).toEqual([
      'model',
      'instructions',
      'previous_response_id',
      'input',
      'stream',
      'store',
    ]);
  });

  it('continues with no items when the client sends exactly the chain again', () => {
    const chain = chainAfterTurn(first, 'resp_1', [messageItem('Hello.')], noCustom)!;
    const again = body([
      user('Hi'),
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] },
    ]);
    expect(continuationItems(chain, again)).toEqual([]);
  });

  it('echoes a refusal as the text of the assistant message', () => {
    const refusal: JsonObject = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'refusal', refusal: 'I cannot help with that.' }],
    };
    const chain = chainAfterTurn(first, 'resp_1', [refusal], noCustom)!;
    const next = body([
      user('Hi'),
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'I cannot help with that.' }] },
      user('Why?'),
    ]);
    expect(continuationItems(chain, next)).toEqual([user('Why?')]);
  });

  it('echoes a tool call as the chat client sends it back (text first, then the calls)', () => {
    const chain = chainAfterTurn(first, 'resp_1', [callItem, messageItem('Reading.')], noCustom)!;
    const next = body([
      user('Hi'),
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Reading.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'x' },
    ]);
    expect(continuationItems(chain, next)).toEqual([{ type: 'function_call_output', call_id: 'call_1', output: 'x' }]);
  });

  it('sends in full when history, instructions or tools changed, and ignores per-turn metadata', () => {
    const chain = chainAfterTurn(first, 'resp_1', [messageItem('Hello.')], noCustom)!;
    const echo = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] };
    expect(continuationItems(chain, body([user('Hi!'), echo, user('More')]))).toBeUndefined();
    expect(
      continuationItems(
        chain,
        body([user('Hi'), { ...echo, content: [{ type: 'output_text', text: 'Hello' }] }, user('More')]),
      ),
    ).toBeUndefined();
    expect(
      continuationItems(chain, body([user('Hi'), echo, user('More')], { instructions: 'Other.' })),
    ).toBeUndefined();
    expect(continuationItems(chain, body([user('Hi'), echo, user('More')], { tools: [] }))).toBeUndefined();
    expect(continuationItems(chain, body([user('Hi')]))).toBeUndefined();
    expect(
      continuationItems(chain, body([user('Hi'), echo, user('More')], { client_metadata: { turn_id: 't2' } })),
    ).toEqual([user('More')]);
  });

  it('keeps no chain when the output cannot be echoed by a chat client or has no id', () => {
    expect(
      chainAfterTurn(
        first,
        'resp_1',
        [{ type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', input: 'x' }],
        noCustom,
      ),
    ).toBeUndefined();
    expect(chainAfterTurn(first, undefined, [messageItem('x')], noCustom)).toBeUndefined();
  });

  it('recognises chain errors by their code and nothing else', () => {
    expect(
      chainErrorCode({ type: 'error', status: 400, error: { code: 'previous_response_not_found', message: 'gone' } }),
    ).toBe('previous_response_not_found');
    expect(
      chainErrorCode({ type: 'response.failed', response: { error: { code: 'websocket_connection_limit_reached' } } }),
    ).toBe('websocket_connection_limit_reached');
    expect(chainErrorCode({ type: 'error', error: { code: 'server_error' } })).toBeUndefined();
    expect(chainErrorCode({ type: 'response.created' })).toBeUndefined();
  });
});
