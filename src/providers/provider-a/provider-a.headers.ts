import type { ProviderACredentials } from './provider-a.auth';
import {
  CODEX_BETA_FEATURES,
  CODEX_ORIGINATOR,
  OPENAI_BETA_WEBSOCKET,
  USER_AGENT_FAITHFUL,
  USER_AGENT_MINIMAL,
} from './provider-a.constants';
import { windowIdFor } from './provider-a.identifiers';

export type ProviderATransportKind = 'ws' | 'sse';

export interface FaithfulHeaderInput {
  /** The turn metadata string (§5.2). */
  readonly turnMetadata: string;
}

/**
 * Handshake (WebSocket) or POST (SSE) headers of one attempt (provider_a.md §4.1, §4.2): the
 * minimal set always, the faithful extras only in faithful mode. As Codex CLI 0.169.0 sends them
 * (test/fixtures/codex-oracle/): only the WebSocket carries `openai-beta`; both spell the session
 * header `session-id`.
 */
export function upstreamHeaders(
  transport: ProviderATransportKind,
  credentials: ProviderACredentials,
  sessionId: string,
  faithful?: FaithfulHeaderInput,
): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${credentials.accessToken}`,
    'chatgpt-account-id': credentials.accountId,
    originator: CODEX_ORIGINATOR,
    'user-agent': faithful ? USER_AGENT_FAITHFUL : USER_AGENT_MINIMAL,
    'session-id': sessionId,
  };
  if (transport === 'ws') headers['openai-beta'] = OPENAI_BETA_WEBSOCKET;
  if (faithful) {
    headers['x-codex-beta-features'] = CODEX_BETA_FEATURES;
    // The CLI sends its thread (session) id here, not the turn id.
    headers['x-client-request-id'] = sessionId;
    headers['thread-id'] = sessionId;
    headers['x-codex-window-id'] = windowIdFor(sessionId);
    headers['x-codex-turn-metadata'] = faithful.turnMetadata;
  }
  if (transport === 'sse') {
    headers['content-type'] = 'application/json';
    headers.accept = 'text/event-stream';
  }
  return headers;
}
