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
    const request = http.request(url, { method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
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
