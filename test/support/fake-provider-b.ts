import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WAIT_GUARD_MS } from './fake-provider-a';
import { rejectionOf } from './fake-provider-b-validation';

/**
 * The routes of the fake Code Assist upstream (docs/upstream/provider-b.md §12.1). `getOperation` is
 * `GET /v1internal/operations/<id>` (onboarding polls it, as the Gemini CLI does); the
 * auxiliary methods are the ones the real Gemini CLI calls besides setup and generation, so the
 * CLI itself can run against this fake (the oracle capture, scripts/oracle/).
 */
export type FakeCodeAssistRoute =
  | 'loadCodeAssist'
  | 'onboardUser'
  | 'getOperation'
  | 'streamGenerateContent'
  | 'generateContent'
  | 'token'
  | AuxiliaryRoute;

const AUXILIARY_ROUTES = [
  'countTokens',
  'listExperiments',
  'retrieveUserQuota',
  'fetchAdminControls',
  'getCodeAssistGlobalUserSetting',
  'setCodeAssistGlobalUserSetting',
  'recordCodeAssistMetrics',
] as const;
type AuxiliaryRoute = (typeof AUXILIARY_ROUTES)[number];
const POST_ROUTES = new Set<string>([
  'loadCodeAssist',
  'onboardUser',
  'streamGenerateContent',
  'generateContent',
  ...AUXILIARY_ROUTES,
]);

/** One SSE frame: `json` is written as `data: <json>\n\n`, `raw` verbatim. */
export interface FakeFrame {
  readonly json?: unknown;
  readonly raw?: string;
  /** Wait this long before writing the frame. */
  readonly delayMs?: number;
  /** Destroy the socket instead of writing (an abrupt upstream disconnect). */
  readonly disconnect?: boolean;
}

/**
 * A scripted reply. For `streamGenerateContent`: a non-2xx `status` sends `body` as JSON and no
 * SSE; otherwise `frames` are streamed and the response ends unless `holdOpen`. For the other
 * routes: `{status, body}` (status defaults to 200) sent as JSON.
 */
export interface FakeStreamScript {
  readonly status?: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly frames?: readonly FakeFrame[];
  /** Keep the response open after the frames (until the client or `close()` ends it). */
  readonly holdOpen?: boolean;
  /** Wait this long before sending the response headers. */
  readonly delayMs?: number;
}

/** One request the fake received. `closedByClient` turns true if the client hung up before the reply ended. */
export interface FakeRecordedRequest {
  readonly route: FakeCodeAssistRoute | 'unknown';
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: http.IncomingHttpHeaders;
  /** Parsed JSON, form fields for the token route, or the raw text when neither parses. */
  readonly body: any;
  readonly receivedAt: number;
  closedByClient: boolean;
}

const DEFAULT_USAGE = { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 };

/** The default generate payload: text `ok`, `finishReason: "STOP"`, usage 3/1/4. */
export function defaultGeneratePayload(): unknown {
  return {
    response: {
      candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }],
      usageMetadata: DEFAULT_USAGE,
      modelVersion: 'gemini-2.5-pro',
      responseId: 'fake-response',
    },
    traceId: 'fake-trace',
  };
}

/**
 * A loopback fake of Gemini Code Assist `v1internal` plus its OAuth token endpoint
 * (docs/upstream/provider-b.md §12). Each route replays its own FIFO of scripts and falls back to a default
 * reply when the queue is empty; every request is recorded. Use `baseUrl` as PROVIDER_B_URL and
 * `tokenUrl` as PROVIDER_B_TOKEN_URL (or `providerBSettings()` from provider-b-fixtures.ts).
 *
 * ```ts
 * const fake = await FakeCodeAssist.start();
 * fake.enqueue('streamGenerateContent', { frames: [{ json: textFrame('hi') }, { json: finishFrame('STOP') }] });
 * // … drive the gateway …
 * expect(fake.requests('streamGenerateContent')[0].body.project).toBe('fake-project');
 * await fake.close();
 * ```
 */
export class FakeCodeAssist {
  private readonly scripts = new Map<FakeCodeAssistRoute, FakeStreamScript[]>();
  private readonly scriptsByLogin = new Map<string, FakeStreamScript[]>();
  private readonly recorded: FakeRecordedRequest[] = [];
  private readonly waiters = new Set<() => void>();
  private tokenCount = 0;
  private responder?: (body: any) => unknown[];

  /**
   * Answers generate calls the script queues do not cover with payloads computed from the request
   * body (`npm run demo` uses this): each payload is one SSE frame, and `:generateContent` gets
   * them merged into one body. Tests leave it unset and get the fixed default reply.
   */
  respondWith(responder: (body: any) => unknown[]): void {
    this.responder = responder;
  }

  private respondedScript(route: FakeCodeAssistRoute, body: any): FakeStreamScript | undefined {
    if (!this.responder || (route !== 'streamGenerateContent' && route !== 'generateContent')) return undefined;
    const payloads = this.responder(body);
    return route === 'streamGenerateContent'
      ? { frames: payloads.map((json) => ({ json })) }
      : { body: mergePayloads(payloads) };
  }

