import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AccountPools } from '../src/accounts/account-pools';
import { accountState } from './support/accounts';
import { postChat } from './support/chat-sse';
import { startGateway, type TestGateway } from './support/create-test-app';
import { FakeCodeAssist } from './support/fake-provider-b';
import { FakeProviderA } from './support/fake-provider-a';
import { textReply, writeAuthFile } from './support/provider-a-fixtures';
import type { FakeClaudeRun } from './support/provider-c-fixtures';
import { answerRun, FAKE_CLAUDE_PATH, providerCSettings } from './support/provider-c-fixtures';
import { metricValue } from './support/prometheus-text';

/**
 * A gateway started on a machine where no CLI is logged in (docs/accounts.md "Login report"): it says so at startup, one
 * line per login naming the command that fixes it and one warning per family; each family's chat
 * answers an error naming that command (not the caller's key); and a login written afterwards is
 * picked up, by requests and by the report, without a restart. A login file the gateway may not
 * read (a directory where it should be) makes each family's chat name that file's error code and
 * fix instead of the login command. provider_c runs the project's fake
 * `claude` here (its `auth status` answers "not logged in"); the real binary's not-logged-in case
 * is in provider-c.e2e-spec.ts.
 */

/**
 * What each family's fix names. provider_a's login is not in the Codex CLI's default home (CODEX_HOME
 * is a directory of this spec), so its command is the one for that home, naming the file it rewrites.
 */
const FAMILIES = [
  { provider: 'provider_a', model: 'gpt-5.6-sol', command: "codex login` on the gateway's machine (it rewrites" },
  { provider: 'provider_b', model: 'gemini-2.5-pro', command: '"Login with Google"' },
  { provider: 'provider_c', model: 'claude-fable-5', command: '`/login`' },
] as const;

let gateway: TestGateway;
let fakeA: FakeProviderA;
let fakeB: FakeCodeAssist;
let dir: string;
let codexHome: string;

beforeAll(async () => {
  fakeA = await FakeProviderA.start();
  fakeB = await FakeCodeAssist.start();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'login-report-'));
  codexHome = path.join(dir, 'codex');
  gateway = await startGateway({
    CODEX_HOME: codexHome,
    PROVIDER_A_URL: fakeA.wsUrl,
    PROVIDER_A_TOKEN_URL: fakeA.tokenUrl,
    GEMINI_HOME: path.join(dir, 'gemini'),
    PROVIDER_B_URL: fakeB.baseUrl,
    PROVIDER_B_TOKEN_URL: fakeB.tokenUrl,
    // The fake CLI without a login: `auth status` says so, a turn prints the real CLI's stderr line.
    ...providerCSettings(dir, [{ stdout: [], stderr: 'Not logged in · Please run /login', exitCode: 1 }]),
    FAKE_CLAUDE_LOGGED_IN: '0',
  });
});

