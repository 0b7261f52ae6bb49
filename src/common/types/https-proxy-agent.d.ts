// https-proxy-agent 9 publishes its types only through package.json "exports", which this
// project's `moduleResolution: node` cannot follow; this declares the one class we use.
declare module 'https-proxy-agent' {
  import type { Agent, AgentOptions } from 'node:http';

  export class HttpsProxyAgent extends Agent {
    constructor(proxy: string | URL, options?: AgentOptions);
  }
}
