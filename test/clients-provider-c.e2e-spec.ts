import type { ClientFamily, ReadFileArgs } from './support/client-scenarios';
import { describeClientScenarios, fakeUpstream } from './support/client-scenarios';
import { API_ERRORS, FakeAnthropicApi, textReply } from './support/fake-anthropic-api';
import { realClaudeGatewaySettings } from './support/real-claude';

// Usage on every scripted answer; the gateway reports input + cache tokens as prompt tokens.
const FAKE_USAGE = { input_tokens: 9, output_tokens: 4 };

const fenceText = (name: string, args: unknown) =>
  '```agent_tool_call\n' + JSON.stringify({ name, arguments: args }) + '\n```';

/**
 * provider_c (Claude Code) with the real CLI (2.1.332) behind the gateway, talking to the
 * loopback fake Messages API. Every chat turn is one child process whose API call plays the next
 * scripted reply; tool calls are fenced `agent_tool_call` blocks in the model's text that the
 * gateway turns into real tool calls, and the continuation reaches the API as the rendered prompt
 * text the CLI sends.
 */
function providerCFamily(): ClientFamily {
  const upstream = fakeUpstream({
    homePrefix: 'clients-provider-c-',
    startFake: () => FakeAnthropicApi.start(),
    settings: (fake, home) => realClaudeGatewaySettings(fake.baseUrl, home),
  });
  let api: FakeAnthropicApi;

  return {
    family: 'provider_c',
    model: 'claude-fable-5',
    usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
    async start() {
      const gateway = await upstream.start();
      api = upstream.fake;
      return gateway;
    },
    stop: () => upstream.stop(),
    reset() {
      api.script([]);
    },
    scriptText(pieces) {
      api.enqueue(textReply(pieces, FAKE_USAGE));
    },
    scriptReadFileCall(args) {
      // The fence split across two deltas: the gateway must hold it back and parse it whole.
      const fence = fenceText('read_file', args);
      const cut = Math.floor(fence.length / 2);
      api.enqueue(textReply([fence.slice(0, cut), fence.slice(cut)], FAKE_USAGE));
      // The fence carries no id: the gateway mints it.
      return undefined;
    },
    async expectContinuation(_callId: string, args: ReadFileArgs, output: string) {
      const sent = JSON.stringify(api.messages().at(-1)?.body ?? null);
      // docs/upstream/provider-c.md §4: ids are never shown to the model; the result is labelled with the name
      // of the call whose id it answers, right after the assistant block that replays the call.
      expect(sent).toContain(
        JSON.stringify(`Assistant:\n${fenceText('read_file', args)}\n\nTool result (read_file):\n${output}`).slice(
          1,
          -1,
        ),
      );
    },
    scriptUsageLimit(turns) {
      // The five-hour window spent, resetting in five hours.
      const reset = Math.floor(Date.now() / 1000) + 5 * 3600;
      api.enqueue(...Array.from({ length: turns }, () => API_ERRORS.limit(reset)));
    },
    upstreamTurns() {
      return api.messages().length;
    },
  };
}

describeClientScenarios(providerCFamily());
