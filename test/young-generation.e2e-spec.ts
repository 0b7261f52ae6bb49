import * as fs from 'node:fs';
import type { ChildGateway } from './support/child-gateway';
import { postChatBody } from './support/chat-sse';
import { spawnGateway } from './support/child-gateway';
import { completed, created, providerASettings, textDelta } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';

const MIB = 1024 * 1024;
/** A small cap, far below the 16–32 MiB V8 grows its semi-space to under this load by itself. */
const CAP_MIB = 2;
/** The new space (two semi-spaces) V8 keeps within under that cap. */
const NEW_SPACE_BOUND_BYTES = 2 * CAP_MIB * MIB;
const ROUNDS = 12;
const CONCURRENT = 40;

/**
 * GATEWAY_MAX_SEMI_SPACE_MIB (docs/performance.md "Young generation") in a real child process:
 * the gateway restarts itself in place with node's own bound, and under a burst of concurrent
 * chats with long histories the young generation stays within it, as /metrics reports it; with the
 * cap off, the same burst grows it past the cap, so the first case shows the setting at work and
 * not a load too light to grow anything.
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
  async function newSpaceBytes(child: ChildGateway): Promise<number> {
    const text = await scrapeMetrics(child);
    const bytes = sampleValue(text, 'gateway_chat_api_nodejs_heap_space_size_total_bytes', { space: 'new' });
    if (bytes === undefined) throw new Error('no new-space series in /metrics');
    return bytes;
  }

  async function start(capMib: number, extra: Record<string, string> = {}): Promise<ChildGateway> {
    gateway = await spawnGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      PRIMARY_AGENT_QUEUE_ENABLED: 'false',
      GATEWAY_MAX_SEMI_SPACE_MIB: String(capMib),
      ...extra,
    });
    return gateway;
  }

  /** The arguments the process the test started now runs with (Linux's view of that pid). */
  function commandLine(child: ChildGateway): string[] {
    return fs.readFileSync(`/proc/${child.process.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  }

  function listening(child: ChildGateway): Record<string, unknown> | undefined {
    return child.records.find((record) => record.event === 'gateway_listening');
  }

  it('keeps the semi-space within GATEWAY_MAX_SEMI_SPACE_MIB under a burst, in the process it was started as', async () => {
    const child = await start(CAP_MIB);
    expect(listening(child)).toMatchObject({ max_semi_space_mib: CAP_MIB });
    expect(commandLine(child)).toContain(`--max-semi-space-size=${CAP_MIB}`);
    await burst(child.url);
    expect(await newSpaceBytes(child)).toBeLessThanOrEqual(NEW_SPACE_BOUND_BYTES);
  }, 120_000);

  it('grows past that size under the same burst when the cap is off (0)', async () => {
    const child = await start(0);
    expect(listening(child)).toMatchObject({ max_semi_space_mib: null });
    expect(commandLine(child).some((arg) => arg.includes('semi-space'))).toBe(false);
    await burst(child.url);
    expect(await newSpaceBytes(child)).toBeGreaterThan(NEW_SPACE_BOUND_BYTES);
  }, 120_000);

  it("leaves node's own bound in NODE_OPTIONS in force, and says so", async () => {
    const child = await start(CAP_MIB, { NODE_OPTIONS: '--max-semi-space-size=1' });
    expect(listening(child)).toMatchObject({ max_semi_space_mib: 1 });
    expect(commandLine(child).some((arg) => arg.includes('semi-space'))).toBe(false);
  });
});
