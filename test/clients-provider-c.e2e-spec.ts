import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ClientFamily, ReadFileArgs } from './support/client-scenarios';
import { describeClientScenarios } from './support/client-scenarios';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { FakeAnthropicApi, textReply } from './support/fake-anthropic-api';
import { REAL_CLAUDE_PATH, realClaudeEnvironment } from './support/real-claude';

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
  let home: string;
  let api: FakeAnthropicApi;
  let gateway: TestGateway;

  return {
    family: 'provider_c',
    model: 'claude-fable-5',
    usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
    async start() {
      home = fs.mkdtempSync(path.join(os.tmpdir(), 'clients-provider-c-'));
      api = await FakeAnthropicApi.start();
      gateway = await startGateway({
        GATEWAY_PROVIDERS: 'provider_c',
        PROVIDER_C_COMMAND: REAL_CLAUDE_PATH,
        PROVIDER_C_TIMEOUT: '20s',
        ...realClaudeEnvironment({ apiBaseUrl: api.baseUrl, home }),
      });
      return gateway;
    },
    async stop() {
      await gateway?.close();
      await api?.close();
      if (home) fs.rmSync(home, { recursive: true, force: true });
    },
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
  };
}

describeClientScenarios(providerCFamily());
