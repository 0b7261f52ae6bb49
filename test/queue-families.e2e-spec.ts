import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { FakeProviderA } from './support/fake-provider-a';
import type { FakeCodeAssist } from './support/fake-provider-b';
import { useFakeProviderB } from './support/provider-b-harness';
import { created, providerASettings, textDelta, textReply } from './support/provider-a-fixtures';
import { providerBSettings, textFrame } from './support/provider-b-fixtures';
import { extractionReply, postStructured, structuredBody } from './support/structured-client';
import { postChatBody } from './support/chat-sse';
import { hangingRun, providerCSettings } from './support/provider-c-fixtures';

/**
 * docs/design/behaviours.md §4.1 / §10 item 29: each family has its own agent queue, and the
 * structured route its own budget. With one slot per family and no waiting room, a held
 * provider_a tool turn makes the next provider_a tool turn fail with queue_full at once, while
 * provider_b tool turns and structured requests still run.
 */
jest.setTimeout(20_000);

const TOOLS = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: {} } } }];

function chat(gateway: TestGateway, model: string, conversation: string, signal?: AbortSignal): Promise<Response> {
  return postChatBody(
    gateway,
    { model, stream: true, tools: TOOLS, messages: [{ role: 'user', content: 'go' }] },
    { headers: { 'x-conversation-id': conversation }, signal },
  );
}

