/**
 * Client identity of the Codex CLI (provider_a.md §2). The backend expects a Codex CLI client,
 * so these follow the pinned CLI (oracles/package.json `@openai/codex`), as its `codex exec` sends them
 * (test/fixtures/codex-oracle/): moving to a new CLI release is the one-line version change below
 * plus a new capture (scripts/capture-codex-oracle.mjs).
 */
export const CODEX_CLI_VERSION = '0.169.0';
/** `codex exec`, the CLI's non-interactive front end: what the gateway is to the backend. */
export const CODEX_ORIGINATOR = 'codex_exec';
/** `<originator>/<version> (<os>; <arch>) <terminal> (<originator>; <version>)`, as the CLI builds it. */
const userAgent = (platform: string) =>
  `${CODEX_ORIGINATOR}/${CODEX_CLI_VERSION} (${platform}) unknown (${CODEX_ORIGINATOR}; ${CODEX_CLI_VERSION})`;
/** Minimal mode says honestly that it is a wrapper, in the CLI's format. */
export const USER_AGENT_MINIMAL = userAgent('api wrapper');
export const USER_AGENT_FAITHFUL = userAgent('Mac OS 26.2.0; arm64');
export const OPENAI_BETA_WEBSOCKET = 'responses_websockets=2026-02-06';
export const CODEX_BETA_FEATURES = 'remote_compaction_v2';

/** Cap on a failed upgrade/POST body we read from the upstream (provider_a.md §4.2). */
export const ERROR_BODY_MAX_BYTES = 64 * 1024;
/** Grace after our close frame before the socket is dropped (provider_a.md §4.1). */
export const WEBSOCKET_CLOSE_GRACE_MS = 1000;

/** Default instructions when a minimal-mode request carries no system text (provider_a.md §5.1). */
export const DEFAULT_INSTRUCTIONS = 'You are a helpful assistant.';
