import type { Agent } from 'node:http';
import type { Dispatcher } from 'undici';

// undici and https-proxy-agent are loaded on first use: a deployment without a proxy (the
// default) never needs them, and undici alone costs the idle process 4.7 MiB of heap.
type Undici = typeof import('undici');
type HttpsProxyAgentModule = typeof import('https-proxy-agent');

function loadUndici(): Undici {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- synchronous load on first use, only with a proxy
  return require('undici') as Undici;
}

function loadHttpsProxyAgent(): HttpsProxyAgentModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- synchronous load on first use, only with a proxy
  return require('https-proxy-agent') as HttpsProxyAgentModule;
}

/** HTTPS_PROXY / HTTP_PROXY / NO_PROXY as the config layer read them (docs/design/decisions.md §2). */
export interface ProxySettings {
  readonly httpsProxy?: string;
  readonly httpProxy?: string;
  readonly noProxy?: string;
}

interface NoProxyEntry {
  readonly host: string;
  readonly port?: number;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'ws:': 80, 'https:': 443, 'wss:': 443 };

function parseNoProxy(value: string): NoProxyEntry[] | '*' {
  if (value.trim() === '*') return '*';
  return value
    .split(/[,\s]+/)
    .filter((entry) => entry !== '')
    .map((entry) => {
      const match = /^(.*?)(?::(\d+))?$/.exec(entry.replace(/^\*?\./, '').toLowerCase())!;
      return { host: match[1], port: match[2] ? Number(match[2]) : undefined };
    });
}

/**
 * The egress proxy of the upstream transports. HTTP requests (SSE, token refresh) go through
 * undici's EnvHttpProxyAgent built from our settings (never from the environment: unset values are
 * passed as '' so undici does not read the environment itself). WebSockets get an
 * https-proxy-agent CONNECT tunnel. NO_PROXY follows the same rules for both: `*`, or a list of
 * hosts (with optional `:port`) that also cover their subdomains; the WebSocket side re-implements
 * undici's matcher because undici keeps it private.
 */
export class UpstreamProxy {
  private readonly noProxy: NoProxyEntry[] | '*';
  private readonly agents = new Map<string, Agent>();
  private proxyDispatcher?: Dispatcher;

  constructor(private readonly settings: ProxySettings) {
    this.noProxy = parseNoProxy(settings.noProxy ?? '');
  }

  /**
   * undici's EnvHttpProxyAgent built from our settings, made on first use. Every request is
   * tunnelled with CONNECT, a plain http:// one too (undici would otherwise forward it in absolute
   * form): the proxy the docs ask for is a CONNECT proxy, as for the WebSocket.
   */
  get dispatcher(): Dispatcher {
    const { settings } = this;
    this.proxyDispatcher ??= new (loadUndici().EnvHttpProxyAgent)({
      httpsProxy: settings.httpsProxy ?? '',
      httpProxy: settings.httpProxy ?? '',
      noProxy: settings.noProxy ?? '',
      proxyTunnel: true,
    });
    return this.proxyDispatcher;
  }

  /** True when at least one proxy is configured. */
  get enabled(): boolean {
    return Boolean(this.settings.httpsProxy || this.settings.httpProxy);
  }

  /** The proxy URL a connection to `target` must use, or undefined to go direct. */
  proxyFor(target: string): string | undefined {
    const url = new URL(target);
    const secure = url.protocol === 'https:' || url.protocol === 'wss:';
    const proxy = secure ? this.settings.httpsProxy || this.settings.httpProxy : this.settings.httpProxy;
    if (!proxy || this.noProxy === '*') return undefined;
    const host = url.hostname.toLowerCase();
    const port = Number(url.port) || DEFAULT_PORTS[url.protocol] || 0;
    const bypass = this.noProxy.some(
      (entry) =>
        (entry.port === undefined || entry.port === port) && (host === entry.host || host.endsWith(`.${entry.host}`)),
    );
    return bypass ? undefined : proxy;
  }

  /** The agent for a WebSocket to `target` (a CONNECT tunnel through the proxy), or undefined to go direct. */
  websocketAgent(target: string): Agent | undefined {
    const proxy = this.proxyFor(target);
    if (proxy === undefined) return undefined;
    const agent = this.agents.get(proxy) ?? new (loadHttpsProxyAgent().HttpsProxyAgent)(proxy);
    this.agents.set(proxy, agent);
    return agent;
  }

  /**
   * `fetch` through the proxy dispatcher (the built-in fetch when no proxy is set). undici's own fetch is used because the built-in
   * fetch bundles Node's own undici, whose dispatchers need not be interchangeable with this major's.
   */
  fetch(url: string, init: RequestInit): Promise<Response> {
    if (!this.enabled) return fetch(url, init);
    const { fetch: undiciFetch } = loadUndici();
    return undiciFetch(url, { ...(init as Record<string, unknown>), dispatcher: this.dispatcher });
  }

  async close(): Promise<void> {
    for (const agent of this.agents.values()) agent.destroy();
    await this.proxyDispatcher?.close().catch(() => undefined);
  }
}
