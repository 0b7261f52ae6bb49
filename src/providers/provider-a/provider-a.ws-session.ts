import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { isJsonObject, type JsonObject } from '../../common/json';
import { lowerCaseHeaders, parseJsonOrUndefined } from '../../common/egress/http-body';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { ERROR_BODY_MAX_BYTES, WEBSOCKET_CLOSE_GRACE_MS } from './provider-a.constants';
import { connectionFailure } from './provider-a.errors';
import type { AttemptInput, UpstreamConnection, UpstreamFrame } from './provider-a.transport';
import { httpUrlFor, UpstreamRejection } from './provider-a.transport';
import { LRUCache } from 'lru-cache';
import type { ChainState } from './provider-a.chain';
import { chainAfterTurn, chainedBody, continuationItems, isChainError, requestShape } from './provider-a.chain';
import { websocketFrame } from './provider-a.request';
import { openSseConnection } from './provider-a.transport-sse';

// provider_a's WebSocket side (provider_a.md §4.1): one upstream connection that carries a chat's
// turns one after another (WsSession, with its frame queue), and the pool that keeps each chat's
// connections between turns and continues their response chains (SessionPool, ChatTurnLease).

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
  const text = Array.isArray(data)
    ? Buffer.concat(data).toString('utf8')
    : Buffer.from(data as ArrayBuffer).toString('utf8');
  const value = parseJsonOrUndefined(text);
  return isJsonObject(value) ? { ok: true, value } : { ok: false, reason: 'not_json' };
}

/**
 * Client frames are masked with a zero key, which `ws` recognises and then skips the XOR pass
 * over every payload byte (a whole agent history per turn) and the random key. Masking protects
 * browsers' shared proxies from script-chosen bytes (RFC 6455 §10.3); this client's bytes are
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

/** The turn currently using the socket. */
interface ActiveTurn {
  readonly queue: FrameQueue<UpstreamFrame>;
  readonly record: TurnRecord;
  readonly detach: () => void;
}

/**
 * One upstream WebSocket (provider_a.md §4.1) that can carry several turns one after another:
 * each turn sends one `response.create` text frame and reads one JSON event per text frame until
 * its terminal event. A session never carries two turns at once. Closing sends a close frame
 * (1000) and drops the socket after a 1 s grace.
 */
export class WsSession {
  private turn?: ActiveTurn;
  private graceTimer?: NodeJS.Timeout;
  private readonly closeListeners = new Set<() => void>();
  /** The largest message the server said it reads (`x-codex-websocket-max-message-bytes`), if it said. */
  readonly maxMessageBytes: number | undefined;

  private constructor(
    private readonly socket: WebSocket,
    /** Response headers of the upgrade (lower-case names), for rate-limit telemetry. */
    readonly responseHeaders: Readonly<Record<string, string>>,
  ) {
    this.maxMessageBytes = byteLimit(responseHeaders[MAX_MESSAGE_BYTES_HEADER]);
    socket.on('message', (data, isBinary) => this.onFrame(parseFrame(data, isBinary)));
    socket.on('close', () => {
      clearTimeout(this.graceTimer);
      this.turn?.queue.end();
      for (const listener of this.closeListeners) listener();
    });
  }

