import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { KEEP_ALIVE_INTERVAL_MS, KEEP_ALIVE_SWEEP_MS, KeepAliveSweep } from './keep-alive-sweep';
import { SseWriter } from './sse-writer';

/** The parts of a ServerResponse the writer uses, recording what reached the socket. */
class FakeResponse extends EventEmitter {
  statusCode = 0;
  headers: Record<string, string> = {};
  headersFlushed = false;
  headersSent = false;
  written: string[] = [];
  writableEnded = false;
  destroyed = false;
  writableNeedDrain = false;
  socket = { bytesWritten: 0, writableLength: 0 };
  /** What write() answers: false when the socket buffer is full (the writer then waits for 'drain'). */
  takesWrites = true;

  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }

  setHeader(name: string, value: string): void {
    // As Node does (ERR_HTTP_HEADERS_SENT).
    if (this.headersSent) throw new Error(`header ${name} set after the headers went out`);
    this.headers[name.toLowerCase()] = value;
  }

  hasHeader(name: string): boolean {
    return name.toLowerCase() in this.headers;
  }

  flushHeaders(): void {
    this.headersFlushed = true;
    this.headersSent = true;
  }

  write(text: string): boolean {
    this.headersSent = true;
    this.written.push(text);
    return this.takesWrites;
  }

  end(): void {
    this.writableEnded = true;
  }
}

