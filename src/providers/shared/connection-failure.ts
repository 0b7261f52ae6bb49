import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { errnoAlong } from '../../common/errno';
import type { UpstreamCause } from '../../core/gateway.error';

const NAME_LOOKUP_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN']);

/** Where a failed connection was going: the URL, the family's setting that names it, the proxy. */
export interface ConnectionTarget {
  readonly url: string;
  /** The setting the URL comes from (`PROVIDER_A_URL`, …), named in the fix. */
  readonly setting: string;
  readonly proxy?: UpstreamProxy;
}

/**
 * What a connection that never reached the upstream tells the operator, for the `upstream_*` line:
 * the error code (read from the error or its causes, kept only when it looks like one), the host
 * and port it was for, the proxy's host and port when it went through one, and the fix. Hosts
 * only: a path, a query or a proxy's credentials never reach the log.
 */
export function connectionCause(error: unknown, target: ConnectionTarget): UpstreamCause {
  const errno = errnoAlong(error);
  const host = hostOf(target.url);
  const proxyUrl = proxyUrlFor(target);
  const proxyHost = proxyUrl === undefined ? undefined : hostOf(proxyUrl);
  return { errno, host, proxyHost, fix: connectionFix(errno, target.setting, proxyHost) };
}

function connectionFix(errno: string | undefined, setting: string, proxyHost: string | undefined): string {
  if (proxyHost !== undefined) {
    return `the connection goes through the proxy ${proxyHost}: check that it runs and is reachable (HTTPS_PROXY / HTTP_PROXY), or list the upstream's host in NO_PROXY to go direct; then check ${setting}`;
  }
  if (errno !== undefined && NAME_LOOKUP_CODES.has(errno)) {
    return `the upstream's host name did not resolve: check ${setting} and this machine's DNS, or set HTTPS_PROXY if the upstream is reachable only through a proxy`;
  }
  return `check ${setting} (host and port) and that this machine reaches it (network, firewall), or set HTTPS_PROXY / NO_PROXY if it must go through a proxy`;
}

function proxyUrlFor(target: ConnectionTarget): string | undefined {
  try {
    return target.proxy?.proxyFor(target.url);
  } catch {
    return undefined;
  }
}

/** `host:port` of a URL (the port only when it has one), without credentials, path or query. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}
