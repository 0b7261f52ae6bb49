import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChildGateway } from './support/child-gateway';
import { spawnGateway } from './support/child-gateway';

/**
 * The installed Claude Code version in the startup login report (docs/troubleshooting.md, "At
 * startup: the login report"), with gateways running as child processes so each one's startup
 * lines are its own: `claude --version` is asked once, in the background, and never holds up
 * readiness; a missing `claude` is reported with the command that installs it. The real binary's
 * version in that report is asserted in provider-c.e2e-spec.ts.
 */

let dir: string;
const gateways: ChildGateway[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-cli-version-'));
});

afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

async function start(command: string): Promise<ChildGateway> {
  const gateway = await spawnGateway({ GATEWAY_PROVIDERS: 'provider_c', PROVIDER_C_COMMAND: command });
  gateways.push(gateway);
  return gateway;
}

async function eventually<T>(find: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error('not seen in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const loginLine = (gateway: ChildGateway) => gateway.records.find((record) => record.event === 'login_state');

/**
 * A stand-in `claude` (a shell script, `exec` so the sleep is the process the gateway's timeout
 * ends): logged in, and `--version` answering as the real CLI does, or only after a minute.
 */
function scriptedClaude(name: string, versionAnswer: 'at-once' | 'after-a-minute'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    [
      '#!/bin/sh',
      'if [ "$1" = "--version" ]; then',
      versionAnswer === 'at-once' ? '  echo "2.1.299 (Claude Code)"' : '  exec sleep 60',
      '  exit 0',
      'fi',
      'echo \'{"loggedIn": true, "authMethod": "oauth_token", "apiProvider": "firstParty"}\'',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return file;
}

describe('the installed Claude Code version at startup', () => {
  it('names the version `claude --version` printed on the login line', async () => {
    const gateway = await start(scriptedClaude('claude-answering', 'at-once'));
    const login = await eventually(() => loginLine(gateway));
    expect(login).toMatchObject({ provider: 'provider_c', state: 'usable', cli_version: '2.1.299' });
    expect(login.msg).toContain('(Claude Code CLI 2.1.299)');
  });

  it('is ready before a `--version` that never answers, and reports the login without a version after its bound', async () => {
    const gateway = await start(scriptedClaude('claude-stuck', 'after-a-minute'));
    const ready = await fetch(`${gateway.url}/health/ready`);
    expect(ready.status).toBe(200);
    const login = await eventually(() => loginLine(gateway), 45_000);
    expect(login).toMatchObject({ provider: 'provider_c', state: 'usable' });
    expect(login).not.toHaveProperty('cli_version');
    // The gateway listened first: the report waited for the probe's bound, the boot did not.
    const at = (event: string) => gateway.records.findIndex((record) => record.event === event);
    expect(at('gateway_listening')).toBeLessThan(at('login_state'));
  }, 60_000);

  it('reports a missing `claude` as cli_missing with the command that installs it', async () => {
    const gateway = await start(path.join(dir, 'no-such-claude'));
    const login = await eventually(() => loginLine(gateway));
    expect(login).toMatchObject({
      provider: 'provider_c',
      state: 'cli_missing',
      fix: expect.stringContaining('npm install -g @anthropic-ai/claude-code'),
    });
    expect(login).not.toHaveProperty('cli_version');
  });
});
