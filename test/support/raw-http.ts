import * as http from 'node:http';
import * as net from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The body bytes exactly as sent (still compressed when Content-Encoding is set). */
  readonly body: Buffer;
}

/**
 * One request with node:http, which (unlike fetch) sends only the headers given and never
 * decompresses, so tests see the wire: Content-Encoding, raw bytes, no implicit Accept-Encoding.
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

/**
 * Writes `head` (request line and headers, CRLF-separated, no final blank line) and `body` on a
 * plain socket and returns everything the server sent until it closed. For bytes no HTTP client
 * library would send (raw C1 controls or NEL in a path).
 */
export function rawSocketExchange(port: number, head: Buffer, body: Buffer = Buffer.alloc(0)): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(Buffer.concat([head, Buffer.from('\r\nConnection: close\r\n\r\n'), body]));
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

/** An HTTP/1.1 answer read off a raw socket. */
export interface RawAnswer {
  readonly status: number;
  /** Header names lower-cased; a repeated header keeps its last value. */
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Everything received, for assertions on bytes that are not part of one answer. */
  readonly raw: string;
}

/**
 * Writes `bytes` exactly as given on a plain socket (nothing added) and reads until a complete
 * answer arrived or the server closed, or until `timeoutMs`, then parses the first answer. For
 * requests Node's own HTTP parser must reject: no client library would send them. `halfClose`
 * sends FIN after the bytes, for a request whose body is shorter than it announced (the server
 * then sees the end of the stream); Node treats a FIN as the client leaving, so a complete request
 * must be sent without it.
 */
export function sendRawBytes(
  port: number,
  bytes: Buffer,
  options: { halfClose?: boolean; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  const { halfClose = true, timeoutMs = 5000 } = options;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => (halfClose ? socket.end(bytes) : socket.write(bytes)));
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parseRawAnswer(Buffer.concat(chunks).toString('utf8')));
    };
    const timer = setTimeout(
      () => (chunks.length > 0 ? finish() : (socket.destroy(), reject(new Error('no answer before the timeout')))),
      timeoutMs,
    );
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (isCompleteAnswer(parseRawAnswer(Buffer.concat(chunks).toString('utf8')))) finish();
    });
    socket.on('end', finish);
    socket.on('close', finish);
    // The server may close while we still write (it answered early): what it sent still counts.
    socket.on('error', () => undefined);
  });
}

/** Whether `answer` is a final answer whose Content-Length bytes all arrived. */
function isCompleteAnswer(answer: RawAnswer): boolean {
  const length = Number(answer.headers['content-length']);
  return answer.status >= 200 && Number.isInteger(length) && Buffer.byteLength(answer.body) >= length;
}

/**
 * The first final answer in `raw` (interim 1xx answers such as `100 Continue` skipped): status
 * line, headers, then Content-Length bytes (or the rest).
 */
export function parseRawAnswer(raw: string): RawAnswer {
  const interim = /^HTTP\/1\.[01] 1\d\d[^\r]*\r\n(?:[^\r]+\r\n)*\r\n/.exec(raw);
  if (interim) return { ...parseRawAnswer(raw.slice(interim[0].length)), raw };
  const end = raw.indexOf('\r\n\r\n');
  const head = end < 0 ? raw : raw.slice(0, end);
  const [statusLine, ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = end < 0 ? '' : raw.slice(end + 4);
  const length = Number(headers['content-length']);
  const body = Number.isInteger(length) ? Buffer.from(rest, 'utf8').subarray(0, length).toString('utf8') : rest;
  return { status, headers, body, raw };
}

/** How many 16 KiB chunks `sendChunkedUntilAnswered` sends at most: 16 MiB, if no answer comes. */
export const CHUNKED_UPLOAD_LIMIT = 1024;

/**
 * POSTs a chunked JSON body to `route` that goes on (one chunk every 5 ms, each `chunk`: 16 KiB of
 * `x` unless given) until the server answers or closes, as a client uploading without end would;
 * returns what the server sent by the time it closed, and how many chunks went out. `headers` are
 * added to the request's head (a `content-type` among them replaces the JSON one).
 */
export async function sendChunkedUntilAnswered(
  baseUrl: string,
  route: string,
  headers: Record<string, string> = {},
  chunk: Buffer = Buffer.alloc(16384, 'x'),
): Promise<{ readonly answer: string; readonly chunksSent: number }> {
  const socket = net.connect(Number(new URL(baseUrl).port), '127.0.0.1');
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const { 'content-type': contentType = 'application/json', ...others } = headers;
  const extra = Object.entries(others)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(
    `POST ${route} HTTP/1.1\r\nHost: gateway\r\nContent-Type: ${contentType}\r\nTransfer-Encoding: chunked\r\n${extra}\r\n`,
  );
  const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
  let chunksSent = 0;
  while (received.length === 0 && !socket.destroyed && chunksSent < CHUNKED_UPLOAD_LIMIT) {
    socket.write(framed);
    chunksSent++;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  socket.end('0\r\n\r\n');
  await closed;
  return { answer: Buffer.concat(received).toString('latin1'), chunksSent };
}

/**
 * Writes `bytes` on a plain socket and returns everything the server sent until it closed the
 * connection, or until `timeoutMs` (a bound, so a server that never closes fails the test rather
 * than hangs it), with whether it closed. Several pipelined requests may go in one write.
 */
export function exchangeUntilClosed(
  port: number,
  bytes: Buffer,
  timeoutMs = 5000,
): Promise<{ readonly received: Buffer; readonly closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ received: Buffer.concat(chunks), closed });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined);
  });
}

