import { websocketFrame } from './provider-a.request';
import type { AttemptInput, UpstreamConnection } from './provider-a.transport';
import { postInstead } from './provider-a.http-fallback';
import { WsSession } from './provider-a.ws-session';

/**
 * One single-use WebSocket attempt (docs/upstream/provider-a.md §4.1): a fresh connection, exactly one
 * `response.create` text frame, and the socket closed when the attempt ends; a frame larger than
 * the server's announced message limit goes over HTTP + SSE instead (`postInstead`). Structured
 * inference always uses this (it never reuses or prewarms a connection); chat turns go through
 * the per-chat session pool (`SessionPool` in `provider-a.session-pool.ts`).
 */
export async function openWebSocketConnection(input: AttemptInput): Promise<UpstreamConnection> {
  const session = await WsSession.connect(input.url, input.headers, input.signal, input.proxy);
  try {
    return session.send(websocketFrame(input.body, Date.now()), input.signal);
  } catch (error) {
    return postInstead(session, input, error);
  }
}
