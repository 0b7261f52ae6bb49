/** `codex exec`, the CLI's non-interactive front end: what the gateway is to the backend. */
export const CODEX_ORIGINATOR = 'codex_exec';
export const OPENAI_BETA_WEBSOCKET = 'responses_websockets=2026-02-06';
export const CODEX_BETA_FEATURES = 'remote_compaction_v2';

/** Cap on a failed upgrade/POST body we read from the upstream (docs/upstream/provider-a.md §4.2). */
export const ERROR_BODY_MAX_BYTES = 64 * 1024;
/** Grace after our close frame before the socket is dropped (docs/upstream/provider-a.md §4.1). */
export const WEBSOCKET_CLOSE_GRACE_MS = 1000;

/** Default instructions when a minimal-mode request carries no system text (docs/upstream/provider-a.md §5.1). */
export const DEFAULT_INSTRUCTIONS = 'You are a helpful assistant.';
