import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { sha256Hex, uuidFromHex } from '../../common/hashing';
import type { ProviderACredentials } from '../../accounts/provider-a/provider-a.auth';
import {
  CODEX_BETA_FEATURES,
  CODEX_ORIGINATOR,
  OPENAI_BETA_WEBSOCKET,
  USER_AGENT_FAITHFUL,
  USER_AGENT_MINIMAL,
} from './provider-a.constants';

// What identifies our requests upstream: the chat's session id, turn and window ids, the
// installation id, normalized call ids, and the handshake/POST headers that carry them.

/**
 * The session id of one chat: stable for every turn of the chat, distinct across chats, so the
 * backend can reuse its prompt cache (`prompt_cache_key`, `session-id`, faithful `thread-id`).
 * Derivation v1 (docs/providers.md "Conversation identity"): UUID-formatted SHA-256 of
 * `provider_a.prompt_cache_key:` + the conversation id. Changing it cools every upstream cache.
 */
export function sessionIdForChat(conversationId: string): string {
  return uuidFromHex(sha256Hex(`provider_a.prompt_cache_key:${conversationId}`));
}

/**
 * The structured route's cache key (provider_a.md §6.4), derivation v1: UUID-formatted SHA-256
 * of `provider_a.structured:` + the extraction's conversation id (caller, operation and schema
 * checksum, one per line).
 */
export function structuredPromptCacheKey(conversationId: string): string {
  return uuidFromHex(sha256Hex(`provider_a.structured:${conversationId}`));
}

/** A fresh turn id per upstream attempt (UUIDv7: time-ordered, like the CLI's). */
export function newTurnId(): string {
  return uuidv7();
}

/** The faithful window id of a session. */
export function windowIdFor(sessionId: string): string {
  return `${sessionId}:0`;
}

/** Call-id normalization N(id) (provider_a.md §7.4): ids over 64 characters become their SHA-256 hex. */
export function normalizeCallId(id: string): string {
  return id.length <= 64 ? id : sha256Hex(id);
}

/**
 * Installation ids (§3): `$CODEX_HOME/installation_id` trimmed, read once per home; else one
 * random UUIDv4, generated once and never written to disk. State of the instance, not of the
 * module: the adapter holds one (so "per process" in production) and tests make their own.
 */
export class InstallationIds {
  private readonly byHome = new Map<string, string>();
  private generated?: string;

  for(codexHome: string): string {
    const known = this.byHome.get(codexHome);
    if (known !== undefined) return known;
    let value: string | undefined;
    try {
      value = fs.readFileSync(path.join(codexHome, 'installation_id'), 'utf8').trim() || undefined;
    } catch {
      value = undefined;
    }
    value ??= this.generated ??= randomUUID();
    this.byHome.set(codexHome, value);
    return value;
  }
}

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
