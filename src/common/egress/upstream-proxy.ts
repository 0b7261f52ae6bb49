import type { Agent } from 'node:http';
import type { Dispatcher } from 'undici';

// undici and https-proxy-agent are loaded on first use: a deployment without a proxy (the
// default) needs undici only for its first HTTP turn (never for provider_a's WebSocket), and
// undici alone costs the idle process 4.7 MiB of heap.
type Undici = typeof import('undici');
type HttpsProxyAgentModule = typeof import('https-proxy-agent');

function loadUndici(): Undici {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- synchronous load on first use, only with a proxy or an HTTP turn
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

/**
 * undici's own bounds on a provider's requests, both off. By default undici ends a response whose
 * headers, or next body bytes, take over 300 s, whatever GATEWAY_STREAM_IDLE_TIMEOUT says; a turn's
 * silence is bounded by the gateway's idle bound and deadline instead. Every other request that
 * shares these dispatchers (token refresh, usage and model-list reads) has a timeout signal of its own.
 */
export const PROVIDER_FETCH_TIMEOUTS = { headersTimeout: 0, bodyTimeout: 0 } as const;

/** The dispatcher of provider requests that go direct: made on the first one, shared process-wide. */
let directDispatcher: Dispatcher | undefined;

/**
 * `fetch` for a provider's upstream calls (provider_a's SSE POST, provider_b's requests): through
 * `proxy` when it has a proxy for requests, else direct; either way without undici's own header and
 * body timeouts (PROVIDER_FETCH_TIMEOUTS). Loads undici on the first call.
 */
export function providerFetch(url: string, init: RequestInit, proxy?: UpstreamProxy): Promise<Response> {
  if (proxy?.enabled) return proxy.fetch(url, init);
  const undici = loadUndici();
  directDispatcher ??= new undici.Agent(PROVIDER_FETCH_TIMEOUTS);
  return undiciFetch(undici, url, init, directDispatcher);
}

/** undici's own fetch with one of its dispatchers. */
function undiciFetch(undici: Undici, url: string, init: RequestInit, dispatcher: Dispatcher): Promise<Response> {
  return undici.fetch(url, { ...(init as Record<string, unknown>), dispatcher });
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
   * form): the proxy the docs ask for is a CONNECT proxy, as for the WebSocket. Without undici's
   * own timeouts (PROVIDER_FETCH_TIMEOUTS): turns go through it.
   */
  get dispatcher(): Dispatcher {
    const { settings } = this;
    this.proxyDispatcher ??= new (loadUndici().EnvHttpProxyAgent)({
      httpsProxy: settings.httpsProxy ?? '',
      httpProxy: settings.httpProxy ?? '',
      noProxy: settings.noProxy ?? '',
      proxyTunnel: true,
      ...PROVIDER_FETCH_TIMEOUTS,
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
   * `fetch` through the proxy dispatcher; without a proxy, the built-in fetch (undici is not loaded
   * for a request that has a timeout signal of its own; turns use `providerFetch`). undici's own
   * fetch goes with its dispatchers: the built-in fetch bundles Node's own undici, whose dispatchers
   * need not be interchangeable with this major's.
   */
  fetch(url: string, init: RequestInit): Promise<Response> {
    if (!this.enabled) return fetch(url, init);
    return undiciFetch(loadUndici(), url, init, this.dispatcher);
  }

  async close(): Promise<void> {
    for (const agent of this.agents.values()) agent.destroy();
    await this.proxyDispatcher?.close().catch(() => undefined);
  }
}
