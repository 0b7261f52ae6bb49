/**
 * The variables through which Claude Code bills something other than its login: a credential it
 * sends in the login's place, or a switch to another backend (Bedrock, Vertex, Foundry, …) that
 * bills a cloud account. Read in the pinned 2.1.332 binary (its choice of backend, which any
 * `CLAUDE_CODE_USE_*` switch below decides, and its order of credentials, where these come before
 * the OAuth login); `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_API_KEY`, the API key file descriptor, Bedrock
 * and Foundry were seen replacing the login's token against a loopback API. An API credential
 * reports no plan meters, so the paid-usage guard could never stop it: no child gets any of them
 * (docs/upstream/provider-c.md §3.2).
 *
 * Not in the family: `ANTHROPIC_BASE_URL` moves the first-party API and the login's token goes
 * there (a relay, or the loopback fake in tests), and the generic cloud credentials (`AWS_*`,
 * `GOOGLE_APPLICATION_CREDENTIALS`, …), which the CLI reads only once a backend switch is on.
 */
const CREDENTIAL_ROUTE_NAMES: ReadonlySet<string> = new Set([
  // Credentials sent instead of the login.
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR',
  // An Anthropic profile (~/.config/anthropic) and workload identity federation: API credentials.
  'ANTHROPIC_PROFILE',
  'ANTHROPIC_IDENTITY_TOKEN',
  'ANTHROPIC_IDENTITY_TOKEN_FILE',
  'ANTHROPIC_FEDERATION_RULE_ID',
  // A host program that supplies the backend or the credential, or serves the API on a socket.
  'CLAUDE_CODE_PROVIDER_MANAGED_BY_HOST',
  'CLAUDE_CODE_HOST_AUTH_ENV_VAR',
  'CLAUDE_CODE_HOST_CREDS_FILE',
  'ANTHROPIC_UNIX_SOCKET',
  'CLAUDE_CODE_RUNNER_MODEL_SOCKET',
  // The backend switches, the cloud gateway's token and Bedrock's API key.
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
  'CLAUDE_CODE_USE_FOUNDRY',
  'CLAUDE_CODE_USE_ANTHROPIC_AWS',
  'CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD',
  'CLAUDE_CODE_USE_MANTLE',
  'CLAUDE_CODE_USE_GATEWAY',
  'CLAUDE_CODE_GATEWAY_TOKEN',
  'CLAUDE_CODE_GATEWAY_TOKEN_FILE_DESCRIPTOR',
  'AWS_BEARER_TOKEN_BEDROCK',
]);

/**
 * Each third-party backend's own settings: its keys and tokens (`ANTHROPIC_FOUNDRY_API_KEY`,
 * `ANTHROPIC_AWS_API_KEY`), base URLs, projects and regions. Only `CLAUDE_CODE_USE_*` variables
 * are not matched by a prefix: other names of that form are features (`CLAUDE_CODE_USE_POWERSHELL_TOOL`).
 */
const CREDENTIAL_ROUTE_PREFIXES = [
  'ANTHROPIC_BEDROCK_',
  'ANTHROPIC_VERTEX_',
  'ANTHROPIC_FOUNDRY_',
  'ANTHROPIC_AWS_',
  'ANTHROPIC_GOOGLE_CLOUD_',
] as const;

/** Whether `name` routes Claude Code's billing away from its login (see above). */
export function isClaudeCredentialRoute(name: string): boolean {
  return CREDENTIAL_ROUTE_NAMES.has(name) || CREDENTIAL_ROUTE_PREFIXES.some((prefix) => name.startsWith(prefix));
}
