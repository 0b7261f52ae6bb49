import { configuredLogins } from './accounts/configured-logins';
import { loadConfig } from './config/app-config';
import type { LoginCheck } from './core/login-state';
import { runSetupCheck } from './setup-check';

jest.mock('./accounts/configured-logins');

/**
 * What the setup check prints of a login check's optional data (docs/troubleshooting.md "Check
 * the setup"): the CLI's version when the family's check reports one, nothing for it otherwise. The
 * e2e spec runs the real checks; here the check's answer is given, to cover both shapes.
 */
describe(runSetupCheck.name, () => {
  const config = loadConfig({ HOME: '/nonexistent-home', GATEWAY_PROVIDERS: 'provider_c' });

  async function printed(check: LoginCheck): Promise<{ code: number; text: string }> {
    jest
      .mocked(configuredLogins)
      .mockReturnValue([
        { provider: 'provider_c', account: 'default', spawnsCli: true, check: () => Promise.resolve(check) },
      ]);
    let text = '';
    const code = await runSetupCheck(config, { live: false, write: (chunk) => (text += chunk) });
    return { code, text };
  }

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
});