describe(SseWriter.name, () => {
  let keepAlive: KeepAliveSweep;
  beforeEach(() => {
    jest.useFakeTimers();
    keepAlive = new KeepAliveSweep();
  });
  afterEach(() => {
    keepAlive.onModuleDestroy();
    jest.useRealTimers();
  });

  const writerFor = () => {
    const response = new FakeResponse();
    return { response, writer: new SseWriter(response as unknown as ServerResponse, keepAlive) };
  };

  it('keeps a Connection: close set before it opens (a draining gateway), else asks for keep-alive', () => {
    const open = writerFor();
    expect(open.writer.open({ role: 'assistant' })).toBe(true);
    expect(open.response.headers.connection).toBe('keep-alive');
    const closing = writerFor();
    closing.response.setHeader('Connection', 'close');
    expect(closing.writer.open({ role: 'assistant' })).toBe(true);
    expect(closing.response.headers.connection).toBe('close');
  });

  it('commits the SSE headers only when opened (the adapter reported acceptance), in one write with the first event', () => {
    const { response, writer } = writerFor();
    expect(response.statusCode).toBe(0);
    expect(writer.open({ role: 'assistant' })).toBe(true);
    expect(response.statusCode).toBe(200);
    expect(response.headers).toEqual({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // No separate flush of the headers: Node sends them with this first write.
    expect(response.headersFlushed).toBe(false);
    expect(response.written).toEqual(['data: {"role":"assistant"}\n\n']);
  });

  it('never leaves a stream silent for longer than the interval, well inside a 60 s proxy idle limit', () => {
    expect(KEEP_ALIVE_INTERVAL_MS).toBeLessThan(60_000 / 2);
    const { response, writer } = writerFor();
    expect(writer.open({ n: 0 })).toBe(true);
    // The silence that elapses before each comment, read off the fake clock.
    const silences: number[] = [];
    let last = Date.now();
    for (let step = 0; step < 8 * KEEP_ALIVE_INTERVAL_MS; step += 500) {
      jest.advanceTimersByTime(500);
      if (response.written.length > 1 + silences.length) {
        silences.push(Date.now() - last);
        last = Date.now();
      }
    }
    expect(response.written.slice(1)).toEqual(Array(silences.length).fill(': keep-alive\n\n'));
    // A long reasoning phase: a comment per sweep round, none sooner than a quiet round.
    expect(silences.length).toBeGreaterThanOrEqual(7);
    expect(Math.max(...silences)).toBeLessThanOrEqual(KEEP_ALIVE_INTERVAL_MS);
    expect(Math.min(...silences)).toBeGreaterThanOrEqual(KEEP_ALIVE_SWEEP_MS);
  });

  it('writes no comment to a stream that keeps writing, and stops once the client left or the stream ended', async () => {
    const { response, writer } = writerFor();
    expect(writer.open({ n: 0 })).toBe(true);
    for (let n = 1; n <= 6; n++) {
      jest.advanceTimersByTime(KEEP_ALIVE_SWEEP_MS - 10);
      await writer.sendJson({ n });
    }
    expect(response.written).toEqual([0, 1, 2, 3, 4, 5, 6].map((n) => `data: {"n":${n}}\n\n`));
    response.emit('close');
    expect(keepAlive.size).toBe(0);
    jest.advanceTimersByTime(5 * KEEP_ALIVE_INTERVAL_MS);
    expect(response.written).toHaveLength(7);

    const ended = writerFor();
    expect(ended.writer.open({ n: 0 })).toBe(true);
    ended.writer.end();
    expect(keepAlive.size).toBe(0);
    jest.advanceTimersByTime(5 * KEEP_ALIVE_INTERVAL_MS);
    expect(ended.response.written).toEqual(['data: {"n":0}\n\n']);
  });

  it('resolves a write that waited for the socket true once it drained, false once the client left', async () => {
    const { response, writer } = writerFor();
    expect(writer.open({ n: 0 })).toBe(true);
    response.takesWrites = false;
    const drained = writer.sendJson({ n: 1 });
    response.emit('drain');
    await expect(drained).resolves.toBe(true);
    const left = writer.sendJson({ n: 2 });
    response.destroy();
    await expect(left).resolves.toBe(false);
    expect([response.listenerCount('drain'), response.listenerCount('close')]).toEqual([0, 0]);
  });

  it('writes nothing once the client left or the stream ended, and says so at once', () => {
    const left = writerFor();
    expect(left.writer.open({ n: 0 })).toBe(true);
    left.response.destroy();
    // At once: a write waiting for a 'close' that already came would never end.
    expect(left.writer.sendJson({ n: 1 })).toBe(false);
    expect(left.writer.sendDone()).toBe(false);
    expect(left.response.written).toEqual(['data: {"n":0}\n\n']);
    const ended = writerFor();
    expect(ended.writer.open({ n: 0 })).toBe(true);
    ended.writer.end();
    expect(ended.writer.sendDone()).toBe(false);
    expect(ended.response.written).toEqual(['data: {"n":0}\n\n']);
  });

  it('keeps every open stream of the gateway alive on one timer, which stops when none is open', () => {
    const streams = [writerFor(), writerFor(), writerFor()];
    for (const { writer } of streams) expect(writer.open({ n: 0 })).toBe(true);
    expect(keepAlive.size).toBe(3);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(KEEP_ALIVE_INTERVAL_MS);
    for (const { response } of streams) expect(response.written).toEqual(['data: {"n":0}\n\n', ': keep-alive\n\n']);
    for (const { writer } of streams) writer.end();
    jest.advanceTimersByTime(KEEP_ALIVE_SWEEP_MS);
    expect(jest.getTimerCount()).toBe(0);
  });

  describe('an answer the gateway holds back (hold)', () => {
    const SSE_HEADERS = {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    };

    it('sends nothing until a round finds it silent for a whole round, then the headers with a comment: never silent past the interval', () => {
      const { response, writer } = writerFor();
      writer.hold();
      expect(keepAlive.size).toBe(1);
      jest.advanceTimersByTime(KEEP_ALIVE_SWEEP_MS);
      expect([response.statusCode, response.written, writer.committed]).toEqual([0, [], false]);
      jest.advanceTimersByTime(KEEP_ALIVE_SWEEP_MS);
      expect(KEEP_ALIVE_SWEEP_MS * 2).toBe(KEEP_ALIVE_INTERVAL_MS);
      expect(response.statusCode).toBe(200);
      expect(response.headers).toEqual(SSE_HEADERS);
      expect(response.written).toEqual([': keep-alive\n\n']);
      expect(writer.committed).toBe(true);
      jest.advanceTimersByTime(KEEP_ALIVE_SWEEP_MS);
      expect(response.written).toEqual([': keep-alive\n\n', ': keep-alive\n\n']);
      // The answer, released: its first event after the comments, the headers left as they went out.
      expect(writer.open({ role: 'assistant' })).toBe(true);
      expect(response.written.at(-1)).toBe('data: {"role":"assistant"}\n\n');
      expect([keepAlive.size, response.listenerCount('close')]).toEqual([1, 1]);
      writer.end();
      expect(keepAlive.size).toBe(0);
    });

    it('opens an answer released before a silent round as any stream: the headers with its first event', () => {
      const { response, writer } = writerFor();
      writer.hold();
      jest.advanceTimersByTime(KEEP_ALIVE_SWEEP_MS);
      expect(writer.open({ role: 'assistant' })).toBe(true);
      expect(response.headers).toEqual(SSE_HEADERS);
      expect(response.written).toEqual(['data: {"role":"assistant"}\n\n']);
      expect([keepAlive.size, response.listenerCount('close')]).toEqual([1, 1]);
    });

    it('writes nothing more once the hold ends in a failure answered as JSON, or the client left', () => {
      const refused = writerFor();
      refused.writer.hold();
      refused.writer.stopKeepAlive();
      const left = writerFor();
      left.writer.hold();
      left.response.destroy();
      expect(keepAlive.size).toBe(0);
      jest.advanceTimersByTime(5 * KEEP_ALIVE_INTERVAL_MS);
      expect([refused.response.written, left.response.written]).toEqual([[], []]);
      expect(jest.getTimerCount()).toBe(0);
    });
  });

  it('runs rounds only when called once told so (sweepOnlyWhenCalled): no timer', () => {
    keepAlive.sweepOnlyWhenCalled();
    const { response, writer } = writerFor();
    expect(writer.open({ n: 0 })).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(5 * KEEP_ALIVE_INTERVAL_MS);
    expect(response.written).toEqual(['data: {"n":0}\n\n']);
    keepAlive.sweep();
    keepAlive.sweep();
    expect(response.written).toEqual(['data: {"n":0}\n\n', ': keep-alive\n\n']);
  });

  it('ends a stream whose client took no byte for the idle bound while a write waited, and no sooner', () => {
    keepAlive.onModuleDestroy();
    keepAlive = new KeepAliveSweep({ server: { streamIdleTimeoutMs: 4 * KEEP_ALIVE_SWEEP_MS } } as never);
    const stalled = writerFor();
    const slow = writerFor();
    for (const { writer } of [stalled, slow]) expect(writer.open({ n: 0 })).toBe(true);
    for (const { response } of [stalled, slow]) response.writableNeedDrain = true;
    for (let round = 1; round <= 3; round++) {
      // The slow client reads a little every round; the stalled one nothing: what is written to
      // its socket stays in the socket's buffer.
      slow.response.socket.bytesWritten += 100;
      stalled.response.socket.bytesWritten += 50;
      stalled.response.socket.writableLength += 50;
      jest.advanceTimersByTime(KEEP_ALIVE_SWEEP_MS);
    }
    expect(stalled.response.destroyed).toBe(false);
    slow.response.socket.bytesWritten += 100;
    jest.advanceTimersByTime(KEEP_ALIVE_SWEEP_MS);
    expect(stalled.response.destroyed).toBe(true);
    expect(slow.response.destroyed).toBe(false);
    // Nothing queued behind what a client has not read.
    expect(slow.response.written).toEqual(['data: {"n":0}\n\n']);
  });

  it.each([
    ['0', 0, 100 * KEEP_ALIVE_SWEEP_MS],
    ['longer than a timer holds', 720 * 3_600_000, 721 * 3_600_000],
  ])('never ends a stream for a slow client when the idle bound is off (%s)', (_name, idleMs, watchMs) => {
    keepAlive.onModuleDestroy();
    keepAlive = new KeepAliveSweep({ server: { streamIdleTimeoutMs: idleMs } } as never);
    const stalled = writerFor();
    expect(stalled.writer.open({ n: 0 })).toBe(true);
    stalled.response.writableNeedDrain = true;
    jest.advanceTimersByTime(watchMs);
    expect(stalled.response.destroyed).toBe(false);
  });
});
