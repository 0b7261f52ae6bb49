/**
 * Variables Claude Code sets for the programs it starts (its Bash tool, hooks, MCP servers) and
 * reads back to decide that it runs inside another Claude Code session: it then changes prompt
 * history, telemetry and session linking (seen in the 2.1.332 binary). A gateway started from
 * such a shell must not hand them to its own children.
 */
export const CLAUDE_SESSION_VARIABLES = [
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
] as const;

/**
 * The CLI retries failed API calls itself (up to 10 times, with backoff that runs for minutes on
 * a 529). The gateway has its own policy, two more runs before output (docs/upstream/provider-c.md §8.3), so
 * the CLI's retries are off unless the operator set `CLAUDE_CODE_MAX_RETRIES` on purpose.
 */
const DEFAULT_CLI_MAX_RETRIES = '0';

/**
 * When the API stops an answer with `stop_reason: "refusal"` (its safety classifier), Claude Code
 * 2.1.332 asks again on its own: once more with the refused text and a note telling the model not to
 * repeat it, and, where it has a fallback model for the refused one, that model. Either bills a
 * second request and joins a second answer, possibly another model's, to what the client was
 * already sent. The gateway answers the refusal itself (`finish_reason: "content_filter"`,
 * docs/upstream/provider-c.md §8.2), so both are always off, whatever the gateway's environment
 * says: the CLI then ends the run on the refusal (the switches are the 2.1.332 binary's).
 */
const REFUSAL_SWITCHES = {
  CLAUDE_CODE_DISABLE_REFUSAL_RETRY: '1',
  CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK: '1',
} as const;

/**
 * Left to itself, Claude Code 2.1.332 sends telemetry, error reports and update checks to
 * Anthropic's own hosts beside each turn, whatever `ANTHROPIC_BASE_URL` says: through a relay or an
 * egress proxy each run opens its own connection to api.anthropic.com, and where that is blocked it
 * keeps the unsent events in the login's config directory (`~/.claude/telemetry/`). A child needs
 * none of it to answer, so it is off unless the operator set one of these on purpose.
 */
export const NONESSENTIAL_TRAFFIC_SWITCHES = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_AUTOUPDATER: '1',
} as const;

/**
 * The child's environment (docs/upstream/provider-c.md §3.2): the gateway's, already without
 * secrets, minus the session kin, with the gateway's defaults under the operator's own values.
 */
export function claudeChildEnvironment(base: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = { ...base };
  for (const name of CLAUDE_SESSION_VARIABLES) delete env[name];
  env.CLAUDE_CODE_MAX_RETRIES ??= DEFAULT_CLI_MAX_RETRIES;
  for (const [name, value] of Object.entries(NONESSENTIAL_TRAFFIC_SWITCHES)) env[name] ??= value;
  Object.assign(env, REFUSAL_SWITCHES);
  return env;
}
