import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { allSettings } from '../src/config/settings';
import type { GatewayRun } from './support/child-gateway';
import { runGateway, spawnGateway } from './support/child-gateway';

const SETTINGS = allSettings();

/** Like Promise.all over `items`, with at most `limit` child processes at once (2-core machine). */
async function mapLimited<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await run(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * docs/design/decisions.md §2 through the real entry point: a bad value exits with status 1 and exactly one
 * stderr line naming the setting and the rule; `--help` lists every setting with its default.
 * Every case is a real `node src/main.ts` child process, started in parallel to stay fast.
 */
describe('gateway configuration (child process)', () => {
  let scratch: string;

  let help: GatewayRun;

  beforeAll(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-config-e2e-'));
    help = await runGateway({}, ['--help']);
    // A bad catalog fails after the whole app graph was loaded: this first run transpiles every
    // source file into the shared cache, so the parallel runs below reuse it.
    await runGateway({ GATEWAY_MODEL_CATALOG: path.join(scratch, 'warm-up-missing.json') });
  });

  afterAll(() => {
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  function expectOneLineFailure(run: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
    expect(run.code).toBe(1);
    const lines = run.stderr.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    // Nothing was served, and stdout holds only pino JSON lines (no framework boot banner).
    for (const line of run.stdout.split('\n').filter((candidate) => candidate !== '')) {
      expect(() => JSON.parse(line)).not.toThrow();
      expect(line).not.toContain('gateway_listening');
    }
  }

  it('exits with status 1 and one line naming the setting and the rule for each bad value', async () => {
    const badCatalog = path.join(scratch, 'bad-catalog.json');
    fs.writeFileSync(
      badCatalog,
      JSON.stringify({ models: [{ id: 'x', provider: 'openrouter', upstream_model: 'x' }] }),
    );
    const notJson = path.join(scratch, 'not-json.json');
    fs.writeFileSync(notJson, '{ "models": [');
    const row = { reasoning_effort: null, verbosity: null, service_tier: null, structured: false };
    // An effort the row's model does not take would be sent upstream on every request for it.
    const badEffort = path.join(scratch, 'bad-effort.json');
    fs.writeFileSync(
      badEffort,
      JSON.stringify({
        default_model: 'x1',
        models: [
          {
            ...row,
            id: 'x1',
            provider: 'provider_a',
            upstream_model: 'gpt-6.2-sol',
            reasoning_effort: 'bogus',
            reasoning_efforts: ['low', 'high'],
          },
        ],
      }),
    );
    // No default_model, and no sol model for the fallback: every body without model would be 404.
    const noDefault = path.join(scratch, 'no-default.json');
    fs.writeFileSync(
      noDefault,
      JSON.stringify({ models: [{ ...row, id: 'g1', provider: 'provider_b', upstream_model: 'gemini-2.5-pro' }] }),
    );
    const cases: [Record<string, string>, string[], RegExp][] = [
      [
        { GATEWAY_PROVIDERS: 'provider_a,bedrock' },
        [],
        /^gateway: invalid setting GATEWAY_PROVIDERS.*unknown provider "bedrock"/,
      ],
      [
        { GATEWAY_PORT: '70000' },
        [],
        /^gateway: invalid setting GATEWAY_PORT.*must be a port number between 0 and 65535/,
      ],
      [
        { STRUCTURED_REPLICAS: '2' },
        [],
        /^gateway: invalid setting STRUCTURED_REPLICAS.*must be exactly 1: one process must own the idempotency keys/,
      ],
      [{ GATEWAY_DRAIN_TIMEOUT: 'soon' }, [], /^gateway: invalid setting GATEWAY_DRAIN_TIMEOUT.*must be a duration/],
      [
        { GATEWAY_REQUEST_TIMEOUT: '30s' },
        [],
        /^gateway: invalid setting GATEWAY_HEADERS_TIMEOUT \/ --gateway-headers-timeout: 60000 ms is longer than GATEWAY_REQUEST_TIMEOUT \(30000 ms\).*; lower GATEWAY_HEADERS_TIMEOUT or raise GATEWAY_REQUEST_TIMEOUT/,
      ],
      [{}, ['--gateway-prot=1'], /^gateway: unknown flag "--gateway-prot"; run with --help/],
      // A build date the health document would report, though no day has it.
      [
        { BUILD_DATE: '2026-02-30T12:00:00Z' },
        [],
        /^gateway: invalid setting BUILD_DATE \/ --build-date: must be a UTC timestamp YYYY-MM-DDTHH:MM:SSZ that exists \(a day of its month, hours 00 to 23\) \(got "2026-02-30T12:00:00Z"\)$/,
      ],
      // --live belongs to the setup check: said so, not "unknown flag".
      [
        {},
        ['--live'],
        /^gateway: --live only works with --check \(it sends one tiny chat per family\): run `node dist\/main\.js --check --live`, or `npm run check -- --live`$/,
      ],
      // A misspelt setting behind the refusal is named on the refusal's line, never its value.
      [
        { GATEWAY_HOST: '0.0.0.0', GATEWAY_BEARER_SECRT: 'TOPSECRET-0123456789abcdef' },
        [],
        /^gateway: invalid setting GATEWAY_HOST.*GATEWAY_BEARER_SECRET must be set.*; also GATEWAY_BEARER_SECRT is no setting of the gateway, so it is ignored: rename it to GATEWAY_BEARER_SECRET if that is what you meant, else remove it/,
      ],
      // Also when the refusal comes after the framework loaded (a catalog file).
      [
        { GATEWAY_MODEL_CATALOG: path.join(scratch, 'missing.json'), LOG_LEVLE: 'debug' },
        [],
        /^gateway: invalid setting GATEWAY_MODEL_CATALOG.*file not found.*; also LOG_LEVLE is no setting of the gateway, so it is ignored: rename it to LOG_LEVEL/,
      ],
      [
        { PROVIDER_A_ACCOUNTS: 'a=b=c' },
        [],
        /^gateway: invalid setting PROVIDER_A_ACCOUNTS \/ --provider-a-accounts: the path of alias "a", "b=c", is relative; write it absolute/,
      ],
      [
        { PROVIDER_A_TIMEOUT: '0.4ms' },
        [],
        /^gateway: invalid setting PROVIDER_A_TIMEOUT \/ --provider-a-timeout: is less than 1 ms.*write at least 1ms, or 0/,
      ],
      [
        { PRIMARY_CUSTOM_TOOL_WIRE: 'xml' },
        [],
        /^gateway: invalid setting PRIMARY_CUSTOM_TOOL_WIRE.*must be one of function, custom/,
      ],
      [
        { PRIMARY_AGENT_QUEUE_KEY_MODE: 'header:' },
        [],
        /^gateway: invalid setting PRIMARY_AGENT_QUEUE_KEY_MODE.*header:<name>/,
      ],
      [
        { GATEWAY_MODEL_CATALOG: badCatalog },
        [],
        /^gateway: invalid setting GATEWAY_MODEL_CATALOG \/ --gateway-model-catalog: models\[0\] \(id "x"\) has an unknown "provider"/,
      ],
      [
        { GATEWAY_MODEL_CATALOG: badEffort },
        [],
        /^gateway: invalid setting GATEWAY_MODEL_CATALOG \/ --gateway-model-catalog: models\[0\] \(id "x1"\) has "reasoning_effort" "bogus", not one of its "reasoning_efforts" \(low, high\): use one of them, or null for the upstream's default \(\/.*\/bad-effort\.json\)$/,
      ],
      [
        { GATEWAY_MODEL_CATALOG: noDefault, GATEWAY_PROVIDERS: 'provider_a,provider_b' },
        [],
        /^gateway: invalid setting GATEWAY_MODEL_CATALOG \/ --gateway-model-catalog: the file names no "default_model", and the fallback "sol" \(a tier alias\) is no model of this catalog.*: add a "default_model" naming one of its ids, e\.g\. "g1"/,
      ],
      [
        { GATEWAY_MODEL_CATALOG: notJson },
        [],
        /^gateway: invalid setting GATEWAY_MODEL_CATALOG \/ --gateway-model-catalog: not readable JSON: Unexpected end of JSON input \(/,
      ],
      // A directory where the file should be (a bind mount of a file missing on the host).
      [
        { GATEWAY_MODEL_CATALOG: scratch },
        [],
        /^gateway: invalid setting GATEWAY_MODEL_CATALOG \/ --gateway-model-catalog: is a directory, not a file \(EISDIR\): point the setting at the JSON file/,
      ],
      [
        { PRIMARY_FAITHFUL_PROFILE: scratch },
        [],
        /^gateway: invalid setting PRIMARY_FAITHFUL_PROFILE \/ --primary-faithful-profile: is a directory, not a file \(EISDIR\)/,
      ],
      [
        { GATEWAY_MODEL_CATALOG: path.join(scratch, 'missing.json') },
        [],
        /^gateway: invalid setting GATEWAY_MODEL_CATALOG \/ --gateway-model-catalog: file not found: correct the path, or unset the setting for the built-in one \(/,
      ],
      // Thrown while Nest builds the providers: still one line, no framework output.
      [
        { PRIMARY_FAITHFUL_PROFILE: path.join(scratch, 'missing-profile.json') },
        [],
        /^gateway: invalid setting PRIMARY_FAITHFUL_PROFILE \/ --primary-faithful-profile: file not found: correct the path/,
      ],
      [
        { STRUCTURED_MODELS: 'gpt-5.6-sol,no-such-model' },
        ['--structured-enabled'],
        /^gateway: invalid setting STRUCTURED_MODELS.*"no-such-model" is not a model id of the catalog/,
      ],
      // The bearer rules: short, placeholder, and an open bind without any secret.
      [
        { GATEWAY_BEARER_SECRET: 'x' },
        [],
        /^gateway: invalid setting GATEWAY_BEARER_SECRET \/ --gateway-bearer-secret: must be at least 16 characters/,
      ],
      [
        { GATEWAY_BEARER_SECRET: 'change-me-to-a-long-random-value' },
        [],
        /^gateway: invalid setting GATEWAY_BEARER_SECRET.*is a documented placeholder/,
      ],
      [
        { GATEWAY_HOST: '0.0.0.0' },
        [],
        /^gateway: invalid setting GATEWAY_HOST.*"0\.0\.0\.0" is not loopback, so GATEWAY_BEARER_SECRET must be set \(or GATEWAY_ALLOW_UNAUTHENTICATED=true/,
      ],
      // A flag without its value is refused, not given the next flag as its value.
      [
        {},
        ['--gateway-bearer-secret', '--gateway-host=0.0.0.0'],
        /^gateway: --gateway-bearer-secret needs a value \(setting GATEWAY_BEARER_SECRET\): give it as --gateway-bearer-secret=VALUE/,
      ],
      [{}, ['--gateway-port', '1', '--gateway-port', '2'], /^gateway: --gateway-port is given twice.*give it once$/],
      // Counts held in memory at once: refused, not a RangeError's stack or gigabytes.
      [
        { ACCOUNT_PINNED_CHATS_MAX: '4294967296' },
        [],
        /^gateway: invalid setting ACCOUNT_PINNED_CHATS_MAX.*must be an integer from 1 to 100000/,
      ],
      [
        { PROVIDER_A_MAX_KEPT_SESSIONS: '9007199254740991' },
        [],
        /^gateway: invalid setting PROVIDER_A_MAX_KEPT_SESSIONS.*must be an integer from 0 to 10000/,
      ],
      [
        { STRUCTURED_MODELS: 'gpt-6.2-sol-max' },
        ['--structured-enabled'],
        /^gateway: invalid setting STRUCTURED_MODELS.*none of its ids can serve structured inference: "gpt-6\.2-sol-max" \(cannot serve strict schemas\); name at least one that can/,
      ],
      [
        { STRUCTURED_MODELS: ',' },
        ['--structured-enabled'],
        /^gateway: invalid setting STRUCTURED_MODELS.*must name at least one model id of the catalog/,
      ],
      [
        { PROVIDER_B_URL: 'htps://user:TOPSECRET@proxy.corp/v1internal' },
        [],
        /^gateway: invalid setting PROVIDER_B_URL.*\(got "htps:\/\/…@proxy\.corp\/v1internal"\)$/,
      ],
      [
        { PROVIDER_B_ONBOARDING_POLL_INTERVAL: '0' },
        [],
        /^gateway: invalid setting PROVIDER_B_ONBOARDING_POLL_INTERVAL.*must be a positive duration/,
      ],
      // `~` and the trailing space of a path: the file under the home is the one read.
      [
        { HOME: scratch, GATEWAY_MODEL_CATALOG: '~/bad-catalog.json ' },
        [],
        /^gateway: invalid setting GATEWAY_MODEL_CATALOG \/ --gateway-model-catalog: models\[0\] \(id "x"\) has an unknown "provider"/,
      ],
      [
        { HOME: scratch, PRIMARY_FAITHFUL_PROFILE: '~/missing-profile.json' },
        [],
        /^gateway: invalid setting PRIMARY_FAITHFUL_PROFILE \/ --primary-faithful-profile: file not found: .* \(\/.*\/missing-profile\.json\)$/,
      ],
    ];
    const runs = await mapLimited(cases, 4, ([env, argv]) => runGateway(env, argv));
    runs.forEach((run, index) => expectOneLineFailure(run, cases[index][2]));
    for (const run of runs) expect(run.stderr).not.toContain('TOPSECRET');
  });

  it('takes a bearer secret that ends in a newline (a secret file) as clients send it, without the newline', async () => {
    const secret = 'a-secret-read-from-a-file-0123456789';
    const gateway = await spawnGateway({ GATEWAY_PROVIDERS: 'provider_a', GATEWAY_BEARER_SECRET: `${secret}\n` });
    try {
      const models = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
      expect(models.status).toBe(200);
      const wrong = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${secret}x` } });
      expect(wrong.status).toBe(401);
    } finally {
      await gateway.close();
    }
  });

  it('starts, warning once of each variable with our prefixes that is no setting, with the setting it probably meant', async () => {
    const gateway = await spawnGateway({
      GATEWAY_PROVIDERS: 'provider_a',
      STRUCTURED_ENABLED: 'value-never-logged',
      GATEWAY_PROVIDER: 'value-never-logged',
      // Variables of other software, and the clients' key: not named.
      CLAUDE_CONFIG_DIR: path.join(scratch, 'claude'),
      GEMINI_CLI_NO_RELAUNCH: 'true',
      GATEWAY_KEY: 'local',
    });
    try {
      const warnings = gateway.records.filter((record) => record.event === 'setting_variable_unknown');
      expect(warnings).toEqual([
        expect.objectContaining({ level: 40, variable: 'GATEWAY_PROVIDER', closest: 'GATEWAY_PROVIDERS' }),
        expect.objectContaining({
          level: 40,
          variable: 'STRUCTURED_ENABLED',
          closest: 'STRUCTURED_INFERENCE_ENABLED',
          fix: expect.stringMatching(/^STRUCTURED_ENABLED is no setting.*rename it to STRUCTURED_INFERENCE_ENABLED/),
        }),
      ]);
      expect(gateway.records.find((record) => record.event === 'gateway_listening')).toMatchObject({
        structured: false,
      });
      expect(gateway.stdout()).not.toContain('value-never-logged');
    } finally {
      await gateway.close();
    }
    // The setup check says it first, in words.
    const check = await runGateway({ GATEWAY_PROVIDERS: 'provider_b', STRUCTURED_ENABLED: 'true' }, ['--check']);
    expect(check.stdout).toMatch(
      /^warning: STRUCTURED_ENABLED is no setting of the gateway, so it is ignored: rename it to STRUCTURED_INFERENCE_ENABLED if that is what you meant, else remove it \(docs\/configuration\.md lists the settings\)\n\nprovider_b/,
    );
  });

  it('exits with one line naming the setting to change when the address cannot be bound, before any startup work logs', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const heldPort = (holder.address() as net.AddressInfo).port;
    // A host other than loopback needs a bearer secret before the address is even tried.
    const bearer = { GATEWAY_BEARER_SECRET: 'a-secret-for-the-listen-cases' };
    const cases: [Record<string, string>, RegExp][] = [
      [
        { GATEWAY_PORT: String(heldPort) },
        /^gateway: cannot listen on "127\.0\.0\.1" port \d+: the port is already in use \(EADDRINUSE\).*set GATEWAY_PORT \/ --gateway-port to a free port/,
      ],
      // TEST-NET-1 (RFC 5737): never an address of this machine.
      [
        { ...bearer, GATEWAY_HOST: '192.0.2.1' },
        /^gateway: cannot listen on "192\.0\.2\.1" port \d+: .*not an address of this machine \(EADDRNOTAVAIL\); set GATEWAY_HOST \/ --gateway-host/,
      ],
      // .invalid never resolves (RFC 6761); a resolver that cannot answer says EAI_AGAIN instead.
      [
        { ...bearer, GATEWAY_HOST: 'gateway.invalid' },
        /^gateway: cannot listen on "gateway\.invalid" port \d+: .*\((ENOTFOUND|EAI_AGAIN).*GATEWAY_HOST \/ --gateway-host/,
      ],
    ];
    try {
      const runs = await mapLimited(cases, 3, ([env]) => runGateway(env));
      runs.forEach((run, index) => {
        expectOneLineFailure(run, cases[index][1]);
        expect(run.stderr).not.toContain('    at ');
        // Refused before the modules start (logins, plan reads): the stderr line is the only word.
        expect(run.stdout).toBe('');
      });
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('listens on an IPv6 address written with brackets, as in a URL', async () => {
    // A machine without IPv6 loopback (a container with IPv6 off) cannot bind ::1: the address the
    // gateway tried is then the one without brackets, named in its one line.
    if (
      !Object.values(os.networkInterfaces()).some((addresses) => addresses?.some(({ address }) => address === '::1'))
    ) {
      expectOneLineFailure(
        await runGateway({ GATEWAY_PROVIDERS: 'provider_a', GATEWAY_HOST: '[::1]' }),
        /^gateway: cannot listen on "::1" port \d+: /,
      );
      return;
    }
    const gateway = await spawnGateway({ GATEWAY_PROVIDERS: 'provider_a', GATEWAY_HOST: '[::1]' });
    try {
      const listening = gateway.records.find((record) => record.event === 'gateway_listening')!;
      expect(listening.host).toBe('::1');
      expect((await fetch(`http://[::1]:${String(listening.port)}/health/live`)).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });

  it('fails on STRUCTURED_REPLICAS=2 even with structured inference disabled', async () => {
    const run = await runGateway({ STRUCTURED_REPLICAS: '2', STRUCTURED_INFERENCE_ENABLED: 'false' });
    expectOneLineFailure(run, /STRUCTURED_REPLICAS.*replicas: 1 with strategy: Recreate or maxSurge: 0/);
  });

  it('prints every setting with its flag and default for --help and exits 0', () => {
    const run = help;
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    for (const definition of SETTINGS) {
      const at = run.stdout.indexOf(`${definition.env} / ${definition.flag}\n`);
      expect(at).toBeGreaterThanOrEqual(0);
      const block = run.stdout.slice(at).split('\n').slice(0, 3).join('\n');
      expect(block).toContain(`default: ${definition.defaultText ?? '(unset)'}`);
    }
  });

  it('lets the flag win over the environment variable', async () => {
    // The env port is invalid, the flag's is valid: the gateway must start on the flag's port 0.
    const gateway = await spawnGateway({ GATEWAY_PORT: '70000', GATEWAY_PROVIDERS: 'provider_b' }, [
      '--gateway-port=0',
      '--gateway-providers',
      'provider_a',
    ]);
    try {
      const listening = gateway.records.find((record) => record.event === 'gateway_listening');
      expect(listening).toMatchObject({ host: '127.0.0.1', providers: ['provider_a'] });
      const models = (await (await fetch(`${gateway.url}/v1/models`)).json()) as { data: { owned_by: string }[] };
      expect(new Set(models.data.map((model) => model.owned_by))).toEqual(new Set(['provider_a']));
    } finally {
      await gateway.close();
    }
  });
});
