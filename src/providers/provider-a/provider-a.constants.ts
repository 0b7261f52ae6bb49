/**
 * Client identity of the Codex CLI (provider_a.md §2). The backend expects a Codex CLI client,
 * so these values are copied from the reference and kept in this one file.
 */
export const CODEX_CLI_VERSION = '0.144.1';
export const CODEX_ORIGINATOR = 'codex_cli_rs';
export const USER_AGENT_MINIMAL = `codex_cli_rs/${CODEX_CLI_VERSION} (api wrapper) dumb`;
export const USER_AGENT_FAITHFUL = `codex_cli_rs/${CODEX_CLI_VERSION} (Mac OS 26.2.0; arm64) dumb`;
export const OPENAI_BETA_WEBSOCKET = 'responses_websockets=2026-02-06';
export const OPENAI_BETA_SSE = 'responses=experimental';
export const CODEX_BETA_FEATURES = 'remote_compaction_v2';

/** The public OAuth client id of the Codex CLI (provider_a.md §1.5). */
export const CODEX_OAUTH_CLIENT_ID = 'app_EMoamEEZ73f0CkXaXp7hrann';

/** Cap on a failed upgrade/POST body we read from the upstream (provider_a.md §4.2). */
export const ERROR_BODY_MAX_BYTES = 64 * 1024;
/** The token endpoint is not bounded by any caller's turn (the rotated token must be saved). */
export const TOKEN_REFRESH_TIMEOUT_MS = 30_000;
/** Grace after our close frame before the socket is dropped (provider_a.md §4.1). */
export const WEBSOCKET_CLOSE_GRACE_MS = 1000;

/** Default instructions when a minimal-mode request carries no system text (provider_a.md §5.1). */
export const DEFAULT_INSTRUCTIONS = 'You are a helpful assistant.';
