import type { ServerResponse } from 'node:http';

/** Comment line written after this much silence so proxies and clients keep the stream open. */
export const KEEP_ALIVE_INTERVAL_MS = 15_000;

/**
 * Server-sent events over a raw Node/Express response (docs/design/code-shape.md §5): headers are committed only by
 * `open(first)` — called once the upstream accepted the turn, so earlier failures stay plain JSON
 * errors — and every write honours backpressure: when the socket buffer is full, `send()`
 * waits for 'drain' (or 'close'), so a slow client slows the upstream reader instead of
 * growing memory. Hand-written: Nest's @Sse adds id lines, a leading newline and its own error
 * frames that the OpenAI wire format does not have (docs/design/code-shape.md B.5 items 5–7).
 */
export class SseWriter {
  private keepAlive?: NodeJS.Timeout;

  constructor(private readonly response: ServerResponse) {}

  get isClosed(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  /**
   * Commits the headers together with the stream's first event, in one write: a stream always has
   * one to send at once (the role chunk), and a separate flush of the headers would cost every
   * stream a second socket write. Resolves like `sendJson`.
   */
  open(first: unknown): boolean | Promise<boolean> {
    this.response.statusCode = 200;
    this.response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    // no-transform and X-Accel-Buffering stop proxies (and the compression middleware) from buffering.
    this.response.setHeader('Cache-Control', 'no-cache, no-transform');
    this.response.setHeader('Connection', 'keep-alive');
    this.response.setHeader('X-Accel-Buffering', 'no');
    // A client that leaves ends the stream without end(); stop the keep-alive timer with it.
    (this.response as ResponseWithWriter)[WRITER] = this;
    this.response.once('close', stopKeepAlive);
    return this.sendJson(first);
  }

  /**
   * Writes one `data:` event: `true` at once when the socket took it, otherwise a promise that
   * resolves once it drained (`true`) or the client left (`false`). Synchronous in the common
   * case, so a stream of thousands of chunks does not make a promise per chunk.
   */
  sendJson(value: unknown): boolean | Promise<boolean> {
    return this.write(`data: ${JSON.stringify(value)}\n\n`);
  }

  sendDone(): boolean | Promise<boolean> {
    return this.write('data: [DONE]\n\n');
  }

  end(): void {
    clearTimeout(this.keepAlive);
    if (!this.isClosed) this.response.end();
  }

  /** The response closed: no more keep-alive comments. */
  stopKeepAlive(): void {
    clearTimeout(this.keepAlive);
  }

  /** The silence timer fired: an SSE comment, ignored by clients, proves the connection alive. */
  keepAliveDue(): void {
    if (this.isClosed) return;
    this.response.write(': keep-alive\n\n');
    this.keepAlive?.refresh();
  }

  private write(text: string): boolean | Promise<boolean> {
    if (this.isClosed) return false;
    this.armKeepAlive();
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

  /**
   * Restarts the silence timer. One timer per stream, re-armed with `refresh()`: a write per
   * chunk must not allocate and cancel a timer per chunk.
   */
  private armKeepAlive(): void {
    if (this.keepAlive) {
      this.keepAlive.refresh();
      return;
    }
    this.keepAlive = setTimeout(keepAliveDue, KEEP_ALIVE_INTERVAL_MS, this);
    this.keepAlive.unref();
  }
}

// The writer's response listener and timer callback are module functions given the writer: no
// closure per stream.
const WRITER = Symbol('sseWriter');
type ResponseWithWriter = ServerResponse & { [WRITER]?: SseWriter };

/** The response's 'close' listener (`this` is the response). */
function stopKeepAlive(this: ResponseWithWriter): void {
  this[WRITER]?.stopKeepAlive();
}

function keepAliveDue(writer: SseWriter): void {
  writer.keepAliveDue();
}
