import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { contents, postChat, readUntil, streamChat } from './support/chat-sse';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { KeepAliveSweep } from '../src/common/sse/keep-alive-sweep';
import { eventually } from './support/poll';
import { accountState } from './support/accounts';
import { metricValue } from './support/prometheus-text';
import type { FakeClaudeRun } from './support/provider-c-fixtures';
import {
  answerRun,
  FAKE_CLAUDE_PATH,
  hangingRun,
  initLine,
  isAlive,
  providerCSettings,
  readRuns,
  textDelta,
  waitFor,
} from './support/provider-c-fixtures';

/**
 * provider_c against the project's own fake `claude` (test/support/fake-claude.mjs), only for what
 * the real binary cannot be made to do: die by a signal, print garbage or only stderr, never
 * exit, not exist, or report a login that bills an API key or a cloud account (the gateway's
 * children never see the credentials that would make the real one say so). Every other provider_c scenario runs the real CLI (provider-c.e2e-spec.ts).
 */

const LS = { type: 'function', function: { name: 'ls', parameters: { type: 'object', properties: {} } } };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A gateway with only provider_c enabled, running the fake with the given runs. */
async function gatewayWith(
  runs: FakeClaudeRun[],
  settings: Record<string, string> = {},
): Promise<{ gateway: TestGateway; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-fake-cli-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const gateway = await startGateway({ ...providerCSettings(dir, runs), GATEWAY_PROVIDERS: 'provider_c', ...settings });
  cleanups.push(() => gateway.close());
  return { gateway, dir };
}

/** Every run's child is gone and its working directory removed. */
async function expectAllChildrenReaped(dir: string): Promise<void> {
  await waitFor(() => readRuns(dir).every((record) => !isAlive(record.pid) && !fs.existsSync(record.cwd)), 3000);
}

