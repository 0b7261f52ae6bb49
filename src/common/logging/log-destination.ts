import pino from 'pino';
import type { DestinationStream } from 'pino';
import type { LogFormat } from '../../config/settings';
import { READABLE_OPTIONS } from './readable-line';

/**
 * Where the root logger writes (LOG_FORMAT, docs/configuration.md): pino's JSON lines for log
 * collectors, or readable lines for a person at a terminal. `auto` looks at stdout once, at
 * startup: a terminal gets readable lines, a pipe or file (a container, systemd, a log shipper)
 * gets JSON.
 */
export function logDestination(format: LogFormat, stdoutIsTerminal = process.stdout.isTTY === true): DestinationStream {
  const pretty = format === 'pretty' || (format === 'auto' && stdoutIsTerminal);
  return pretty ? readableDestination() : jsonDestination();
}

/**
 * JSON lines on stdout without a synchronous write per line: lines written while a write is in
 * flight go out together, so under load the event loop is not blocked by one syscall per line;
 * pino flushes what is left synchronously when the process exits. sonic-boom's buffer mode, fed
 * one Buffer per line: its text mode appends each line to the pending text and measures the whole
 * of it again, which copies the pending text once per line. In a burst of finishing streams that
 * was the largest allocation of a request (docs/performance.md "Log lines").
 */
function jsonDestination(): DestinationStream {
  const stdout = pino.destination({ dest: 1, sync: false, contentMode: 'buffer' });
  // The property is read at each call: on EPIPE pino replaces `stdout.write` with a no-op.
  // sonic-boom's types know only its text mode.
  return { write: (line: string) => stdout.write(Buffer.from(line) as unknown as string) };
}

/**
 * pino-pretty's formatter over a synchronous stdout. Loaded only here, so a JSON gateway never
 * loads it. Synchronous, and in this process (not a transport's worker thread), so the last lines
 * before an exit (a drain's end, a failed start) are on the terminal before the process is gone;
 * a person reading a terminal does not produce the volume where that costs anything.
 */
function readableDestination(): DestinationStream {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on use: JSON mode never pays for it
  const { prettyFactory } = require('pino-pretty') as typeof import('pino-pretty');
  // One line per event: the message in words, then only the fields it does not say (readable-line.ts).
  const format = prettyFactory(READABLE_OPTIONS);
  const stdout = pino.destination({ dest: 1, sync: true });
  return { write: (line: string) => stdout.write(format(line)) };
}
