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
