import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import type { EventLogger } from '../../core/event-logger';
import type { JsonObject } from '../../common/json';
import type { CloseReason } from '../shared/turn-runner';

/** How the backend is reached: a kept WebSocket (`wss:`) or one SSE POST per turn (`https:`). */
export type ProviderATransportKind = 'ws' | 'sse';

/**
 * One upstream event as it arrived: a parsed JSON object (read by `readEvent`, `provider-a.stream.ts`,
 * into the types of `provider-a.frames.ts`), or a protocol error (binary frame, or not a JSON object).
 */
export type UpstreamFrame =
  { readonly ok: true; readonly value: JsonObject } | { readonly ok: false; readonly reason: 'binary' | 'not_json' };

/** An accepted upgrade / 2xx POST: the event frames of one upstream attempt. */
export interface UpstreamConnection {
  /**
   * Response headers (lower-case names) of the upgrade or POST, for rate-limit telemetry; none on
   * a later turn of a kept WebSocket, whose upgrade answered an earlier turn.
   */
  readonly responseHeaders: Readonly<Record<string, string | undefined>>;
  /**
   * Frames in order. Ends when the upstream closes (with or without a terminal event); rejects
   * with the signal's reason when the attempt's signal aborts.
   */
  readonly frames: AsyncIterable<UpstreamFrame>;
  /**
   * Ends the attempt (close frame 1000 / fetch abort). Idempotent: the first call's `reason` counts
   * (an SSE body is read to its end after a completed turn, `done`, not aborted).
   */
  close(reason?: CloseReason): void;
  /**
   * A frame that already arrived, taken without waiting (same order as `frames`), or
   * `undefined`. Optional: transports without a buffer of their own do not offer it.
   */
  poll?(): UpstreamFrame | undefined;
  /** The next frame without a promise (`UpstreamAttempt.listen`); transports without a buffer of their own do not offer it. */
  listen?(arrived: (next: IteratorResult<UpstreamFrame>) => void, failed: (error: unknown) => void): void;
}

/** What a transport needs for one attempt. */
export interface AttemptInput {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: JsonObject;
  /** Aborts the attempt at once: handshake, POST, reading. */
  readonly signal: AbortSignal;
  /** The egress proxy (HTTPS_PROXY / HTTP_PROXY / NO_PROXY); absent = direct. */
  readonly proxy?: UpstreamProxy;
  /**
   * The same request for HTTP + SSE (its headers and body in that transport's form). A WebSocket
   * attempt whose `response.create` exceeds the limit the server announced sends this instead.
   */
  readonly overHttp?: HttpFallback;
}

/** What a WebSocket attempt sends over HTTP + SSE when its frame is too large for the server. */
export interface HttpFallback {
  readonly request: () => { readonly headers: Record<string, string>; readonly body: JsonObject };
  /** Where the fallback is logged once (`provider_a_websocket_message_too_large`, sizes only). */
  readonly logger?: EventLogger;
}

/**
 * Opens one connection (one attempt = one connection = one scripted reply in tests). Rejects with
 * an `UpstreamRefusal` (providers/shared/upstream-failure.ts) when the upgrade/POST got a non-success status, with a `GatewayError`
 * (`upstream`, retryable) on connect errors, or with the signal's reason on abort.
 */
export type OpenConnection = (input: AttemptInput) => Promise<UpstreamConnection>;

/** The same endpoint over HTTP: `wss:` → `https:`, `ws:` → `http:` (others as they are). */
export function httpUrlFor(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol === 'wss:') parsed.protocol = 'https:';
  else if (parsed.protocol === 'ws:') parsed.protocol = 'http:';
  return parsed.toString();
}

/** `ws(s)://` → WebSocket, `http(s)://` → HTTP + SSE (docs/upstream/provider-a.md §4). */
export function transportForUrl(url: string): ProviderATransportKind {
  const scheme = new URL(url).protocol;
  return scheme === 'ws:' || scheme === 'wss:' ? 'ws' : 'sse';
}
