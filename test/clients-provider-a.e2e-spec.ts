import type { ClientFamily, ReadFileArgs } from './support/client-scenarios';
import { describeClientScenarios, fakeUpstream } from './support/client-scenarios';
import { FakeProviderA } from './support/fake-provider-a';
import {
  completed,
  created,
  DEFAULT_USAGE,
  errorEvent,
  functionCallItem,
  providerASettings,
  textDelta,
} from './support/provider-a-fixtures';

/**
 * provider_a (Codex Responses backend) behind `FakeProviderA`, over one transport. The gateway
 * streams every upstream turn, so streaming and non-streaming chat turns share one script shape.
 */
function providerAFamily(transport: 'ws' | 'sse'): ClientFamily {
  const upstream = fakeUpstream({
    homePrefix: 'clients-provider-a-',
    startFake: () => FakeProviderA.start(),
    settings: (fake, home) => ({
      ...providerASettings(fake, home, { transport }),
      GATEWAY_PROVIDERS: 'provider_a',
      PROVIDER_A_TIMEOUT: '8s',
    }),
  });
  let callCount = 0;

  return {
    family: `provider_a over ${transport}`,
    model: 'gpt-5.6-sol',
    usage: {
      prompt_tokens: DEFAULT_USAGE.input_tokens,
      completion_tokens: DEFAULT_USAGE.output_tokens,
      total_tokens: DEFAULT_USAGE.total_tokens!,
    },
    start: upstream.start,
    stop: upstream.stop,
    reset() {
      upstream.fake.reset();
    },
    scriptText(pieces) {
      upstream.fake.enqueue({ frames: [created(), ...pieces.map((piece) => textDelta(piece)), completed()] });
    },
    scriptReadFileCall(args) {
      const id = `call_codex_${++callCount}`;
      // Arguments in three fragments: the gateway must accumulate them into one complete frame.
      upstream.fake.enqueue({
        frames: [created(), ...functionCallItem(id, 'read_file', JSON.stringify(args), { fragments: 3 }), completed()],
      });
      return id;
    },
    async expectContinuation(callId: string, args: ReadFileArgs, output: string) {
      expect(upstream.fake.misses()).toEqual([]);
      const input = upstream.fake.lastBody()?.input as Array<Record<string, unknown>>;
      // docs/upstream/provider-a.md §7.2: the call becomes a function_call item and its result the
      // function_call_output item right after it, both with the same call_id.
      const callIndex = input.findIndex((item) => item.type === 'function_call');
      expect(callIndex).toBeGreaterThanOrEqual(0);
      expect(input[callIndex]).toMatchObject({ type: 'function_call', call_id: callId, name: 'read_file' });
      expect(JSON.parse(input[callIndex].arguments as string)).toEqual(args);
      expect(input[callIndex + 1]).toEqual({ type: 'function_call_output', call_id: callId, output });
      expect(
        input.filter((item) => item.type === 'function_call' || item.type === 'function_call_output'),
      ).toHaveLength(2);
    },
    scriptUsageLimit(turns) {
      // The plan's limit without a reset time: no `resets_in_seconds`, no rate-limit headers.
      const limit = { frames: [errorEvent({ status: 429, type: 'usage_limit_reached', message: 'limit' })] };
      upstream.fake.enqueue(...Array.from({ length: turns }, () => limit));
    },
    upstreamTurns() {
      return upstream.fake.requests().length;
    },
  };
}

describeClientScenarios(providerAFamily('ws'));
describeClientScenarios(providerAFamily('sse'));