/**
 * Sends `head` (request line and headers, its blank line included) and waits for the server's
 * first bytes: `body` follows only if they are `100 Continue`, as a client sending `Expect:
 * 100-continue` does. Returns everything the server sent until it closed, or until `timeoutMs`.
 */
export function sendAfterContinue(port: number, head: string, body: Buffer, timeoutMs = 5000): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks));
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (chunks.length === 1 && /^HTTP\/1\.1 100 /.test(chunk.toString('latin1'))) socket.write(body);
    });
    socket.on('close', finish);
    socket.on('error', () => undefined);
  });
}

/**
 * Every answer in `received`, in order, each read by its Content-Length; interim answers (`100
 * Continue`) are left out, as `parseRawAnswer` leaves them.
 */
export function parseRawAnswers(received: Buffer): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let offset = 0;
  for (;;) {
    const end = received.indexOf('\r\n\r\n', offset);
    if (end < 0) return answers;
    const head = received.subarray(offset, end).toString('latin1');
    const next = end + 4 + Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (!/^HTTP\/1\.[01] 1\d\d /.test(head))
      answers.push(parseRawAnswer(received.subarray(offset, next).toString('utf8')));
    offset = next;
  }
}

/**
 * A POST whose body stops halfway: its head goes out with `Expect: 100-continue`, and once the
 * server invited the body (a route is reading it, so the request has arrived) the first half of
 * `body` (bytes as given: already compressed when a `content-encoding` header says so), or its
 * first `sentBytes`; the rest comes only if `rest()` is called. `chunked` frames the body with `Transfer-Encoding: chunked`
 * instead of Content-Length. The client may instead leave: `leave()` closes its side as a client
 * that stops does (FIN), `reset()` aborts the connection (RST). Resolves when the server is reading
 * the body, with the answer it gives (read until it is complete or the server closed the connection).
 */
export function postHalfABody(
  port: number,
  path: string,
  body: string | Buffer,
  headers: Readonly<Record<string, string>> = {},
  options: { readonly chunked?: boolean; readonly sentBytes?: number } = {},
): Promise<{ readonly answer: Promise<RawAnswer>; rest(): void; leave(): void; reset(): void }> {
  return new Promise((reading, reject) => {
    const bytes = Buffer.from(body);
    const sent = options.sentBytes ?? bytes.length >> 1;
    const framing = options.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${bytes.length}`;
    const frame = (part: Buffer) =>
      options.chunked
        ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')])
        : part;
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n` +
          Object.entries(headers)
            .map(([name, value]) => `${name}: ${value}\r\n`)
            .join('') +
          `${framing}\r\nExpect: 100-continue\r\n\r\n`,
      ),
    );
    const chunks: Buffer[] = [];
    const received = () => parseRawAnswer(Buffer.concat(chunks).toString('utf8'));
    let answered: (answer: RawAnswer) => void = () => undefined;
    const answer = new Promise<RawAnswer>((resolve) => (answered = resolve));
    socket.on('close', () => answered(received()));
    const rest = () =>
      socket.write(
        options.chunked ? Buffer.concat([frame(bytes.subarray(sent)), Buffer.from('0\r\n\r\n')]) : bytes.subarray(sent),
      );
    let invited = false;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (!invited && Buffer.concat(chunks).toString('latin1').includes(' 100 Continue\r\n\r\n')) {
        invited = true;
        // A chunked frame of no bytes would end the body.
        if (sent > 0) socket.write(frame(bytes.subarray(0, sent)));
        reading({ answer, rest, leave: () => socket.end(), reset: () => socket.resetAndDestroy() });
      } else if (isCompleteAnswer(received())) {
        answered(received());
        socket.destroy();
      }
    });
    socket.on('error', (error) => (invited ? undefined : reject(error)));
  });
}

/**
 * A request only begun on a fresh connection: `head` (its request line and some headers, no blank
 * line) goes out now, so the connection is open but no request has arrived yet. `finish(rest)`
 * sends the rest (the other headers, the blank line, the body) and resolves with the answer once
 * the server closed the connection.
 */
export function beginRequest(port: number, head: string): Promise<{ finish(rest: string): Promise<RawAnswer> }> {
  return new Promise((begun, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined);
      socket.write(head);
      begun({ finish });
    });
    socket.once('error', reject);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise<RawAnswer>((resolve) =>
      socket.on('close', () => resolve(parseRawAnswer(Buffer.concat(chunks).toString('utf8')))),
    );
    function finish(rest: string): Promise<RawAnswer> {
      socket.write(rest);
      return closed;
    }
  });
}

/** Whether a new connection to `port` is taken (`connected`) or refused (its error code). */
export function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
  });
}