  /**
   * Opens a fresh connection without permessage-deflate. Rejects with an `UpstreamRejection`
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
      socket.on('upgrade', (response) => (responseHeaders = lowerCaseHeaders(response.headers)));
      socket.on('unexpected-response', (_request, response) => {
        const status = response.statusCode ?? 502;
        const rejectedHeaders = lowerCaseHeaders(response.headers);
        void readIncomingCapped(response, ERROR_BODY_MAX_BYTES).then((text) => {
          settle(() => reject(new UpstreamRejection(status, rejectedHeaders, parseJsonOrUndefined(text))));
          socket.terminate();
        });
      });
      socket.on('error', (error) => settle(() => reject(connectionFailure('websocket connection failed', error))));
      socket.once('close', () => settle(() => reject(connectionFailure('websocket closed during the handshake'))));
      socket.once('open', () => settle(() => resolve(new WsSession(socket, responseHeaders))));
    });
  }

  /** Open and not carrying a turn: may take the next one. */
  get idle(): boolean {
    return this.socket.readyState === WebSocket.OPEN && this.turn === undefined;
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** Called once when the socket closes, whoever closed it. */
  onClose(listener: () => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /**
   * Sends one `response.create` frame and returns that turn's events. The signal aborting before
   * the turn completed closes the socket at once (the upstream stops generating); after
   * `response.completed` it only detaches. `close()` of the returned connection ends the turn:
   * `release` decides whether the socket is kept (it gets the turn's record) — without one, or
   * when the turn did not complete, the socket is closed. Throws `FrameTooLarge`, sending
   * nothing, when the frame exceeds the server's announced message limit.
   */
  send(
    frame: JsonObject,
    signal: AbortSignal,
    release?: (session: WsSession, record: TurnRecord) => void,
  ): UpstreamConnection {
    if (this.turn) throw new Error('a provider_a WebSocket session carries one turn at a time');
    const text = JSON.stringify(frame);
    if (this.maxMessageBytes !== undefined && text.length * 3 > this.maxMessageBytes) {
      // UTF-16 length × 3 bounds the UTF-8 size: the exact count only when it could matter.
      const bytes = Buffer.byteLength(text);
      if (bytes > this.maxMessageBytes) throw new FrameTooLarge(bytes, this.maxMessageBytes);
    }
    const record: TurnRecord = { completed: false, outputItems: [] };
    const queue = new FrameQueue<UpstreamFrame>(
      (paused) => (paused ? this.socket.pause() : this.socket.resume()),
      64,
      () => undefined,
    );
    const onAbort = () => {
      if (record.completed) return;
      this.close();
      queue.fail(signal.reason);
    };
    const detach = () => signal.removeEventListener('abort', onAbort);
    this.turn = { queue, record, detach };
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener('abort', onAbort, { once: true });
      this.socket.send(text);
    }
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      detach();
      if (this.turn?.queue === queue) this.turn = undefined;
      if (release && record.completed && this.open) {
        this.socket.resume();
        release(this, record);
      } else this.close();
    };
    return { responseHeaders: this.responseHeaders, frames: queue, close: end, poll: () => queue.poll() };
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
    turn.queue.push(frame);
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

/**
 * A push-to-pull bridge for WebSocket frames: the socket pushes, the turn pulls with
 * `for await`. When more than `highWaterMark` frames wait, `onPressure(true)` pauses the socket
 * so a slow client slows the upstream reader instead of growing memory; draining resumes it.
 * Hand-written because `events.on()` has no end/failure signalling tied to our close semantics.
 */
export class FrameQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter?: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void };
  private ended = false;
  private failure?: { error: unknown };
  private paused = false;

  constructor(
    private readonly onPressure: (paused: boolean) => void = () => undefined,
    private readonly highWaterMark = 64,
    private readonly onReturn: () => void = () => undefined,
  ) {}

