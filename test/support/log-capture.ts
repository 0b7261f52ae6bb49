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

  /** Parsed records whose `event` (or msg) equals `name`. */
  records(name?: string): Record<string, unknown>[] {
    const parsed = this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    return name === undefined ? parsed : parsed.filter((record) => record.event === name || record.msg === name);
  }
}
