import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { FakeProviderA } from './support/fake-provider-a';
import type { FakeCodeAssist } from './support/fake-provider-b';
import { useFakeProviderB } from './support/provider-b-harness';
import { created, providerASettings, textDelta, textReply } from './support/provider-a-fixtures';
import { providerBSettings, textFrame } from './support/provider-b-fixtures';
import { extractionReply, postStructured, structuredBody } from './support/structured-client';
import { postChatBody } from './support/chat-sse';

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
});
