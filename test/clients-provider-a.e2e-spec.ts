import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ClientFamily, describeClientScenarios, ReadFileArgs } from './support/client-scenarios';
import { startGateway, TestGateway } from './support/create-test-app';
import { FakeProviderA } from './support/fake-provider-a';
import { completed, created, DEFAULT_USAGE, functionCallItem, providerASettings, textDelta } from './support/provider-a-fixtures';

/**
 * provider_a (Codex Responses backend) behind `FakeProviderA`, over one transport. The gateway
 * streams every upstream turn, so streaming and non-streaming chat turns share one script shape.
 */
function providerAFamily(transport: 'ws' | 'sse'): ClientFamily {
  let fake: FakeProviderA;
  let home: string;
  let gateway: TestGateway;
  let callCount = 0;

  return {
    family: `provider_a over ${transport}`,
    model: 'gpt-5.6-sol',
    usage: { prompt_tokens: DEFAULT_USAGE.input_tokens, completion_tokens: DEFAULT_USAGE.output_tokens, total_tokens: DEFAULT_USAGE.total_tokens! },
    async start() {
      fake = await FakeProviderA.start();
      home = fs.mkdtempSync(path.join(os.tmpdir(), 'clients-provider-a-'));
      gateway = await startGateway({ ...providerASettings(fake, home, { transport }), GATEWAY_PROVIDERS: 'provider_a', PROVIDER_A_TIMEOUT: '8s' });
      return gateway;
    },
    async stop() {
      await gateway?.close();
      await fake?.close();
      if (home) fs.rmSync(home, { recursive: true, force: true });
    },
    reset() {
      fake.reset();
    },
    scriptText(pieces) {
      fake.enqueue({ frames: [created(), ...pieces.map((piece) => textDelta(piece)), completed()] });
    },
    scriptReadFileCall(args) {
      const id = `call_codex_${++callCount}`;
      // Arguments in three fragments: the gateway must accumulate them into one complete frame.
      fake.enqueue({ frames: [created(), ...functionCallItem(id, 'read_file', JSON.stringify(args), { fragments: 3 }), completed()] });
      return id;
    },
    async expectContinuation(callId: string, args: ReadFileArgs, output: string) {
      expect(fake.misses()).toEqual([]);
      const input = fake.lastBody()?.input as Array<Record<string, unknown>>;
      // provider_a.md §7.2: the call becomes a function_call item and its result the
      // function_call_output item right after it, both with the same call_id.
      const callIndex = input.findIndex((item) => item.type === 'function_call');
      expect(callIndex).toBeGreaterThanOrEqual(0);
      expect(input[callIndex]).toMatchObject({ type: 'function_call', call_id: callId, name: 'read_file' });
      expect(JSON.parse(input[callIndex].arguments as string)).toEqual(args);
      expect(input[callIndex + 1]).toEqual({ type: 'function_call_output', call_id: callId, output });
      expect(input.filter((item) => item.type === 'function_call' || item.type === 'function_call_output')).toHaveLength(2);
    },
  };
}

describeClientScenarios(providerAFamily('ws'));
describeClientScenarios(providerAFamily('sse'));