  private constructor(private readonly server: http.Server) {}

  /** Starts the fake on `127.0.0.1` and a random port. */
  static async start(): Promise<FakeCodeAssist> {
    let fake!: FakeCodeAssist;
    const server = http.createServer((request, response) => void fake.handle(request, response));
    fake = new FakeCodeAssist(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  private get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** `http://127.0.0.1:<port>/v1internal` (PROVIDER_B_URL). */
  get baseUrl(): string {
    return `${this.origin}/v1internal`;
  }

  /** `http://127.0.0.1:<port>/token` (PROVIDER_B_TOKEN_URL). */
  get tokenUrl(): string {
    return `${this.origin}/token`;
  }

  /** Appends scripted replies to a route's FIFO. */
  enqueue(route: FakeCodeAssistRoute, ...scripts: FakeStreamScript[]): void {
    const queue = this.scripts.get(route) ?? [];
    queue.push(...scripts);
    this.scripts.set(route, queue);
  }

  /**
   * Appends scripted replies to a route's FIFO for one login (the request's `Authorization`, e.g.
   * `Bearer access-work`): taken before the route's shared FIFO, whatever order the logins' requests
   * arrive in (the gateway reads its logins at once).
   */
  enqueueFor(route: FakeCodeAssistRoute, authorization: string, ...scripts: FakeStreamScript[]): void {
    const key = `${route} ${authorization}`;
    const queue = this.scriptsByLogin.get(key) ?? [];
    queue.push(...scripts);
    this.scriptsByLogin.set(key, queue);
  }

  /** Recorded requests, in arrival order, optionally of one route. */
  requests(route?: FakeCodeAssistRoute): FakeRecordedRequest[] {
    return this.recorded.filter((entry) => route === undefined || entry.route === route);
  }

  /** Resolves with the route's requests once there are at least `count`; rejects after `timeoutMs`. */
  waitForRequests(
    route: FakeCodeAssistRoute,
    count: number,
    timeoutMs = WAIT_GUARD_MS,
  ): Promise<FakeRecordedRequest[]> {
    return this.waitUntil(() => this.requests(route).length >= count, timeoutMs, `${count} ${route} request(s)`).then(
      () => this.requests(route),
    );
  }

  /** Resolves once `predicate()` holds (re-checked on every request and client close). */
  waitUntil(predicate: () => boolean, expectedMs = WAIT_GUARD_MS, what = 'condition'): Promise<void> {
    if (predicate()) return Promise.resolve();
    // The given time is what it takes on an idle machine; a busy one gets at least the guard.
    const timeoutMs = Math.max(expectedMs, WAIT_GUARD_MS);
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`fake provider_b: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
    });
  }

  /** Forgets recorded requests and pending scripts, and restarts the token numbering (`fake-access-1`…). */
  reset(): void {
    this.recorded.length = 0;
    this.scripts.clear();
    this.scriptsByLogin.clear();
    this.tokenCount = 0;
  }

  /** Stops the server, cutting any held-open responses. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.origin);
    const text = await readBody(request);
    const route = routeOf(url.pathname);
    const record: FakeRecordedRequest = {
      route,
      method: request.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
      body: parseBody(text, route),
      receivedAt: Date.now(),
      closedByClient: false,
    };
    response.on('close', () => {
      if (!response.writableFinished) {
        record.closedByClient = true;
        this.notify();
      }
    });
    this.recorded.push(record);
    this.notify();
    if (route === 'unknown' || request.method !== expectedMethod(route))
      return sendJson(response, 404, { error: { code: 404, message: 'no such route', status: 'NOT_FOUND' } });
    // Like Code Assist: the quota read needs the login's bearer and names its project.
    if (route === 'retrieveUserQuota' && !/^Bearer \S+$/.test(String(request.headers.authorization ?? '')))
      return sendJson(response, 401, { error: { code: 401, message: 'unauthenticated', status: 'UNAUTHENTICATED' } });
    if (route === 'retrieveUserQuota' && typeof record.body?.project !== 'string')
      return sendJson(response, 400, { error: { code: 400, message: 'project required', status: 'INVALID_ARGUMENT' } });
    const rejection =
      route === 'streamGenerateContent' || route === 'generateContent' ? rejectionOf(record.body) : undefined;
    if (rejection !== undefined)
      return sendJson(response, 400, { error: { code: 400, message: rejection, status: 'INVALID_ARGUMENT' } });
    const script =
      this.scriptsByLogin.get(`${route} ${String(request.headers.authorization ?? '')}`)?.shift() ??
      this.scripts.get(route)?.shift() ??
      this.respondedScript(route, record.body) ??
      this.defaultScript(route, record.body);
    if (script.delayMs) await delay(script.delayMs);
    if (response.destroyed) return;
    if (route === 'streamGenerateContent' && (script.status ?? 200) < 300) return this.stream(response, script);
    sendJson(response, script.status ?? 200, script.body, script.headers);
  }

  private async stream(response: http.ServerResponse, script: FakeStreamScript): Promise<void> {
    response.writeHead(script.status ?? 200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      ...script.headers,
    });
    response.flushHeaders();
    response.on('error', () => undefined);
    for (const frame of script.frames ?? []) {
      if (frame.delayMs) await delay(frame.delayMs);
      if (response.destroyed) return;
      if (frame.disconnect) {
        response.socket?.destroy();
        return;
      }
      // Wait for the flush so a following `disconnect` cannot discard this frame.
      await new Promise<void>((resolve) =>
        response.write(frame.raw ?? `data: ${JSON.stringify(frame.json)}\n\n`, () => resolve()),
      );
    }
    if (!script.holdOpen) response.end();
  }

  private defaultScript(route: FakeCodeAssistRoute, body: any): FakeStreamScript {
    switch (route) {
      case 'loadCodeAssist':
        // Like the real backend: a request that names a licensed project gets that project back.
        return {
          body: {
            currentTier: { id: 'standard-tier' },
            cloudaicompanionProject:
              typeof body?.cloudaicompanionProject === 'string' ? body.cloudaicompanionProject : 'fake-project',
          },
        };
      case 'onboardUser':
      case 'getOperation':
        return {
          body: {
            name: 'operations/1',
            done: true,
            response: { cloudaicompanionProject: { id: 'fake-project', name: 'fake' } },
          },
        };
      case 'countTokens':
        return { body: { totalTokens: 1 } };
      case 'streamGenerateContent':
        return { frames: [{ json: defaultGeneratePayload() }] };
      case 'generateContent':
        return { body: defaultGeneratePayload() };
      case 'token':
        this.tokenCount++;
        return {
          body: {
            access_token: `fake-access-${this.tokenCount}`,
            expires_in: 3600,
            token_type: 'Bearer',
            scope: 'https://www.googleapis.com/auth/cloud-platform',
          },
        };
      default:
        // The auxiliary methods: an empty message is a valid answer to each of them.
        return { body: {} };
    }
  }
}

/**
 * A quota answer in the shape the Gemini CLI 0.61.0 reads (`buckets[]` with `modelId`,
 * `remainingFraction`, `resetTime`, `tokenType`): Pro three quarters left, Flash spent until
 * tomorrow. Specs script it with `enqueue('retrieveUserQuota', { body: quotaBody() })`; unscripted,
 * the fake answers an empty message, as it did when the real CLI's requests were captured (the CLI
 * asks differently once it sees buckets, so the capture check needs that default).
 */
export function quotaBody(now = Date.now()): Record<string, unknown> {
  const tomorrow = new Date(now + 20 * 3600_000).toISOString();
  return {
    buckets: [
      { modelId: 'gemini-2.5-pro', tokenType: 'REQUESTS', remainingFraction: 0.75, resetTime: tomorrow },
      { modelId: 'gemini-2.5-flash', tokenType: 'REQUESTS', remainingFraction: 0, resetTime: tomorrow },
    ],
  };
}

function routeOf(pathname: string): FakeCodeAssistRoute | 'unknown' {
  if (pathname === '/token') return 'token';
  if (/^\/v1internal\/operations\/[^/]+$/.test(pathname)) return 'getOperation';
  const match = /^\/v1internal:(\w+)$/.exec(pathname);
  return match && POST_ROUTES.has(match[1]) ? (match[1] as FakeCodeAssistRoute) : 'unknown';
}

function expectedMethod(route: FakeCodeAssistRoute): string {
  return route === 'getOperation' || route === 'getCodeAssistGlobalUserSetting' ? 'GET' : 'POST';
}

function parseBody(text: string, route: FakeCodeAssistRoute | 'unknown'): unknown {
  if (text === '') return undefined;
  if (route === 'token') return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function sendJson(
  response: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  response.end(body === undefined ? '' : JSON.stringify(body));
}

/** Unref'd: a scripted delay still pending when a test ends must not keep Jest alive. */
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** One `:generateContent` body from streamed payloads: all parts in order, the last finish and usage. */
function mergePayloads(payloads: unknown[]): unknown {
  const parts: unknown[] = [];
  let finishReason: unknown;
  let usageMetadata: unknown;
  for (const payload of payloads as Array<{
    response?: {
      candidates?: Array<{ content?: { parts?: unknown[] }; finishReason?: unknown }>;
      usageMetadata?: unknown;
    };
  }>) {
    const candidate = payload.response?.candidates?.[0];
    parts.push(...(candidate?.content?.parts ?? []));
    finishReason = candidate?.finishReason ?? finishReason;
    usageMetadata = payload.response?.usageMetadata ?? usageMetadata;
  }
  return { response: { candidates: [{ content: { role: 'model', parts }, finishReason }], usageMetadata } };
}
