import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { isJsonObject, type JsonObject } from '../../common/json';
import { lowerCaseHeaders, parseJsonOrUndefined } from '../../common/egress/http-body';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { ERROR_BODY_MAX_BYTES, WEBSOCKET_CLOSE_GRACE_MS } from './provider-a.constants';
import { connectionFailure } from './provider-a.errors';
import { FrameQueue } from './provider-a.frame-queue';
import type { UpstreamConnection, UpstreamFrame } from './provider-a.transport';
import { UpstreamRefusal } from '../shared/upstream-failure';
import { timeoutOrNever } from '../../common/async/timer-range';

// provider_a's WebSocket side (docs/providers.md): one upstream connection that carries a chat's
// turns one after another (WsSession). Its frame queue is provider-a.frame-queue.ts; the pool that
// keeps each chat's connections between turns is provider-a.session-pool.ts.

/** Reads at most `maxBytes` of a failed upgrade's body. */
function readIncomingCapped(response: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const finish = () => resolve(Buffer.concat(chunks).toString('utf8'));
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk.subarray(0, Math.max(0, maxBytes - total)));
      total += chunk.length;
      if (total >= maxBytes) {
        response.destroy();
        finish();
      }
    });
    response.on('end', finish);
    response.on('error', finish);
    response.on('close', finish);
  });
}

function parseFrame(data: WebSocket.RawData, isBinary: boolean): UpstreamFrame {
  if (isBinary) return { ok: false, reason: 'binary' };
  // `ws` hands a Buffer (its default binaryType); `Buffer.from` of a Buffer would copy every frame.
  const text = Array.isArray(data)
    ? Buffer.concat(data).toString('utf8')
    : Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Buffer.from(data).toString('utf8');
  const value = parseJsonOrUndefined(text);
  return isJsonObject(value) ? { ok: true, value } : { ok: false, reason: 'not_json' };
}

/** A socket error after the handshake: 'close' follows, and the session acts on that. */
function ignoreSocketError(): void {
  // Listening at all keeps an 'error' event from being thrown.
}

/**
 * Client frames are masked with a zero key, which `ws` recognises and then skips the XOR pass
 * over every payload byte (a whole agent history per turn) and the random key. Masking protects
 * browsers' shared proxies from script-chosen bytes (RFC 6455, section 10.3); this client's bytes are
 * the gateway's own, over TLS to the backend, so the key adds nothing but CPU.
 */
function keepZeroMask(): void {
  // ws hands in a zero-filled 4-byte buffer; leaving it as is selects the no-op mask.
}

/** The upgrade answer's header naming the largest message the server reads (Codex CLI 0.171.0 honours it). */
export const MAX_MESSAGE_BYTES_HEADER = 'x-codex-websocket-max-message-bytes';

/** A positive integer header value, else `undefined` (no limit announced). */
function byteLimit(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d{1,15}\s*$/.test(value)) return undefined;
  const limit = Number(value);
  return limit > 0 ? limit : undefined;
}

/**
 * A `response.create` frame larger than the server's announced message limit: never sent (a
 * real server closes the connection on it); the turn goes over HTTP + SSE instead.
 */
export class FrameTooLarge extends Error {
  constructor(
    readonly frameBytes: number,
    readonly limitBytes: number,
  ) {
    super(`websocket request exceeds the peer's message size limit (${frameBytes} > ${limitBytes} bytes)`);
    this.name = 'FrameTooLarge';
  }
}

/** What one turn on the socket produced, as far as the session can tell from the raw events. */
export interface TurnRecord {
  /** A `response.completed` event arrived: the socket is between turns again. */
  completed: boolean;
  /** `response.completed`'s `response.id`. */
  responseId?: string;
  /** Every `response.output_item.done` item, in order (what the server added to its chain). */
  readonly outputItems: JsonObject[];
}

