import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { sessionIdForChat } from '../providers/provider-a/provider-a.request';
import { providerBSessionId } from '../providers/provider-b/provider-b.request';
import type { QueueKeyInput } from './chat-identity';
import { CONVERSATION_ID_VERSION, conversationIdOf, isToolTurn, queueKey } from './chat-identity';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function input(
  parts: {
    body?: Record<string, unknown>;
    headers?: IncomingHttpHeaders;
    remoteAddress?: string;
    caller?: string;
    scope?: string;
  } = {},
): QueueKeyInput {
  const request = {
    body: parts.body ?? {},
    headers: parts.headers ?? {},
    remoteAddress: parts.remoteAddress,
    scope: parts.scope,
  };
  return { ...request, caller: parts.caller ?? 'anonymous', conversation: conversationIdOf(request) };
}

/** The `chat` queue key: the conversation id with its hash (what the queue logs). */
const chatKey = (request: QueueKeyInput) => queueKey('chat', request);

const toolTools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];

/** Turn n of one agent chat: same start, growing history with new tool ids and per-message ids. */
function chatTurns(firstUser: string, firstCallId: string) {
  const turn1 = [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: firstUser },
  ];
  const turn2 = [
    ...turn1,
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: firstCallId, type: 'function', function: { name: 'read_file', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: firstCallId, content: 'file body' },
  ];
  const turn3 = [
    ...turn2,
    {
      role: 'assistant',
      id: 'msg_77',
      content: null,
      tool_calls: [{ id: `${firstCallId}-later`, type: 'function', function: { name: 'read_file', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: `${firstCallId}-later`, content: 'more' },
    { role: 'user', content: 'and now?' },
  ];
  return [turn1, turn2, turn3].map((messages) => ({ model: 'gpt-5.6-sol', tools: toolTools, messages }));
}

describe('conversationIdOf (as the chat queue key)', () => {
  it('keys x-conversation-id: conv-42 to the documented value and hash', () => {
    const key = chatKey(
      input({ headers: { 'x-conversation-id': 'conv-42' }, body: { messages: [{ role: 'user', content: 'hi' }] } }),
    );
    expect(key).toEqual({
      mode: 'chat:header:x-conversation-id',
      value: 'chat:header:x-conversation-id:conv-42',
      hash: '02d98b38b300cc5e',
    });
  });

  it('hashes the value as the first 16 lower-case hex of SHA-256 of its UTF-8 bytes', () => {
    const key = chatKey(input({ body: { conversation_id: 'çhat-é' } }));
    expect(key.value).toBe('chat:body:conversation_id=çhat-é');
    expect(key.hash).toBe(sha256('chat:body:conversation_id=çhat-é').slice(0, 16));
    expect(key.hash).toMatch(/^[0-9a-f]{16}$/);
  });

  describe('step 1: top-level body fields', () => {
    it('takes conversation_id, chat_id, thread_id, session_id in that order', () => {
      const body = { session_id: 's', thread_id: 't', chat_id: 'c', conversation_id: 'v' };
      expect(chatKey(input({ body })).value).toBe('chat:body:conversation_id=v');
      expect(chatKey(input({ body: { session_id: 's', thread_id: 't', chat_id: 'c' } })).value).toBe(
        'chat:body:chat_id=c',
      );
      expect(chatKey(input({ body: { session_id: 's', thread_id: 't' } })).value).toBe('chat:body:thread_id=t');
      expect(chatKey(input({ body: { session_id: 's' } }))).toMatchObject({
        mode: 'chat:body',
        value: 'chat:body:session_id=s',
      });
    });

    it('skips blank and non-scalar values and accepts numbers and booleans', () => {
      expect(chatKey(input({ body: { conversation_id: '   ', chat_id: { nested: 1 }, thread_id: 42 } })).value).toBe(
        'chat:body:thread_id=42',
      );
      expect(chatKey(input({ body: { conversation_id: null, session_id: true } })).value).toBe(
        'chat:body:session_id=true',
      );
      expect(chatKey(input({ body: { conversation_id: '  padded  ' } })).value).toBe(
        'chat:body:conversation_id=padded',
      );
    });

    it('skips a number JSON cannot write (1e999 parses as Infinity), so such chats do not share one key', () => {
      const body = JSON.parse('{"conversation_id": 1e999, "chat_id": -1e999, "thread_id": "t"}') as Record<
        string,
        unknown
      >;
      expect(chatKey(input({ body })).value).toBe('chat:body:thread_id=t');
    });

    it('wins over metadata and headers', () => {
      const key = chatKey(
        input({
          body: { conversation_id: 'body-id', metadata: { chat_id: 'meta' } },
          headers: { 'x-conversation-id': 'conv-42' },
        }),
      );
      expect(key).toMatchObject({ mode: 'chat:body', value: 'chat:body:conversation_id=body-id' });
    });
  });

  describe('step 2: metadata fields', () => {
    it('uses metadata.chat_id over the header', () => {
      const key = chatKey(
        input({ body: { metadata: { chat_id: 'meta-1' } }, headers: { 'x-conversation-id': 'conv-42' } }),
      );
      expect(key).toMatchObject({ mode: 'chat:metadata', value: 'chat:metadata:chat_id=meta-1' });
    });

    it('follows the field order and ignores a non-object metadata', () => {
      expect(chatKey(input({ body: { metadata: { session_id: 's', thread_id: 't' } } })).value).toBe(
        'chat:metadata:thread_id=t',
      );
      expect(chatKey(input({ body: { metadata: ['chat_id'] }, headers: { 'x-session-id': 'h' } })).mode).toBe(
        'chat:header:x-session-id',
      );
    });
  });

  describe('step 3: headers', () => {
    it.each([['x-conversation-id'], ['x-conversation-thread-id'], ['x-session-id'], ['x-cursor-session-id']])(
      'uses %s',
      (name) => {
        expect(chatKey(input({ headers: { [name]: ' abc ' } }))).toMatchObject({
          mode: `chat:header:${name}`,
          value: `chat:header:${name}:abc`,
        });
      },
    );

    it('takes the headers in order and skips blank ones', () => {
      const headers = { 'x-cursor-session-id': 'cursor', 'x-session-id': 'session', 'x-conversation-id': ' ' };
      expect(chatKey(input({ headers })).value).toBe('chat:header:x-session-id:session');
    });

    it('wins over tool ids in the history', () => {
      const [, turn2] = chatTurns('hello', 'call_1');
      expect(chatKey(input({ body: turn2, headers: { 'x-conversation-thread-id': 'th' } })).mode).toBe(
        'chat:header:x-conversation-thread-id',
      );
    });
  });

  describe('step 4: earliest tool-call id', () => {
    it('takes the first assistant tool_calls id in message order', () => {
      const [, turn2] = chatTurns('hello', 'call_first');
      expect(chatKey(input({ body: turn2 }))).toMatchObject({
        mode: 'chat:earliest_tool',
        value: 'chat:earliest_tool:call_first',
      });
    });

    it('accepts a tool message tool_call_id when it comes first and skips blank ids', () => {
      const body = {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', tool_calls: [{ id: '  ', function: { name: 'a' } }] },
          { role: 'tool', tool_call_id: 'orphan', content: 'r' },
          { role: 'assistant', tool_calls: [{ id: 'later' }] },
        ],
      };
      expect(chatKey(input({ body })).value).toBe('chat:earliest_tool:orphan');
    });

    it('skips a tool message whose tool_call_id is blank', () => {
      const body = {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', tool_call_id: ' \t', content: 'r' },
          { role: 'assistant', tool_calls: [{ id: 'call_real' }] },
        ],
      };
      expect(chatKey(input({ body })).value).toBe('chat:earliest_tool:call_real');
    });
  });

  describe('step 5: first user message', () => {
    it('hashes the trimmed text of the first user message with text', () => {
      const body = {
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: '   ' },
          { role: 'user', content: '  fix the bug  ' },
        ],
      };
      expect(chatKey(input({ body }))).toEqual(
        expect.objectContaining({ mode: 'chat:first_user', value: `chat:first_user:${sha256('fix the bug')}` }),
      );
    });

    it('hashes the RFC 8785 form of a parts array, so key order and spacing do not matter', () => {
      const parts = [
        { type: 'text', text: 'describe this' },
        { type: 'image_url', image_url: { url: 'data:x', detail: 'low' } },
      ];
      const reordered = [
        { text: 'describe this', type: 'text' },
        { image_url: { detail: 'low', url: 'data:x' }, type: 'image_url' },
      ];
      const key = chatKey(input({ body: { messages: [{ role: 'user', content: parts }] } }));
      const canonical =
        '[{"text":"describe this","type":"text"},{"image_url":{"detail":"low","url":"data:x"},"type":"image_url"}]';
      expect(key.value).toBe(`chat:first_user:${sha256(canonical)}`);
      expect(chatKey(input({ body: { messages: [{ role: 'user', content: reordered }] } })).value).toBe(key.value);
    });

    it('skips a user message without text (image only)', () => {
      const body = {
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'u' } }] },
          { role: 'user', content: 'text' },
        ],
      };
      expect(chatKey(input({ body })).value).toBe(`chat:first_user:${sha256('text')}`);
    });
  });

  describe('steps 6–8: client address, then global', () => {
    it('uses the first X-Forwarded-For entry', () => {
      const key = chatKey(
        input({ headers: { 'x-forwarded-for': ' 203.0.113.7 , 10.0.0.1' }, remoteAddress: '127.0.0.1' }),
      );
      expect(key).toMatchObject({ mode: 'chat:x-forwarded-for', value: 'chat:x-forwarded-for:203.0.113.7' });
    });

    it('uses the remote address when nothing else is there', () => {
      expect(chatKey(input({ remoteAddress: '::ffff:127.0.0.1' }))).toMatchObject({
        mode: 'chat:remote_ip',
        value: 'chat:remote_ip:::ffff:127.0.0.1',
      });
      expect(chatKey(input({ headers: { 'x-forwarded-for': ' , 10.0.0.1' }, remoteAddress: '10.1.1.1' })).mode).toBe(
        'chat:remote_ip',
      );
    });

    it('falls back to the global key', () => {
      expect(chatKey(input())).toEqual({ mode: 'chat:global', value: 'global', hash: sha256('global').slice(0, 16) });
    });
  });

  describe("the caller's scope", () => {
    const alice = `bearer:${sha256('alice')}`;
    const [turn1, turn2] = chatTurns('same start', 'call_1');
    /** One request per cascade step, steps 1–8. */
    const everyStep = [
      { body: { conversation_id: '1' } },
      { body: { metadata: { chat_id: '1' } } },
      { headers: { 'x-session-id': '1' } },
      { body: turn2 },
      { body: turn1 },
      { headers: { 'x-forwarded-for': '203.0.113.7' } },
      { remoteAddress: '127.0.0.1' },
      {},
    ];

    it('puts the caller and a line feed before the value of every step, the source unchanged', () => {
      for (const request of everyStep) {
        const unscoped = chatKey(input(request));
        const scoped = chatKey(input({ ...request, scope: alice }));
        expect(scoped.mode).toBe(unscoped.mode);
        expect(scoped.value).toBe(`${alice}\n${unscoped.value}`);
      }
      expect(new Set(everyStep.map((request) => chatKey(input(request)).mode)).size).toBe(8);
    });

    it('keeps two callers apart on every step, and one caller on one key', () => {
      for (const request of everyStep) {
        const red = chatKey(input({ ...request, scope: 'header:red' }));
        expect(chatKey(input({ ...request, scope: 'header:blue' })).hash).not.toBe(red.hash);
        expect(chatKey(input({ ...request, scope: 'header:red' })).hash).toBe(red.hash);
      }
    });

    it('keeps the value of a request without a scope as the steps give it', () => {
      expect(chatKey(input({ headers: { 'x-conversation-id': 'conv-42' } }))).toMatchObject({
        value: 'chat:header:x-conversation-id:conv-42',
        hash: '02d98b38b300cc5e',
      });
      expect(conversationIdOf({ body: {}, headers: {}, scope: undefined })).toEqual({
        source: 'chat:global',
        value: 'global',
      });
    });
  });

  describe('stability', () => {
    it('keeps one key across turns 2 and 3 of a chat without ids or headers', () => {
      const [, turn2, turn3] = chatTurns('refactor module x', 'call_abc');
      expect(chatKey(input({ body: turn3 })).hash).toBe(chatKey(input({ body: turn2 })).hash);
    });

    it('keeps one header key across all turns', () => {
      const hashes = chatTurns('q', 'c').map(
        (body) => chatKey(input({ body, headers: { 'x-conversation-id': 'conv-42' } })).hash,
      );
      expect(new Set(hashes)).toEqual(new Set(['02d98b38b300cc5e']));
    });

    it('gives different chats different keys', () => {
      const [chatA] = chatTurns('refactor module x', 'call_a');
      const [chatB] = chatTurns('write the docs', 'call_b');
      expect(chatKey(input({ body: chatA })).hash).not.toBe(chatKey(input({ body: chatB })).hash);
      const [, chatA2] = chatTurns('same start', 'call_a');
      const [, chatB2] = chatTurns('same start', 'call_b');
      expect(chatKey(input({ body: chatA2 })).hash).not.toBe(chatKey(input({ body: chatB2 })).hash);
    });
  });
});

