import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { normalizeTools } from '../src/chat/chat-tools';
import { GatewayError } from '../src/core/gateway.error';
import { loadConfig } from '../src/config/app-config';
import type { GatewayMetrics } from '../src/metrics/gateway-metrics';
import { ModelCatalog } from '../src/models/model-catalog';
import type { ChatMessage, ToolDefinition } from '../src/core/chat-message';
import type { CallContext, ChatRequest } from '../src/providers/shared/provider-adapter';
import type { ChatEvent } from '../src/core/chat-event';
import { ProviderCAdapter } from '../src/providers/provider-c/provider-c.adapter';
import type { FakeClaudeRun } from './support/provider-c-fixtures';
import {
  answerRun,
  CLAUDE_ARGV_BEFORE_MODEL,
  fenceText,
  hangingRun,
  initLine,
  isAlive,
  providerCSettings,
  readRuns,
  resultLine,
  textDelta,
  waitFor,
} from './support/provider-c-fixtures';
import { claudeCapturePath } from './support/oracle-pins';
import { trackSourceTimers } from './support/pending-timers';
import type { AdapterModule } from './support/adapter-module';
import { adapterModule } from './support/adapter-module';
import { FIRING_BOUND } from './support/timer-bounds';

const catalog = ModelCatalog.load(undefined, ['provider_c']);
const EXPECTED_ARGV = [...CLAUDE_ARGV_BEFORE_MODEL, 'claude-fable-5'];

interface Harness {
  readonly adapter: ProviderCAdapter;
  readonly dir: string;
  readonly metrics: { queueWaited: jest.Mock; queueDepthChanged: jest.Mock };
  readonly startupWarnings: unknown[];
}

interface Call {
  readonly context: CallContext;
  readonly abort: AbortController;
  readonly logs: Record<string, unknown>[];
}

const directories: string[] = [];
const modules: AdapterModule<ProviderCAdapter>[] = [];

