import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ClientFamily, describeClientScenarios, ReadFileArgs } from './support/client-scenarios';
import { startGateway, TestGateway } from './support/create-test-app';
import { answerRun, FakeClaudeRun, fenceText, providerCSettings, readRuns } from './support/provider-c-fixtures';

// Usage on every scripted `result` line; the gateway reports input + cache tokens as prompt tokens.
const FAKE_USAGE = { input_tokens: 9, output_tokens: 4 };

/**
 * provider_c (Claude Code) behind the fake `claude` executable. Every chat turn is one child
 * process playing the next scripted run; tool calls are fenced `agent_tool_call` blocks in the
 * model's text that the gateway turns into real tool calls, and the continuation reaches the
 * child as rendered prompt text on stdin.
 */
function providerCFamily(): ClientFamily {
  let dir: string;
  let gateway: TestGateway;
  // The runs scripted since the last reset; run n of the fake plays runs[n].
  let runs: FakeClaudeRun[] = [];
  const writeScript = () => providerCSettings(dir, runs);

  return {
    family: 'provider_c',
    model: 'claude-fable-5',
    usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
    async start() {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clients-provider-c-'));
      gateway = await startGateway({ ...writeScript(), GATEWAY_PROVIDERS: 'provider_c', PROVIDER_C_TIMEOUT: '8s' });
      return gateway;
    },
    async stop() {
      await gateway?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
    reset() {
      runs = [];
      // Run numbering restarts with a fresh record directory.
      fs.rmSync(path.join(dir, 'records'), { recursive: true, force: true });
      writeScript();
    },
    scriptText(pieces) {
      runs.push(answerRun(pieces, FAKE_USAGE));
      writeScript();
    },
    scriptReadFileCall(args) {
      // The fence split across two deltas: the gateway must hold it back and parse it whole.
      const fence = fenceText('read_file', args);
      const cut = Math.floor(fence.length / 2);
      runs.push(answerRun([fence.slice(0, cut), fence.slice(cut)], FAKE_USAGE));
      writeScript();
      // The fence carries no id: the gateway mints it.
      return undefined;
    },
    async expectContinuation(_callId: string, args: ReadFileArgs, output: string) {
      const recorded = readRuns(dir);
      expect(recorded).toHaveLength(runs.length);
      const stdin = recorded.at(-1)?.stdin ?? '';
      // provider_c.md §4: ids are never shown to the model; the result is labelled with the name
      // of the call whose id it answers, right after the assistant block that replays the call.
      expect(stdin).toContain(`Assistant:\n${fenceText('read_file', args)}\n\nTool result (read_file):\n${output}`);
    },
  };
}

describeClientScenarios(providerCFamily());
