import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ConfiguredLogin } from './accounts/configured-logins';
import { configuredLogins } from './accounts/configured-logins';
import type { AppConfig } from './config/app-config';
import { loadConfig } from './config/app-config';
import type { LoginCheck } from './core/login-state';
import { runSetupCheck } from './setup-check';
import { liveChats } from './setup-check.live';

jest.mock('./accounts/configured-logins');
jest.mock('./setup-check.live');

/**
 * What the setup check prints of the login checks' answers (docs/troubleshooting.md "Check the
 * setup"): each login's line with its optional data, whether the family passes, and the models the
 * catalog would serve. The e2e spec runs the real checks; here each check's answer is given, to
 * cover every shape.
 */
describe(runSetupCheck.name, () => {
  const NOW = Date.UTC(2026, 10, 28, 5, 0);
  const config = loadConfig({ HOME: '/nonexistent-home', GATEWAY_PROVIDERS: 'provider_c' });

  /** What the check prints and returns for provider_c logins whose checks answer as given, by alias. */
  async function printedFor(
    checks: Record<string, () => Promise<LoginCheck>>,
    settings: AppConfig = config,
    live = false,
  ): Promise<{ code: number; text: string }> {
    jest.mocked(configuredLogins).mockReturnValue(
      Object.entries(checks).map(([account, check]): ConfiguredLogin => ({
        provider: 'provider_c',
        account,
        spawnsCli: true,
        check,
      })),
    );
    let text = '';
    const code = await runSetupCheck(settings, { live, write: (chunk) => (text += chunk), now: NOW });
    return { code, text };
  }

  const printed = (check: LoginCheck) => printedFor({ default: () => Promise.resolve(check) });

  it("names the CLI's version in the login's line when the check reports one, as the login report does", async () => {
    const { code, text } = await printed({ state: 'usable', cliVersion: '2.1.332' });
    expect(code).toBe(0);
    // The plan line follows: this HOME holds no Claude Code login file to read the usage endpoint with.
    expect(text).toContain(
      '  provider_c login "default" (Claude Code CLI 2.1.332): usable\n    plan: not read (not readable)\n  models: ',
    );
  });

  it('names no version when the check reports none', async () => {
    const { text } = await printed({ state: 'usable' });
    expect(text).toContain(
      '  provider_c login "default" (Claude Code CLI): usable\n    plan: not read (not readable)\n  models: ',
    );
  });

  it('passes a family with one usable login beside a dead one, and reads no plan for the dead one', async () => {
    const { code, text } = await printedFor({
      dead: () => Promise.reject(new Error('spawn claude ENOENT')),
      work: () => Promise.resolve({ state: 'usable' }),
    });
    expect(code).toBe(0);
    expect(text).toMatch(
      /\n {2}provider_c login "dead" \(Claude Code CLI\): unusable \(check failed\)[^\n]*\n {2}provider_c login "work" \(Claude Code CLI\): usable\n {4}plan: /,
    );
    expect(text).toContain('setup check passed');
  });

  it("fails a family none of whose logins is usable, and shows when each login's token expires, in hours from an hour on", async () => {
    const { code, text } = await printedFor({
      hour: () => Promise.resolve({ state: 'refresh_refused', expiresAt: NOW + 60 * 60_000 }),
      gone: () => Promise.resolve({ state: 'refresh_refused', expiresAt: NOW - 2 * 60_000 }),
    });
    expect(code).toBe(1);
    expect(text).toContain('    token expires: 2026-11-28T06:00:00Z (in 1 h 0 min)\n');
    expect(text).toContain('    token expires: 2026-11-28T04:58:00Z (2 min ago)\n');
    expect(text).not.toContain('    plan: ');
    expect(text).toContain('setup check failed: 1 of 1 enabled families have no usable login (provider_c)');
  });

  it('fails when one enabled family of two has no usable login, counting both', async () => {
    const { code, text } = await printedFor(
      { default: () => Promise.resolve({ state: 'usable' }) },
      loadConfig({ HOME: '/nonexistent-home', GATEWAY_PROVIDERS: 'provider_b,provider_c' }),
    );
    expect(code).toBe(1);
    expect(text).toContain(
      'setup check failed: 1 of 2 enabled families have no usable login (provider_b); run the fix above, or leave the family out of GATEWAY_PROVIDERS\n',
    );
  });

  it('rounds the time to an expiry to the whole minute, and shows hours and minutes from an hour on', async () => {
    const { text } = await printedFor({
      soon: () => Promise.resolve({ state: 'refresh_refused', expiresAt: NOW + 100_000 }),
      later: () => Promise.resolve({ state: 'refresh_refused', expiresAt: NOW + 90 * 60_000 }),
    });
    expect(text).toContain('    token expires: 2026-11-28T05:01:40Z (in 2 min)\n');
    expect(text).toContain('    token expires: 2026-11-28T06:30:00Z (in 1 h 30 min)\n');
  });

  describe('with a catalog of its own', () => {
    let directory: string;
    beforeAll(() => (directory = fs.mkdtempSync(path.join(os.tmpdir(), 'setup-check-'))));
    afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));
    beforeEach(() => jest.mocked(liveChats).mockReset());

    const row = { reasoning_effort: null, verbosity: null, service_tier: null, structured: false };
    /** provider_c settings whose catalog holds these rows, with `default_model` as given. */
    function withCatalog(defaultModel: string, models: { id: string; upstream_model: string }[]): AppConfig {
      const catalog = path.join(directory, `catalog-${defaultModel}.json`);
      fs.writeFileSync(
        catalog,
        JSON.stringify({
          default_model: defaultModel,
          models: models.map((model) => ({ ...row, provider: 'provider_c', ...model })),
        }),
      );
      return loadConfig({ HOME: '/nonexistent-home', GATEWAY_PROVIDERS: 'provider_c', GATEWAY_MODEL_CATALOG: catalog });
    }
    const threeIds = [
      { id: 'team-a', upstream_model: 'sonnet' },
      { id: 'team-b', upstream_model: 'opus' },
      { id: 'team-a-alias', upstream_model: 'sonnet' },
    ];

    it('heads the family with its CLI, and counts ids and upstream models, each upstream model once with how many more ids reach it', async () => {
      const { text } = await printedFor(
        { default: () => Promise.resolve({ state: 'missing' }) },
        withCatalog('team-b', threeIds),
      );
      expect(text).toMatch(/^provider_c \(Claude Code CLI\)\n/);
      expect(text).toContain('\n  models: 3 ids for 2 upstream models: team-a (+1), team-b\n');
    });

    it("with --live, chats with the catalog's default model when the family serves it, and passes when it answered", async () => {
      jest.mocked(liveChats).mockResolvedValue([{ ok: true, summary: 'answered in 0.4 s: "OK"' }]);
      const { code, text } = await printedFor(
        { default: () => Promise.resolve({ state: 'usable' }) },
        withCatalog('team-b', threeIds),
        true,
      );
      expect(jest.mocked(liveChats).mock.calls[0][1]).toEqual(['team-b']);
      expect(text).toContain('  live chat (team-b): answered in 0.4 s: "OK"\n');
      expect(text).toMatch(/\nsetup check passed: every enabled family has a usable login and answered a live chat\n$/);
      expect(code).toBe(0);
    });

    it('with --live, fails when the one live chat failed, and says how many did', async () => {
      jest.mocked(liveChats).mockResolvedValue([{ ok: false, summary: 'failed with HTTP 502 upstream_error: broke' }]);
      const { code, text } = await printedFor(
        { default: () => Promise.resolve({ state: 'usable' }) },
        withCatalog('team-b', threeIds),
        true,
      );
      expect(text).toContain('  live chat (team-b): failed with HTTP 502 upstream_error: broke\n');
      expect(text).toMatch(/\nsetup check failed: the live chat of 1 families failed \(see above\)\n$/);
      expect(code).toBe(1);
    });

    it('with --live, sends no chat for a family without a usable login, and says so', async () => {
      jest.mocked(liveChats).mockResolvedValue([]);
      const { code, text } = await printedFor(
        { default: () => Promise.resolve({ state: 'missing' }) },
        withCatalog('team-b', threeIds),
        true,
      );
      expect(jest.mocked(liveChats).mock.calls[0][1]).toEqual([]);
      expect(text).toContain('\n  live chat: not sent (no usable login, or no model in the catalog)\n');
      expect(code).toBe(1);
    });
  });

  it('says so when the catalog lists no model of the family', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'setup-check-'));
    try {
      const catalog = path.join(directory, 'catalog.json');
      fs.writeFileSync(
        catalog,
        JSON.stringify({
          default_model: 'team-model',
          models: [
            {
              id: 'team-model',
              provider: 'provider_a',
              upstream_model: 'gpt-5.6-terra',
              reasoning_effort: 'medium',
              verbosity: null,
              service_tier: null,
              structured: false,
            },
          ],
        }),
      );
      const settings = loadConfig({
        HOME: '/nonexistent-home',
        GATEWAY_PROVIDERS: 'provider_c',
        GATEWAY_MODEL_CATALOG: catalog,
      });
      const { text } = await printedFor({ default: () => Promise.resolve({ state: 'missing' }) }, settings);
      expect(text).toContain('\n  models: none (the catalog lists none of this family)\n');
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});
