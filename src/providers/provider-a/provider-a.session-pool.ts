import { LRUCache } from 'lru-cache';
import { growingLru } from '../../common/growing-lru';
import type { JsonObject } from '../../common/json';
import { isNever } from '../../common/async/timer-range';
import type { GatewayError } from '../../core/gateway.error';
import type { ChainState } from './provider-a.chain';
import {
  chainAfterTurn,
  chainedBody,
  chainErrorCode,
  CONNECTION_LIMIT_CODE,
  continuationItems,
  isChainErrorCode,
  requestShape,
} from './provider-a.chain';
import { staleSessionFailure } from './provider-a.errors';
import { postInstead } from './provider-a.http-fallback';
import { websocketFrame } from './provider-a.request';
import type { AttemptInput, UpstreamConnection, UpstreamFrame } from './provider-a.transport';
import type { SessionKeeper, TurnRecord, WsTurn } from './provider-a.ws-session';
import { WsSession } from './provider-a.ws-session';
import type { ConnectionLease } from './provider-a.upstream';
import type { CallContext } from '../shared/provider-adapter';

// The pool that keeps each chat's WebSocket connections between turns and continues their response
// chains (SessionPool), and the lease one turn takes from it (ChatTurnLease). They stay together:
// the pool hands out leases and a lease gives its connection back to the pool.

export interface SessionLimits {
  /** PROVIDER_A_MAX_KEPT_SESSIONS; 0 = never keep a connection. */
  readonly maxKept: number;
  /** PROVIDER_A_SESSION_IDLE_TIMEOUT: a kept connection unused this long is closed (never, beyond a timer's range). */
  readonly idleTimeoutMs: number;
}

/**
 * How a kept connection is checked before a turn reuses it (docs/providers.md "Upstream sessions
 * per chat"). Fixed values, not settings: they trade a round trip against a turn swallowed by a
 * dead connection, which no deployment needs to tune. The pool holds its own copy, so a spec may
 * shorten it on a running gateway, as specs move a gateway's clocks.
 */
export interface KeptConnectionCheck {
  /**
   * A connection kept at least this long is pinged first. One kept for less (an agent's next turn
   * after a tool call, a person's quick reply) is not: no round trip on those paths, and NAT
   * entries and load balancers forget idle connections after minutes (four at the shortest common
   * defaults), not within one.
   */
  pingAfterIdleMs: number;
  /** Longest wait for the pong; none by then and the connection is dropped for a fresh one. */
  pongTimeoutMs: number;
}

export const KEPT_CONNECTION_CHECK: Readonly<KeptConnectionCheck> = Object.freeze({
  pingAfterIdleMs: 60_000,
  pongTimeoutMs: 2_000,
});

/**
 * Where the pool reports (the gateway's metrics; nothing in unit tests). The turn counts come once
 * per turn, when it is over (`ChatTurnLease.turnClosed`), by its final `SessionUse`.
 */
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

/** A turn's `SessionUse` as fields of its `chat_completion` log line. */
export function sessionUseFields(use: SessionUse): Record<string, number | boolean> {
  return {
    session_reused: use.reused,
    incremental: use.incremental,
    chain_fallback: use.fallback,
    input_items_sent: use.itemsSent,
  };
}

/** What takes fields for the turn's `chat_completion` log line: its `CallContext`. */
type TurnNotes = Pick<CallContext, 'note'>;

interface KeptSession {
  readonly chat: string;
  readonly session: WsSession;
  /** The handshake headers that do not change per turn: a connection is reused only for the same login and mode. */
  readonly handshake: string;
  readonly chain?: ChainState;
  stopWatching?: () => void;
  /** `performance.now()` when it was kept. */
  keptAt?: number;
}

/** A kept connection taken for a turn, with the items to send when the turn continues its chain. */
export interface TakenSession {
  readonly entry: KeptSession;
  readonly continuation?: JsonObject[];
  /** It lay idle long enough to be pinged before use (`KeptConnectionCheck`). */
  readonly ping: boolean;
}

/** Headers sent anew by every faithful turn; the rest identify what a connection was opened for. */
const PER_TURN_HEADERS = new Set(['x-client-request-id', 'x-codex-turn-metadata']);

/**
 * The handshake headers as one string (NUL cannot occur in a header). Joined from one array, so
 * the key a turn and a kept connection hold is one flat string, not a chain of a concatenation
 * per header.
 */
