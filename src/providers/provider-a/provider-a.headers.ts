import type { ProviderACredentials } from './provider-a.auth';
import {
  CODEX_BETA_FEATURES,
  CODEX_ORIGINATOR,
  OPENAI_BETA_SSE,
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
 * minimal set always, the faithful extras only in faithful mode. The two transports differ in
 * `openai-beta` and in the spelling of the session header.
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
    'openai-beta': transport === 'ws' ? OPENAI_BETA_WEBSOCKET : OPENAI_BETA_SSE,
  };
  if (transport === 'ws') headers['session-id'] = sessionId;
  else headers.session_id = sessionId;
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
