import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';

/** What went through the proxy: one entry per CONNECT tunnel (or refused plain request). */
export interface ProxiedConnection {
  readonly method: string;
  /** `host:port` of a CONNECT, or the absolute URL of a plain proxied request. */
  readonly target: string;
  readonly proxyAuthorization?: string;
}

/**
 * A loopback HTTP CONNECT proxy for tests: it tunnels CONNECT requests to loopback targets only
 * (anything else is refused with 403, so a test can never reach out), records every tunnel, and
 * answers plain proxied requests with 502 (the gateway must tunnel). `refuse()` makes it answer
 * every CONNECT with 407, to prove traffic really depends on it.
 */
export class ConnectProxy {
  private readonly seen: ProxiedConnection[] = [];
  private readonly sockets = new Set<net.Socket>();
  private refusing = false;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<ConnectProxy> {
    const server = http.createServer();
    const proxy = new ConnectProxy(server);
    server.on('connection', (socket) => {
      proxy.sockets.add(socket);
      socket.on('close', () => proxy.sockets.delete(socket));
    });
    server.on('connect', (request: http.IncomingMessage, client: net.Socket, head: Buffer) =>
      proxy.tunnel(request, client, head),
    );
    server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
      proxy.seen.push({
        method: request.method ?? '',
        target: request.url ?? '',
        proxyAuthorization: request.headers['proxy-authorization'],
      });
      response.writeHead(502).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  connections(): ProxiedConnection[] {
    return [...this.seen];
  }

  reset(): void {
    this.seen.length = 0;
    this.refusing = false;
  }

  refuse(): void {
    this.refusing = true;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private tunnel(request: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    const target = request.url ?? '';
    this.seen.push({ method: 'CONNECT', target, proxyAuthorization: request.headers['proxy-authorization'] });
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
    if (this.refusing)
      return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n');
    if (host !== '127.0.0.1' && host !== 'localhost')
      return void client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
    const upstream = net.connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.sockets.add(upstream);
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  }
}
