import type { ChildGateway } from './support/child-gateway';
import { postChatBody } from './support/chat-sse';
import { spawnGateway } from './support/child-gateway';
import { completed, created, providerASettings, textDelta } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';

const MIB = 1024 * 1024;
/** A small cap, far below the 16–32 MiB V8 grows its semi-space to under this load by itself. */
const CAP_MIB = 2;
/**
 * The new space (two semi-spaces) the cap allows: at the cap, or one doubling past it when a
 * collection outran its observer (the cap is soft, docs/performance.md "Young generation").
 */
const SOFT_BOUND_BYTES = 2 * (2 * CAP_MIB) * MIB;
const ROUNDS = 12;
const CONCURRENT = 40;

/**
 * GATEWAY_MAX_SEMI_SPACE_MIB (docs/performance.md "Young generation") in a real child process:
 * under a burst of concurrent chats with long histories, the young generation stays within the
 * cap, as /metrics reports it; with the cap off, the same burst grows it past the cap, so the
 * first case shows the setting at work and not a load too light to grow anything.
 */
describe('the young-generation cap (child process)', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'gateway-young-gen-' });
  let gateway: ChildGateway | undefined;

  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  /** Chats that stay in flight a while, each with a history that parses into many small objects. */
  async function burst(url: string): Promise<void> {
    fake().respondWith(() => [created(), textDelta('ok', 'msg_1', 30), completed()]);
    const history = Array.from({ length: 150 }, (_, index) => ({
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: `message ${index}: ${'words of the conversation '.repeat(8)}`,
    }));
    const body = { model: 'gpt-5.6-sol', messages: history };
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => postChatBody({ url }, body)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(CONCURRENT).fill(200));
      await Promise.all(answers.map((answer) => answer.text()));
    }
  }

  /** The new space's size (both semi-spaces) as prom-client reports it. */
  async function newSpaceBytes(url: string): Promise<number> {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = /^gateway_chat_api_nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)$/m.exec(text);
    if (!line) throw new Error('no new-space series in /metrics');
    return Number(line[1]);
  }

  async function start(capMib: number): Promise<ChildGateway> {
    gateway = await spawnGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      PRIMARY_AGENT_QUEUE_ENABLED: 'false',
      GATEWAY_MAX_SEMI_SPACE_MIB: String(capMib),
    });
    return gateway;
  }

  it('keeps the semi-space within GATEWAY_MAX_SEMI_SPACE_MIB under a burst', async () => {
    const child = await start(CAP_MIB);
    expect(child.records.find((record) => record.event === 'gateway_listening')).toMatchObject({
      max_semi_space_mib: CAP_MIB,
    });
    await burst(child.url);
    expect(await newSpaceBytes(child.url)).toBeLessThanOrEqual(SOFT_BOUND_BYTES);
  }, 120_000);

  it('grows past that size under the same burst when the cap is off (0)', async () => {
    const child = await start(0);
    await burst(child.url);
    expect(await newSpaceBytes(child.url)).toBeGreaterThan(SOFT_BOUND_BYTES);
  }, 120_000);
});
