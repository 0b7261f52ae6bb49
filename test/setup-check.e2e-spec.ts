import * as path from 'node:path';
import { runGateway } from './support/child-gateway';
import { closedLoopbackPort } from './support/closed-port';
import { completed, created, errorEvent, providerASettings, textDelta } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { CODEX_PIN } from './support/oracle-pins';
import { writeCredsFile } from './support/provider-b-fixtures';

/**
 * The setup check, run as a user runs it (`node dist/main.js --check [--live]`, here from source
 * like every child-process spec; docs/troubleshooting.md "Check the setup"): each login in the
 * startup report's words, its expiry, the models, the live chat over the gateway's own HTTP route,
 * and exit code 0 only when every enabled family has a usable login.
 */
describe('setup check (--check, docs/troubleshooting.md)', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'setup-check-e2e-', homeScope: 'test' });
  const HOUR_S = 3600;
  const nowSeconds = () => Math.floor(Date.now() / 1000);
  /** The expiry as the check prints it: UTC, to the second. */
  const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

  it('passes with a usable login: its state, its expiry and the models the family serves', async () => {
    const exp = nowSeconds() + HOUR_S;
    const run = await runGateway(
      { GATEWAY_PROVIDERS: 'provider_a', ...providerASettings(fake(), path.join(home(), 'pa'), { auth: { exp } }) },
      ['--check'],
    );
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toContain('provider_a (Codex CLI)\n  provider_a login "default" (Codex CLI): usable\n');
    expect(run.stdout).toMatch(new RegExp(`^ {4}token expires: ${isoOf(exp)} \\(in [^)]+\\)$`, 'm'));
    expect(run.stdout).toMatch(/^ {2}models: \d+ ids for \d+ upstream models: gpt-6\.2-sol \(\+\d+\), .*gpt-5\.6-sol/m);
    expect(run.stdout).toMatch(/^setup check passed: every enabled family has a usable login\n$/m);
    // What the plan has left, from wham/usage (the fake's default: a Plus plan barely used, no credits).
    expect(run.stdout).toMatch(
      /^ {4}plan: plan plus; primary 12 % used \(5h, resets [^)]+\); secondary 3 % used \(7d, resets [^)]+\); credits: not available, not in use, balance 0, no_credits$/m,
    );
    expect(fake().usageRequests()).toHaveLength(1);
    // No live chat without --live.
    expect(fake().requests()).toEqual([]);
  });

  it('reads wham/usage as the Codex version PROVIDER_A_CLIENT_VERSION names, as turns claim it', async () => {
    // A version other than the pin: the pin's minor raised.
    const version = CODEX_PIN.replace(
      /^(\d+)\.(\d+)\..*$/,
      (_w, major: string, minor: string) => `${major}.${Number(minor) + 1}.0`,
    );
    const run = await runGateway(
      {
        GATEWAY_PROVIDERS: 'provider_a',
        ...providerASettings(fake(), path.join(home(), 'pa')),
        PROVIDER_A_CLIENT_VERSION: version,
      },
      ['--check'],
    );
    expect(run.code).toBe(0);
    const [read] = fake().usageRequests();
    expect(read.headers['user-agent']).toBe(`codex_exec/${version} (api wrapper) unknown (codex_exec; ${version})`);
  });

  it("names the guard's verdict for a login whose plan is spent", async () => {
    const resetAt = nowSeconds() + HOUR_S;
    fake().serveUsage({
      plan_type: 'pro',
      rate_limit: {
        limit_reached: true,
        primary_window: { used_percent: 100, limit_window_seconds: 18_000, reset_at: resetAt },
      },
      credits: { has_credits: true, unlimited: false, balance: '7.25' },
    });
    const run = await runGateway(
      { GATEWAY_PROVIDERS: 'provider_a', ...providerASettings(fake(), path.join(home(), 'pa')) },
      ['--check'],
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `    plan: plan pro; primary 100 % used (5h, resets ${isoOf(resetAt)}); plan spent; credits: available, not in use, balance 7.25 -> no new turn on this login until ${isoOf(resetAt)} (ACCOUNT_PAID_USAGE=plan_only)\n`,
    );
  });

  it('fails on a missing login, naming the file it looked for and the fix the startup report names', async () => {
    // provider_b's default login file is under the child's private, empty HOME.
    const run = await runGateway({ GATEWAY_PROVIDERS: 'provider_b' }, ['--check']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^ {2}provider_b login "default" \(Gemini CLI\): missing \(no login file at \/\S+\/\.gemini\/oauth_creds\.json\); to fix: run `gemini` on the gateway's machine and choose "Login with Google"$/m,
    );
    expect(run.stdout).toContain('provider_b has no usable login, so its models answer errors; to fix: run `gemini`');
    expect(run.stdout).toContain(
      'setup check failed: 1 of 1 enabled families have no usable login (provider_b); run the fix above, or leave the family out of GATEWAY_PROVIDERS',
    );
  });

  it('finds a Gemini login made with GEMINI_CLI_HOME set, under that home as the Gemini CLI writes it', async () => {
    const cliHome = path.join(home(), 'gemini-cli-home');
    writeCredsFile(path.join(cliHome, '.gemini'));
    // The plan read (retrieveUserQuota) goes to a port nothing listens on: no call leaves the machine.
    const run = await runGateway(
      {
        GATEWAY_PROVIDERS: 'provider_b',
        GEMINI_CLI_HOME: cliHome,
        PROVIDER_B_URL: `http://127.0.0.1:${await closedLoopbackPort()}/v1internal`,
      },
      ['--check'],
    );
    expect(run.stdout).toContain('provider_b login "default" (Gemini CLI): usable\n');
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('with GEMINI_CLI_HOME set and no login there, names the file under it and the command that writes it', async () => {
    const cliHome = path.join(home(), 'gemini-cli-home');
    const run = await runGateway({ GATEWAY_PROVIDERS: 'provider_b', GEMINI_CLI_HOME: cliHome }, ['--check']);
    expect(run.code).toBe(1);
    const file = path.join(cliHome, '.gemini', 'oauth_creds.json');
    expect(run.stdout).toContain(
      `provider_b login "default" (Gemini CLI): missing (no login file at ${file}); to fix: run \`GEMINI_CLI_HOME=${cliHome} gemini\` on the gateway's machine and choose "Login with Google" (it rewrites ${file})\n`,
    );
  });

  it('fails on an expired login without a refresh token, and says when it expired', async () => {
    const exp = nowSeconds() - 2 * HOUR_S;
    const settings = providerASettings(fake(), path.join(home(), 'pa'), { auth: { exp, refreshToken: null } });
    const run = await runGateway({ GATEWAY_PROVIDERS: 'provider_a', ...settings }, ['--check']);
    expect(run.code).toBe(1);
    // The login is not in the Codex CLI's default home: its fix names the login's own.
    expect(run.stdout).toContain(
      `provider_a login "default" (Codex CLI): unusable (expired, no refresh token); to fix: run \`CODEX_HOME=${path.join(home(), 'pa', '.codex')} codex login\``,
    );
    expect(run.stdout).toMatch(new RegExp(`^ {4}token expires: ${isoOf(exp)} \\(2 h \\d+ min ago\\)$`, 'm'));
  });

  it("fails when provider_c's CLI is missing, naming how to install it", async () => {
    const run = await runGateway(
      { GATEWAY_PROVIDERS: 'provider_c', PROVIDER_C_COMMAND: path.join(home(), 'no-such-claude') },
      ['--check'],
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      'provider_c login "default" (Claude Code CLI): cli missing (command not found); to fix: install it (`npm install -g @anthropic-ai/claude-code`) or set PROVIDER_C_COMMAND to its path',
    );
    expect(run.stdout).toMatch(/^ {2}models: .*claude-sonnet-5/m);
  });

  it('fails when one enabled family of two has no usable login', async () => {
    const run = await runGateway(
      { GATEWAY_PROVIDERS: 'provider_a,provider_b', ...providerASettings(fake(), path.join(home(), 'pa')) },
      ['--check'],
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('provider_a login "default" (Codex CLI): usable');
    expect(run.stdout).toContain('1 of 2 enabled families have no usable login (provider_b)');
  });

  it('with --live, sends one tiny chat per family through the HTTP chat route and shows the answer', async () => {
    fake().enqueue({ frames: [created(), textDelta('OK'), completed()] });
    const run = await runGateway(
      {
        GATEWAY_PROVIDERS: 'provider_a,provider_b',
        GATEWAY_BEARER_SECRET: 'setup-check-secret-5521',
        ...providerASettings(fake(), path.join(home(), 'pa')),
      },
      ['--check', '--live'],
    );
    expect(run.stdout).toMatch(/^ {2}live chat \(sol\): answered in \d+\.\d s: "OK"$/m);
    expect(run.stdout).toContain('  live chat: not sent (no usable login, or no model in the catalog)');
    // provider_b still has no login: the check fails on it, not on the live chat.
    expect(run.code).toBe(1);
    const upstream = fake().requests();
    expect(upstream).toHaveLength(1);
    expect(JSON.stringify(upstream[0].body)).toContain('Reply with the single word OK.');
  });

  it("with --live, sends no chat on a login whose plan wham/usage says is spent with credits: the guard's 429", async () => {
    fake().serveUsage({
      plan_type: 'plus',
      rate_limit: {
        limit_reached: true,
        primary_window: { used_percent: 100, limit_window_seconds: 18_000, reset_at: nowSeconds() + HOUR_S },
      },
      credits: { has_credits: true, unlimited: false, balance: '7.25' },
    });
    fake().enqueue({ frames: [created(), textDelta('OK'), completed()] });
    const run = await runGateway(
      { GATEWAY_PROVIDERS: 'provider_a', ...providerASettings(fake(), path.join(home(), 'pa')) },
      ['--check', '--live'],
    );
    expect(run.stdout).toMatch(/^ {2}live chat \(sol\): failed with HTTP 429 paid_usage_not_allowed: /m);
    expect(run.code).toBe(1);
    expect(fake().requests()).toEqual([]);
  });

  it('with --live, fails when the live chat fails, with the error the client would get', async () => {
    fake().enqueue({ frames: [created(), errorEvent({ code: 'server_error', message: 'upstream broke' })] });
    const run = await runGateway(
      { GATEWAY_PROVIDERS: 'provider_a', ...providerASettings(fake(), path.join(home(), 'pa')) },
      ['--check', '--live'],
    );
    expect(run.stdout).toMatch(/^ {2}live chat \(sol\): failed with HTTP 502 upstream_error: /m);
    expect(run.stdout).toContain('setup check failed: the live chat of 1 families failed (see above)');
    expect(run.code).toBe(1);
  });
});
