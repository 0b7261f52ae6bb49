import { Writable } from 'node:stream';
import { WAIT_GUARD_MS } from './fake-provider-a';

/** Collects the gateway's pino lines in memory so tests can assert on (and grep) them. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  private partial = '';

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    const text = this.partial + chunk.toString('utf8');
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    this.lines.push(...parts.filter((line) => line !== ''));
    callback();
  }

  /** Resolves once a line satisfies `predicate` (its index); rejects after `timeoutMs`. */
  async waitForLine(predicate: (line: string) => boolean, timeoutMs = WAIT_GUARD_MS): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.lines.findIndex(predicate);
      if (index >= 0) return index;
      if (Date.now() > deadline) throw new Error('log line not written in time');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  get text(): string {
    return this.lines.join('\n');
  }

  /**
   * The lines of one request at warn or above (pino level 40+), once its access line is written
   * (the last line of a request, so none is still to come): what an operator who reads warnings
   * sees of it. The rule (docs/troubleshooting.md "One line per failure") is at most one.
   */
  async warnings(requestId: string): Promise<Record<string, unknown>[]> {
    await this.waitForLine((line) => line.includes(`"req":{"id":"${requestId}"`));
    return this.records().filter((record) => record.reqId === requestId && Number(record.level) >= 40);
  }

  /**
   * Asserts that a failed request has exactly one line at warn or above, its `chat_completion` at
   * `level`, carrying `fields` (what happened and the fix); returns that line.
   */
  async failureLine(
    requestId: string,
    level: 40 | 50,
    fields: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const lines = await this.warnings(requestId);
    expect(lines).toEqual([expect.objectContaining({ event: 'chat_completion', level, ...fields })]);
    return lines[0];
  }

  /**
   * The records named `event` of the one request answered with these headers (its `x-request-id`):
   * specs share one gateway, and run concurrently.
   */
  recordsOf(headers: Headers, event: string): Record<string, unknown>[] {
    const requestId = headers.get('x-request-id');
    return this.records(event).filter((record) => record.reqId === requestId);
  }

  /** Parsed records whose `event` (or msg) equals `name`. */
  records(name?: string): Record<string, unknown>[] {
    const parsed = this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    return name === undefined ? parsed : parsed.filter((record) => record.event === name || record.msg === name);
  }
}