afterEach(async () => {
  // No child may outlive a test, whatever it asserted.
  await Promise.all(modules.splice(0).map((module) => module.close()));
  for (const dir of directories.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function harness(runs: FakeClaudeRun[], settings: Record<string, string> = {}): Promise<Harness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-adapter-'));
  directories.push(dir);
  const config = loadConfig({
    PATH: process.env.PATH,
    HOME: dir,
    GATEWAY_PROVIDERS: 'provider_c',
    ...providerCSettings(dir, runs),
    ...settings,
  });
  const metrics = { queueWaited: jest.fn(), queueDepthChanged: jest.fn() };
  const startupWarnings: unknown[] = [];
  const module = await adapterModule(ProviderCAdapter, config, {
    metrics: metrics as unknown as Partial<GatewayMetrics>,
    logger: { warn: (fields: unknown) => void startupWarnings.push(fields) },
  });
  modules.push(module);
  return { adapter: module.adapter, dir, metrics, startupWarnings };
}

function call(): Call {
  const abort = new AbortController();
  const logs: Record<string, unknown>[] = [];
  const record = (level: string) => (fields: Record<string, unknown>) => logs.push({ level, ...fields });
  const logger = { info: record('info'), warn: record('warn'), debug: record('debug'), error: record('error') };
  return { abort, logs, context: { signal: abort.signal, requestId: 'req-1', logger } };
}

function request(
  options: {
    model?: string;
    effort?: string;
    messages?: ChatMessage[];
    tools?: ToolDefinition[];
    toolChoice?: unknown;
    /** Sent upstream in place of the resolved one: what the catalog itself would refuse. */
    upstreamModel?: string;
  } = {},
): ChatRequest {
  const resolved = catalog.resolve(options.model ?? 'claude-fable-5', { reasoningEffort: options.effort });
  if (!resolved) throw new Error(`unknown model ${options.model}`);
  const model = options.upstreamModel === undefined ? resolved : { ...resolved, upstreamModel: options.upstreamModel };
  return {
    model,
    messages: options.messages ?? [{ role: 'user', content: 'Say hello' }],
    tools: options.tools ?? [],
    normalizedTools: normalizeTools(options.tools ?? []),
    toolChoice: options.toolChoice,
    faithful: false,
    sampling: {},
    conversationId: 'chat:global',
  };
}

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const result: ChatEvent[] = [];
  for await (const event of events) result.push(event);
  return result;
}

async function runTurn(h: Harness, chat: ChatRequest = request(), c: Call = call()): Promise<ChatEvent[]> {
  return collect(await h.adapter.stream(chat, c.context));
}

const text = (events: ChatEvent[]) => events.map((event) => (event.type === 'text-delta' ? event.text : '')).join('');

describe('ProviderCAdapter with the fake claude', () => {
  describe('child process (docs/upstream/provider-c.md §3)', () => {
    it('docs/upstream/provider-c.md §11.1 spawns with exactly the documented argv, --tools followed by an empty argument', async () => {
      const h = await harness([answerRun('Hello')]);
      const events = await runTurn(h);
      expect(text(events)).toBe('Hello');
      expect(readRuns(h.dir)[0].argv).toEqual(EXPECTED_ARGV);
    });

    it('docs/upstream/provider-c.md §11.2 a -high id adds --effort high; reasoning_effort xhigh and max reach the CLI; none asks for the lowest', async () => {
      const h = await harness([answerRun('a')]);
      await runTurn(h, request({ model: 'claude-fable-5-high' }));
      await runTurn(h, request({ model: 'claude-fable-5-high', effort: 'xhigh' }));
      await runTurn(h, request({ model: 'claude-fable-5', effort: 'max' }));
      await runTurn(h, request({ model: 'claude-fable-5-high', effort: 'none' }));
      const [high, xhigh, max, none] = readRuns(h.dir);
      expect(high.argv.slice(-4)).toEqual(['--model', 'claude-fable-5', '--effort', 'high']);
      expect(xhigh.argv.slice(-2)).toEqual(['--effort', 'xhigh']);
      expect(max.argv.slice(-2)).toEqual(['--effort', 'max']);
      expect(none.argv).toEqual([...EXPECTED_ARGV, '--effort', 'low']);
    });

    it('docs/upstream/provider-c.md §11.3 provider_c/claude-opus-4.8 runs with --model claude-opus-4-8', async () => {
      const h = await harness([answerRun('a')]);
      await runTurn(h, request({ model: 'provider_c/claude-opus-4.8' }));
      expect(readRuns(h.dir)[0].argv.slice(-2)).toEqual(['--model', 'claude-opus-4-8']);
    });

    it('docs/upstream/provider-c.md §11.4 the prompt arrives on stdin and never in argv', async () => {
      const h = await harness([answerRun('a')]);
      await runTurn(h, request({ messages: [{ role: 'user', content: 'unique-prompt-marker-42' }] }));
      const [run] = readRuns(h.dir);
      expect(run.stdin).toBe('User:\nunique-prompt-marker-42\n');
      expect(run.argv.join(' ')).not.toContain('unique-prompt-marker-42');
    });

    it('docs/upstream/provider-c.md §11.5 runs in a fresh private temp dir that is removed after the request', async () => {
      const h = await harness([answerRun('a')]);
      await runTurn(h);
      const [run] = readRuns(h.dir);
      expect(path.dirname(run.cwd)).toBe(fs.realpathSync(os.tmpdir()));
      expect(path.basename(run.cwd)).toMatch(/^gateway-pc-/);
      expect(run.cwd).not.toBe(process.cwd());
      await waitFor(() => !fs.existsSync(run.cwd), 3000);
    });

    it('docs/upstream/provider-c.md §11.6 the child env has no GATEWAY_BEARER_SECRET, credential route or CLAUDECODE kin, keeps CLAUDE_CODE_OAUTH_TOKEN and ANTHROPIC_BASE_URL, and turns the CLI retries off', async () => {
      const h = await harness([answerRun('a')], {
        GATEWAY_BEARER_SECRET: 'bearer-secret-0123',
        ANTHROPIC_API_KEY: 'sk-ant-x',
        ANTHROPIC_AUTH_TOKEN: 'api-token-value-77',
        CLAUDE_CODE_USE_BEDROCK: '1',
        ANTHROPIC_FOUNDRY_API_KEY: 'foundry-key-value-78',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
        CLAUDE_CODE_OAUTH_TOKEN: 'oauth-x',
        CLAUDECODE: '1',
        CLAUDE_CODE_ENTRYPOINT: 'cli',
        CLAUDE_CODE_SESSION_ID: 'parent',
      });
      await runTurn(h);
      expect(readRuns(h.dir)[0].env).toEqual({
        GATEWAY_BEARER_SECRET: false,
        ANTHROPIC_API_KEY: false,
        ANTHROPIC_AUTH_TOKEN: false,
        CLAUDE_CODE_USE_BEDROCK: false,
        ANTHROPIC_FOUNDRY_API_KEY: false,
        ANTHROPIC_BASE_URL: true,
        CLAUDE_CODE_OAUTH_TOKEN: true,
        CLAUDECODE: false,
        CLAUDE_CODE_ENTRYPOINT: false,
        CLAUDE_CODE_SESSION_ID: false,
        CLAUDE_CODE_MAX_RETRIES: '0',
      });
      // One startup warning names what was dropped, never a value.
      const warnings = h.startupWarnings.filter(
        (fields) => (fields as { event?: string }).event === 'provider_c_credential_variables_ignored',
      );
      expect(warnings).toEqual([
        {
          event: 'provider_c_credential_variables_ignored',
          variables: [
            'ANTHROPIC_API_KEY',
            'ANTHROPIC_AUTH_TOKEN',
            'ANTHROPIC_FOUNDRY_API_KEY',
            'CLAUDE_CODE_USE_BEDROCK',
          ],
          // The fix is a field: a JSON line's message is only the event's name.
          fix: "unset ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_FOUNDRY_API_KEY, CLAUDE_CODE_USE_BEDROCK in the gateway's environment; the claude children use only the Claude Code CLI's login, never an API key or a cloud account",
        },
      ]);
      expect(JSON.stringify(h.startupWarnings)).not.toMatch(/sk-ant-x|api-token-value-77|foundry-key-value-78/);
    });

    it('docs/upstream/provider-c.md §11.6 a gateway without credential routes in its environment warns about none', async () => {
      const h = await harness([answerRun('a')], { CLAUDE_CODE_OAUTH_TOKEN: 'oauth-x' });
      expect(h.startupWarnings).not.toContainEqual(
        expect.objectContaining({ event: 'provider_c_credential_variables_ignored' }),
      );
    });
  });

  describe('prompt (docs/upstream/provider-c.md §4, §5)', () => {
    const tools: ToolDefinition[] = [
      {
        type: 'function',
        function: {
          name: 'read_file',
          description: 'Read',
          parameters: { type: 'object', properties: { path: { type: 'string' } } },
        },
      },
      { type: 'custom', custom: { name: 'apply_patch' } },
    ];

    it('docs/upstream/provider-c.md §11.7 with tools stdin starts with the protocol listing every tool; none/no tools omit it; required adds the rule', async () => {
      const h = await harness([answerRun('a')]);
      await runTurn(h, request({ tools }));
      await runTurn(h, request());
      await runTurn(h, request({ tools, toolChoice: 'none' }));
      await runTurn(h, request({ tools, toolChoice: 'required' }));
      const [withTools, plain, none, required] = readRuns(h.dir).map((run) => run.stdin ?? '');
      expect(withTools.startsWith('## Tools\n')).toBe(true);
      const listed = JSON.parse(withTools.split('Available tools (JSON):\n')[1].split('\n')[0]) as unknown;
      expect(listed).toEqual([
        {
          name: 'read_file',
          type: 'function',
          description: 'Read',
          parameters: { type: 'object', properties: { path: { type: 'string' } } },
        },
        { name: 'apply_patch', type: 'custom' },
      ]);
      expect(withTools).not.toContain('This reply must');
      for (const prompt of [plain, none]) {
        expect(prompt).not.toContain('## Tools');
        expect(prompt).not.toContain('agent_tool_call');
      }
      expect(required).toContain('This reply must contain at least one agent_tool_call block.');
    });

    it('docs/upstream/provider-c.md §11.8 renders history roles, prior calls as blocks and each tool result once', async () => {
      const h = await harness([answerRun('a')]);
      const messages: ChatMessage[] = [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Read it' },
        {
          role: 'assistant',
          content: 'Sure.',
          tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"path":"x"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'FILE-CONTENT-7' },
      ];
      await runTurn(h, request({ messages, tools }));
      const stdin = readRuns(h.dir)[0].stdin ?? '';
      expect(stdin).toContain(
        'System:\nBe brief.\n\nUser:\nRead it\n\nAssistant:\nSure.\n```agent_tool_call\n{"name":"read_file","arguments":{"path":"x"}}\n```\n\nTool result (read_file):\nFILE-CONTENT-7\n\n(Continue the conversation above.',
      );
      expect(stdin.split('FILE-CONTENT-7')).toHaveLength(2);
      expect(stdin).not.toContain('call_a');
    });
  });

  describe('stream and errors (docs/upstream/provider-c.md §6, §8)', () => {
    it('docs/upstream/provider-c.md §11.23 skips a non-JSON stdout line and still completes', async () => {
      const h = await harness([
        { stdout: [{ line: initLine() }, { raw: 'garbage {' }, { line: textDelta('ok') }, { line: resultLine() }] },
      ]);
      const c = call();
      const events = await runTurn(h, request(), c);
      expect(text(events)).toBe('ok');
      expect(events[events.length - 1]).toEqual({ type: 'finish', reason: 'stop' });
      expect(c.logs.filter((log) => log.event === 'provider_c_non_json_line')).toHaveLength(1);
    });

    it('returns tool calls parsed from fences with call_ ids', async () => {
      const h = await harness([
        {
          stdout: [
            { line: initLine() },
            { line: textDelta(`Let me look.\n${fenceText('read_file', { path: 'a' })}`) },
            { line: resultLine() },
          ],
        },
      ]);
      const events = await runTurn(h, request({ tools: [{ type: 'function', function: { name: 'read_file' } }] }));
      expect(text(events)).toBe('Let me look.\n');
      const calls = events.filter((event) => event.type === 'tool-call');
      expect(calls).toEqual([
        {
          type: 'tool-call',
          call: {
            id: expect.stringMatching(/^call_[0-9a-f]{24}$/),
            name: 'read_file',
            kind: 'function',
            arguments: '{"path":"a"}',
          },
        },
      ]);
    });

    it("returns a custom tool's fenced call as a custom call carrying the raw input", async () => {
      const h = await harness([
        {
          stdout: [
            { line: initLine() },
            { line: textDelta(fenceText('apply_patch', '*** Begin Patch\n*** End Patch')) },
            { line: resultLine() },
          ],
        },
      ]);
      const events = await runTurn(h, request({ tools: [{ type: 'custom', custom: { name: 'apply_patch' } }] }));
      expect(events.filter((event) => event.type === 'tool-call')).toEqual([
        {
          type: 'tool-call',
          call: {
            id: expect.any(String),
            name: 'apply_patch',
            kind: 'custom',
            input: '*** Begin Patch\n*** End Patch',
          },
        },
      ]);
    });

    it('docs/upstream/provider-c.md §6.1 a non-streamed request takes the answer the CLI restarted after a broken API stream whole', async () => {
      // The real CLI's lines: half an answer streamed, given up, then a new whole answer.
      const captured = fs
        .readFileSync(claudeCapturePath('abandoned-text.jsonl'), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => ({ line: JSON.parse(line) as Record<string, unknown> }));
      const h = await harness([{ stdout: captured }]);
      const events = await collect(await h.adapter.complete(request(), call().context));
      expect(text(events)).toBe('Full new answer');
      expect(events.filter((event) => event.type === 'error')).toEqual([]);
    });

    it('docs/upstream/provider-c.md §11.24 exit 1 with a login message before output → auth (403) without the stderr text', async () => {
      const h = await harness([{ stdout: [], stderr: 'Invalid API key · Please run /login', exitCode: 1 }]);
      const error = (await h.adapter
        .stream(request(), call().context)
        .catch((thrown: unknown) => thrown)) as GatewayError;
      expect(error).toBeInstanceOf(GatewayError);
      expect(error.code).toBe('auth');
      expect(error.spec.status).toBe(403);
      expect(`${error.message} ${error.publicMessage ?? ''} ${error.spec.message}`).not.toContain('Invalid API key');
      expect(readRuns(h.dir)).toHaveLength(1);
    });

    it("docs/upstream/provider-c.md §11.25 a usage-limit message → usage_limit (429) with the table's Retry-After after one run", async () => {
      const h = await harness([{ stdout: [], stderr: 'Claude AI usage limit reached', exitCode: 1 }]);
      const error = (await h.adapter
        .stream(request(), call().context)
        .catch((thrown: unknown) => thrown)) as GatewayError;
      expect(error.code).toBe('usage_limit');
      expect(error.spec.status).toBe(429);
      expect(error.retryAfterHeader).toBe(300);
      expect(readRuns(h.dir)).toHaveLength(1);
    });

    it('docs/upstream/provider-c.md §11.25 a crash on every run → upstream after exactly three runs', async () => {
      const h = await harness([{ stdout: [], stderr: 'Claude crashed', exitCode: 1 }]);
      const c = call();
      const error = (await h.adapter.stream(request(), c.context).catch((thrown: unknown) => thrown)) as GatewayError;
      expect(error.code).toBe('upstream');
      expect(readRuns(h.dir)).toHaveLength(3);
      expect(c.logs.filter((log) => log.event === 'upstream_retry').map((log) => log.attempt)).toEqual([1, 2]);
    });

    it('docs/upstream/provider-c.md §11.25 a crash followed by a good run → a normal answer', async () => {
      const h = await harness([{ stdout: [], stderr: 'Claude crashed', exitCode: 1 }, answerRun('recovered')]);
      const events = await runTurn(h);
      expect(text(events)).toBe('recovered');
      expect(readRuns(h.dir)).toHaveLength(2);
    });

    it('retries an upstream error result after acceptance but before output', async () => {
      const h = await harness([
        { stdout: [{ line: initLine() }, { line: resultLine({ isError: true, text: 'Overloaded' }) }], exitCode: 1 },
        answerRun('second'),
      ]);
      const events = await runTurn(h);
      expect(text(events)).toBe('second');
      expect(readRuns(h.dir)).toHaveLength(2);
    });

    it('after output, a failure is a terminal error event and is not retried', async () => {
      const h = await harness([
        { stdout: [{ line: initLine() }, { line: textDelta('half') }], stderr: 'boom', exitCode: 1 },
      ]);
      const events = await runTurn(h);
      expect(events[0]).toEqual({ type: 'text-delta', text: 'half' });
      expect(events[events.length - 1]).toMatchObject({ type: 'error', error: { code: 'upstream' } });
      expect(readRuns(h.dir)).toHaveLength(1);
    });
  });

  describe('lifecycle (docs/upstream/provider-c.md §2, §3.5, §3.6)', () => {
    it('docs/upstream/provider-c.md §11.26 a client abort during a hanging run: SIGTERM within 1 s, process gone within 3 s, slot free again', async () => {
      const h = await harness([hangingRun(), answerRun('next')], {
        PROVIDER_C_MAX_PROCESSES: '1',
        PRIMARY_AGENT_QUEUE_TIMEOUT: '2s',
      });
      const c = call();
      const iterator = (await h.adapter.stream(request(), c.context))[Symbol.asyncIterator]();
      expect(await iterator.next()).toEqual({ done: false, value: { type: 'text-delta', text: 'partial' } });
      const [run] = readRuns(h.dir);
      expect(fs.statSync(run.cwd).mode & 0o777).toBe(0o700);
      const pending = iterator.next();
      c.abort.abort(new Error('client left'));
      await expect(pending).rejects.toThrow('client left');
      await waitFor(() => readRuns(h.dir)[0].signal === 'SIGTERM', 1000);
      await waitFor(() => !isAlive(run.pid), 3000);
      await waitFor(() => !fs.existsSync(run.cwd), 3000);
      expect(text(await runTurn(h))).toBe('next');
      expect(c.logs.some((log) => log.event === 'upstream_canceled')).toBe(true);
    });

    it('an abort before the events are iterated still terminates and reaps the child', async () => {
      const h = await harness([hangingRun(), answerRun('next')], {
        PROVIDER_C_MAX_PROCESSES: '1',
        PRIMARY_AGENT_QUEUE_TIMEOUT: '3s',
      });
      const c = call();
      await h.adapter.stream(request(), c.context);
      c.abort.abort(new Error('gone'));
      await waitFor(() => readRuns(h.dir)[0].signal === 'SIGTERM', 1000);
      expect(text(await runTurn(h))).toBe('next');
    });

    it('an abort before the events are iterated leaves no timer of the turn pending (Jest or a draining gateway could not exit)', async () => {
      const h = await harness([hangingRun()]);
      const timers = trackSourceTimers();
      try {
        const c = call();
        await h.adapter.stream(request(), c.context);
        expect(timers.pending().length).toBeGreaterThan(0);
        c.abort.abort(new Error('gone'));
        await waitFor(() => readRuns(h.dir)[0].signal === 'SIGTERM', 1000);
        await waitFor(() => timers.pending().length === 0, 3000).catch(() => undefined);
        expect(timers.pending()).toEqual([]);
      } finally {
        timers.stop();
      }
    });

    it('docs/upstream/provider-c.md §11.27 PROVIDER_C_TIMEOUT ends a hanging run with a timeout error and kills the child', async () => {
      const h = await harness([hangingRun()], { PROVIDER_C_TIMEOUT: '1s' });
      const started = Date.now();
      const c = call();
      const events = await runTurn(h, request(), c);
      expect(events[events.length - 1]).toMatchObject({ type: 'error', error: { code: 'timeout' } });
      // The operator's log says the deadline stopped the child, not the client.
      expect(c.logs).toContainEqual(
        expect.objectContaining({ event: 'provider_c_process_exit', terminated_by: 'timeout' }),
      );
      // The 1 s turn timeout, not the 10-minute idle and turn defaults.
      expect(Date.now() - started).toBeLessThan(60_000);
      const [run] = readRuns(h.dir);
      expect(run.signal).toBe('SIGTERM');
      await waitFor(() => !isAlive(run.pid), 3000);
    });

    it('PROVIDER_C_TIMEOUT before the first line rejects with timeout (504)', async () => {
      const h = await harness([{ stdout: [], hang: true }], { PROVIDER_C_TIMEOUT: FIRING_BOUND });
      const error = (await h.adapter
        .stream(request(), call().context)
        .catch((thrown: unknown) => thrown)) as GatewayError;
      expect(error.code).toBe('timeout');
      expect(readRuns(h.dir)).toHaveLength(1);
    });

    it('the idle timeout ends a silent run with a timeout error', async () => {
      const h = await harness([hangingRun()], { GATEWAY_STREAM_IDLE_TIMEOUT: FIRING_BOUND });
      const events = await runTurn(h);
      expect(events[events.length - 1]).toMatchObject({ type: 'error', error: { code: 'timeout' } });
      expect(readRuns(h.dir)[0].signal).toBe('SIGTERM');
    });

    it('a child still alive after its result line is terminated when its turn ends, then the slot is released', async () => {
      const lingering: FakeClaudeRun = {
        stdout: [{ line: initLine() }, { line: textDelta('done') }, { line: resultLine() }],
        hang: true,
      };
      const h = await harness([lingering, answerRun('next')], { PROVIDER_C_MAX_PROCESSES: '1' });
      const c = call();
      expect(text(await runTurn(h, request(), c))).toBe('done');
      expect(text(await runTurn(h))).toBe('next');
      // The second turn got the one slot only once the first child was reaped, so its exit is logged:
      // the operator's log says the turn's end stopped it.
      expect(c.logs).toContainEqual(
        expect.objectContaining({ event: 'provider_c_process_exit', terminated_by: 'turn_end' }),
      );
      const [first, second] = readRuns(h.dir);
      // The lingering child never exits on its own: only the end of its turn can have stopped it.
      expect(first.signal).toBe('SIGTERM');
      expect(second.startedAt - first.exitedAt!).toBeGreaterThanOrEqual(0);
    });

    it('docs/upstream/provider-c.md §11.28 with PROVIDER_C_MAX_PROCESSES=1 two concurrent turns run one after the other', async () => {
      const slow: FakeClaudeRun = {
        stdout: [{ line: initLine() }, { line: textDelta('one'), delayMs: 300 }, { line: resultLine() }],
      };
      const h = await harness([slow, answerRun('two')], { PROVIDER_C_MAX_PROCESSES: '1' });
      const [first, second] = await Promise.all([runTurn(h), runTurn(h)]);
      expect([text(first), text(second)].sort()).toEqual(['one', 'two']);
      const [run0, run1] = readRuns(h.dir);
      expect(run1.startedAt).toBeGreaterThanOrEqual(run0.exitedAt!);
      expect(h.metrics.queueWaited).toHaveBeenCalledWith('provider_c_processes', 'acquired', expect.any(Number));
    });

    it('docs/upstream/provider-c.md §11.28 with PRIMARY_AGENT_QUEUE_TIMEOUT=100ms the second concurrent turn gets 429 queue_timeout', async () => {
      const h = await harness([hangingRun()], { PROVIDER_C_MAX_PROCESSES: '1', PRIMARY_AGENT_QUEUE_TIMEOUT: '100ms' });
      const c = call();
      await h.adapter.stream(request(), c.context);
      const waiting = call();
      const error = (await h.adapter
        .stream(request(), waiting.context)
        .catch((thrown: unknown) => thrown)) as GatewayError;
      expect(error.code).toBe('queue_timeout');
      // The wait and its refusal are logged under the waiting request, at info (the request's own line is
      // its warning); the turn that ran at once logs neither.
      const ids = { provider: 'provider_c_processes', request_id: 'req-1' };
      expect(waiting.logs.filter((log) => String(log.event).startsWith('queue_'))).toEqual([
        { level: 'info', event: 'queue_wait', ...ids, position: 1 },
        {
          level: 'info',
          event: 'queue_timeout',
          ...ids,
          wait_ms: expect.any(Number),
          blocked_by: 'global',
          setting: 'PROVIDER_C_MAX_PROCESSES',
        },
      ]);
      expect(c.logs.filter((log) => String(log.event).startsWith('queue_'))).toEqual([]);
      expect(error.spec.status).toBe(429);
      expect(error.retryAfterHeader).toBe(5);
      expect(error.publicMessage).toBe(
        'waited 100ms (PRIMARY_AGENT_QUEUE_TIMEOUT) for a slot: all provider_c process slots are busy ' +
          '(PROVIDER_C_MAX_PROCESSES=1); retry in 5 s, or raise PROVIDER_C_MAX_PROCESSES or PRIMARY_AGENT_QUEUE_TIMEOUT',
      );
      expect(readRuns(h.dir)).toHaveLength(1);
      expect(h.metrics.queueWaited).toHaveBeenCalledWith('provider_c_processes', 'timeout', expect.any(Number));
      c.abort.abort(new Error('done'));
    });

    it('a turn waiting for a process slot ends with timeout when its own deadline (structured deadline_ms) passes first', async () => {
      // The queue's own bound is far beyond the deadline: only the deadline can end the wait first.
      const h = await harness([hangingRun()], { PROVIDER_C_MAX_PROCESSES: '1', PRIMARY_AGENT_QUEUE_TIMEOUT: '20s' });
      const c = call();
      await h.adapter.stream(request(), c.context);
      try {
        const waiting = call();
        const error = (await h.adapter
          .stream(request(), { ...waiting.context, deadlineAt: Date.now() + 200 })
          .catch((thrown: unknown) => thrown)) as GatewayError;
        expect(error).toBeInstanceOf(GatewayError);
        expect(error.code).toBe('timeout');
        expect(readRuns(h.dir)).toHaveLength(1);
      } finally {
        c.abort.abort(new Error('done'));
      }
    });

    it('docs/upstream/provider-c.md §11.29 a missing executable → warning at startup, 502 provider_cli_missing before any output, slot released', async () => {
      const h = await harness([answerRun('never')], {
        PROVIDER_C_COMMAND: 'definitely-not-claude-xyz',
        PROVIDER_C_MAX_PROCESSES: '1',
        PRIMARY_AGENT_QUEUE_TIMEOUT: '200ms',
      });
      expect(h.startupWarnings).toEqual([
        {
          event: 'provider_c_command_missing',
          command: 'definitely-not-claude-xyz',
          reason: 'command not found',
          fix: 'install it (`npm install -g @anthropic-ai/claude-code`) or set PROVIDER_C_COMMAND to its path',
        },
      ]);
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = (await h.adapter
          .stream(request(), call().context)
          .catch((thrown: unknown) => thrown)) as GatewayError;
        expect(error.code).toBe('provider_cli_missing');
        expect(error.spec.status).toBe(502);
      }
      expect(h.metrics.queueWaited.mock.calls.filter(([, result]) => result === 'acquired')).toHaveLength(2);
      expect(readRuns(h.dir)).toHaveLength(0);
    });

    it('an argument spawn() refuses outright (NUL in the model, which the catalog refuses before an adapter sees it) → upstream (502), temp dir removed, slot released', async () => {
      const h = await harness([answerRun('never')], {
        PROVIDER_C_MAX_PROCESSES: '1',
        PRIMARY_AGENT_QUEUE_TIMEOUT: '200ms',
      });
      const tmp = path.join(h.dir, 'tmp');
      fs.mkdirSync(tmp);
      const savedTmpDir = process.env.TMPDIR;
      process.env.TMPDIR = tmp;
      try {
        for (let attempt = 0; attempt < 2; attempt++) {
          const error = (await h.adapter
            .stream(request({ upstreamModel: 'claude-x\u0000y' }), call().context)
            .catch((thrown: unknown) => thrown)) as GatewayError;
          expect(error).toBeInstanceOf(GatewayError);
          expect(error.code).toBe('upstream');
          expect(error.spec.status).toBe(502);
        }
        expect(fs.readdirSync(tmp)).toEqual([]);
      } finally {
        if (savedTmpDir === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = savedTmpDir;
      }
      expect(readRuns(h.dir)).toHaveLength(0);
    });

    it('shutdown terminates and reaps a running child', async () => {
      const h = await harness([hangingRun()]);
      const events = await h.adapter.stream(request(), call().context);
      const consumed = collect(events);
      await h.adapter.onModuleDestroy();
      const [run] = readRuns(h.dir);
      expect(run.signal).toBe('SIGTERM');
      expect(isAlive(run.pid)).toBe(false);
      expect(fs.existsSync(run.cwd)).toBe(false);
      const result = await consumed;
      expect(result[result.length - 1]).toMatchObject({ type: 'error' });
    });
  });
});
