import { createHash } from 'node:crypto';
import { runGateway } from './support/child-gateway';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import type { FakeCodeAssist, FakeStreamScript } from './support/fake-provider-b';
import { defaultGeneratePayload } from './support/fake-provider-b';
import type { FakeProviderBHandle } from './support/provider-b-harness';
import { useFakeProviderB } from './support/provider-b-harness';
import { finishFrame, providerBSettings, textFrame } from './support/provider-b-fixtures';
import { WAIT_GUARD_MS } from './support/fake-provider-a';
import { postChatBody } from './support/chat-sse';
import { metricValue } from './support/prometheus-text';

/**
 * The agent queue over HTTP (docs/design/behaviours.md §3–§4, §10 items 15–28 and 56). The queue is
 * the same for every family, so these tests drive provider_b's fake, whose scripts can hold a
 * turn open; the cross-family case (item 29) is in queue-families.e2e-spec.ts.
 */

jest.setTimeout(20_000);

const MODEL = 'gemini-2.5-pro';
const TOOLS = [
  {
    type: 'function',
    function: { name: 'read_file', description: 'read', parameters: { type: 'object', properties: {} } },
  },
];
const keyHash = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 16);

/** A turn that is accepted at once and stays open until its client leaves. */
const HELD: FakeStreamScript = { frames: [{ json: textFrame('working') }], holdOpen: true };
/** A turn that finishes at once. */
const QUICK: FakeStreamScript = { frames: [{ json: defaultGeneratePayload() }] };
/** A turn that is accepted at once and finishes after `ms`. */
const slow = (ms: number): FakeStreamScript => ({
  frames: [{ json: textFrame('working') }, { json: finishFrame('STOP'), delayMs: ms }],
});

interface Harness {
  gateway: TestGateway;
  fake: FakeCodeAssist;
}

/** The provider_b fake and its home, shared by every block of this file (test/support/provider-b-harness.ts). */
let providerB: FakeProviderBHandle;

async function startHarness(settings: Record<string, string>): Promise<Harness> {
  const fake = providerB.fake();
  const gateway = await startGateway({
    ...providerBSettings(fake, providerB.home(), { project: 'fake-project' }),
    GATEWAY_PROVIDERS: 'provider_b',
    ...settings,
  });
  return { gateway, fake };
}

async function stopHarness(harness: Harness | undefined): Promise<void> {
  if (!harness) return;
  // Sockets of clients that left mid-request otherwise hold app.close() for undici's 4 s keep-alive.
  harness.gateway.app.getHttpServer().closeAllConnections();
  await harness.gateway.close();
}

function toolTurn(extra: Record<string, unknown> = {}, text = 'list the files'): Record<string, unknown> {
  return { model: MODEL, stream: true, tools: TOOLS, messages: [{ role: 'user', content: text }], ...extra };
}

/** A request whose client can leave; `response` never rejects (an abort is expected). */
function leavable(gateway: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = postChatBody(gateway, body, { headers, signal: controller.signal }).catch(
    (error: unknown) => error as Error,
  );
  return { response, leave: () => controller.abort() };
}

type LogRecord = Record<string, unknown>;

async function waitForRecords(
  gateway: TestGateway,
  event: string,
  predicate: (record: LogRecord) => boolean,
  count = 1,
  timeoutMs = WAIT_GUARD_MS,
): Promise<LogRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = gateway.logs.records(event).filter(predicate);
    if (found.length >= count) return found;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${count} ${event} record(s); have ${found.length}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const withHash = (hash: string) => (record: LogRecord) => record.key_hash === hash;
const eventsFor = (gateway: TestGateway, hash: string) =>
  gateway.logs
    .records()
    .filter((record) => record.key_hash === hash && String(record.event).startsWith('queue_'))
    .map((record) => record.event);

type Turn = { body?: Record<string, unknown>; headers?: Record<string, string> };

/**
 * Holds one turn, sends a second one; reports whether it had to wait, its queue_acquire record
 * and the session_id each of the two turns reached the upstream with. Decided by the queue's records, not by a timer: while the first turn is held, a
 * serialized second turn can only log `queue_wait`; one that is not can only finish.
 */