  push(item: T): void {
    if (this.ended || this.failure) return;
    if (this.waiter) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve({ value: item, done: false });
      return;
    }
    this.items.push(item);
    if (!this.paused && this.items.length >= this.highWaterMark) {
      this.paused = true;
      this.onPressure(true);
    }
  }

  /** No more items; waiting and later pulls see the end after the buffered items. */
  end(): void {
    if (this.ended || this.failure) return;
    this.ended = true;
    this.settleWaiter();
  }

  /** Pulls reject with `error` at once (buffered items are discarded): used on abort. */
  fail(error: unknown): void {
    if (this.ended || this.failure) return;
    this.failure = { error };
    this.items.length = 0;
    this.settleWaiter();
  }

  private settleWaiter(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = undefined;
    if (this.failure) waiter.reject(this.failure.error);
    else waiter.resolve({ value: undefined, done: true });
  }

  /**
   * The next buffered item without waiting, or `undefined` when none is buffered (also after a
   * failure or the end): lets a reader take a burst of frames that already arrived without a
   * promise per frame.
   */
  poll(): T | undefined {
    if (this.failure || this.items.length === 0) return undefined;
    const value = this.items.shift() as T;
    if (this.paused && this.items.length < this.highWaterMark / 2) {
      this.paused = false;
      this.onPressure(false);
    }
    return value;
  }

  private next(): Promise<IteratorResult<T>> {
    if (this.failure) return Promise.reject(this.failure.error);
    const value = this.poll();
    if (value !== undefined) return Promise.resolve({ value, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => this.next(),
      return: async () => {
        this.onReturn();
        this.end();
        return { value: undefined, done: true };
      },
    };
  }
}

export interface SessionLimits {
  /** PROVIDER_A_MAX_KEPT_SESSIONS; 0 = never keep a connection. */
  readonly maxKept: number;
  /** PROVIDER_A_SESSION_IDLE_TIMEOUT: a kept connection unused this long is closed. */
  readonly idleTimeoutMs: number;
}

/** Where the pool reports (the gateway's metrics; nothing in unit tests). */
export interface SessionObserver {
  keptChanged(count: number): void;
  turnReused(): void;
  turnIncremental(): void;
  chainFallback(): void;
}

/** What one chat turn did with the upstream connection (fields of the turn's `chat_completion` log line). */
export interface SessionUse {
  /** The turn ran on a connection kept from an earlier turn of the same chat. */
  reused: boolean;
  /** Sent with `previous_response_id` and only the new items. */
  incremental: boolean;
  /** A chain error or a dead kept connection made it send again in full on a fresh connection. */
  fallback: boolean;
  /** Input items in the frame that was sent last, and in the full translated input. */
  itemsSent: number;
  items: number;
}

interface KeptSession {
  readonly chat: string;
  readonly session: WsSession;
  /** The handshake headers that do not change per turn: a connection is reused only for the same login and mode. */
  readonly handshake: string;
  readonly chain?: ChainState;
  stopWatching?: () => void;
}

/** A kept connection taken for a turn, with the items to send when the turn continues its chain. */
export interface TakenSession {
  readonly entry: KeptSession;
  readonly continuation?: JsonObject[];
}

/** Headers sent anew by every faithful turn; the rest identify what a connection was opened for. */
const PER_TURN_HEADERS = new Set(['x-client-request-id', 'x-codex-turn-metadata']);

/** The handshake headers as one string (NUL cannot occur in a header), built per turn without an array per header. */
function handshakeKey(headers: Record<string, string>): string {
  let key = '';
  for (const name in headers) {
    if (!PER_TURN_HEADERS.has(name.toLowerCase())) key += `${name}\0${headers[name]}\0`;
  }
  return key;
}

/**
 * Upstream WebSocket connections kept per chat between turns (Responses WebSocket mode: one
 * persistent connection per conversation). A connection is kept only after a turn completed,
 * is taken out while a turn uses it (so two turns never share one), and is closed when idle for
 * `idleTimeoutMs`, when more than `maxKept` are kept (least recently used first), or at
 * shutdown. A chat that runs several turns at once keeps the connection of each. Built on
 * lru-cache, which already does the bounded LRU and per-entry TTL.
 */
export class SessionPool {
  private readonly kept?: LRUCache<number, KeptSession>;
  /** Ids of the kept connections of each chat, oldest first. */
  private readonly byChat = new Map<string, Set<number>>();
  private serial = 0;