/** What a turn on a socket the session had already used reports of the upgrade: nothing. */
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** Where a turn that completed hands its socket (`ChatTurnLease`: back to the chat's pool). */
export interface SessionKeeper {
  keep(session: WsSession, record: TurnRecord): void;
}

/**
 * One upstream WebSocket (docs/upstream/provider-a.md §4.1) that can carry several turns one after another:
 * each turn sends one `response.create` text frame and reads one JSON event per text frame until
 * its terminal event. A session never carries two turns at once. Closing sends a close frame
 * (1000) and drops the socket after a 1 s grace.
 */
export class WsSession {
  private turn?: WsTurn;
  /** A turn was sent: the upgrade's headers went with it, and later turns report none. */
  private used = false;
  private graceTimer?: NodeJS.Timeout;
  /** Settles the pending `answersPing`: true on a pong, false when the socket closes first. */
  private pongWaiter?: (answered: boolean) => void;
  private readonly closeListeners = new Set<() => void>();
  /** The largest message the server said it reads (`x-codex-websocket-max-message-bytes`), if it said. */
  readonly maxMessageBytes: number | undefined;

  private constructor(
    private readonly socket: WebSocket,
    /** Response headers of the upgrade (lower-case names): its message limit, and the first turn's rate limits. */
    readonly responseHeaders: Readonly<Record<string, string>>,
  ) {
    this.maxMessageBytes = byteLimit(responseHeaders[MAX_MESSAGE_BYTES_HEADER]);
    // The socket's listeners are module functions given the session through the socket: no
    // closure per connection, which a kept chat holds for its whole life.
    (socket as SessionSocket)[SESSION] = this;
    socket.on('message', sessionFrame);
    socket.on('close', sessionClosed);
    socket.on('pong', sessionPong);
  }

  /** The socket delivered a message. */
  frameArrived(data: WebSocket.RawData, isBinary: boolean): void {
    this.onFrame(parseFrame(data, isBinary));
  }

  /** The socket closed: the turn on it ends, and the session's close listeners are told. */
  socketClosed(): void {
    clearTimeout(this.graceTimer);
    this.pongWaiter?.(false);
    this.turn?.end();
    for (const listener of this.closeListeners) listener();
  }

  /**
   * Opens a fresh connection without permessage-deflate. Rejects with an `UpstreamRefusal`
   * when the upgrade got a non-101 status, a retryable `upstream` GatewayError on connect errors,
   * or the signal's reason when it aborts (the socket is dropped at once).
   */
  static connect(
    url: string,
    headers: Record<string, string>,
    signal: AbortSignal,
    proxy?: UpstreamProxy,
  ): Promise<WsSession> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<WsSession>((resolve, reject) => {
      // Through the egress proxy (a CONNECT tunnel) unless NO_PROXY says otherwise.
      const socket = new WebSocket(url, {
        headers,
        perMessageDeflate: false,
        followRedirects: false,
        generateMask: keepZeroMask,
        agent: proxy?.websocketAgent(url),
      });
      let settled = false;
      let responseHeaders: Record<string, string> = {};
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        outcome();
      };
      const onAbort = () => {
        socket.terminate();
        settle(() => reject(signal.reason));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const onUpgrade = (response: IncomingMessage) => (responseHeaders = lowerCaseHeaders(response.headers));
      const onUnexpectedResponse = (_request: unknown, response: IncomingMessage) => {
        const status = response.statusCode ?? 502;
        const rejectedHeaders = lowerCaseHeaders(response.headers);
        void readIncomingCapped(response, ERROR_BODY_MAX_BYTES).then((text) => {
          settle(() => reject(new UpstreamRefusal(status, parseJsonOrUndefined(text), rejectedHeaders)));
          socket.terminate();
        });
      };
      const onError = (error: Error) =>
        settle(() => reject(connectionFailure('websocket connection failed', error, { url, proxy })));
      const onEarlyClose = () => settle(() => reject(connectionFailure('websocket closed during the handshake')));
      socket.on('upgrade', onUpgrade);
      socket.on('unexpected-response', onUnexpectedResponse);
      socket.on('error', onError);
      socket.once('close', onEarlyClose);
      socket.once('open', () => {
        // The handshake's listeners (and what they hold) go with it; the session listens from now
        // on. An error after the handshake is followed by 'close', which the session handles.
        socket.off('upgrade', onUpgrade);
        socket.off('unexpected-response', onUnexpectedResponse);
        socket.off('error', onError);
        socket.off('close', onEarlyClose);
        socket.on('error', ignoreSocketError);
        settle(() => resolve(new WsSession(socket, responseHeaders)));
      });
    });
  }

  /** Open and not carrying a turn: may take the next one. */
  get idle(): boolean {
    return this.socket.readyState === WebSocket.OPEN && this.turn === undefined;
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** The socket got a pong. */
  pongArrived(): void {
    this.pongWaiter?.(true);
  }

  /**
   * Whether the peer still answers: sends a ping and resolves true when a pong arrives within
   * `timeoutMs`, false when none does (the socket is then closed) or the socket closes first.
   * Rejects with the signal's reason when it aborts (the socket is closed: nothing was sent on it
   * yet, but whether it lives is unknown). For a connection that lay idle: one that silently died
   * (a NAT or load balancer forgot it; no close or reset ever arrives) would swallow a turn.
   */
  answersPing(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    // Taken out of the pool, the socket is this check's to close whenever it does not answer.
    if (signal.aborted || !this.idle) {
      this.close();
      return signal.aborted ? Promise.reject(signal.reason) : Promise.resolve(false);
    }
    return new Promise<boolean>((resolve, reject) => {
      const stopWaiting = () => {
        this.pongWaiter = undefined;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      const settle = (answered: boolean) => {
        stopWaiting();
        if (!answered) this.close();
        resolve(answered);
      };
      const onAbort = () => {
        stopWaiting();
        this.close();
        reject(signal.reason);
      };
      const timer = timeoutOrNever(settle, timeoutMs, false);
      signal.addEventListener('abort', onAbort, { once: true });
      this.pongWaiter = settle;
      this.socket.ping();
    });
  }

  /** Called once when the socket closes, whoever closed it. */
  onClose(listener: () => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /**
   * Sends one `response.create` frame and returns that turn's events. The signal aborting closes
   * the socket at once (`WsTurn.handleEvent`). `close()` of the returned connection ends the turn:
   * `keeper` decides whether the socket is kept (it gets the turn's record) — without one, or
   * when the turn did not complete or its signal aborted, the socket is closed. Throws
   * `FrameTooLarge`, sending nothing, when the frame exceeds the server's announced message limit.
   */
  send(frame: JsonObject, signal: AbortSignal, keeper?: SessionKeeper): WsTurn {
    if (this.turn) throw new Error('a provider_a WebSocket session carries one turn at a time');
    const text = JSON.stringify(frame);
    if (this.maxMessageBytes !== undefined && text.length * 3 > this.maxMessageBytes) {
      // UTF-16 length × 3 bounds the UTF-8 size: the exact count only when it could matter.
      const bytes = Buffer.byteLength(text);
      if (bytes > this.maxMessageBytes) throw new FrameTooLarge(bytes, this.maxMessageBytes);
    }
    // The upgrade's rate-limit headers describe the plan when the socket opened: the turn that
    // opened it reports them; a later turn on the kept socket learns the plan from its own
    // `codex.rate_limits` events, never from headers minutes old.
    const turn = new WsTurn(this, signal, this.used ? NO_HEADERS : this.responseHeaders, keeper);
    this.used = true;
    this.turn = turn;
    if (signal.aborted) turn.handleEvent();
    else {
      signal.addEventListener('abort', turn, { once: true });
      this.socket.send(text);
    }
    return turn;
  }

  /** The current turn's frames back up (`true`: stop reading the socket) or drained. */
  pauseReading(paused: boolean): void {
    if (paused) this.socket.pause();
    else this.socket.resume();
  }

  /**
   * `turn` ended (`WsTurn.close`): the socket goes to `keeper` when the turn completed and was not
   * aborted, else it is closed.
   */
  turnEnded(turn: WsTurn, keeper: SessionKeeper | undefined): void {
    if (this.turn === turn) this.turn = undefined;
    if (keeper && turn.record.completed && !turn.aborted && this.open) {
      this.socket.resume();
      keeper.keep(this, turn.record);
    } else this.close();
  }

  /** Close frame 1000, then the socket is dropped after the grace period. Idempotent. */
  close(): void {
    if (this.socket.readyState === WebSocket.CONNECTING) this.socket.terminate();
    else if (this.socket.readyState === WebSocket.OPEN) {
      this.socket.close(1000);
      this.graceTimer = setTimeout(() => this.socket.terminate(), WEBSOCKET_CLOSE_GRACE_MS);
      this.graceTimer.unref();
    }
  }

  private onFrame(frame: UpstreamFrame): void {
    const turn = this.turn;
    if (!turn) {
      // An event between turns means the server and we disagree about the chain: never reuse it.
      this.close();
      return;
    }
    if (frame.ok) noteEvent(turn.record, frame.value);
    turn.push(frame);
  }
}

/**
 * One turn on a session, as the attempt reads it: the frame queue itself, the listener on the
 * attempt's signal (`handleEvent`) and the connection its attempt closes; one object per turn,
 * its methods on the prototype.
 */
export class WsTurn extends FrameQueue<UpstreamFrame> implements UpstreamConnection {
  readonly record: TurnRecord = { completed: false, outputItems: [] };
  private closed = false;

  constructor(
    private readonly session: WsSession,
    private readonly signal: AbortSignal,
    /** The upgrade's headers on the socket's first turn; none on a later one (`WsSession.send`). */
    readonly responseHeaders: Readonly<Record<string, string>>,
    private readonly keeper?: SessionKeeper,
  ) {
    super(undefined, 64);
  }

  get frames(): AsyncIterable<UpstreamFrame> {
    return this;
  }

  /**
   * The attempt's signal aborted (the client left, or the turn was cut short): the socket is
   * closed at once and reads fail with the signal's reason. Also after `response.completed`: the
   * server's chain then holds an answer the client did not get all of, which a later turn of the
   * chat must not continue (docs/providers.md "Upstream sessions per chat").
   */
  handleEvent(): void {
    this.session.close();
    this.fail(this.signal.reason);
  }

  /** The attempt's signal aborted: the turn's socket is never kept. */
  get aborted(): boolean {
    return this.signal.aborted;
  }

  /** Ends the turn: its socket is kept when it completed, was not aborted and has a keeper, else closed. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.signal.removeEventListener('abort', this);
    this.session.turnEnded(this, this.keeper);
  }

  protected override pressure(paused: boolean): void {
    this.session.pauseReading(paused);
  }
}

/** Keeps what the session needs to know about a turn: its completion, id and output items. */
function noteEvent(record: TurnRecord, event: JsonObject): void {
  if (event.type === 'response.output_item.done' && isJsonObject(event.item)) record.outputItems.push(event.item);
  else if (event.type === 'response.completed') {
    record.completed = true;
    const response = event.response;
    if (isJsonObject(response) && typeof response.id === 'string') record.responseId = response.id;
  }
}

const SESSION = Symbol('wsSession');
type SessionSocket = WebSocket & { [SESSION]?: WsSession };

/** The socket's 'message' listener (`this` is the socket). */
function sessionFrame(this: SessionSocket, data: WebSocket.RawData, isBinary: boolean): void {
  this[SESSION]?.frameArrived(data, isBinary);
}

/** The socket's 'pong' listener (`this` is the socket). */
function sessionPong(this: SessionSocket): void {
  this[SESSION]?.pongArrived();
}

/** The socket's 'close' listener (`this` is the socket). */
function sessionClosed(this: SessionSocket): void {
  this[SESSION]?.socketClosed();
}