async function secondTurnWaits(
  harness: Harness,
  held: Turn,
  next: Turn,
): Promise<{ waited: boolean; record: LogRecord; sessions: unknown[] }> {
  const { gateway, fake } = harness;
  fake.reset();
  fake.enqueue('streamGenerateContent', HELD);
  const holder = leavable(gateway, toolTurn(held.body), held.headers);
  await holder.response;
  const waitsBefore = gateway.logs.records('queue_wait').length;
  const second = postChatBody(gateway, toolTurn(next.body), { headers: next.headers });
  let finished = false;
  const waited = await Promise.race([
    second.then(() => {
      finished = true;
      return false;
    }),
    (async () => {
      while (!finished && gateway.logs.records('queue_wait').length === waitsBefore)
        await new Promise((resolve) => setTimeout(resolve, 5));
      return !finished;
    })(),
  ]);
  finished = true;
  holder.leave();
  const response = await second;
  expect(await response.text()).toContain('[DONE]');
  const [record] = await waitForRecords(
    gateway,
    'queue_acquire',
    (candidate) => candidate.request_id === response.headers.get('x-request-id'),
  );
  // The other branch of the race, checked too: a turn that did not wait logged no queue_wait.
  expect(gateway.logs.records('queue_wait').length).toBe(waitsBefore + (waited ? 1 : 0));
  // The upstream identity of each turn: provider_b's session_id, derived from the conversation id.
  const sessions = fake.requests('streamGenerateContent').map((turn) => turn.body.request.session_id as unknown);
  return { waited, record, sessions };
}

