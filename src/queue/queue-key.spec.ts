import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { conversationIdOf } from '../chat/conversation-id';
import type { QueueKeyInput } from './queue-key';
import { isToolTurn, queueKey } from './queue-key';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function input(
  parts: {
    body?: Record<string, unknown>;
    headers?: IncomingHttpHeaders;
    remoteAddress?: string;
    caller?: string;
  } = {},
): QueueKeyInput {
  const request = { body: parts.body ?? {}, headers: parts.headers ?? {}, remoteAddress: parts.remoteAddress };
  return { ...request, caller: parts.caller ?? 'anonymous', conversation: conversationIdOf(request) };
}

const toolTools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];

describe('queueKey', () => {
  const everything = input({
    body: { conversation_id: 'c1', user: 'alice', seed: 7, flag: false, nested: { a: 1 }, blank: ' ' },
    headers: { 'x-team': ' blue ', 'x-conversation-id': 'conv-42' },
    remoteAddress: '10.0.0.9',
    caller: 'bearer:abc',
  });

  it('chat mode is the conversation id', () => {
    expect(queueKey('chat', everything)).toEqual({
      mode: 'chat:body',
      value: 'chat:body:conversation_id=c1',
      hash: sha256('chat:body:conversation_id=c1').slice(0, 16),
    });
  });

  it('global mode is one key for everything', () => {
    expect(queueKey('global', everything)).toEqual({
      mode: 'global',
      value: 'global',
      hash: sha256('global').slice(0, 16),
    });
  });

  it('caller mode keys by caller', () => {
    expect(queueKey('caller', everything)).toMatchObject({ mode: 'caller', value: 'caller:bearer:abc' });
    expect(queueKey('caller', { ...everything, caller: 'header:tenant-2' }).value).toBe('caller:header:tenant-2');
  });

  it('header mode keys by the trimmed header and falls back to global', () => {
    expect(queueKey('header:x-team', everything)).toMatchObject({ mode: 'header:x-team', value: 'header:x-team:blue' });
    expect(queueKey('header:X-Team', everything).value).toBe('header:x-team:blue');
    expect(queueKey('header:x-team', input({ headers: { 'x-team': '  ' } }))).toMatchObject({
      mode: 'global',
      value: 'global',
    });
    expect(queueKey('header:x-team', input())).toMatchObject({ mode: 'global', value: 'global' });
  });

  it('body mode keys by a top-level string, number or boolean and falls back to global', () => {
    expect(queueKey('body:user', everything)).toMatchObject({ mode: 'body:user', value: 'body:user:alice' });
    expect(queueKey('body:seed', everything).value).toBe('body:seed:7');
    expect(queueKey('body:flag', everything).value).toBe('body:flag:false');
    for (const field of ['nested', 'blank', 'missing', 'constructor']) {
      expect(queueKey(`body:${field}`, everything)).toMatchObject({ mode: 'global', value: 'global' });
    }
  });

  it('rejects a mode the config would have refused', () => {
    expect(() => queueKey('session', everything)).toThrow(/unsupported queue key mode/);
  });
});

describe('isToolTurn', () => {
  it('is true with non-empty tools, assistant tool_calls or a tool message', () => {
    expect(isToolTurn({ tools: toolTools, messages: [{ role: 'user', content: 'x' }] })).toBe(true);
    expect(isToolTurn({ messages: [{ role: 'assistant', tool_calls: [{ id: 'c' }] }] })).toBe(true);
    expect(isToolTurn({ messages: [{ role: 'tool', tool_call_id: 'c', content: 'r' }] })).toBe(true);
  });

  it('is false for a plain chat', () => {
    expect(
      isToolTurn({
        tools: [],
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'y', tool_calls: [] },
        ],
      }),
    ).toBe(false);
    expect(isToolTurn({ messages: 'nonsense' })).toBe(false);
  });
});