function handshakeKey(headers: Record<string, string>): string {
  const parts: string[] = [];
  for (const name in headers) {
    if (!PER_TURN_HEADERS.has(name.toLowerCase())) parts.push(name, headers[name]);
  }
  return parts.join('\0');
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
  /** When a kept connection is pinged before reuse, and how long its pong is waited for. */
  readonly check: KeptConnectionCheck;

  constructor(
    limits: SessionLimits,
    private readonly observer?: SessionObserver,
    check: Readonly<KeptConnectionCheck> = KEPT_CONNECTION_CHECK,
  ) {
    this.check = { ...check };
    if (limits.maxKept === 0) return;
    this.kept = new LRUCache<number, KeptSession>({
      ...growingLru(limits.maxKept),
      // lru-cache arms its purge timer at ttl + 1 ms; an idle timeout longer than a timer holds is
      // none (ttl 0: no expiry), so a kept connection is closed only by the cap or at shutdown.
      ttl: isNever(limits.idleTimeoutMs + 1) ? 0 : Math.max(1, limits.idleTimeoutMs),
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
  lease(chat: string, customNames: ReadonlySet<string>, notes?: TurnNotes): ChatTurnLease {
    return new ChatTurnLease(this, chat, customNames, this.observer, notes);
  }

  /** Number of connections kept now. */
  get size(): number {
    return this.kept?.size ?? 0;
  }

  /**
   * Takes one of the chat's kept connections out of the pool: one whose chain `body` continues,
   * else the most recently kept one. Only open, idle connections opened with the same handshake;
   * one kept longer than `check.pingAfterIdleMs` is to be pinged before use.
   */
  take(chat: string, handshake: string, body: JsonObject, shapeOf: () => string): TakenSession | undefined {
    const ids = this.byChat.get(chat);
    if (!this.kept || !ids) return undefined;
    const shape = shapeOf();
    let chosen: Omit<TakenSession, 'ping'> | undefined;
    let chosenId: number | undefined;
    for (const id of ids) {
      const entry = this.kept.peek(id);
      if (!entry || !entry.session.idle || entry.handshake !== handshake) continue;
      const continuation = continuationItems(entry.chain, body, shape);
      chosen = { entry, continuation };
      chosenId = id;
      if (continuation) break;
    }
    if (!chosen) return undefined;
    this.kept.delete(chosenId!);
    const idleMs = performance.now() - (chosen.entry.keptAt ?? 0);
    return { ...chosen, ping: idleMs >= this.check.pingAfterIdleMs };
  }

  /** Keeps a connection whose turn completed; without room for it (max 0) it is closed. */
  keep(entry: KeptSession): void {
    if (!this.kept || !entry.session.idle) {
      entry.session.close();
      return;
    }
    const id = ++this.serial;
    entry.keptAt = performance.now();
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

/**
 * The upstream side of one chat turn over WebSocket. Its `open` is the turn's `OpenConnection`
 * (called once per attempt): the turn's first attempt takes the chat's kept connection when there
 * is one and sends only the new items with `previous_response_id` when the translated input
 * extends the chain that connection holds; every other attempt opens a fresh connection and sends
 * in full. A kept connection idle a minute or more is pinged first; one that turns out stale (no
 * pong, closed, or the server no longer knows the chain, read past its `codex.*` telemetry, or a
 * chain error before any output) fails that attempt before anything reached the turn, and `reopenAfter`
 * has the turn runner open again at once, outside the retry budget: the runner is the one loop
 * that sends a turn again (docs/architecture.md "The family contract"). A turn that completes
 * hands its connection back to the pool. `use` is the turn's last attempt's, counted once the
 * turn is over.
 */
export class ChatTurnLease implements ConnectionLease, SessionKeeper {
  readonly use: SessionUse = { reused: false, incremental: false, fallback: false, itemsSent: 0, items: 0 };
  private attempts = 0;
  /** The failure of the kept connection found stale, once it was: the turn's later attempts are its fallback. */
  private stale?: GatewayError;
  /** The attempt being opened (attempts run one after another): what `keep` files its connection under. */
  private body: JsonObject = {};
  private handshake = '';
  /** The attempt's request shape, serialized at most once per attempt (when a chain is compared or stored). */
  private shape?: string;

  constructor(
    private readonly pool: SessionPool,
    private readonly chat: string,
    private readonly customNames: ReadonlySet<string>,
    private readonly observer?: SessionObserver,
    private readonly notes?: TurnNotes,
  ) {}

  async open(input: AttemptInput): Promise<UpstreamConnection> {
    this.body = input.body;
    this.handshake = handshakeKey(input.headers);
    this.shape = undefined;
    const items = Array.isArray(input.body.input) ? input.body.input.length : 0;
    // A turn that fell back once stays one: every later attempt is its full send elsewhere.
    const fallback = this.use.fallback || this.stale !== undefined;
    Object.assign(this.use, { reused: false, incremental: false, fallback, itemsSent: items, items });
    // A later attempt may open after the turn was accepted, its log fields already noted: noted
    // again (it is never a reuse, so they are final here).
    if (this.attempts > 0) this.notes?.note?.(sessionUseFields(this.use));

    let taken =
      this.attempts++ === 0 ? this.pool.take(this.chat, this.handshake, input.body, () => this.shapeOf()) : undefined;
    if (taken?.ping && !(await taken.entry.session.answersPing(this.pool.check.pongTimeoutMs, input.signal))) {
      // Idle for a while and no pong: the connection died without a close reaching us (the check
      // closed it). Nothing was sent on it: this attempt opens a fresh one and sends in full.
      this.use.fallback = true;
      taken = undefined;
    }
    if (taken) {
      const { entry: kept, continuation } = taken;
      this.use.reused = true;
      const body =
        continuation && kept.chain ? chainedBody(input.body, kept.chain.responseId, continuation) : input.body;
      if (continuation) {
        this.use.incremental = true;
        this.use.itemsSent = continuation.length;
      }
      let sent: WsTurn;
      try {
        sent = kept.session.send(websocketFrame(body, Date.now()), input.signal, this);
      } catch (error) {
        // Too large even as a continuation: the whole request goes over HTTP instead.
        Object.assign(this.use, { reused: false, incremental: false, itemsSent: items });
        return postInstead(kept.session, input, error);
      }
      const stale = await staleBeforeResponse(sent);
      if (stale === undefined) return sent;
      this.stale = stale;
      throw stale;
    }
    const session = await WsSession.connect(input.url, input.headers, input.signal, input.proxy);
    try {
      return session.send(websocketFrame(input.body, Date.now()), input.signal, this);
    } catch (error) {
      return postInstead(session, input, error);
    }
  }

  /** A turn that completed hands its connection back: kept for the chat, with the chain it now holds. */
  keep(session: WsSession, record: TurnRecord): void {
    this.pool.keep({
      chat: this.chat,
      session,
      handshake: this.handshake,
      chain: chainAfterTurn(this.body, record.responseId, record.outputItems, this.customNames, this.shapeOf()),
    });
  }

  /**
   * True for the failure of the kept connection found stale, and for one the server sent later
   * in the answer (after the response began, say) that blames the kept connection, not the
   * request: a chain error of a continuation, or the connection's limit
   * (`websocket_connection_limit_reached`) on any turn it carried after an earlier one. The runner
   * asks only while nothing reached the client, and sends the turn again now, in full, on a fresh
   * connection. Once per turn: that attempt is neither a reuse nor a continuation.
   */
  reopenAfter(failure: GatewayError): boolean {
    if (failure === this.stale) return true;
    if (this.stale !== undefined || !this.keptConnectionFailed(failure.upstream?.code)) return false;
    this.stale = failure;
    return true;
  }

  /**
   * The turn is over: counted once, by the attempt that opened last, as the turn's
   * `chat_completion` line says. Not while it runs: an attempt on the kept connection may still
   * fail and leave the turn to a fresh connection (stale, too large for the socket, a late
   * chain error, a retry).
   */
  turnClosed(): void {
    const { observer, use } = this;
    if (!observer) return;
    if (use.reused) observer.turnReused();
    if (use.incremental) observer.turnIncremental();
    if (use.fallback) observer.chainFallback();
  }

  /** Whether the upstream's error `code` says the attempt's kept connection, not its request, failed. */
  private keptConnectionFailed(code: string | undefined): boolean {
    if (code === CONNECTION_LIMIT_CODE) return this.use.reused;
    return this.use.incremental && isChainErrorCode(code);
  }

  private shapeOf(): string {
    return (this.shape ??= requestShape(this.body));
  }
}

/**
 * Reads a reused connection's answer up to its first event that is not telemetry (`codex.*`: the
 * backend may report rate limits or metadata before anything else). The socket closing first, or
 * a chain error, shows the connection stale, and the turn can still be sent again elsewhere,
 * since nothing reached the client: that failure is returned, and the telemetry read goes with
 * the connection (the fresh one's upgrade reports the plan anew). Otherwise every event read is
 * put back in front of the turn's frames, in order, to be read (and a plan report applied) as
 * though never looked at, and nothing is returned.
 */
async function staleBeforeResponse(turn: WsTurn): Promise<GatewayError | undefined> {
  let telemetry: UpstreamFrame[] | undefined;
  for (;;) {
    const next = await turn.next();
    const chainError = next.done || !next.value.ok ? undefined : chainErrorCode(next.value.value);
    if (next.done || chainError !== undefined) {
      turn.close();
      return staleSessionFailure(chainError);
    }
    if (!isTelemetry(next.value)) {
      turn.unshift(next.value);
      if (telemetry) for (let i = telemetry.length - 1; i >= 0; i--) turn.unshift(telemetry[i]);
      return undefined;
    }
    (telemetry ??= []).push(next.value);
  }
}

/** A `codex.*` event: about the plan or the request, not the response (docs/upstream/provider-a.md §9.1). */
function isTelemetry(frame: UpstreamFrame): boolean {
  return frame.ok && typeof frame.value.type === 'string' && frame.value.type.startsWith('codex.');
}