describe('provider_c with the fake claude: what the real CLI cannot do', () => {
  describe('failures', () => {
    it('a child killed by a signal on every run → 502 after exactly three runs, before any SSE byte', async () => {
      const { gateway, dir } = await gatewayWith([{ stdout: [{ line: initLine() }], killWith: 'SIGKILL' }]);
      const result = await streamChat(gateway, {});
      expect(result.status).toBe(502);
      expect(result.body.error).toMatchObject({ type: 'upstream_error' });
      expect(readRuns(dir)).toHaveLength(3);
    });

    it('a child killed by a signal after output → the text so far, the error chunk and [DONE]', async () => {
      const { gateway, dir } = await gatewayWith([
        { stdout: [{ line: initLine() }, { line: textDelta('partial') }], killWith: 'SIGSEGV' },
      ]);
      const result = await streamChat(gateway, {});
      expect(result.status).toBe(200);
      expect(contents(result)).toEqual(['partial', '[error: upstream error]']);
      expect(result.done).toBe(true);
      expect(readRuns(dir)).toHaveLength(1);
    });

    it('garbage on stdout is skipped and never shown; garbage alone is no answer (502 after three runs)', async () => {
      const garbage = { raw: 'Segmentation fault (core dumped) <not json>' };
      const mixed = await gatewayWith([
        {
          stdout: [
            garbage,
            { line: initLine() },
            garbage,
            { line: textDelta('fine') },
            garbage,
            { line: { type: 'result', subtype: 'success', is_error: false, result: 'fine' } },
          ],
        },
      ]);
      const answer = await streamChat(mixed.gateway, {});
      expect(contents(answer)).toEqual(['fine']);
      expect(answer.raw).not.toContain('Segmentation');
      const only = await gatewayWith([{ stdout: [garbage, garbage] }]);
      const none = await streamChat(only.gateway, {});
      expect(none.status).toBe(502);
      expect(none.raw).not.toContain('Segmentation');
      expect(readRuns(only.dir)).toHaveLength(3);
    });

    it('docs/upstream/provider-c.md §11.24 exit 1 with only a login message on stderr (no structured line) → 403 JSON error without the stderr text, which only the log line carries', async () => {
      const { gateway, dir } = await gatewayWith([
        { stdout: [], stderr: 'Invalid API key · Please run /login', exitCode: 1 },
      ]);
      const result = await streamChat(gateway, {});
      expect(result.status).toBe(403);
      expect(result.headers.get('content-type')).toContain('application/json');
      expect(result.body.error).toMatchObject({ type: 'permission_error', code: 'upstream_login_required' });
      expect(JSON.stringify(result.body)).not.toMatch(/Invalid API key|Please run \/login/);
      // The CLI's words reach only the bounded, sanitized `upstream_message` of the upstream_* lines
      // and of the request's own line (its one warning).
      const records = gateway.logs.records();
      expect(JSON.stringify(records.map(({ upstream_message: _words, ...rest }) => rest))).not.toContain(
        'Invalid API key',
      );
      expect(records.find((record) => record.event === 'chat_completion')).toMatchObject({
        level: 40,
        error_code: 'auth',
        upstream_message: 'Invalid API key · Please run /login',
        fix: expect.stringContaining('`/login`'),
      });
      expect(records.find((record) => record.event === 'upstream_turn_failed')).toMatchObject({
        provider: 'provider_c',
        account: 'default',
        attempt: 1,
        error_code: 'auth',
        exit_code: 1,
        upstream_message: 'Invalid API key · Please run /login',
      });
      expect(readRuns(dir)).toHaveLength(1);
    });

    it('docs/upstream/provider-c.md §11.25 exit 1 with only a usage-limit message on stderr → 429 with Retry-After after one run', async () => {
      const { gateway, dir } = await gatewayWith([{ stdout: [], stderr: 'usage limit reached', exitCode: 1 }]);
      const response = await postChat(gateway, { stream: true });
      expect(response.status).toBe(429);
      // No reset known: the login's rest (ACCOUNT_COOLDOWN_DEFAULT, 5 min), and no client retry into the same limit.
      expect(response.headers.get('retry-after')).toBe('300');
      expect(response.headers.get('x-should-retry')).toBe('false');
      expect(((await response.json()) as any).error.type).toBe('rate_limit_error');
      expect(readRuns(dir)).toHaveLength(1);
    });

    it('docs/upstream/provider-c.md §11.25 "Claude crashed" on every run → 502 after exactly three runs; a crash then a good run → an answer', async () => {
      const crash: FakeClaudeRun = { stdout: [], stderr: 'Claude crashed', exitCode: 1 };
      const failing = await gatewayWith([crash]);
      const response = await postChat(failing.gateway, { stream: true });
      expect(response.status).toBe(502);
      expect(JSON.stringify(await response.json())).not.toContain('crashed');
      expect(readRuns(failing.dir)).toHaveLength(3);

      const recovering = await gatewayWith([crash, answerRun('fine')]);
      const result = await streamChat(recovering.gateway, {});
      expect(contents(result)).toEqual(['fine']);
      expect(readRuns(recovering.dir)).toHaveLength(2);
    });

    it('a crash whose earlier stderr lines name a login or OAuth file → 502 after three runs, the login still ready', async () => {
      const crash: FakeClaudeRun = {
        stdout: [],
        stderr:
          'reading /home/gateway/.claude/oauth-login.json\nNot logged in to the MCP server "docs"\nClaude crashed\n',
        exitCode: 1,
      };
      const { gateway, dir } = await gatewayWith([crash]);
      const response = await postChat(gateway, { stream: true });
      expect(response.status).toBe(502);
      expect(((await response.json()) as { error: unknown }).error).toMatchObject({ type: 'upstream_error' });
      // A crash is retried as one: its last line, not a word of an earlier one, says what happened.
      expect(readRuns(dir)).toHaveLength(3);
      expect(gateway.logs.records('upstream_turn_failed')).toEqual([
        expect.objectContaining({ error_code: 'upstream', exit_code: 1, upstream_message: 'Claude crashed' }),
      ]);
      expect(gateway.logs.records('account_state')).toEqual([]);
      expect(await accountState(gateway, 'provider_c', 'default')).toBe('ready');
    });

    it('a missing executable answers 502 provider_cli_missing, naming the install, before any SSE header', async () => {
      // The startup warning is asserted in provider-c-adapter.e2e-spec.ts.
      const { gateway } = await gatewayWith([], { PROVIDER_C_COMMAND: 'no-such-claude-binary' });
      const response = await postChat(gateway, { stream: true });
      expect(response.status).toBe(502);
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(((await response.json()) as { error: unknown }).error).toEqual({
        type: 'upstream_error',
        code: 'provider_cli_missing',
        param: null,
        message: expect.stringContaining('npm install -g @anthropic-ai/claude-code'),
      });
    });
  });

  describe('a PROVIDER_C_COMMAND path that cannot be run', () => {
    it.each([
      ['a directory', (dir: string) => dir, /is a directory, not the claude executable: set PROVIDER_C_COMMAND/],
      [
        'a file without the execute bit',
        (dir: string) => {
          const file = path.join(dir, 'claude-copy.mjs');
          fs.copyFileSync(FAKE_CLAUDE_PATH, file);
          fs.chmodSync(file, 0o644);
          return file;
        },
        /is not executable: run `chmod \+x .*claude-copy\.mjs`/,
      ],
    ])(
      '%s: the login report and the 502 name what is wrong and its fix, not the install',
      async (_name, command, fix) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-command-'));
        cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
        const { gateway } = await gatewayWith([], { PROVIDER_C_COMMAND: command(dir) });
        await eventually(() => gateway.logs.records('login_state').length > 0);
        expect(gateway.logs.records('login_state')).toEqual([
          expect.objectContaining({ state: 'cli_missing', reason: expect.stringMatching(/^PROVIDER_C_COMMAND is /) }),
        ]);
        expect(gateway.logs.records('login_state')[0].fix).toMatch(fix);
        const response = await postChat(gateway, { stream: true });
        expect(response.status).toBe(502);
        const { error } = (await response.json()) as { error: { code: string; message: string } };
        expect(error.code).toBe('provider_cli_missing');
        expect(error.message).toMatch(fix);
        expect(error.message).not.toContain('npm install');
        expect(JSON.stringify(gateway.logs.records())).not.toContain('npm install');
      },
    );
  });

  describe('a CLI logged in to bill something else than the Claude login', () => {
    it.each<{ knob: Record<string, string>; reason: string; fix: string }>([
      {
        knob: { FAKE_CLAUDE_AUTH_METHOD: 'api_key' },
        reason: 'api_key, not a Claude login',
        fix: '`claude setup-token`',
      },
      {
        knob: { FAKE_CLAUDE_API_PROVIDER: 'bedrock' },
        reason: "apiProvider bedrock, not Anthropic's API",
        fix: 'CLAUDE_CODE_USE_*',
      },
    ])(
      'auth status says $reason: the only login is never run, the chat is 403 naming the fix',
      async ({ knob, reason, fix }) => {
        const { gateway, dir } = await gatewayWith([answerRun('billed elsewhere')], knob);
        await eventually(
          () => gateway.logs.records('login_state').some((line) => line.provider === 'provider_c'),
          20_000,
          'the login report',
        );
        expect(gateway.logs.records('login_state')).toContainEqual(
          expect.objectContaining({ state: 'unusable', reason: `claude auth status: ${reason}` }),
        );
        const accounts = (await (await fetch(`${gateway.url}/v1/accounts`)).json()) as {
          data: Array<{ provider: string; state: string }>;
        };
        expect(accounts.data.find((row) => row.provider === 'provider_c')?.state).toBe('login_dead');
        for (const stream of [false, true]) {
          const response = await postChat(gateway, { stream });
          expect(response.status).toBe(403);
          const { error } = (await response.json()) as { error: { code: string; message: string } };
          expect(error.code).toBe('upstream_login_required');
          expect(error.message).toContain('provider_c has no usable login');
          expect(error.message).toContain(fix);
        }
        expect(readRuns(dir)).toEqual([]);
      },
    );
  });

  describe('process lifecycle', () => {
    it('a first child killed by SIGKILL before its first line, then a retry that answers and stays: no child outlives the answer', async () => {
      // The retry prints its result and does not exit on its own: only the gateway closing it when
      // the turn is over can end it (docs/providers.md "Timeouts and cancellation").
      const { gateway, dir } = await gatewayWith([
        { stdout: [], killWith: 'SIGKILL' },
        { ...answerRun('fine'), hang: true },
      ]);
      const result = await streamChat(gateway, {});
      expect(contents(result)).toEqual(['fine']);
      const pids = readRuns(dir).map((record) => record.pid);
      expect(pids).toHaveLength(2);
      // The answer does not wait for the retry's reap: wait for both to be gone, zombies included.
      await waitFor(() => pids.every((pid) => !fs.existsSync(`/proc/${pid}`)), 1000);
    });

    it('docs/upstream/provider-c.md §11.26 a client disconnect terminates the child (SIGTERM within 1 s, gone within 3 s) and frees the slot', async () => {
      const { gateway, dir } = await gatewayWith([hangingRun(), answerRun('next')], {
        PROVIDER_C_MAX_PROCESSES: '1',
        PRIMARY_AGENT_QUEUE_TIMEOUT: '2s',
      });
      const client = new AbortController();
      const response = await postChat(gateway, { stream: true }, client.signal);
      await readUntil((response.body as ReadableStream<Uint8Array>).getReader(), 'partial');
      client.abort();
      // The child hangs for good: only the disconnect can have terminated it.
      await waitFor(() => readRuns(dir)[0]?.signal === 'SIGTERM', 1000);
      await waitFor(() => !isAlive(readRuns(dir)[0].pid), 3000);
      const next = await streamChat(gateway, {});
      expect(contents(next)).toEqual(['next']);
      await waitFor(() => gateway.logs.records().some((record) => record.event === 'upstream_canceled'), 1000);
    });

    it('a chat stopped and sent again at once (ACCOUNT_MAX_IN_FLIGHT=1) gets its new turn once the stopped child is gone, not a 429', async () => {
      // The stopped child ignores SIGTERM: it holds the only login slot until the gateway's SIGKILL.
      const { gateway, dir } = await gatewayWith([{ ...hangingRun(), ignoreSigterm: true }, answerRun('again')], {
        ACCOUNT_MAX_IN_FLIGHT: '1',
      });
      const chat = { 'x-conversation-id': 'stopped-then-sent-again' };
      const client = new AbortController();
      const response = await postChat(gateway, { stream: true }, client.signal, chat);
      await readUntil((response.body as ReadableStream<Uint8Array>).getReader(), 'partial');
      client.abort();
      // The turn is over (the gateway told its child to stop); the child is still running.
      await waitFor(() => readRuns(dir)[0]?.signal === 'SIGTERM', 1000);
      const again = await streamChat(gateway, {}, chat);
      expect(again.status).toBe(200);
      expect(contents(again)).toEqual(['again']);
      // The stopped child ran to its SIGKILL: the new turn waited for its login, it did not share it.
      expect(gateway.logs.records('provider_c_process_exit')[0]).toMatchObject({
        terminated_by: 'canceled',
        signal: 'SIGKILL',
      });
      await expectAllChildrenReaped(dir);
      await eventually(
        async () =>
          (await metricValue(gateway, 'gateway_chat_api_account_in_flight', { provider: 'provider_c' })) === 0,
      );
    });

    /** A streamed chat sent over a raw socket that never reads a byte of the answer. */
    function silentClient(gateway: TestGateway): void {
      const body = JSON.stringify({
        model: 'claude-fable-5',
        stream: true,
        messages: [{ role: 'user', content: 'flood' }],
      });
      const socket = net.connect(Number(new URL(gateway.url).port), '127.0.0.1');
      cleanups.push(() => void socket.destroy());
      socket.pause();
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }

    /** Far more output than the sockets between the gateway and a client that reads nothing can hold. */
    const flood = (): FakeClaudeRun => ({
      stdout: [{ line: initLine() }, ...Array.from({ length: 2000 }, () => ({ line: textDelta('y'.repeat(8000)) }))],
      hang: true,
    });

    it('a client that stops reading holds no child or slot past the turn deadline: the child is ended and reaped, the next turn runs', async () => {
      // The timeout bounds the next turn too, so it leaves a loaded machine time to start the fake.
      const { gateway, dir } = await gatewayWith([flood(), answerRun('next')], {
        PROVIDER_C_MAX_PROCESSES: '1',
        PROVIDER_C_TIMEOUT: '5s',
      });
      silentClient(gateway);
      await waitFor(() => readRuns(dir)[0]?.signal === 'SIGTERM', 5000);
      await expectAllChildrenReaped(dir);
      expect(contents(await streamChat(gateway, {}))).toEqual(['next']);
      expect(gateway.logs.records('provider_c_process_exit')[0]).toMatchObject({ terminated_by: 'timeout' });
    });

    it('a client that takes no byte for GATEWAY_STREAM_IDLE_TIMEOUT is gone: its response is closed and its turn canceled (499)', async () => {
      const { gateway, dir } = await gatewayWith([flood()], { GATEWAY_STREAM_IDLE_TIMEOUT: '1s' });
      // Found by the keep-alive sweep once a whole round (7.5 s on its timer) went by without a byte
      // taken; the spec runs the rounds itself, so the outcome does not hang on the machine's speed.
      const sweep = gateway.app.get(KeepAliveSweep, { strict: false });
      sweep.sweepOnlyWhenCalled();
      const rounds = setInterval(() => sweep.sweep(), 500);
      cleanups.push(() => clearInterval(rounds));
      silentClient(gateway);
      await waitFor(() => readRuns(dir)[0]?.signal === 'SIGTERM', 30_000);
      await expectAllChildrenReaped(dir);
      await waitFor(() => gateway.logs.records('chat_completion').some((record) => record.status === 499), 5000);
    }, 45_000);

    it("a client that leaves while its login's background refresh is in flight is canceled at once and starts no child", async () => {
      // A token endpoint that answers only when the spec lets it: the refresh stays in flight meanwhile.
      const waiting: http.ServerResponse[] = [];
      const tokenEndpoint = http.createServer((_request, response) => void waiting.push(response));
      const answer = () => {
        for (const response of waiting.splice(0)) {
          response.setHeader('content-type', 'application/json');
          response.end(JSON.stringify({ access_token: 'renewed', refresh_token: 'renewed-refresh', expires_in: 3600 }));
        }
      };
      await new Promise<void>((resolve) => tokenEndpoint.listen(0, '127.0.0.1', resolve));
      cleanups.push(() => {
        tokenEndpoint.closeAllConnections();
        tokenEndpoint.close();
      });
      const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-refreshing-'));
      cleanups.push(() => fs.rmSync(configDir, { recursive: true, force: true }));
      const credentials = { accessToken: 'old', refreshToken: 'old-refresh', expiresAt: Date.now() + 60_000 };
      fs.writeFileSync(
        path.join(configDir, '.credentials.json'),
        JSON.stringify({ claudeAiOauth: { ...credentials, scopes: ['user:inference'] } }),
      );
      const { port } = tokenEndpoint.address() as AddressInfo;
      const { gateway, dir } = await gatewayWith([answerRun('late')], {
        PROVIDER_C_ACCOUNTS: `one=${configDir}`,
        PROVIDER_C_TOKEN_URL: `http://127.0.0.1:${port}/v1/oauth/token`,
        ACCOUNT_REFRESH_INTERVAL: '200ms',
        ACCOUNT_REFRESH_AHEAD: '5m',
      });
      await waitFor(() => waiting.length > 0, 5000);
      const client = new AbortController();
      const sent = postChat(gateway, { stream: true }, client.signal).catch(() => undefined);
      // Time for the turn to reach the child's start, where it waits for the refresh.
      await new Promise((resolve) => setTimeout(resolve, 300));
      client.abort();
      await sent;
      await waitFor(() => gateway.logs.records('chat_completion').some((record) => record.status === 499), 2000);
      answer();
      await waitFor(() => gateway.logs.records('provider_c_token_refreshed').length > 0, 3000);
      expect(readRuns(dir)).toHaveLength(0);
    });

    /** Kills the runs' helpers when the test ends (before its gateway closes: cleanups run in reverse). */
    function killHelpersAtEnd(dir: string): void {
      cleanups.push(() => {
        for (const { helperPid } of readRuns(dir)) {
          if (helperPid !== undefined && isAlive(helperPid)) process.kill(helperPid, 'SIGKILL');
        }
      });
    }

    it('a child that exits while a helper in a session of its own still holds its stdout and stderr is reaped: exit logged, directory removed, slot freed', async () => {
      const { gateway, dir } = await gatewayWith([{ ...answerRun('first'), helper: 'session' }, answerRun('second')], {
        PROVIDER_C_MAX_PROCESSES: '1',
        PRIMARY_AGENT_QUEUE_TIMEOUT: '20s',
      });
      killHelpersAtEnd(dir);
      expect(contents(await streamChat(gateway, {}))).toEqual(['first']);
      await waitFor(() => gateway.logs.records('provider_c_process_exit').length === 1, 3000);
      const [first] = readRuns(dir);
      await waitFor(() => !fs.existsSync(first.cwd), 3000);
      // Out of the group's reach, the helper lives on; only the gateway's ends of the pipes are let go.
      expect(isAlive(first.helperPid!)).toBe(true);
      expect(contents(await streamChat(gateway, {}))).toEqual(['second']);
    });

    it('a child that exits 0 without its result line while a helper in its group holds stdout finishes normally with the answer so far, and the helper is killed', async () => {
      const { gateway, dir } = await gatewayWith(
        [{ stdout: [{ line: initLine() }, { line: textDelta('partial') }], helper: 'group' }],
        { GATEWAY_STREAM_IDLE_TIMEOUT: '20s' },
      );
      killHelpersAtEnd(dir);
      const result = await streamChat(gateway, {});
      expect(contents(result)).toEqual(['partial']);
      expect(result.done).toBe(true);
      expect(gateway.logs.records('provider_c_missing_result')).toHaveLength(1);
      const [run] = readRuns(dir);
      await waitFor(() => !isAlive(run.helperPid!) && !fs.existsSync(run.cwd), 3000);
    });

    it('no child outlives its request: after answers, errors, timeouts and disconnects every child is gone', async () => {
      const hanging = hangingRun('...');
      const { gateway, dir } = await gatewayWith(
        [answerRun('a'), { stdout: [], stderr: 'Invalid API key', exitCode: 1 }, hanging, hanging],
        // The timeout bounds the runs that answer too: time enough to start the fake on a loaded machine.
        { PROVIDER_C_TIMEOUT: '5s' },
      );
      expect(contents(await streamChat(gateway, {}))).toEqual(['a']);
      await expectAllChildrenReaped(dir);
      expect((await postChat(gateway, {})).status).toBe(403);
      await expectAllChildrenReaped(dir);
      const timedOut = await streamChat(gateway, {});
      expect(contents(timedOut)).toContain('[error: timeout]');
      await expectAllChildrenReaped(dir);
      const client = new AbortController();
      const response = await postChat(gateway, { stream: true }, client.signal);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      client.abort();
      await expectAllChildrenReaped(dir);
      expect(readRuns(dir)).toHaveLength(4);
      expect(
        fs
          .readdirSync(os.tmpdir())
          .filter((name) => readRuns(dir).some((record) => path.basename(record.cwd) === name)),
      ).toEqual([]);
    });

    it('a gateway that closed leaves no exit hook behind (many gateways run in one test process)', async () => {
      const before = process.listenerCount('exit');
      const gateway = await startGateway({ GATEWAY_PROVIDERS: 'provider_c', PROVIDER_C_COMMAND: FAKE_CLAUDE_PATH });
      expect(process.listenerCount('exit')).toBeGreaterThan(before);
      await gateway.close();
      expect(process.listenerCount('exit')).toBe(before);
    });

    it('docs/upstream/provider-c.md §11.30 with provider_c disabled: sonnet is not listed, chat is 404 model_not_found, nothing is spawned', async () => {
      const { gateway, dir } = await gatewayWith([answerRun('never')], { GATEWAY_PROVIDERS: 'provider_a' });
      const models = (await (await fetch(`${gateway.url}/v1/models`)).json()) as { data: { id: string }[] };
      expect(models.data.map((model) => model.id)).not.toContain('sonnet');
      const response = await postChat(gateway, { model: 'sonnet', stream: true, tools: [LS] });
      expect(response.status).toBe(404);
      expect(((await response.json()) as any).error.code).toBe('model_not_found');
      expect(readRuns(dir)).toEqual([]);
    });
  });
});
