/** docs/upstream/provider-c.md §3.4: one stdout line may be at most 16 MiB. */
export const MAX_STDOUT_LINE_BYTES = 16 * 1024 * 1024;

/** A stdout line longer than the cap: an `upstream` failure (the child is terminated). */
export class LineTooLongError extends Error {
  constructor(readonly limitBytes: number) {
    super(`stdout line exceeds ${limitBytes} bytes`);
    this.name = 'LineTooLongError';
  }
}

/**
 * Splits child stdout bytes on `\n` (a trailing `\r` is removed, empty lines are skipped).
 * Hand-written instead of `readline` because readline has no per-line cap, and an unbounded
 * line from a misbehaving child must not grow the gateway's memory without limit. Lines are cut
 * on the byte `\n`, which never occurs inside a multi-byte UTF-8 sequence, so decoding a whole
 * line at once is safe.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes: number = MAX_STDOUT_LINE_BYTES) {}

  /** Lines completed by `chunk`; throws LineTooLongError when a line passes the cap. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) break;
      this.append(chunk.subarray(start, newline));
      const line = this.take();
      if (line !== undefined) lines.push(line);
      start = newline + 1;
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
    return lines;
  }

  /** The unterminated last line at EOF, if any. */
  end(): string | undefined {
    return this.take();
  }

  private append(part: Buffer): void {
    if (part.length === 0) return;
    this.pendingBytes += part.length;
    if (this.pendingBytes > this.maxLineBytes) throw new LineTooLongError(this.maxLineBytes);
    this.pending.push(part);
  }

  private take(): string | undefined {
    const bytes = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    let line = bytes === undefined ? '' : bytes.toString('utf8');
    if (line.endsWith('\r')) line = line.slice(0, -1);
    return line === '' ? undefined : line;
  }
}
