import type { AttemptInput, UpstreamConnection } from './provider-a.transport';
import { httpUrlFor } from './provider-a.transport';
import { openSseConnection } from './provider-a.transport-sse';
import type { WsSession } from './provider-a.ws-session';
import { FrameTooLarge } from './provider-a.ws-session';

/**
 * After `WsSession.send` threw: when the frame was larger than the server's announced
 * `x-codex-websocket-max-message-bytes`, closes that connection and sends the same request over
 * HTTP + SSE, as Codex CLI 0.171.0 does (docs/providers.md "WebSocket message limit"). Any other
 * error, or a request without an HTTP form, is thrown on.
 */
export function postInstead(session: WsSession, input: AttemptInput, error: unknown): Promise<UpstreamConnection> {
  if (!(error instanceof FrameTooLarge) || !input.overHttp) throw error;
  session.close();
  input.overHttp.logger?.info(
    { event: 'provider_a_websocket_message_too_large', frame_bytes: error.frameBytes, limit_bytes: error.limitBytes },
    'provider_a_websocket_message_too_large',
  );
  const { headers, body } = input.overHttp.request();
  return openSseConnection({ url: httpUrlFor(input.url), headers, body, signal: input.signal, proxy: input.proxy });
}