  constructor(
    limits: SessionLimits,
    private readonly observer?: SessionObserver,
  ) {
    if (limits.maxKept === 0) return;
    this.kept = new LRUCache<number, KeptSession>({
      max: limits.maxKept,
      ttl: Math.max(1, limits.idleTimeoutMs),
      ttlAutopurge: true,
      updateAgeOnGet: false,
      disposeAfter: (entry, id, reason) => {
        const ids = this.byChat.get(entry.chat);
        ids?.delete(id);
        if (ids?.size === 0) this.byChat.delete(entry.chat);
        entry.stopWatching?.();
        // `delete` is a turn taking it (or shutdown, which closes first); anything else drops it.
        if (reason !== 'delete') entry.session.close();
        this.observer?.keptChanged(this.kept?.size ?? 0);
      },
    });
  }

  /** A turn-scoped opener for one chat: reuses, continues or opens the chat's connection. */
  lease(chat: string, customNames: ReadonlySet<string>): ChatTurnLease {
    return new ChatTurnLease(this, chat, customNames, this.observer);
  }

  /** Number of connections kept now. */
  get size(): number {
    return this.kept?.size ?? 0;
  }

  /**
   * Takes one of the chat's kept connections out of the pool: one whose chain `body` continues,
   * else the most recently kept one. Only open, idle connections opened with the same handshake.
   */
  take(chat: string, handshake: string, body: JsonObject, shapeOf: () => string): TakenSession | undefined {
    const ids = this.byChat.get(chat);
    if (!this.kept || !ids) return undefined;
    const shape = shapeOf();
    let chosen: TakenSession | undefined;
    let chosenId: number | undefined;
    for (const id of ids) {
      const entry = this.kept.peek(id);
      if (!entry || !entry.session.idle || entry.handshake !== handshake) continue;
      const continuation = continuationItems(entry.chain, body, shape);
      chosen = { entry, continuation };
      chosenId = id;
      if (continuation) break;
    }
    if (chosenId !== undefined) this.kept.delete(chosenId);
    return chosen;
  }

  /** Keeps a connection whose turn completed; without room for it (max 0) it is closed. */
  keep(entry: KeptSession): void {
    if (!this.kept || !entry.session.idle) {
      entry.session.close();
      return;
    }
    const id = ++this.serial;
    // A connection the server closes while kept leaves the pool at once.
    entry.stopWatching = entry.session.onClose(() => this.kept?.delete(id));
    this.kept.set(id, entry);
    const ids = this.byChat.get(entry.chat) ?? new Set<number>();
    ids.add(id);
    this.byChat.set(entry.chat, ids);
    this.observer?.keptChanged(this.kept.size);
  }

  /** Closes every kept connection (application shutdown). */
  closeAll(): void {
    if (!this.kept) return;
    for (const entry of this.kept.values()) entry.session.close();
    this.kept.clear();
  }
}

type FirstFrame =
  { readonly kind: 'frame'; readonly connection: UpstreamConnection } | { readonly kind: 'dead' | 'chain_error' };

/**
 * The upstream side of one chat turn over WebSocket. Its `open` is the turn's `OpenConnection`
 * (called once per attempt): it takes the chat's kept connection when there is one, sends only
 * the new items with `previous_response_id` when the translated input extends the chain that
 * connection holds, and falls back once, transparently, to a full send on a fresh connection
 * when the kept one turns out dead or the server no longer knows the chain (both before any
 * event reached the turn). A turn that completes hands its connection back to the pool.
 */
export class ChatTurnLease {
  readonly use: SessionUse = { reused: false, incremental: false, fallback: false, itemsSent: 0, items: 0 };

  constructor(
    private readonly pool: SessionPool,
    private readonly chat: string,
    private readonly customNames: ReadonlySet<string>,
    private readonly observer?: SessionObserver,
  ) {}

