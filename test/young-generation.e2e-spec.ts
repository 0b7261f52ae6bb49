import * as fs from 'node:fs';
import { SEMI_SPACE_ARGUMENT, SEMI_SPACE_MIB } from '../src/common/lifecycle/young-generation';
import type { ChildGateway, ChildOptions } from './support/child-gateway';
import { postChatBody } from './support/chat-sse';
import { spawnGateway } from './support/child-gateway';
import { completed, created, providerASettings, textDelta } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';

const MIB = 1024 * 1024;
/** The new space (two semi-spaces) V8 keeps within under the bound `npm start` passes. */
const NEW_SPACE_BOUND_BYTES = 2 * SEMI_SPACE_MIB * MIB;
const ROUNDS = 12;
const CONCURRENT = 40;
const START_TIMEOUT_MS = 60_000;

/**
 * The young generation's bound (docs/performance.md "Young generation") in real child processes.
 * Started as `npm start` starts it (scripts/start.mjs), the gateway runs under node's
 * `--max-semi-space-size` and, under a burst of concurrent chats with long histories, its young
 * generation stays within it, as /metrics reports it. Started bare (`node dist/main.js`), it says
 * so once, does not restart itself, and the same burst grows the young generation past that bound,
 * so the first case shows the flag at work and not a load too light to grow anything.
 */
describe('the young-generation bound (child process)', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'gateway-young-gen-' });
  let gateway: ChildGateway | undefined;

  afterEach(async () => {
    if (gateway) {
      // Under start.mjs the gateway may be its child: SIGTERM reaches it through start.mjs, which
      // exits when it has.
      if (gateway.process.exitCode === null && gateway.process.signalCode === null) gateway.process.kill('SIGTERM');
      await gateway.exited;
      await gateway.close();
    }
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

  async function start(options: ChildOptions, extra: Record<string, string> = {}): Promise<ChildGateway> {
    const settings = {
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      PRIMARY_AGENT_QUEUE_ENABLED: 'false',
      ...extra,
    };
    gateway = await spawnGateway(settings, [], START_TIMEOUT_MS, options);
    return gateway;
  }

  /** The arguments a process runs with (Linux's view of that pid). */
  function commandLine(pid: number): string[] {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  }

  function listening(child: ChildGateway): Record<string, unknown> {
    const record = child.records.find((candidate) => candidate.event === 'gateway_listening');
    if (!record) throw new Error('no gateway_listening line');
    return record;
  }

  const warnings = (child: ChildGateway) => child.records.filter((record) => record.event === 'semi_space_unbounded');

  it('keeps the semi-space within the bound under a burst when started as `npm start` starts it', async () => {
    const child = await start({ startScript: true });
    expect(listening(child)).toMatchObject({ max_semi_space_mib: SEMI_SPACE_MIB });
    expect(commandLine(listening(child).pid as number)).toContain(SEMI_SPACE_ARGUMENT);
    expect(warnings(child)).toEqual([]);
    await burst(child.url);
    expect(await newSpaceBytes(child)).toBeLessThanOrEqual(NEW_SPACE_BOUND_BYTES);
  }, 180_000);

  it('started bare, warns once naming the flag, does not restart itself, and grows past the bound under the same burst', async () => {
    const child = await start({ built: true });
    expect(listening(child)).toMatchObject({ max_semi_space_mib: null, pid: child.process.pid });
    expect(commandLine(child.process.pid!).some((arg) => arg.includes('semi-space'))).toBe(false);
    expect(warnings(child)).toHaveLength(1);
    expect(warnings(child)[0]).toMatchObject({ level: 40, flag: SEMI_SPACE_ARGUMENT });
    expect(String(warnings(child)[0].fix)).toContain('NODE_OPTIONS');
    await burst(child.url);
    expect(await newSpaceBytes(child)).toBeGreaterThan(NEW_SPACE_BOUND_BYTES);
    expect(warnings(child)).toHaveLength(1);
  }, 180_000);

  it("started as `node scripts/start.mjs`, leaves node's own bound in NODE_OPTIONS in force and runs in that same process", async () => {
    const child = await start({ startScript: true }, { NODE_OPTIONS: '--max-semi-space-size=1' });
    expect(listening(child)).toMatchObject({ max_semi_space_mib: 1, pid: child.process.pid });
    expect(commandLine(child.process.pid!).some((arg) => arg.includes('semi-space'))).toBe(false);
    expect(warnings(child)).toEqual([]);
  }, 120_000);
});
