import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { postChat } from './support/chat-sse';
import { startGateway, type TestGateway } from './support/create-test-app';
import { FakeCodeAssist } from './support/fake-provider-b';
import { FakeProviderA } from './support/fake-provider-a';
import { textReply, writeAuthFile } from './support/provider-a-fixtures';
import { providerCSettings } from './support/provider-c-fixtures';
import { metricValue } from './support/prometheus-text';

/**
 * A gateway started on a machine where no CLI is logged in (docs/accounts.md "Login report"): it says so at startup, one
 * line per login naming the command that fixes it and one warning per family; each family's chat
 * answers an error naming that command (not the caller's key); and a login written afterwards is
 * picked up, by requests and by the report, without a restart. provider_c runs the project's fake
 * `claude` here (its `auth status` answers "not logged in"); the real binary's not-logged-in case
 * is in provider-c.e2e-spec.ts.
 */

const FAMILIES = [
  { provider: 'provider_a', model: 'gpt-5.6-sol', command: '`codex login`' },
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
  });
});

describe('a login file the gateway cannot read', () => {
  it('names the errno and the fix for the file in the login_state line and the family warning, not a new login', async () => {
    // A directory where the file should be: what a bind mount of a login file missing on the host
    // leaves, and a refusal a test running as root meets too (test/setup-check.e2e-spec.ts has EACCES).
    const file = path.join(dir, 'mounted', 'oauth_creds.json');
    fs.mkdirSync(file, { recursive: true });
    const unreadable = await startGateway({
      GATEWAY_PROVIDERS: 'provider_b',
      PROVIDER_B_AUTH_FILE: file,
      PROVIDER_B_URL: fakeB.baseUrl,
      PROVIDER_B_TOKEN_URL: fakeB.tokenUrl,
    });
    try {
      const [line] = unreadable.logs.records('login_state');
      const fix = `${file} is a directory, not a login file (a bind mount of a file missing on the host creates one): remove it, log in so the file exists, and point the setting or the mount at that file`;
      expect(line).toMatchObject({ state: 'unusable', reason: 'login file unreadable: EISDIR', fix });
      expect(line.msg).toBe(
        `provider_b login "default" (Gemini CLI): unusable (login file unreadable: EISDIR); to fix: ${fix}`,
      );
      expect(unreadable.logs.records('login_none_usable')).toEqual([expect.objectContaining({ fix })]);
    } finally {
      await unreadable.close();
    }
  });
});
