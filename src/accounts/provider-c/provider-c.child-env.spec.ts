import { claudeChildEnvironment, NONESSENTIAL_TRAFFIC_SWITCHES } from './provider-c.child-env';

/**
 * The session variables by name, written out here rather than taken from the list under test, so
 * that a name dropped from that list fails this spec.
 */
const SESSION_VARIABLES = [
  'CLAUDECODE',
  'CLAUDE_CODE_ENTRYPOINT',
  'CLAUDE_CODE_SESSION_ID',
  'CLAUDE_CODE_CHILD_SESSION',
  'CLAUDE_CODE_SESSION_ATTENDED',
  'CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS',
  'CLAUDE_CODE_SSE_PORT',
  'CLAUDE_CODE_EXECPATH',
  'CLAUDE_PROJECT_DIR',
  'CLAUDE_ENV_FILE',
  'CLAUDE_PID',
  'CLAUDE_EFFORT',
];

describe(claudeChildEnvironment.name, () => {
  it('removes CLAUDECODE and its kin but keeps the login variables and everything else', () => {
    const base = Object.fromEntries([
      ...SESSION_VARIABLES.map((name) => [name, '1']),
      ['HOME', '/h'],
      ['CLAUDE_CODE_OAUTH_TOKEN', 't'],
      ['CLAUDE_CONFIG_DIR', '/c'],
    ]);
    expect(claudeChildEnvironment(base)).toEqual({
      HOME: '/h',
      CLAUDE_CODE_OAUTH_TOKEN: 't',
      CLAUDE_CONFIG_DIR: '/c',
      CLAUDE_CODE_MAX_RETRIES: '0',
      CLAUDE_CODE_DISABLE_REFUSAL_RETRY: '1',
      CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK: '1',
      ...NONESSENTIAL_TRAFFIC_SWITCHES,
    });
  });

  it("turns the CLI's telemetry, error reports, update checks and other non-essential traffic off unless the operator chose a value", () => {
    expect(claudeChildEnvironment({})).toMatchObject({
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
    });
    const chosen = {
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '',
      DISABLE_TELEMETRY: '0',
      DISABLE_ERROR_REPORTING: '0',
    };
    expect(claudeChildEnvironment(chosen)).toMatchObject({ ...chosen, DISABLE_AUTOUPDATER: '1' });
  });

  it("turns the CLI's own API retries off unless the operator chose a value", () => {
    expect(claudeChildEnvironment({}).CLAUDE_CODE_MAX_RETRIES).toBe('0');
    expect(claudeChildEnvironment({ CLAUDE_CODE_MAX_RETRIES: '3' }).CLAUDE_CODE_MAX_RETRIES).toBe('3');
  });

  it("turns the CLI's own answer to a refusal off (asking again, another model), whatever the gateway's environment says", () => {
    const env = claudeChildEnvironment({
      CLAUDE_CODE_DISABLE_REFUSAL_RETRY: '',
      CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK: '',
    });
    expect(env).toMatchObject({ CLAUDE_CODE_DISABLE_REFUSAL_RETRY: '1', CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK: '1' });
  });
});
