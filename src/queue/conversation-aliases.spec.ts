import { conversationIdOf } from './chat-identity';
import { ConversationAliases } from './conversation-aliases';

const user = { role: 'user', content: 'Fix the build' };
const toolTurn = (id: string) => [
  user,
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name: 'ls', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: id, content: 'a.ts' },
];
const identityOf = (messages: unknown[], headers = {}, scope?: string) =>
  conversationIdOf({ body: { messages }, headers, scope });

describe(ConversationAliases.name, () => {
  it('keeps a chat known by its first user message on that identity once its first tool call keys it', () => {
    const aliases = new ConversationAliases();
    const first = identityOf([user]);
    aliases.remember(first, 'call_1');
    const later = identityOf(toolTurn('call_1'));
    expect(later.source).toBe('chat:earliest_tool');
    expect(aliases.upstreamIdentity(later)).toEqual(first);
    expect(aliases.upstreamIdentity(identityOf([...toolTurn('call_1'), user]))).toEqual(first);
  });

  it('leaves alone a chat whose tool call it never saw, and any identity not found by a tool call', () => {
    const aliases = new ConversationAliases();
    aliases.remember(identityOf([user]), 'call_1');
    const other = identityOf(toolTurn('call_2'));
    expect(aliases.upstreamIdentity(other)).toEqual(other);
    const byHeader = identityOf(toolTurn('call_1'), { 'x-conversation-id': 'c-1' });
    expect(aliases.upstreamIdentity(byHeader)).toEqual(byHeader);
  });

  it('remembers only for a chat known by its first user message: a client id, an address or nothing stays as it is', () => {
    const aliases = new ConversationAliases();
    aliases.remember(identityOf([user], { 'x-conversation-id': 'c-1' }), 'call_1');
    aliases.remember(
      conversationIdOf({ body: { messages: [] }, headers: {}, remoteAddress: '10.0.0.1', scope: undefined }),
      'call_2',
    );
    aliases.remember(identityOf([]), 'call_3');
    aliases.remember(identityOf([user]), undefined);
    for (const id of ['call_1', 'call_2', 'call_3']) {
      const later = identityOf(toolTurn(id));
      expect(aliases.upstreamIdentity(later)).toEqual(later);
    }
  });

  it('keeps one chat on a first identity: a second chat that started with the same message keeps its own', () => {
    const aliases = new ConversationAliases();
    const first = identityOf([user]);
    aliases.remember(first, 'call_A');
    aliases.remember(identityOf([user]), 'call_B');
    expect(aliases.upstreamIdentity(identityOf(toolTurn('call_A')))).toEqual(first);
    const second = identityOf(toolTurn('call_B'));
    expect(aliases.upstreamIdentity(second)).toEqual(second);
    // The chat that holds it may answer its first tool turn again (a retried turn): still its own.
    aliases.remember(first, 'call_A');
    expect(aliases.upstreamIdentity(identityOf(toolTurn('call_A')))).toEqual(first);
  });

  it("keeps each caller's chat on its own first identity, and never maps one caller's call to another's chat", () => {
    const aliases = new ConversationAliases();
    const alice = identityOf([user], {}, 'header:alice');
    const bob = identityOf([user], {}, 'header:bob');
    expect(bob.value).not.toBe(alice.value);
    aliases.remember(alice, 'call_A');
    aliases.remember(bob, 'call_B');
    expect(aliases.upstreamIdentity(identityOf(toolTurn('call_A'), {}, 'header:alice'))).toEqual(alice);
    expect(aliases.upstreamIdentity(identityOf(toolTurn('call_B'), {}, 'header:bob'))).toEqual(bob);
    // Another caller sending alice's call id is not alice's chat.
    const stranger = identityOf(toolTurn('call_A'), {}, 'header:bob');
    expect(aliases.upstreamIdentity(stranger)).toEqual(stranger);
  });

  it('finds the call by the id the cascade reads (trimmed)', () => {
    const aliases = new ConversationAliases();
    const first = identityOf([user]);
    aliases.remember(first, ' call_1 ');
    expect(aliases.upstreamIdentity(identityOf(toolTurn('call_1')))).toEqual(first);
  });

  it('forgets a chat silent for a day, and keeps one continued within the day', () => {
    // The cache reads its clock from performance.now() and refreshes its reading on a timer: both move.
    jest.useFakeTimers({ doNotFake: ['performance'] });
    let now = performance.now();
    jest.spyOn(performance, 'now').mockImplementation(() => now);
    const pass = (ms: number) => {
      now += ms;
      jest.advanceTimersByTime(ms);
    };
    try {
      const hour = 60 * 60 * 1000;
      const aliases = new ConversationAliases();
      const first = identityOf([user]);
      aliases.remember(first, 'call_1');
      const later = identityOf(toolTurn('call_1'));
      // Each turn within the day starts the day again.
      for (let turn = 0; turn < 3; turn++) {
        pass(23 * hour);
        expect(aliases.upstreamIdentity(later)).toEqual(first);
      }
      pass(24 * hour + 1);
      expect(aliases.upstreamIdentity(later)).toEqual(later);
    } finally {
      jest.restoreAllMocks();
      jest.useRealTimers();
    }
  });
});
