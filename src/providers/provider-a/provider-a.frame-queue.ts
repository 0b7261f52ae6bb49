/**
 * A push-to-pull bridge for WebSocket frames: the socket pushes, the turn pulls with
 * `for await`. When more than `highWaterMark` frames wait, `onPressure(true)` pauses the socket
 * so a slow client slows the upstream reader instead of growing memory; draining resumes it.
 * Hand-written because `events.on()` has no end/failure signalling tied to our close semantics.
 */
export class FrameQueue<T> implements AsyncIterable<T>, AsyncIterator<T> {
  private readonly items: T[] = [];
  private resolveWaiter?: (result: IteratorResult<T>) => void;
  private rejectWaiter?: (error: unknown) => void;
  private ended = false;
  private failure?: { error: unknown };
  private paused = false;

  /** A subclass may override `pressure` and `returned` instead of passing functions (no closures then). */
  constructor(
    private readonly onPressure?: (paused: boolean) => void,
    private readonly highWaterMark = 64,
    private readonly onReturn?: () => void,
  ) {}

  /** More than the high-water mark wait (`true`), or half of it drained again (`false`). */
  protected pressure(paused: boolean): void {
    this.onPressure?.(paused);
  }

  /** The reader stopped (`return()`). */
  protected returned(): void {
    this.onReturn?.();
  }

  push(item: T): void {
    if (this.ended || this.failure) return;
    const resolve = this.resolveWaiter;
    if (resolve) {
      this.resolveWaiter = this.rejectWaiter = undefined;
      resolve({ value: item, done: false });
      return;
    }
    this.items.push(item);
    if (!this.paused && this.items.length >= this.highWaterMark) {
      this.paused = true;
      this.pressure(true);
    }
  }

  /** Puts `item` back in front of the buffered ones (a frame read ahead to look at it); nothing after a failure or the end. */
  unshift(item: T): void {
    if (this.ended || this.failure) return;
    this.items.unshift(item);
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
    const resolve = this.resolveWaiter;
    const reject = this.rejectWaiter;
    if (!resolve || !reject) return;
    this.resolveWaiter = this.rejectWaiter = undefined;
    if (this.failure) reject(this.failure.error);
    else resolve({ value: undefined, done: true });
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
      this.pressure(false);
    }
    return value;
  }

  /** The next item: at once when one is buffered, else once one is pushed, the end comes or a failure. */
  next(): Promise<IteratorResult<T>> {
    if (this.failure) return Promise.reject(this.failure.error);
    const value = this.poll();
    if (value !== undefined) return Promise.resolve({ value, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => this.listen(resolve, reject));
  }

  /**
   * `next()` without its promise: `resolve` or `reject` is called once, at once when an item, the
   * end or a failure is there, else when it comes. One waiter at a time (a later one replaces it).
   */
  listen(resolve: (result: IteratorResult<T>) => void, reject: (error: unknown) => void): void {
    if (this.failure) return reject(this.failure.error);
    const value = this.poll();
    if (value !== undefined) return resolve({ value, done: false });
    if (this.ended) return resolve({ value: undefined, done: true });
    this.resolveWaiter = resolve;
    this.rejectWaiter = reject;
  }

  /** The reader stopped: no more items. */
  return(): Promise<IteratorResult<T>> {
    this.returned();
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** The queue is its own iterator: one reader, and no iterator object or closures per queue. */
  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this;
  }
}
