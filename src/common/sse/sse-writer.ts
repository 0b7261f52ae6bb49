import type { ServerResponse } from 'node:http';
import type { KeepAliveStream, KeepAliveSweep } from './keep-alive-sweep';

/**
 * Server-sent events over a raw Node/Express response (docs/design/code-shape.md §5): a stream is
 * held (`hold`) from the upstream's acceptance until its answer shows something, and its headers
 * are committed only by `open(first)` then, or by the first keep-alive comment a silence needs
 * before it, so a failure until then stays a plain JSON error with its status; and every write
 * honours backpressure: when the socket buffer is full, `send()` waits for 'drain' (or 'close'),
 * so a slow client slows the upstream reader instead of growing memory. Hand-written: Nest's @Sse
 * adds id lines, a leading newline and its own error frames that the OpenAI wire format does not
 * have (docs/design/code-shape.md B.5 items 5–7).
 */
export class SseWriter implements KeepAliveStream {
  /** Something went out since the keep-alive sweep last looked. */
  private wrote = false;
  /** Consecutive sweep rounds in which a write waited and the socket handed the client no byte. */
  private stalledRounds = 0;
  private sentAtLastRound = 0;
  /** In the keep-alive sweep (`hold`, or `open` without it). */
  private held = false;

  constructor(
    private readonly response: ServerResponse,
    private readonly keepAlive: KeepAliveSweep,
  ) {}

  get isClosed(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  /**
   * Commits the headers together with the stream's first event (the role chunk), in one write: a
   * separate flush of the headers would cost every stream a second socket write. Resolves like
   * `sendJson`.
   */
  open(first: unknown): boolean | Promise<boolean> {
    this.hold();
    // A held answer may have had to commit its headers with a keep-alive comment already.
    if (!this.response.headersSent) this.setHeaders();
    return this.sendJson(first);
  }

  /**
   * Keeps the connection of an accepted answer alive before any of it is written: one that has
   * shown nothing yet, or one the gateway holds back (a `tool_choice` or `response_format` it
   * enforces, asked again until it passes). The stream joins the keep-alive sweep with nothing
   * sent; a round that finds it silent for a whole round commits the headers with the comment,
   * the first moment a byte is needed. Until then a refusal or failure is still a JSON error with
   * its status; after it, `committed` says it goes in-band. Holding again does nothing.
   */
  hold(): void {
    if (this.held) return;
    this.held = true;
    // Counted as a write: the round that comes first only clears it, so only a whole silent round commits.
    this.wrote = true;
    this.joinSweep();
  }

  /** The headers went out (a held answer's keep-alive comment, or `open`): a failure is written in the stream. */
  get committed(): boolean {
    return this.response.headersSent;
  }

  /**
   * Writes one `data:` event: `true` at once when the socket took it, otherwise a promise that
   * resolves once it drained (`true`) or the client left (`false`). Synchronous in the common
   * case, so a stream of thousands of chunks does not make a promise per chunk.
   */
  sendJson(value: unknown): boolean | Promise<boolean> {
    return this.sendJsonText(JSON.stringify(value));
  }

  /** `sendJson` for a value already serialized (one JSON text, no newline in it). */
  sendJsonText(json: string): boolean | Promise<boolean> {
    return this.write(`data: ${json}\n\n`);
  }

  sendDone(): boolean | Promise<boolean> {
    return this.write('data: [DONE]\n\n');
  }

  end(): void {
    this.stopKeepAlive();
    if (!this.isClosed) this.response.end();
  }

  /** The response closed or ended, or a held answer is refused as JSON (`hold`): no more keep-alive comments. */
  stopKeepAlive(): void {
    this.keepAlive.delete(this);
  }

  /**
   * The sweep's round: after a whole round without a write, an SSE comment (ignored by clients)
   * proves the connection alive, so no silence outlasts KEEP_ALIVE_INTERVAL_MS.
   */
  sweep(stalledRoundsLimit: number): void {
    if (this.isClosed) {
      this.stopKeepAlive();
      return;
    }
    if (this.response.writableNeedDrain) {
      // A write waits for the client: a comment would only queue behind what it has not read. A
      // client that took no byte for the idle bound is gone; ending the response frees the turn
      // (its 'close' is the client leaving), which a write waiting on it would otherwise hold.
      // `bytesWritten` counts what the socket still buffers too: what left it is the difference.
      const socket = this.response.socket;
      const sent = socket ? socket.bytesWritten - socket.writableLength : 0;
      this.stalledRounds = sent === this.sentAtLastRound ? this.stalledRounds + 1 : 0;
      this.sentAtLastRound = sent;
      if (this.stalledRounds >= stalledRoundsLimit) this.response.destroy();
      return;
    }
    this.stalledRounds = 0;
    if (this.wrote) this.wrote = false;
    else {
      // A held answer's headers go out with the first comment it needs (`hold`).
      if (!this.response.headersSent) this.setHeaders();
      this.response.write(': keep-alive\n\n');
    }
  }

  private setHeaders(): void {
    this.response.statusCode = 200;
    this.response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    // no-transform and X-Accel-Buffering stop proxies (and the compression middleware) from buffering.
    this.response.setHeader('Cache-Control', 'no-cache, no-transform');
    // Unless the connection is to close after this answer (a draining gateway says so).
    if (!this.response.hasHeader('Connection')) this.response.setHeader('Connection', 'keep-alive');
    this.response.setHeader('X-Accel-Buffering', 'no');
  }

  private joinSweep(): void {
    // A client that leaves ends the stream without end(); it leaves the keep-alive sweep with it.
    (this.response as ResponseWithWriter)[WRITER] = this;
    this.response.once('close', stopKeepAlive);
    this.keepAlive.add(this);
  }

  private write(text: string): boolean | Promise<boolean> {
    if (this.isClosed) return false;
    this.wrote = true;
    if (this.response.write(text)) return true;
    return new Promise<boolean>((resolve) => {
      const done = (open: boolean) => {
        this.response.off('drain', onDrain);
        this.response.off('close', onClose);
        resolve(open);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      this.response.once('drain', onDrain);
      this.response.once('close', onClose);
    });
  }
}

// The writer's response listener is a module function given the writer: no closure per stream.
const WRITER = Symbol('sseWriter');
type ResponseWithWriter = ServerResponse & { [WRITER]?: SseWriter };

/** The response's 'close' listener (`this` is the response). */
function stopKeepAlive(this: ResponseWithWriter): void {
  this[WRITER]?.stopKeepAlive();
}