  readonly open = async (input: AttemptInput): Promise<UpstreamConnection> => {
    const handshake = handshakeKey(input.headers);
    // Serialized at most once per attempt, when a kept chain is compared or a new one stored.
    let shape: string | undefined;
    const shapeOf = () => (shape ??= requestShape(input.body));
    const items = Array.isArray(input.body.input) ? input.body.input.length : 0;
    Object.assign(this.use, { reused: false, incremental: false, fallback: false, itemsSent: items, items });
    const release = (session: WsSession, record: TurnRecord) =>
      this.pool.keep({
        chat: this.chat,
        session,
        handshake,
        chain: chainAfterTurn(input.body, record.responseId, record.outputItems, this.customNames, shapeOf()),
      });

    const taken = this.pool.take(this.chat, handshake, input.body, shapeOf);
    if (taken) {
      const { entry: kept, continuation } = taken;
      this.use.reused = true;
      this.observer?.turnReused();
      const body =
        continuation && kept.chain ? chainedBody(input.body, kept.chain.responseId, continuation) : input.body;
      if (continuation) {
        this.use.incremental = true;
        this.use.itemsSent = continuation.length;
        this.observer?.turnIncremental();
      }
      let sent: UpstreamConnection;
      try {
        sent = kept.session.send(websocketFrame(body, Date.now()), input.signal, release);
      } catch (error) {
        // Too large even as a continuation: the whole request goes over HTTP instead.
        Object.assign(this.use, { reused: false, incremental: false, itemsSent: items });
        return postInstead(kept.session, input, error);
      }
      const first = await firstFrame(sent);
      if (first.kind === 'frame') return first.connection;
      Object.assign(this.use, { reused: false, incremental: false, fallback: true, itemsSent: items });
      this.observer?.chainFallback();
    }
    const session = await WsSession.connect(input.url, input.headers, input.signal, input.proxy);
    try {
      return session.send(websocketFrame(input.body, Date.now()), input.signal, release);
    } catch (error) {
      return postInstead(session, input, error);
    }
  };
}

/**
 * After `send` threw: when the frame was larger than the server's announced
 * `x-codex-websocket-max-message-bytes`, closes that connection and sends the same request over
 * HTTP + SSE, as Codex CLI 0.171.0 does (docs/providers.md "WebSocket message limit"). Any other
 * error, or a request without an HTTP form, is thrown on.
 */
export function postInstead(session: WsSession, input: AttemptInput, error: unknown): Promise<UpstreamConnection> {
  if (!(error instanceof FrameTooLarge) || !input.overHttp) throw error;
  session.close();
  input.overHttp.onFallback?.(error.frameBytes, error.limitBytes);
  const { headers, body } = input.overHttp.request();
  return openSseConnection({ url: httpUrlFor(input.url), headers, body, signal: input.signal, proxy: input.proxy });
}

/**
 * Waits for the turn's first event on a reused connection: none (the socket closed under us)
 * or a chain error means the turn can still be sent again elsewhere, since nothing reached the
 * client. Otherwise the connection is returned with that event still to be read.
 */
async function firstFrame(connection: UpstreamConnection): Promise<FirstFrame> {
  const first = await connection.frames[Symbol.asyncIterator]().next();
  if (first.done || (first.value.ok && isChainError(first.value.value))) {
    connection.close();
    return { kind: first.done ? 'dead' : 'chain_error' };
  }
  let head: UpstreamFrame | undefined = first.value;
  const takeHead = () => {
    const value = head;
    head = undefined;
    return value;
  };
  return {
    kind: 'frame',
    connection: {
      ...connection,
      frames: prepend(takeHead, connection.frames),
      poll: () => takeHead() ?? connection.poll?.(),
    },
  };
}

/** `rest`, after the value `head()` gives first (when it still has one). */
function prepend(
  head: () => UpstreamFrame | undefined,
  rest: AsyncIterable<UpstreamFrame>,
): AsyncIterable<UpstreamFrame> {
  return {
    [Symbol.asyncIterator]: () => {
      const tail = rest[Symbol.asyncIterator]();
      return {
        next: () => {
          const value = head();
          return value === undefined ? tail.next() : Promise.resolve({ value, done: false });
        },
        return: () => tail.return?.() ?? Promise.resolve({ value: undefined, done: true }),
      };
    },
  };
}
