import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { KEEP_ALIVE_INTERVAL_MS, SseWriter } from './sse-writer';

/** The parts of a ServerResponse the writer uses, recording what reached the socket. */
class FakeResponse extends EventEmitter {
  statusCode = 0;
  headers: Record<string, string> = {};
  headersFlushed = false;
  written: string[] = [];
  writableEnded = false;
  destroyed = false;

  setHeader(name: string, value: string): void {
    this.headers[name.toLowerCase()] = value;
  }

  flushHeaders(): void {
    this.headersFlushed = true;
  }

  write(text: string): boolean {
    this.written.push(text);
    return true;
  }

  end(): void {
    this.writableEnded = true;
  }
}

describe(SseWriter.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const writerFor = () => {
    const response = new FakeResponse();
    return { response, writer: new SseWriter(response as unknown as ServerResponse) };
  };

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

  it('writes a keep-alive comment after each silence of the interval, well inside a 60 s proxy idle limit', async () => {
    expect(KEEP_ALIVE_INTERVAL_MS).toBeLessThan(60_000 / 2);
    const { response, writer } = writerFor();
    expect(writer.open({ n: 0 })).toBe(true);
    jest.advanceTimersByTime(KEEP_ALIVE_INTERVAL_MS - 1);
    expect(response.written).toEqual(['data: {"n":0}\n\n']);
    jest.advanceTimersByTime(1);
    expect(response.written).toEqual(['data: {"n":0}\n\n', ': keep-alive\n\n']);
    // A long reasoning phase: one comment per interval, nothing else.
    jest.advanceTimersByTime(3 * KEEP_ALIVE_INTERVAL_MS);
    expect(response.written).toEqual(['data: {"n":0}\n\n', ...Array(4).fill(': keep-alive\n\n')]);
  });

  it('restarts the silence clock on every event and stops once the client left or the stream ended', async () => {
    const { response, writer } = writerFor();
    expect(writer.open({ n: 0 })).toBe(true);
    jest.advanceTimersByTime(KEEP_ALIVE_INTERVAL_MS - 10);
    await writer.sendJson({ n: 1 });
    jest.advanceTimersByTime(KEEP_ALIVE_INTERVAL_MS - 10);
    expect(response.written).toEqual(['data: {"n":0}\n\n', 'data: {"n":1}\n\n']);
    response.emit('close');
    jest.advanceTimersByTime(5 * KEEP_ALIVE_INTERVAL_MS);
    expect(response.written).toEqual(['data: {"n":0}\n\n', 'data: {"n":1}\n\n']);

    const ended = writerFor();
    expect(ended.writer.open({ n: 0 })).toBe(true);
    ended.writer.end();
    jest.advanceTimersByTime(5 * KEEP_ALIVE_INTERVAL_MS);
    expect(ended.response.written).toEqual(['data: {"n":0}\n\n']);
  });
});
