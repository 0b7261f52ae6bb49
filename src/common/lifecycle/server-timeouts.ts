import type { Server } from 'node:http';
import { isNever } from '../async/timer-range';

/** The client-side timeouts of the HTTP server (GATEWAY_KEEP_ALIVE_TIMEOUT, …_HEADERS_…, …_REQUEST_…). */
export interface ServerTimeouts {
  readonly keepAliveTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
}

/**
 * Sets the timeouts on the server before it listens (docs/deployment.md "Behind a load balancer").
 * Node reads the keep-alive timeout when an answer ends, and the other two on each of its periodic
 * checks of the open connections, so values set after the server was created apply to every
 * connection. The request timeout bounds receiving a request only: Node stops timing a request once
 * its body is in, so a streamed answer runs as long as it lasts.
 *
 * A timeout longer than a timer holds means never, as for every timer here (timer-range.ts), and
 * is Node's 0: Node would clamp the keep-alive socket timer (it adds `keepAliveTimeoutBuffer`) with
 * a warning per connection, and take the other two modulo 2^32 ms.
 *
 * Node checks the headers and request timeouts every `connectionsCheckingInterval` (its
 * `createServer` option, 30 s by default, read when the server starts listening), so a request
 * could outlive its timeout by that much: the check runs every tenth of the shorter timeout
 * instead, within [CHECK_MIN_MS, Node's 30 s].
 */
export function applyServerTimeouts(server: Server, timeouts: ServerTimeouts): void {
  // `keepAliveTimeoutBuffer` (Node's own 1 s) exists from Node 24.6 on.
  server.keepAliveTimeout = isNever(timeouts.keepAliveTimeoutMs + (server.keepAliveTimeoutBuffer ?? 1000))
    ? 0
    : timeouts.keepAliveTimeoutMs;
  server.headersTimeout = orNever(timeouts.headersTimeoutMs);
  server.requestTimeout = orNever(timeouts.requestTimeoutMs);
  (server as CheckedServer).connectionsCheckingInterval = checkingInterval(
    server.headersTimeout,
    server.requestTimeout,
  );
}

/** Node keeps its `connectionsCheckingInterval` option on the server under that name; @types/node declares only the option. */
type CheckedServer = Server & { connectionsCheckingInterval: number };

const CHECK_MIN_MS = 100;
const NODE_CHECK_MS = 30_000;

/** A tenth of the shorter of the two timeouts (0: none), within [CHECK_MIN_MS, NODE_CHECK_MS]. */
function checkingInterval(headersTimeoutMs: number, requestTimeoutMs: number): number {
  const shorter = Math.min(headersTimeoutMs || Infinity, requestTimeoutMs || Infinity);
  return Math.min(NODE_CHECK_MS, Math.max(CHECK_MIN_MS, Math.round(shorter / 10)));
}

const orNever = (ms: number) => (isNever(ms) ? 0 : ms);
