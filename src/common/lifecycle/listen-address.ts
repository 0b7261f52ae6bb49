import * as net from 'node:net';
import { ConfigError } from '../../config/app-config';
import { errnoOf } from '../errno';
import { quoted } from '../../core/quoted';

const HOST_SETTING = 'GATEWAY_HOST / --gateway-host';
const PORT_SETTING = 'GATEWAY_PORT / --gateway-port';

/**
 * The one stderr line (without the `gateway: ` prefix) for a listen that failed on the
 * machine's side: what happened and which setting fixes it. Undefined for anything that is not
 * an address or permission failure, which main.ts reports as a bug.
 */
export function listenFailureMessage(error: unknown, host: string, port: number): string | undefined {
  const code = errnoOf(error);
  if (code === undefined) return undefined;
  const shownHost = quoted(host);
  const where = `cannot listen on ${shownHost} port ${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `${where}: the port is already in use (${code}) by another program, or another gateway; stop it, or set ${PORT_SETTING} to a free port (0 picks one)`;
    case 'EADDRNOTAVAIL':
      return `${where}: ${shownHost} is not an address of this machine (${code}); set ${HOST_SETTING} to one of its addresses, 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)`;
    case 'EACCES':
    case 'EPERM':
      return `${where}: permission denied (${code}); ports below 1024 need privileges on most systems, so set ${PORT_SETTING} to 1024 or above, or grant the process CAP_NET_BIND_SERVICE`;
    case 'ENOTFOUND':
      return `${where}: ${shownHost} does not resolve to an address (${code}); set ${HOST_SETTING} to an IP address of this machine (127.0.0.1, 0.0.0.0) or a name it resolves`;
    case 'EAI_AGAIN':
      return `${where}: looking up ${shownHost} failed for now (${code}, the resolver did not answer); check this machine's DNS, or set ${HOST_SETTING} to an IP address`;
    default:
      return `${where}: ${code}; check ${HOST_SETTING} and ${PORT_SETTING}`;
  }
}

/**
 * Binds the configured address once and lets it go, so a port in use, a foreign address or an
 * unresolvable name stops the gateway before any module starts work that logs (logins, plan
 * reads), with the one line of listenFailureMessage as a ConfigError.
 */
export async function checkListenAddress(host: string, port: number): Promise<void> {
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host, port }, () => resolve());
    });
  } catch (error) {
    const message = listenFailureMessage(error, host, port);
    if (message === undefined) throw error;
    throw new ConfigError(message);
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