describe('agent queue (POST /v1/chat/completions)', () => {
  providerB = useFakeProviderB({ homePrefix: 'queue-e2e-', home: 'suite' });
  describe('queue keys in the logs (PRIMARY_AGENT_MAX_ACTIVE=2)', () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await startHarness({ PRIMARY_AGENT_MAX_ACTIVE: '2' });
    });
    afterAll(() => stopHarness(harness));

    async function keyOf(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<LogRecord> {
      const response = await postChatBody(harness.gateway, body, { headers });
      await response.text();
      const requestId = response.headers.get('x-request-id');
      const [record] = await waitForRecords(
        harness.gateway,
        'queue_acquire',
        (candidate) => candidate.request_id === requestId,
      );
      return record;
    }

    it('keys every turn carrying x-conversation-id: conv-42 to hash 02d98b38b300cc5e (item 15)', async () => {
      const first = await keyOf(toolTurn(), { 'x-conversation-id': 'conv-42' });
      const second = await keyOf(
        toolTurn({
          messages: [
            { role: 'user', content: 'other text' },
            { role: 'assistant', content: 'ok' },
            { role: 'user', content: 'more' },
          ],
        }),
        { 'x-conversation-id': 'conv-42' },
      );
      for (const record of [first, second])
        expect(record).toMatchObject({ key_mode: 'chat:header:x-conversation-id', key_hash: '02d98b38b300cc5e' });
    });

    it('prefers a body conversation_id and a metadata.chat_id over the header (item 16)', async () => {
      expect(await keyOf(toolTurn({ conversation_id: 'body-1' }), { 'x-conversation-id': 'conv-42' })).toMatchObject({
        key_mode: 'chat:body',
        key_hash: keyHash('chat:body:conversation_id=body-1'),
      });
      expect(
        await keyOf(toolTurn({ metadata: { chat_id: 'meta-1' } }), { 'x-conversation-id': 'conv-42' }),
      ).toMatchObject({
        key_mode: 'chat:metadata',
        key_hash: keyHash('chat:metadata:chat_id=meta-1'),
      });
    });

    it('keeps turns 2 and 3 of one chat on one key and separates chats (item 17)', async () => {
      const start = [{ role: 'user', content: 'fix the tests in pkg/a' }];
      const call = (id: string) => ({
        role: 'assistant',
        content: null,
        tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: '{}' } }],
      });
      const turn2 = [...start, call('call_first'), { role: 'tool', tool_call_id: 'call_first', content: 'a.ts' }];
      const turn3 = [...turn2, call('call_second'), { role: 'tool', tool_call_id: 'call_second', content: 'b.ts' }];
      const two = await keyOf(toolTurn({ messages: turn2 }));
      const three = await keyOf(toolTurn({ messages: turn3 }));
      expect(two).toMatchObject({ key_mode: 'chat:earliest_tool', key_hash: keyHash('chat:earliest_tool:call_first') });
      expect(three.key_hash).toBe(two.key_hash);

      const chatX = await keyOf(toolTurn({}, 'write the changelog'));
      const chatY = await keyOf(toolTurn({}, 'rename the module'));
      expect(chatX.key_mode).toBe('chat:first_user');
      expect(chatY.key_mode).toBe('chat:first_user');
      expect(chatX.key_hash).not.toBe(chatY.key_hash);
    });

    it('keys a first user message given as parts by its content, lone surrogates included', async () => {
      const parts = (text: string) => ({ messages: [{ role: 'user', content: [{ type: 'text', text }] }] });
      const first = await keyOf(toolTurn(parts('fix \ud800 this')));
      const again = await keyOf(toolTurn(parts('fix \ud800 this')));
      const other = await keyOf(toolTurn(parts('fix \ud801 this')));
      expect(first.key_mode).toBe('chat:first_user');
      expect(again.key_hash).toBe(first.key_hash);
      expect(other.key_hash).not.toBe(first.key_hash);
    });

    it('falls back to X-Forwarded-For, then to the remote address (item 18)', async () => {
      // No chat id, no tool call, no user text: only the client address is left.
      const noText = toolTurn({
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        ],
      });
      expect(await keyOf(noText, { 'x-forwarded-for': '203.0.113.9, 10.0.0.1' })).toMatchObject({
        key_mode: 'chat:x-forwarded-for',
        key_hash: keyHash('chat:x-forwarded-for:203.0.113.9'),
      });
      expect(await keyOf(noText)).toMatchObject({
        key_mode: 'chat:remote_ip',
        key_hash: keyHash('chat:remote_ip:127.0.0.1'),
      });
    });

    it('logs key_mode and key_hash only, never the session id, address or prompt (item 21)', async () => {
      await keyOf(toolTurn({}, 'PROMPT-TEXT-7f3a'), { 'x-session-id': 'session-secret-91b2' });
      await keyOf(
        toolTurn({
          messages: [
            {
              role: 'user',
              content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }],
            },
          ],
        }),
        { 'x-forwarded-for': '198.51.100.77' },
      );
      const text = harness.gateway.logs.text;
      expect(text).toContain(keyHash('chat:header:x-session-id:session-secret-91b2'));
      for (const secret of [
        'session-secret-91b2',
        '198.51.100.77',
        'PROMPT-TEXT-7f3a',
        sha256Full('PROMPT-TEXT-7f3a'),
      ]) {
        expect(text).not.toContain(secret);
      }
      const allowed = new Set([
        'level',
        'time',
        'pid',
        'hostname',
        'reqId',
        'event',
        'msg',
        'provider',
        'request_id',
        'key_mode',
        'key_hash',
        'wait_ms',
        'active',
        'active_key',
        'position',
        'run_ms',
      ]);
      const queueRecords = harness.gateway.logs
        .records()
        .filter((candidate) => String(candidate.event).startsWith('queue_'));
      expect(queueRecords.length).toBeGreaterThan(0);
      for (const record of queueRecords) expect(Object.keys(record).filter((key) => !allowed.has(key))).toEqual([]);
    });
  });

  describe('admission order (PRIMARY_AGENT_MAX_ACTIVE=2, per key 1)', () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await startHarness({ PRIMARY_AGENT_MAX_ACTIVE: '2' });
    });
    afterAll(() => stopHarness(harness));
    afterEach(() => harness.fake.reset());

    const upstreamTurns = () => harness.fake.requests('streamGenerateContent');
    const userTextOf = (index: number) => JSON.stringify(upstreamTurns()[index].body);

    it('starts a second turn of the same chat only after the first ended (item 22)', async () => {
      const { gateway, fake } = harness;
      fake.enqueue('streamGenerateContent', slow(700));
      const headers = { 'x-conversation-id': 'conv-serial' };
      const hash = keyHash('chat:header:x-conversation-id:conv-serial');
      const first = await postChatBody(gateway, toolTurn({}, 'turn one'), { headers });
      const second = postChatBody(gateway, toolTurn({}, 'turn two'), { headers });
      await waitForRecords(gateway, 'queue_wait', withHash(hash));
      expect(upstreamTurns()).toHaveLength(1);
      await first.text();
      const firstEndedAt = Date.now();
      expect(await (await second).text()).toContain('[DONE]');
      expect(upstreamTurns()).toHaveLength(2);
      expect(upstreamTurns()[1].receivedAt).toBeGreaterThanOrEqual(firstEndedAt - 50);
      expect(userTextOf(1)).toContain('turn two');
      expect(eventsFor(gateway, hash)).toEqual([
        'queue_acquire',
        'queue_wait',
        'queue_release',
        'queue_acquire',
        'queue_release',
      ]);
    });

    it('starts a third chat when one of the first two ends (item 23)', async () => {
      const { gateway, fake } = harness;
      fake.enqueue('streamGenerateContent', HELD, HELD);
      const chatA = leavable(gateway, toolTurn({ conversation_id: 'three-a' }));
      await chatA.response;
      const chatB = leavable(gateway, toolTurn({ conversation_id: 'three-b' }));
      await chatB.response;
      const third = postChatBody(gateway, toolTurn({ conversation_id: 'three-c' }, 'third chat'));
      const hashC = keyHash('chat:body:conversation_id=three-c');
      await waitForRecords(gateway, 'queue_wait', withHash(hashC));
      // Waiting, decided by the queue's own records (no timer): listed, not granted, not upstream.
      expect(eventsFor(gateway, hashC)).toEqual(['queue_wait']);
      expect(upstreamTurns()).toHaveLength(2);
      chatA.leave();
      expect(await (await third).text()).toContain('[DONE]');
      expect(upstreamTurns()).toHaveLength(3);
      expect(upstreamTurns()[0].closedByClient).toBe(true);
      expect(upstreamTurns()[1].closedByClient).toBe(false);
      const [acquiredC] = await waitForRecords(gateway, 'queue_acquire', withHash(hashC));
      expect(acquiredC.active).toBe(2);
      chatB.leave();
      await fake.waitUntil(() => upstreamTurns()[1].closedByClient);
    });

    it('removes a waiter whose client left at once and grants the next waiter (item 27)', async () => {
      const { gateway, fake } = harness;
      fake.enqueue('streamGenerateContent', HELD, HELD);
      const holders = [
        leavable(gateway, toolTurn({ conversation_id: 'leave-a' })),
        leavable(gateway, toolTurn({ conversation_id: 'leave-b' })),
      ];
      await Promise.all(holders.map((holder) => holder.response));
      const leaving = leavable(gateway, toolTurn({ conversation_id: 'leave-c' }, 'leaving waiter'));
      const hashC = keyHash('chat:body:conversation_id=leave-c');
      await waitForRecords(gateway, 'queue_wait', withHash(hashC));
      const next = postChatBody(gateway, toolTurn({ conversation_id: 'leave-d' }, 'next waiter'));
      const hashD = keyHash('chat:body:conversation_id=leave-d');
      await waitForRecords(gateway, 'queue_wait', withHash(hashD));
      expect(await metricValue(gateway, 'gateway_chat_api_queue_depth', { provider: 'provider_b' })).toBe(2);

      // The holders never finish (HELD): a waiter that was not let go would never be canceled.
      leaving.leave();
      const [cancel] = await waitForRecords(gateway, 'queue_canceled', withHash(hashC));
      expect(cancel.wait_ms).toEqual(expect.any(Number));
      expect(await metricValue(gateway, 'gateway_chat_api_queue_depth', { provider: 'provider_b' })).toBe(1);

      holders[0].leave();
      expect(await (await next).text()).toContain('[DONE]');
      expect(upstreamTurns()).toHaveLength(3);
      expect(userTextOf(2)).toContain('next waiter');
      expect(gateway.logs.records('queue_acquire').filter(withHash(hashC))).toHaveLength(0);
      holders[1].leave();
      await fake.waitUntil(() => upstreamTurns()[1].closedByClient);
    });

    it('lets a later key B run while key A waits at its cap, and runs A in arrival order (item 28)', async () => {
      const { gateway, fake } = harness;
      // Arrival order at the fake: a-one (held), b-one (quick), a-two (held), a-three (default, quick).
      fake.enqueue('streamGenerateContent', HELD, QUICK, HELD);
      const keyA = { 'x-conversation-id': 'hol-a' };
      const hashA = keyHash('chat:header:x-conversation-id:hol-a');
      const a1 = leavable(gateway, toolTurn({}, 'a-one'), keyA);
      await a1.response;
      const a2 = leavable(gateway, toolTurn({}, 'a-two'), keyA);
      await waitForRecords(gateway, 'queue_wait', withHash(hashA), 1);
      const a3 = postChatBody(gateway, toolTurn({}, 'a-three'), { headers: keyA });
      await waitForRecords(gateway, 'queue_wait', withHash(hashA), 2);

      // a-one is HELD for good: had b waited behind chat a's line, it would never finish.
      const b1 = await postChatBody(gateway, toolTurn({}, 'b-one'), { headers: { 'x-conversation-id': 'hol-b' } });
      expect(await b1.text()).toContain('[DONE]');
      expect(eventsFor(gateway, keyHash('chat:header:x-conversation-id:hol-b'))).toEqual([
        'queue_acquire',
        'queue_release',
      ]);

      a1.leave();
      expect(await a2.response).toBeInstanceOf(Response);
      await new Promise((resolve) => setTimeout(resolve, 100));
      // a-three still waits: key A is at its cap while a-two runs.
      expect(upstreamTurns()).toHaveLength(3);
      a2.leave();
      expect(await (await a3).text()).toContain('[DONE]');
      const order = upstreamTurns().map((turn) =>
        ['a-one', 'a-two', 'a-three', 'b-one'].find((text) => JSON.stringify(turn.body).includes(text)),
      );
      expect(order).toEqual(['a-one', 'b-one', 'a-two', 'a-three']);
    });
  });

  describe('limits (PRIMARY_AGENT_MAX_ACTIVE=1, PRIMARY_AGENT_QUEUE_LIMIT=0)', () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await startHarness({ PRIMARY_AGENT_MAX_ACTIVE: '1', PRIMARY_AGENT_QUEUE_LIMIT: '0' });
    });
    afterAll(() => stopHarness(harness));

    it('records a tool turn as acquired and a plain chat as bypassed (item 56)', async () => {
      const { gateway } = harness;
      const waits = (result: string) =>
        metricValue(gateway, 'gateway_chat_api_queue_wait_seconds_count', { provider: 'provider_b', result });
      const ok = () =>
        metricValue(gateway, 'gateway_chat_api_requests_total', {
          provider: 'provider_b',
          model: MODEL,
          status: '200',
        });
      const [acquired, bypassed, completed] = [await waits('acquired'), await waits('bypassed'), await ok()];
      await (await postChatBody(gateway, toolTurn({ conversation_id: 'metrics-1' }))).text();
      expect(await waits('acquired')).toBe(acquired + 1);
      expect(await waits('bypassed')).toBe(bypassed);
      expect(await ok()).toBe(completed + 1);
      await (await postChatBody(gateway, { model: MODEL, messages: [{ role: 'user', content: 'hello' }] })).text();
      expect(await waits('bypassed')).toBe(bypassed + 1);
      expect(await waits('acquired')).toBe(acquired + 1);
    });

    it('refuses the next tool turn with 429 queue_full at once, while a plain chat still runs (items 24, 25)', async () => {
      const { gateway, fake } = harness;
      fake.enqueue('streamGenerateContent', HELD);
      const holder = leavable(gateway, toolTurn({ conversation_id: 'full-a' }));
      await holder.response;
      const before = fake.requests('streamGenerateContent').length;

      // queue_full (not queue_timeout) says it was refused without waiting.
      const refused = await postChatBody(gateway, toolTurn({ conversation_id: 'full-b' }));
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.headers.get('content-type')).toMatch(/application\/json/);
      expect(await refused.json()).toEqual({
        error: {
          type: 'rate_limit_error',
          code: 'queue_full',
          param: null,
          message:
            'the waiting list is full (PRIMARY_AGENT_QUEUE_LIMIT=0): all provider_b slots are busy ' +
            '(PRIMARY_AGENT_MAX_ACTIVE=1); retry in 5 s, or raise PRIMARY_AGENT_MAX_ACTIVE or PRIMARY_AGENT_QUEUE_LIMIT',
        },
      });
      expect(fake.requests('streamGenerateContent')).toHaveLength(before);
      const [full] = await waitForRecords(gateway, 'queue_full', withHash(keyHash('chat:body:conversation_id=full-b')));
      expect(full).toMatchObject({ blocked_by: 'queue_limit', setting: 'PRIMARY_AGENT_QUEUE_LIMIT' });

      const bypassed = await metricValue(gateway, 'gateway_chat_api_queue_wait_seconds_count', {
        provider: 'provider_b',
        result: 'bypassed',
      });
      const plain = await postChatBody(gateway, {
        model: MODEL,
        stream: true,
        messages: [{ role: 'user', content: 'no tools here' }],
      });
      expect(plain.status).toBe(200);
      expect(await plain.text()).toContain('[DONE]');
      expect(
        await metricValue(gateway, 'gateway_chat_api_queue_wait_seconds_count', {
          provider: 'provider_b',
          result: 'bypassed',
        }),
      ).toBe(bypassed + 1);
      expect(
        await metricValue(gateway, 'gateway_chat_api_queue_wait_seconds_count', {
          provider: 'provider_b',
          result: 'full',
        }),
      ).toBeGreaterThanOrEqual(1);
      holder.leave();
    });
  });

  describe('a content part the family cannot carry (PRIMARY_AGENT_MAX_ACTIVE=1, PRIMARY_AGENT_QUEUE_LIMIT=0)', () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await startHarness({ PRIMARY_AGENT_MAX_ACTIVE: '1', PRIMARY_AGENT_QUEUE_LIMIT: '0' });
    });
    afterAll(() => stopHarness(harness));

    it('is answered 400 naming the part at once, not 429 queue_full, while every slot is busy', async () => {
      const { gateway, fake } = harness;
      fake.enqueue('streamGenerateContent', HELD);
      const holder = leavable(gateway, toolTurn({ conversation_id: 'part-a' }));
      await holder.response;
      const before = fake.requests('streamGenerateContent').length;
      // Code Assist takes no image in a tool result: the turn can only end in this 400.
      const screenshot = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
      const refused = await postChatBody(
        gateway,
        toolTurn({
          conversation_id: 'part-b',
          messages: [
            { role: 'user', content: 'look' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
            },
            { role: 'tool', tool_call_id: 'c1', content: [screenshot] },
          ],
        }),
      );
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: unknown }).error).toMatchObject({
        code: 'invalid_request',
        param: 'messages',
        message: expect.stringMatching(
          /^messages\[2\]\.content\[0\]: an image in a tool message is not supported by provider_b/,
        ),
      });
      const requestId = refused.headers.get('x-request-id');
      await gateway.logs.warnings(requestId!);
      // Neither a place in the queue nor a login was taken for it.
      const own = gateway.logs
        .records()
        .filter((record) => record.reqId === requestId || record.request_id === requestId);
      expect(own.map((record) => record.event).filter((event) => /^(queue_|upstream_)/.test(String(event)))).toEqual(
        [],
      );
      expect(fake.requests('streamGenerateContent')).toHaveLength(before);
      holder.leave();
    });
  });

  describe('timeout (PRIMARY_AGENT_MAX_ACTIVE=1, PRIMARY_AGENT_QUEUE_TIMEOUT=50ms)', () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await startHarness({ PRIMARY_AGENT_MAX_ACTIVE: '1', PRIMARY_AGENT_QUEUE_TIMEOUT: '50ms' });
    });
    afterAll(() => stopHarness(harness));

    it('answers a waiter 429 queue_timeout after about 50 ms (item 26)', async () => {
      const { gateway, fake } = harness;
      fake.enqueue('streamGenerateContent', HELD);
      const holder = leavable(gateway, toolTurn({ conversation_id: 'timeout-a' }));
      await holder.response;
      const startedAt = Date.now();
      const refused = await postChatBody(gateway, toolTurn({ conversation_id: 'timeout-b' }));
      const elapsed = Date.now() - startedAt;
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toEqual({
        error: expect.objectContaining({
          type: 'rate_limit_error',
          code: 'queue_timeout',
          message:
            'waited 50ms (PRIMARY_AGENT_QUEUE_TIMEOUT) for a slot: all provider_b slots are busy ' +
            '(PRIMARY_AGENT_MAX_ACTIVE=1); retry in 5 s, or raise PRIMARY_AGENT_MAX_ACTIVE or PRIMARY_AGENT_QUEUE_TIMEOUT',
        }),
      });
      // Not before the timeout; the holder is HELD for good, so only the timeout can end the wait.
      expect(elapsed).toBeGreaterThanOrEqual(45);
      const [record] = await waitForRecords(
        gateway,
        'queue_timeout',
        withHash(keyHash('chat:body:conversation_id=timeout-b')),
      );
      expect(record.wait_ms).toBeGreaterThanOrEqual(45);
      expect(record).toMatchObject({ blocked_by: 'global', setting: 'PRIMARY_AGENT_MAX_ACTIVE' });
      expect(fake.requests('streamGenerateContent')).toHaveLength(1);
      holder.leave();
    });
  });

  describe("timeout on the chat's own turn (PRIMARY_AGENT_QUEUE_TIMEOUT=300ms, default slots)", () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await startHarness({ PRIMARY_AGENT_QUEUE_TIMEOUT: '300ms' });
    });
    afterAll(() => stopHarness(harness));

    it("says that the same chat's earlier turn holds the slot, and logs blocked_by key", async () => {
      const { gateway, fake } = harness;
      fake.enqueue('streamGenerateContent', HELD);
      const headers = { 'x-conversation-id': 'own-turn' };
      const holder = leavable(gateway, toolTurn({}, 'first turn'), headers);
      await holder.response;
      // Fifteen of the sixteen family slots are free: only the chat's own cap holds this turn back.
      const refused = await postChatBody(gateway, toolTurn({}, 'second turn'), { headers });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toEqual({
        error: {
          type: 'rate_limit_error',
          code: 'queue_timeout',
          param: null,
          message:
            'waited 300ms (PRIMARY_AGENT_QUEUE_TIMEOUT) for a slot: another turn of the same chat is still running ' +
            '(PRIMARY_AGENT_MAX_ACTIVE_PER_KEY=1); retry once it has ended, or raise PRIMARY_AGENT_QUEUE_TIMEOUT to ' +
            'wait for it, or PRIMARY_AGENT_MAX_ACTIVE_PER_KEY to run them side by side',
        },
      });
      const [record] = await waitForRecords(
        gateway,
        'queue_timeout',
        withHash(keyHash('chat:header:x-conversation-id:own-turn')),
      );
      // The queue's line is the detail, at info; the request's one warning is its chat_completion,
      // whose message names the same setting.
      expect(record).toMatchObject({
        level: 30,
        key_mode: 'chat:header:x-conversation-id',
        blocked_by: 'key',
        setting: 'PRIMARY_AGENT_MAX_ACTIVE_PER_KEY',
      });
      await gateway.logs.failureLine(refused.headers.get('x-request-id')!, 40, {
        status: 429,
        error_code: 'queue_timeout',
        error_message: expect.stringContaining('PRIMARY_AGENT_MAX_ACTIVE_PER_KEY=1'),
      });
      expect(fake.requests('streamGenerateContent')).toHaveLength(1);
      holder.leave();
    });
  });

  describe('callers (no GATEWAY_BEARER_SECRET, GATEWAY_CALLER_HEADER=x-tenant)', () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await startHarness({ GATEWAY_CALLER_HEADER: 'x-tenant' });
    });
    afterAll(() => stopHarness(harness));

    const as = (bearer: string, headers: Record<string, string> = {}) => ({
      authorization: `Bearer ${bearer}`,
      ...headers,
    });
    const sameStart = { messages: [{ role: 'user', content: 'fix the failing test' }] };

    it('runs two callers whose chats start with the same message side by side, each under its own upstream identity', async () => {
      const outcome = await secondTurnWaits(
        harness,
        { body: sameStart, headers: as('alice') },
        { body: sameStart, headers: as('bob') },
      );
      expect(outcome.waited).toBe(false);
      expect(outcome.record.key_mode).toBe('chat:first_user');
      expect(outcome.sessions).toHaveLength(2);
      expect(outcome.sessions[1]).not.toBe(outcome.sessions[0]);
    });

    it("queues one caller's second turn behind its first, under the same upstream identity", async () => {
      const outcome = await secondTurnWaits(
        harness,
        { body: sameStart, headers: as('alice') },
        { body: sameStart, headers: as('alice') },
      );
      expect(outcome.waited).toBe(true);
      expect(outcome.sessions).toHaveLength(2);
      expect(outcome.sessions[1]).toBe(outcome.sessions[0]);
    });

    it('keeps two tenants apart that send the same explicit chat id, and one tenant on it', async () => {
      const chat = { 'x-session-id': '1' };
      const tenants = await secondTurnWaits(
        harness,
        { headers: as('shared', { ...chat, 'x-tenant': 'red' }) },
        { headers: as('shared', { ...chat, 'x-tenant': 'blue' }) },
      );
      expect(tenants.waited).toBe(false);
      expect(tenants.record.key_mode).toBe('chat:header:x-session-id');
      expect(tenants.sessions[1]).not.toBe(tenants.sessions[0]);
      const oneTenant = await secondTurnWaits(
        harness,
        { headers: as('shared', { ...chat, 'x-tenant': 'red' }) },
        { headers: as('other', { ...chat, 'x-tenant': 'red' }) },
      );
      expect(oneTenant.waited).toBe(true);
      expect(oneTenant.sessions[1]).toBe(oneTenant.sessions[0]);
    });
  });

  describe('behind GATEWAY_BEARER_SECRET', () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await startHarness({ GATEWAY_BEARER_SECRET: 'queue-secret-0123456789' });
    });
    afterAll(() => stopHarness(harness));

    it('keys conv-42 to hash 02d98b38b300cc5e: every bearer is the one secret, so nothing is scoped (item 15)', async () => {
      const response = await postChatBody(harness.gateway, toolTurn(), {
        headers: { authorization: 'Bearer queue-secret-0123456789', 'x-conversation-id': 'conv-42' },
      });
      expect(await response.text()).toContain('[DONE]');
      const [record] = await waitForRecords(
        harness.gateway,
        'queue_acquire',
        (candidate) => candidate.request_id === response.headers.get('x-request-id'),
      );
      expect(record).toMatchObject({ key_mode: 'chat:header:x-conversation-id', key_hash: '02d98b38b300cc5e' });
    });
  });

  describe('key modes (item 19)', () => {
    let harness: Harness | undefined;
    afterEach(async () => {
      await stopHarness(harness);
      harness = undefined;
    });

    it('global serializes every tool turn of the family', async () => {
      harness = await startHarness({ PRIMARY_AGENT_QUEUE_KEY_MODE: 'global' });
      const outcome = await secondTurnWaits(
        harness,
        { body: { conversation_id: 'g-1' } },
        { body: { conversation_id: 'g-2' } },
      );
      expect(outcome).toMatchObject({ waited: true, record: { key_mode: 'global', key_hash: keyHash('global') } });
      const waits = harness.gateway.logs.records('queue_wait');
      expect(waits).toHaveLength(1);
      expect(waits[0]).toMatchObject({ key_mode: 'global', key_hash: keyHash('global'), position: 1 });
    });

    it('header:x-team groups by that header', async () => {
      harness = await startHarness({ PRIMARY_AGENT_QUEUE_KEY_MODE: 'header:x-team' });
      const other = await secondTurnWaits(harness, { headers: { 'x-team': 'red' } }, { headers: { 'x-team': 'blue' } });
      expect(other).toMatchObject({
        waited: false,
        record: { key_mode: 'header:x-team', key_hash: keyHash('header:x-team:blue') },
      });
      const same = await secondTurnWaits(
        harness,
        { headers: { 'x-team': 'red', 'x-conversation-id': 'c1' } },
        { headers: { 'x-team': ' red ', 'x-conversation-id': 'c2' } },
      );
      expect(same).toMatchObject({
        waited: true,
        record: { key_mode: 'header:x-team', key_hash: keyHash('header:x-team:red') },
      });
    });

    it('caller groups by the caller (here the x-tenant header), whatever the chat', async () => {
      harness = await startHarness({ PRIMARY_AGENT_QUEUE_KEY_MODE: 'caller', GATEWAY_CALLER_HEADER: 'x-tenant' });
      const other = await secondTurnWaits(
        harness,
        { headers: { 'x-tenant': 'red' } },
        { headers: { 'x-tenant': 'blue' } },
      );
      expect(other).toMatchObject({
        waited: false,
        record: { key_mode: 'caller', key_hash: keyHash('caller:header:blue') },
      });
      const same = await secondTurnWaits(
        harness,
        { headers: { 'x-tenant': 'red', 'x-conversation-id': 'c1' } },
        { headers: { 'x-tenant': 'red', 'x-conversation-id': 'c2' } },
      );
      expect(same).toMatchObject({
        waited: true,
        record: { key_mode: 'caller', key_hash: keyHash('caller:header:red') },
      });
    });

    it('body:user groups by the body field', async () => {
      harness = await startHarness({ PRIMARY_AGENT_QUEUE_KEY_MODE: 'body:user' });
      const other = await secondTurnWaits(harness, { body: { user: 'alice' } }, { body: { user: 'bob' } });
      expect(other).toMatchObject({
        waited: false,
        record: { key_mode: 'body:user', key_hash: keyHash('body:user:bob') },
      });
      const same = await secondTurnWaits(
        harness,
        { body: { user: 'alice', conversation_id: 'x' } },
        { body: { user: 'alice', conversation_id: 'y' } },
      );
      expect(same).toMatchObject({
        waited: true,
        record: { key_mode: 'body:user', key_hash: keyHash('body:user:alice') },
      });
    });
  });

  it('fails startup with one line naming the setting for an invalid mode (item 20)', async () => {
    const runs = await Promise.all([
      runGateway({ PRIMARY_AGENT_QUEUE_KEY_MODE: 'session' }),
      runGateway({ PRIMARY_AGENT_QUEUE_KEY_MODE: 'header:' }),
    ]);
    for (const run of runs) {
      expect(run.code).toBe(1);
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/PRIMARY_AGENT_QUEUE_KEY_MODE/);
    }
  });
});

function sha256Full(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