describe('agent queues per family', () => {
  let fakeA: FakeProviderA;
  let fakeB: FakeCodeAssist;
  let gateway: TestGateway;
  let scratch: string;

  // Registered first so the gateway closes before the fakes and the home go away.
  afterAll(async () => {
    gateway.app.getHttpServer().closeAllConnections();
    await gateway.close();
    await fakeA.close();
  });
  const providerB = useFakeProviderB({ homePrefix: 'queue-families-', home: 'suite' });

  beforeAll(async () => {
    fakeA = await FakeProviderA.start();
    fakeB = providerB.fake();
    scratch = providerB.home();
    gateway = await startGateway({
      ...providerASettings(fakeA, scratch),
      ...providerBSettings(fakeB, scratch, { project: 'fake-project' }),
      GATEWAY_PROVIDERS: 'provider_a,provider_b',
      STRUCTURED_INFERENCE_ENABLED: 'true',
      PRIMARY_AGENT_MAX_ACTIVE: '1',
      PRIMARY_AGENT_QUEUE_LIMIT: '0',
    });
  });

  it('a saturated provider_a queue delays neither provider_b tool turns nor structured requests (item 29)', async () => {
    const holder = new AbortController();
    fakeA.enqueue({ frames: [created(), textDelta('working')], holdOpen: true });
    const held = await chat(gateway, 'gpt-5.6-sol', 'fam-a1', holder.signal);
    expect(held.status).toBe(200);

    const refused = await chat(gateway, 'gpt-5.6-sol', 'fam-a2');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('queue_full');

    // With PRIMARY_AGENT_QUEUE_LIMIT=0, a turn that waited behind provider_a's slot would be
    // refused with 429 at once: a 200 is the proof it did not share that queue (no timing needed).
    const otherFamily = await chat(gateway, 'gemini-2.5-pro', 'fam-b1');
    expect(otherFamily.status).toBe(200);
    expect(await otherFamily.text()).toContain('[DONE]');

    fakeA.enqueue(extractionReply());
    const structured = await postStructured(gateway, structuredBody({ request_id: 'families-1' }));
    expect(structured.status).toBe(200);
    expect(fakeA.requests()).toHaveLength(2);

    holder.abort();
    await fakeA.requests()[0].closedByClient;
  });

  it('a saturated provider_b queue does not delay provider_a tool turns', async () => {
    const holder = new AbortController();
    fakeB.enqueue('streamGenerateContent', { frames: [{ json: textFrame('working') }], holdOpen: true });
    const held = await chat(gateway, 'gemini-2.5-pro', 'fam-b2', holder.signal);
    expect(held.status).toBe(200);
    expect((await chat(gateway, 'gemini-2.5-pro', 'fam-b3')).status).toBe(429);

    fakeA.enqueue(textReply('done'));
    const otherFamily = await chat(gateway, 'gpt-5.6-sol', 'fam-a3');
    expect(otherFamily.status).toBe(200);
    expect(await otherFamily.text()).toContain('done');
    holder.abort();
  });

  describe('a request only a 400 can answer, while every slot of its family is busy', () => {
    // A gateway of its own, each family's slot held once: no slot is still being freed by another test.
    let early: TestGateway;
    beforeAll(async () => {
      early = await startGateway({
        ...providerASettings(fakeA, scratch),
        ...providerBSettings(fakeB, scratch, { project: 'fake-project' }),
        CLAUDE_CODE_OAUTH_TOKEN: 'queue-families-oauth-token',
        ...providerCSettings(scratch, [hangingRun()]),
        GATEWAY_PROVIDERS: 'provider_a,provider_b,provider_c',
        PRIMARY_AGENT_MAX_ACTIVE: '1',
        PRIMARY_AGENT_QUEUE_LIMIT: '0',
      });
    });
    afterAll(async () => {
      early.app.getHttpServer().closeAllConnections();
      await early.close();
    });
    const WEB_SEARCH = [...TOOLS, { type: 'web_search' }];
    const ASK = [{ role: 'user', content: 'go' }];
    /** A history call whose arguments are JSON, but not an object: Gemini takes only an object. */
    const LISTED_ARGUMENTS = [
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '["a.txt"]' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'hello' },
    ];

    /** The 400 at once (not 429 queue_full), with neither a place in the queue nor an upstream attempt logged. */
    async function refusedAtOnce(body: Record<string, unknown>, param: string, message: RegExp): Promise<void> {
      const refused = await postChatBody(early, { stream: true, ...body });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: unknown }).error).toMatchObject({
        code: 'invalid_request',
        param,
        message: expect.stringMatching(message),
      });
      const requestId = refused.headers.get('x-request-id')!;
      await early.logs.warnings(requestId);
      const events = early.logs
        .records()
        .filter((record) => record.reqId === requestId)
        .map((record) => String(record.event));
      expect(events.filter((event) => /^(queue_|upstream_)/.test(event))).toEqual([]);
    }

    it('provider_a: a hosted tool on a lite model', async () => {
      const holder = new AbortController();
      fakeA.enqueue({ frames: [created(), textDelta('working')], holdOpen: true });
      expect((await chat(early, 'gpt-5.6-sol', 'early-a1', holder.signal)).status).toBe(200);
      const before = fakeA.requests().length;
      await refusedAtOnce(
        { model: 'gpt-5.6-sol', tools: WEB_SEARCH, messages: ASK },
        'tools',
        /^tools\.1 is the hosted tool "web_search", which model "gpt-5\.6-sol" cannot take/,
      );
      expect(fakeA.requests()).toHaveLength(before);
      holder.abort();
      await fakeA.requests()[before - 1].closedByClient;
    });

    it('provider_b: a hosted tool, and history arguments that are not a JSON object', async () => {
      const holder = new AbortController();
      fakeB.enqueue('streamGenerateContent', { frames: [{ json: textFrame('working') }], holdOpen: true });
      expect((await chat(early, 'gemini-2.5-pro', 'early-b1', holder.signal)).status).toBe(200);
      const before = fakeB.requests('streamGenerateContent').length;
      await refusedAtOnce(
        { model: 'gemini-2.5-pro', tools: WEB_SEARCH, messages: ASK },
        'tools',
        /^tools\.1 is the hosted tool "web_search", which provider_b cannot take/,
      );
      await refusedAtOnce(
        { model: 'gemini-2.5-pro', tools: TOOLS, messages: LISTED_ARGUMENTS },
        'messages',
        /^messages\.1\.tool_calls\.0\.function\.arguments: text that is not a JSON object is not supported by provider_b/,
      );
      expect(fakeB.requests('streamGenerateContent')).toHaveLength(before);
      holder.abort();
    });

    it('provider_c: a hosted tool', async () => {
      const holder = new AbortController();
      expect((await chat(early, 'claude-fable-5', 'early-c1', holder.signal)).status).toBe(200);
      await refusedAtOnce(
        { model: 'claude-fable-5', tools: WEB_SEARCH, messages: ASK },
        'tools',
        /^tools\.1 is the hosted tool "web_search", which provider_c cannot take/,
      );
      holder.abort();
    });
  });
});
