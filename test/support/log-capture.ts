import { Writable } from 'node:stream';

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

  get text(): string {
    return this.lines.join('\n');
  }

  /** Parsed records whose `event` (or msg) equals `name`. */
  records(name?: string): Record<string, unknown>[] {
    const parsed = this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    return name === undefined ? parsed : parsed.filter((record) => record.event === name || record.msg === name);
  }
}