/**
 * Derivation v2 end to end: request → conversation id → upstream cache identity. These values
 * are what the upstreams hold caches under today; a test failing here means every upstream
 * cache would go cold — bump CONVERSATION_ID_VERSION and document it instead (docs/providers.md).
 */
describe('upstream identities derived from the conversation id (v2)', () => {
  const identities = (request: {
    body?: Record<string, unknown>;
    headers?: IncomingHttpHeaders;
    remoteAddress?: string;
    scope?: string;
  }) => {
    const { value } = conversationIdOf({
      body: request.body ?? {},
      headers: request.headers ?? {},
      remoteAddress: request.remoteAddress,
      scope: request.scope,
    });
    return { providerA: sessionIdForChat(value), providerB: providerBSessionId(value) };
  };

  it('keeps the reference example of docs/upstream/provider-a.md §3 and the provider_b session id', () => {
    expect(CONVERSATION_ID_VERSION).toBe(2);
    expect(identities({ headers: { 'x-conversation-id': 'conv-42' } })).toEqual({
      providerA: '47b61fd1-c0eb-3d05-2adc-5c4396baffee',
      providerB: 'ecc59c21-598a-c9f9-b979-fb8d4160f0f5',
    });
  });

  it('keeps the values for a body conversation id, a first user message and the global fallback', () => {
    expect(identities({ body: { conversation_id: 'conv-7' } })).toEqual({
      providerA: '1a81fd97-0dd7-15ee-bbda-bb9d33f22893',
      providerB: 'b79bb7fd-7a74-633c-fe17-bd5b0e300083',
    });
    expect(identities({ body: { messages: [{ role: 'user', content: 'fix the bug' }] } })).toEqual({
      providerA: '92868eac-e4bc-fe8c-e6d2-2569da6f974d',
      providerB: 'cc590a76-8b66-db70-e955-b9a34326797c',
    });
    expect(identities({})).toEqual({
      providerA: 'a1e957dd-72c8-7046-399b-852ac4ef4a08',
      providerB: '4b27463d-1466-9a40-e156-7d8f7b63ec79',
    });
  });

  it("gives a scoped chat the values of its caller's scope", () => {
    const conv42 = { headers: { 'x-conversation-id': 'conv-42' } };
    const fixTheBug = { body: { messages: [{ role: 'user', content: 'fix the bug' }] } };
    const alice = `bearer:${sha256('alice')}`;
    expect(identities({ ...conv42, scope: alice })).toEqual({
      providerA: 'bf225956-cea6-9726-c046-6f438bd3383b',
      providerB: 'de51e4a4-e299-8ec8-8cfe-bb1e8de48d2c',
    });
    expect(identities({ ...fixTheBug, scope: alice })).toEqual({
      providerA: 'cd84b55f-84af-3875-4115-17ee46da6095',
      providerB: '778579eb-f142-a7e5-536c-91e291db51c0',
    });
    expect(identities({ ...conv42, scope: 'header:red' })).toEqual({
      providerA: '9be17736-8410-869e-be03-32b65d0b5676',
      providerB: 'ec7e50cf-b82c-047a-fb2b-6c6b3d2764de',
    });
  });

  it('does not depend on the queue key mode', () => {
    const request = {
      body: { conversation_id: 'conv-7', user: 'alice' },
      headers: { 'x-team': 'blue' },
      scope: undefined,
    };
    const conversation = conversationIdOf(request);
    for (const mode of ['global', 'caller', 'header:x-team', 'body:user']) {
      expect(queueKey(mode, { ...request, caller: 'anonymous', conversation }).value).not.toBe(conversation.value);
    }
    expect(identities(request).providerA).toBe('1a81fd97-0dd7-15ee-bbda-bb9d33f22893');
  });
});

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
