import { allSettings, setting } from './settings';
import { OWN_PREFIXES, refusalLine, unknownSettingVariables, unknownVariableFix } from './unknown-variables';

const SETTINGS = allSettings();

describe(unknownSettingVariables.name, () => {
  it('names each variable with one of our prefixes that is no setting, with the closest setting', () => {
    expect(
      unknownSettingVariables({
        STRUCTURED_ENABLED: 'true',
        GATEWAY_PROVIDER: 'codex',
        PROVIDER_A_TIMEOUT_MS: '5000',
        LOG_LEVLE: 'debug',
        ACCOUNT_PINNED_CHAT_MAX: '10',
        METRICS_ENABLE: 'false',
        PRIMARY_AGENT_QUEUE_ENABLE: 'false',
      }),
    ).toEqual([
      // In the order of the names, so the lines read the same at every start.
      { variable: 'ACCOUNT_PINNED_CHAT_MAX', closest: 'ACCOUNT_PINNED_CHATS_MAX' },
      { variable: 'GATEWAY_PROVIDER', closest: 'GATEWAY_PROVIDERS' },
      { variable: 'LOG_LEVLE', closest: 'LOG_LEVEL' },
      { variable: 'METRICS_ENABLE', closest: 'METRICS_ENABLED' },
      { variable: 'PRIMARY_AGENT_QUEUE_ENABLE', closest: 'PRIMARY_AGENT_QUEUE_ENABLED' },
      { variable: 'PROVIDER_A_TIMEOUT_MS', closest: 'PROVIDER_A_TIMEOUT' },
      // The short flag's name (--structured-enabled) counts as a spelling of its setting.
      { variable: 'STRUCTURED_ENABLED', closest: 'STRUCTURED_INFERENCE_ENABLED' },
    ]);
  });

  it('says nothing of the settings, nor of variables other software owns, nor of an empty one', () => {
    const env: Record<string, string> = Object.fromEntries(SETTINGS.map((definition) => [definition.env, 'x']));
    Object.assign(env, {
      https_proxy: 'http://p:1',
      PATH: '/bin',
      HOME: '/home/x',
      CLAUDE_CONFIG_DIR: '/c',
      CLAUDE_CODE_OAUTH_TOKEN: 't',
      GEMINI_API_KEY: 'k',
      CODEX_API_KEY: 'k',
      BUILD_NUMBER: '12',
      NODE_OPTIONS: '--max-semi-space-size=8',
      // The key clients send (docs/clients.md), often set in the shell that starts the gateway.
      GATEWAY_KEY: 'local',
      STRUCTURED_ENABLED: '',
    });
    expect(unknownSettingVariables(env)).toEqual([]);
  });

  it('names, of two settings equally near, the one listed first (as --help lists them)', () => {
    // GATEWAY_POST is one letter from GATEWAY_HOST and from GATEWAY_PORT; GATEWAY_HOST comes first.
    expect(unknownSettingVariables({ GATEWAY_POST: '1' })).toEqual([
      { variable: 'GATEWAY_POST', closest: 'GATEWAY_HOST' },
    ]);
  });

  it("knows a family's own rows", () => {
    const rows = [...SETTINGS, setting('PROVIDER_Z_URL', undefined, undefined, 'A spec row.', (raw) => raw)];
    expect(unknownSettingVariables({ PROVIDER_Z_URL: 'x', PROVIDER_Z_URI: 'x' }, rows)).toEqual([
      { variable: 'PROVIDER_Z_URI', closest: 'PROVIDER_Z_URL' },
    ]);
  });

  it('covers every prefix of the table, but for the names other software owns', () => {
    const borrowed = SETTINGS.map((definition) => definition.env).filter(
      (name) => !OWN_PREFIXES.some((prefix) => name.startsWith(prefix)),
    );
    expect(borrowed.sort()).toEqual([
      'BUILD_COMMIT',
      'BUILD_DATE',
      'BUILD_VERSION',
      'CODEX_HOME',
      'GEMINI_HOME',
      'HTTPS_PROXY',
      'HTTP_PROXY',
      'NO_PROXY',
    ]);
    for (const prefix of OWN_PREFIXES)
      expect(SETTINGS.some((definition) => definition.env.startsWith(prefix))).toBe(true);
  });

  it('words the warning with the fix, never the value', () => {
    expect(unknownVariableFix({ variable: 'STRUCTURED_ENABLED', closest: 'STRUCTURED_INFERENCE_ENABLED' })).toBe(
      'STRUCTURED_ENABLED is no setting of the gateway, so it is ignored: rename it to STRUCTURED_INFERENCE_ENABLED if that is what you meant, else remove it (docs/configuration.md lists the settings)',
    );
  });
});

describe(refusalLine.name, () => {
  it("puts each unknown variable's fix on the refusal's one line, after it", () => {
    const refusal =
      'invalid setting GATEWAY_HOST / --gateway-host: "0.0.0.0" is not loopback, so GATEWAY_BEARER_SECRET must be set';
    expect(refusalLine(refusal, [])).toBe(refusal);
    const line = refusalLine(refusal, [
      { variable: 'GATEWAY_BEARER_SECRT', closest: 'GATEWAY_BEARER_SECRET' },
      { variable: 'LOG_LEVLE', closest: 'LOG_LEVEL' },
    ]);
    expect(line).toBe(
      `${refusal}; also GATEWAY_BEARER_SECRT is no setting of the gateway, so it is ignored: rename it to GATEWAY_BEARER_SECRET if that is what you meant, else remove it (docs/configuration.md lists the settings); also LOG_LEVLE is no setting of the gateway, so it is ignored: rename it to LOG_LEVEL if that is what you meant, else remove it (docs/configuration.md lists the settings)`,
    );
    expect(line).not.toContain('\n');
  });
});