afterAll(async () => {
  await gateway?.close();
  await fakeA?.close();
  await fakeB?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The file each family's default login is looked for in, as this spec configures them. */
const loginFiles = (): Record<string, string | undefined> => ({
  provider_a: path.join(codexHome, 'auth.json'),
  provider_b: path.join(dir, 'gemini', 'oauth_creds.json'),
  provider_c: undefined,
});

/** Polls until `check` passes (generous bound: the report re-checks every 10 s). */
async function eventually(check: () => Promise<void> | void, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('a gateway started with no logins', () => {
  it('prints one line per login naming the command, and a warning per family with no usable login', async () => {
    await eventually(() => expect(gateway.logs.records('login_none_usable')).toHaveLength(3));
    for (const { provider, command } of FAMILIES) {
      const [line] = gateway.logs.records('login_state').filter((record) => record.provider === provider);
      expect(line).toMatchObject({
        level: 30,
        account: 'default',
        state: 'missing',
        fix: expect.stringContaining(command),
      });
      expect(line.msg).toContain(`${provider} login "default"`);
      expect(line.msg).toContain(command);
      // The file its check looked for; provider_c's own login is the CLI's answer (`claude auth status`), no file.
      const file = loginFiles()[provider];
      expect(line.path).toBe(file);
      if (file !== undefined) expect(line.msg).toContain(`: missing (no login file at ${file}); to fix: `);
      const [warning] = gateway.logs.records('login_none_usable').filter((record) => record.provider === provider);
      expect(warning).toMatchObject({ level: 40, accounts: ['default'] });
      expect(warning.msg).toContain(command);
    }
    // Never a path's content, a token or an e-mail: the lines name families, aliases and states.
    expect(JSON.stringify(gateway.logs.records('login_state'))).not.toMatch(/@|token-|eyJ/);
  });

  it('exports the same state as gateway_chat_api_login_state', async () => {
    await eventually(async () => {
      for (const { provider } of FAMILIES) {
        expect(
          await metricValue(gateway, 'gateway_chat_api_login_state', {
            provider,
            account: 'default',
            state: 'missing',
          }),
        ).toBe(1);
        expect(
          await metricValue(gateway, 'gateway_chat_api_login_state', { provider, account: 'default', state: 'usable' }),
        ).toBe(0);
      }
    });
  });

  it("the account pools agree: each family's login is login_dead in GET /v1/accounts and the account gauge", async () => {
    // provider_c's CLI answers, but not logged in: its pool learns that from the report, not from a turn.
    const response = await fetch(`${gateway.url}/v1/accounts`);
    const rows = ((await response.json()) as { data: Array<{ provider: string; state: string }> }).data;
    expect(rows.map(({ provider, state }) => ({ provider, state }))).toEqual(
      FAMILIES.map(({ provider }) => ({ provider, state: 'login_dead' })),
    );
    for (const { provider } of FAMILIES) expect(await accountState(gateway, provider, 'default')).toBe('login_dead');
    // Without a line of their own: the report's login_state and login_none_usable lines tell it.
    expect(gateway.logs.records('account_state')).toEqual([]);
  });

  it.each(FAMILIES)(
    'a $provider chat answers 403 upstream_login_required whose message names $command, with the cause on one line under the request id',
    async ({ provider, model, command }) => {
      const requestId = `no-login-${provider}`;
      const response = await postChat(gateway, { model }, undefined, { 'x-request-id': requestId });
      expect(response.status).toBe(403);
      expect(response.headers.get('x-request-id')).toBe(requestId);
      const { error } = (await response.json()) as { error: Record<string, unknown> };
      expect(error).toEqual({
        type: 'permission_error',
        code: 'upstream_login_required',
        param: null,
        message: expect.stringContaining(command),
      });
      expect(error.message).toContain(provider);
      expect(error.message).toContain('not about your API key');
      const lines = gateway.logs.records('chat_completion').filter((record) => record.reqId === requestId);
      expect(lines).toEqual([expect.objectContaining({ provider, status: 403, error_code: 'auth' })]);
    },
  );

  it('picks up a login written afterwards without a restart: the report says usable and chats work', async () => {
    writeAuthFile(codexHome);
    await eventually(() => {
      const lines = gateway.logs.records('login_state').filter((record) => record.provider === 'provider_a');
      expect(lines[lines.length - 1]).toMatchObject({ level: 30, state: 'usable' });
    });
    // `path` says where a missing login was looked for: a login found carries none.
    const lines = gateway.logs.records('login_state').filter((record) => record.provider === 'provider_a');
    expect(lines[lines.length - 1]).not.toHaveProperty('path');
    expect(
      await metricValue(gateway, 'gateway_chat_api_login_state', {
        provider: 'provider_a',
        account: 'default',
        state: 'usable',
      }),
    ).toBe(1);
    fakeA.enqueue(textReply('logged in now'));
    const response = await postChat(gateway, { model: 'gpt-5.6-sol' });
    expect(response.status).toBe(200);
    expect(
      ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content,
    ).toBe('logged in now');
    expect(await accountState(gateway, 'provider_a', 'default')).toBe('ready');
  });
});

describe('a gateway started with a login missing, its model list and usage reads on', () => {
  let missing: TestGateway;
  let scratch: string;

  beforeAll(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'login-report-missing-'));
    missing = await startGateway({
      GATEWAY_PROVIDERS: 'provider_a',
      CODEX_HOME: path.join(scratch, 'codex'),
      PROVIDER_A_URL: fakeA.wsUrl,
      PROVIDER_A_TOKEN_URL: fakeA.tokenUrl,
      // Both background reads run at startup, as they do by default.
      PROVIDER_A_MODELS_REFRESH: '15m',
      ACCOUNT_USAGE_REFRESH_INTERVAL: '5m',
      LOG_LEVEL: 'debug',
    });
  });

  afterAll(async () => {
    await missing?.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('says so once: one info line for the login and one warning for the family, the reads skip it quietly', async () => {
    await missing.app.get(AccountPools, { strict: false }).usageSettled();
    // The model list's first fetch, in the background: it found no login to ask with.
    await missing.logs.waitForLine((line) => line.includes('"event":"provider_a_models_refresh_failed"'));
    expect(
      missing.logs
        .records()
        .filter((record) => Number(record.level) >= 40)
        .map((record) => record.event),
    ).toEqual(['login_none_usable']);
    expect(missing.logs.records('login_state')).toEqual([
      expect.objectContaining({ level: 30, account: 'default', state: 'missing' }),
    ]);
    // The pool agrees without a line of its own: the report's line is the one about this login.
    expect(await accountState(missing, 'provider_a', 'default')).toBe('login_dead');
    expect(missing.logs.records('account_state')).toEqual([]);
    // Whether the fetch came before the check or after, it leaves the telling to the report.
    expect(missing.logs.records('provider_a_models_refresh_failed')).toEqual([expect.objectContaining({ level: 20 })]);
    expect(missing.logs.records('plan_usage_read_failed').map((record) => record.level)).toEqual(
      expect.not.arrayContaining([40]),
    );
  });
});

describe('a gateway whose login files are directories (EISDIR: its user may not read them)', () => {
  // A directory where the login file should be is what a bind mount of a host file that did not
  // exist leaves, and the one refusal a test running as root meets too (root reads any mode).
  let unreadable: TestGateway;
  let scratch: string;
  let files: Record<(typeof FAMILIES)[number]['provider'], string>;

  beforeAll(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'login-report-eisdir-'));
    files = {
      provider_a: path.join(scratch, 'codex', 'auth.json'),
      provider_b: path.join(scratch, 'gemini', 'oauth_creds.json'),
      provider_c: path.join(scratch, 'claude', '.credentials.json'),
    };
    for (const file of Object.values(files)) fs.mkdirSync(file, { recursive: true });
    unreadable = await startGateway({
      CODEX_HOME: path.dirname(files.provider_a),
      PROVIDER_A_URL: fakeA.wsUrl,
      PROVIDER_A_TOKEN_URL: fakeA.tokenUrl,
      GEMINI_HOME: path.dirname(files.provider_b),
      PROVIDER_B_URL: fakeB.baseUrl,
      PROVIDER_B_TOKEN_URL: fakeB.tokenUrl,
      // A config directory: the CLI reads its login file, and says what it says when it cannot.
      ...providerCSettings(scratch, [{ stdout: [], stderr: 'Not logged in · Please run /login', exitCode: 1 }]),
      PROVIDER_C_ACCOUNTS: `default=${path.dirname(files.provider_c)}`,
    });
  });

  afterAll(async () => {
    await unreadable?.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it.each(FAMILIES)(
    'a $provider chat answers 403 upstream_login_required naming EISDIR and the file, not a new login',
    async ({ provider, model, command }) => {
      const requestId = `eisdir-${provider}`;
      const response = await postChat(unreadable, { model }, undefined, { 'x-request-id': requestId });
      expect(response.status).toBe(403);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('upstream_login_required');
      expect(error.message).toContain(provider);
      expect(error.message).toContain('EISDIR');
      expect(error.message).toContain(`${files[provider]} is a directory, not a login file`);
      expect(error.message).not.toContain(command);
      expect(error.message).not.toMatch(/log in again|has no usable/);
      // The failure's line says the same: the errno and the file's fix, whole.
      const [line] = unreadable.logs.records('upstream_turn_failed').filter((record) => record.reqId === requestId);
      expect(line).toMatchObject({
        provider,
        error_code: 'auth',
        detail: expect.stringContaining('EISDIR'),
        fix: expect.stringMatching(/is a directory, not a login file .*point the setting or the mount at that file$/),
      });
      expect(line.fix).toContain(files[provider]);
    },
  );
});

describe("a gateway where provider_c's CLI is missing", () => {
  const install = 'install it (`npm install -g @anthropic-ai/claude-code`) or set PROVIDER_C_COMMAND to its path';
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** provider_c alone, its command a path under `scratch` where nothing is installed yet. */
  async function start(
    settings: (scratch: string) => Record<string, string> = () => ({}),
    runs: readonly FakeClaudeRun[] = [answerRun('installed now')],
  ) {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'login-report-no-cli-'));
    cleanups.push(() => fs.rmSync(scratch, { recursive: true, force: true }));
    const started = await startGateway({
      ...providerCSettings(scratch, runs),
      GATEWAY_PROVIDERS: 'provider_c',
      PROVIDER_C_COMMAND: path.join(scratch, 'bin', 'claude'),
      ...settings(scratch),
    });
    cleanups.push(() => started.close());
    return { gateway: started, scratch };
  }

  const accountRows = async (target: TestGateway) =>
    ((await (await fetch(`${target.url}/v1/accounts`)).json()) as { data: unknown[] }).data;

  it('shows its login as login_dead, answers a chat 502 provider_cli_missing, and names the install for the usage read', async () => {
    // The CLI's own login (PROVIDER_C_ACCOUNTS unset) in an empty HOME, its usage read at startup.
    const { gateway: noCli } = await start(() => ({ ACCOUNT_USAGE_REFRESH_INTERVAL: '5m', LOG_LEVEL: 'debug' }));
    expect(noCli.logs.records('login_state')).toEqual([
      expect.objectContaining({ state: 'cli_missing', fix: install }),
    ]);
    expect(await accountRows(noCli)).toEqual([
      expect.objectContaining({ provider: 'provider_c', account: 'default', state: 'login_dead' }),
    ]);
    expect(await accountState(noCli, 'provider_c', 'default')).toBe('login_dead');
    // The report's lines tell it (login_state, login_none_usable): the pool's state is set without one.
    expect(noCli.logs.records('account_state')).toEqual([]);
    await eventually(() => expect(noCli.logs.records('plan_usage_read_failed')).toHaveLength(1));
    expect(noCli.logs.records('plan_usage_read_failed')).toEqual([
      expect.objectContaining({ level: 20, provider: 'provider_c', reason: 'cli missing', fix: install }),
    ]);
    // A family's only login is still asked: the client hears that the CLI is missing, not to log in.
    const chat = await postChat(noCli, { model: 'claude-fable-5' });
    expect(chat.status).toBe(502);
    expect(((await chat.json()) as { error: { code: string } }).error.code).toBe('provider_cli_missing');
  });

  it('brings the login back once a later check finds the CLI, and a chat runs on it', async () => {
    // A token file: checked every 10 s (the CLI's own login is asked again only every minute).
    const { gateway: later, scratch } = await start((dir) => {
      fs.writeFileSync(path.join(dir, 'ci.token'), 'fake-token\n');
      return { PROVIDER_C_ACCOUNTS: `ci=${path.join(dir, 'ci.token')}` };
    });
    expect(await accountState(later, 'provider_c', 'ci')).toBe('login_dead');
    fs.mkdirSync(path.join(scratch, 'bin'));
    fs.symlinkSync(FAKE_CLAUDE_PATH, path.join(scratch, 'bin', 'claude'));
    await eventually(async () => expect(await accountState(later, 'provider_c', 'ci')).toBe('ready'));
    // Its first finding (no CLI) was the report's to tell; coming back is the pool's change.
    expect(later.logs.records('account_state').map((line) => line.state)).toEqual(['ready']);
    expect(await accountRows(later)).toEqual([expect.objectContaining({ account: 'ci', state: 'ready' })]);
    const chat = await postChat(later, { model: 'claude-fable-5' });
    expect(chat.status).toBe(200);
  });

  it('tells the CLI missing over the refusal a request met, once the CLI is gone: the cause its install mends', async () => {
    const { gateway: refused, scratch } = await start(
      (dir) => {
        fs.writeFileSync(path.join(dir, 'ci.token'), 'fake-token\n');
        fs.mkdirSync(path.join(dir, 'bin'));
        fs.symlinkSync(FAKE_CLAUDE_PATH, path.join(dir, 'bin', 'claude'));
        return { PROVIDER_C_ACCOUNTS: `ci=${path.join(dir, 'ci.token')}` };
      },
      [{ stdout: [], stderr: 'Invalid API key · Please run /login', exitCode: 1 }],
    );
    const states = () => refused.logs.records('login_state').map((line) => line.state);
    expect((await postChat(refused, { model: 'claude-fable-5' })).status).toBe(403);
    await eventually(() => expect(states()).toEqual(['usable', 'login_refused']));
    fs.rmSync(path.join(scratch, 'bin', 'claude'));
    await eventually(() => expect(states()).toEqual(['usable', 'login_refused', 'cli_missing']));
    expect(refused.logs.records('login_state')[2]).toMatchObject({ level: 40, fix: install });
  });
});
