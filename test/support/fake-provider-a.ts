import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import type { FakeModel, FakeRefusal } from './fake-provider-a-rules';
import {
  clientVersionOf,
  modelRefusal,
  olderThan,
  responsesRequestViolation,
  strictSchemaRefusal,
} from './fake-provider-a-rules';
import { makeJwt } from './provider-a-fixtures';
import { codexCapturePath } from './oracle-pins';

/** The content codings the fake can answer in (docs/providers.md "Compressed answers"). */
export type ContentCoding = 'gzip' | 'zstd';

/**
 * How long the waits below wait by default: a hang guard, not a speed requirement. What they wait
 * for takes milliseconds on an idle machine, but much longer on a busy 2-core one.
 */
export const WAIT_GUARD_MS = 30_000;

/** One frame of a scripted upstream reply (docs/upstream/provider-a.md §11.1). */
export type FakeFrame = FakeFrameContent & {
  /** The frame waits until this settles: the reply goes on when the test says so, not after a guessed delay. */
  after?: Promise<unknown>;
};

type FakeFrameContent =
  /** One JSON event: a WebSocket text frame, or `event: <type>\ndata: <json>\n\n` over SSE. */
  | { event: object; delayMs?: number }
  /** Text sent as is (protocol-error tests): a WebSocket text frame, or raw bytes over SSE. */
  | { raw: string; delayMs?: number }
  /** Drop the connection without a close frame / without ending the response. */
  | { disconnect: true; delayMs?: number }
  /**
   * A WebSocket ping; `ping` is called when its pong is back: the client has read every frame
   * before it (a peer answers a ping only after the frames ahead of it). SSE has no such echo:
   * there it is called once the bytes before it were handed to the socket.
   */
  | { ping: () => void; delayMs?: number };

/** One scripted reply; each WebSocket connection or SSE POST consumes the next one (FIFO). */
export interface FakeScript {
  /** Fail the upgrade / POST with this status (and optional headers and JSON body). */
  reject?: { status: number; headers?: Record<string, string>; body?: unknown };
  /** Extra response headers on the upgrade / POST (e.g. `x-codex-primary-used-percent`). */
  headers?: Record<string, string>;
  frames: FakeFrame[];
  /** After the frames, keep the connection open (else the fake closes it: close 1000 / end). */
  holdOpen?: boolean;
  /** Computes the frames from the request body instead of `frames` (set by `respondWith`). */
  respond?: (body: Record<string, unknown>) => FakeFrame[];
}

/** What the fake saw on one WebSocket connection or SSE POST (docs/upstream/provider-a.md §11.2). */
export interface RecordedRequest {
  readonly transport: 'ws' | 'sse';
  readonly path: string;
  /** Lower-cased copy of the request headers. */
  readonly headers: Record<string, string>;
  /** Parsed JSON of the one WebSocket frame or of the POST body; `undefined` for a rejected upgrade. */
  readonly body: Record<string, unknown> | undefined;
  readonly raw: string;
  readonly receivedAt: number;
  /** Ordinal (from 1) of the WebSocket connection or POST this request came on. */
  readonly connection: number;
  /**
   * The whole input the request stands for: the chain named by `previous_response_id` (its
   * inputs and outputs, as this connection holds it) followed by `input`. `undefined` when the
   * chain was unknown (the fake answered `previous_response_not_found`) or the body had no input.
   */
  readonly resolvedInput?: unknown[];
  /**
   * Resolves when the CLIENT closed the connection (close frame, reset, or aborted fetch) before
   * the fake ended it; never resolves when the fake closed it first after a non-holdOpen script.
   */
  readonly closedByClient: Promise<void>;
  /**
   * Set when the fake refused the body as the real backend would (unpaired call/output items, a
   * call id over 64 characters, an invalid tool name): answered 400 without consuming a script.
   */
  readonly violation?: string;
  /** The client's port of an SSE POST's TCP connection: POSTs on one kept-alive connection share it. */
  readonly remotePort?: number;
  /** SSE: resolves once the fake has handed the whole answer, its end included, to the socket. */
  readonly answered?: Promise<void>;
}

/** Picks the answer of one upgrade / POST from its lower-cased headers and body (`FakeProviderA.answerBy`). */
export type FakeRouter = (
  headers: Record<string, string>,
  body: Record<string, unknown> | undefined,
) => FakeScript | undefined;

/** A scripted answer of the token endpoint. */
export interface FakeTokenAnswer {
  status: number;
  body: unknown;
  delayMs?: number;
  /** The answer waits until this settles (a refresh held as long as a spec needs, without a timer). */
  after?: Promise<unknown>;
}

export const FAKE_RESPONSES_PATH = '/backend-api/codex/responses';
/** The usage endpoint the Codex CLI's `/status` reads (docs/upstream/provider-a.md §4.3). */
export const FAKE_USAGE_PATH = '/backend-api/wham/usage';

/**
 * The fake's `wham/usage` answer by default: a Plus plan barely used, no credits. Tests replace it
 * with `serveUsage` (e.g. `rate_limit.limit_reached`, credits).
 */
export function defaultUsageBody(nowSeconds = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  return {
    plan_type: 'plus',
    rate_limit: {
      allowed: true,
      limit_reached: false,
      primary_window: {
        used_percent: 12,
        limit_window_seconds: 18_000,
        reset_after_seconds: 9000,
        reset_at: nowSeconds + 9000,
      },
      secondary_window: {
        used_percent: 3,
        limit_window_seconds: 604_800,
        reset_after_seconds: 400_000,
        reset_at: nowSeconds + 400_000,
      },
    },
    credits: { has_credits: false, unlimited: false, balance: '0' },
  };
}
export const FAKE_MODELS_PATH = '/backend-api/codex/models';

/**
 * The pinned Codex CLI's own model list (`codex debug models --bundled`, reduced in
 * test/fixtures/codex-oracle/): what the fake serves and accepts until a test says otherwise.
 */
export function cliModelList(): FakeModel[] {
  const file = codexCapturePath('models.json');
  const models = (JSON.parse(fs.readFileSync(file, 'utf8')) as { models: Array<Record<string, any>> }).models;
  return models.map((model) => ({
    slug: model.slug,
    visibility: model.visibility,
    priority: model.priority,
    default_reasoning_level: model.default_reasoning_level,
    supported_reasoning_levels: (model.supported_reasoning_levels as string[]).map((effort) => ({
      effort,
      description: '',
    })),
    service_tiers: (model.service_tiers as string[]).map((id) => ({ id, name: id })),
    use_responses_lite: model.use_responses_lite,
    context_window: model.context_window,
    input_modalities: model.input_modalities,
    default_verbosity: model.default_verbosity,
    support_verbosity: model.support_verbosity,
    default_reasoning_summary: model.default_reasoning_summary,
    supports_reasoning_summary_parameter: model.supports_reasoning_summary_parameter,
  }));
}

/**
 * A capture of the real Codex CLI against a list that says something else about one model
 * (scripts/oracle/codex-check.ts, CODEX_CHANGED_LIST_RUNS): that list, as the fake serves it, and
 * the `reasoning`, `text` and `parallel_tool_calls` of the CLI's first sampling request.
 */
export function cliChangedListCapture(label: string): {
  models: FakeModel[];
  config: string[];
  sent: { reasoning?: Record<string, unknown>; text?: Record<string, unknown>; parallel_tool_calls?: boolean };
} {
  const file = codexCapturePath(`gpt-6.1-sol.http.models-served.${label}.capture.json`);
  const capture = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    models_patch: Record<string, Record<string, unknown> | null>;
    config?: string[];
    transcript: Array<{ kind: string; method?: string; body?: Record<string, any> }>;
  };
  const models: FakeModel[] = [];
  for (const model of cliModelList()) {
    const patch = capture.models_patch[model.slug];
    if (patch === null) continue;
    const patched: Record<string, unknown> = { ...model };
    for (const [field, value] of Object.entries(patch ?? {})) {
      if (value === null) delete patched[field];
      else patched[field] = value;
    }
    models.push(patched as unknown as FakeModel);
  }
  const sampling = capture.transcript.find(
    (entry) => entry.kind === 'http' && entry.method === 'POST' && Array.isArray(entry.body?.input),
  )!;
  return {
    models,
    config: capture.config ?? [],
    sent: {
      reasoning: sampling.body!.reasoning,
      text: sampling.body!.text,
      parallel_tool_calls: sampling.body!.parallel_tool_calls,
    },
  };
}

/** One GET of the model list, as the fake saw it. */
export interface RecordedModelsRequest {
  readonly url: string;
  readonly headers: Record<string, string>;
}
export const FAKE_TOKEN_PATH = '/oauth/token';

function lowerHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return result;
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** Resolves after `ms`, or early (false) once `gone()` says the client left. */
async function pause(ms: number | undefined, gone: () => boolean): Promise<boolean> {
  const end = Date.now() + (ms ?? 0);
  while (Date.now() < end) {
    if (gone()) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(10, end - Date.now()))));
  }
  return !gone();
}

/** Pings `ws`: true once its pong is back, false when the connection closes first. */
function pingAnswered(ws: WebSocket): Promise<boolean> {
  return new Promise((resolve) => {
    const settle = (answered: boolean) => {
      ws.off('pong', onPong);
      ws.off('close', onClose);
      resolve(answered);
    };
    const onPong = () => settle(true);
    const onClose = () => settle(false);
    ws.on('pong', onPong);
    ws.on('close', onClose);
    ws.ping();
  });
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * A loopback fake of the Codex backend for tests (docs/upstream/provider-a.md §11): one HTTP server on
 * 127.0.0.1, port 0, serving the WebSocket upgrade and the SSE POST at
 * `/backend-api/codex/responses` and the OAuth token endpoint at `/oauth/token`. Replies come from
 * a FIFO of scripts; every connection and token call is recorded.
 *
 * ```ts
 * const fake = await FakeProviderA.start();
 * fake.enqueue(textReply('Hello'));
 * // PROVIDER_A_URL = fake.wsUrl (WebSocket) or fake.httpUrl (SSE); PROVIDER_A_TOKEN_URL = fake.tokenUrl
 * const [request] = await fake.waitForRequests(1);
 * await fake.close();
 * ```
 */
export class FakeProviderA {
  private readonly scripts: FakeScript[] = [];
  private readonly recorded: RecordedRequest[] = [];
  private readonly missed: Array<{ transport: 'ws' | 'sse'; path: string }> = [];
  private responder?: (body: Record<string, unknown>) => FakeFrame[];
  private router?: FakeRouter;
  private readonly tokenAnswers: FakeTokenAnswer[] = [];
  private readonly tokenCalls: Array<Record<string, string>> = [];
  private readonly sockets = new Set<Duplex>();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  private readonly waiters = new Set<() => void>();
  private tokenCounter = 0;
  private connections = 0;
  private keepOpen = false;
  private handshakeDelayMs = 0;
  /** The message limit every upgrade answer announces (`x-codex-websocket-max-message-bytes`), if any. */
  private maxMessageBytes?: number;
  /** Sizes of the frames over that limit that reached the fake (each closed its connection with 1009). */
  private readonly oversized: number[] = [];
  /** `compressAnswers()`: compress the model list and SSE answers of requests that accept it. */
  private compress: ContentCoding | undefined;
  private compressedCount = 0;
  /** The response chains of every open WebSocket (for `forgetChains`). */
  private readonly chainStores = new Set<Map<string, unknown[]>>();
  /** The models the fake serves and accepts (`GET …/models`, and `model` of every request). */
  private models: FakeModel[] = cliModelList();
  private listShape?: (models: FakeModel[]) => unknown;
  /** Scripted failures of the next `GET …/models` calls (FIFO), then the list. */
  private readonly modelsFailures: number[] = [];
  private readonly modelsCalls: RecordedModelsRequest[] = [];
  /** `refuseModelsListToken()`: access tokens the model list answers 401, until `reset()`. */
  private readonly refusedListTokens = new Set<string>();
  /** `serveUsage()`: the `wham/usage` answer (a function of now), until `reset()`. */
  private usage: (accountId: string | undefined) => Record<string, unknown> = () => defaultUsageBody();
  private readonly usageCalls: RecordedModelsRequest[] = [];
  /** `holdUsage()`: which logins' `wham/usage` calls wait (undefined: all), and the answers waiting, until `reset()`. */
  private usageHeld?: { readonly accountId?: string; readonly answers: Array<() => void> };
  /** `sendMeter()`: headers every upgrade / POST answer carries (the plan's windows and credits), until `reset()`. */
  private meter: Record<string, string> = {};

  private constructor(private readonly server: http.Server) {}

  /** Starts the fake on 127.0.0.1 with a random port. */
  static async start(): Promise<FakeProviderA> {
    const server = http.createServer();
    const fake = new FakeProviderA(server);
    server.on('connection', (socket) => {
      fake.sockets.add(socket);
      socket.on('close', () => fake.sockets.delete(socket));
    });
    server.on('request', (request, response) => void fake.onRequest(request, response));
    server.on('upgrade', (request, socket, head) => fake.onUpgrade(request, socket, head));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  private get origin(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** `ws://127.0.0.1:<port>/backend-api/codex/responses` (PROVIDER_A_URL for the WebSocket transport). */
  get wsUrl(): string {
    return `ws://${this.origin}${FAKE_RESPONSES_PATH}`;
  }

  /** `http://127.0.0.1:<port>/backend-api/codex/responses` (PROVIDER_A_URL for HTTP + SSE). */
  get httpUrl(): string {
    return `http://${this.origin}${FAKE_RESPONSES_PATH}`;
  }

  /** `http://127.0.0.1:<port>/oauth/token` (PROVIDER_A_TOKEN_URL). */
  get tokenUrl(): string {
    return `http://${this.origin}${FAKE_TOKEN_PATH}`;
  }

  /** Appends scripts to the FIFO; each connection / POST consumes one. */
  enqueue(...scripts: FakeScript[]): void {
    this.scripts.push(...scripts);
  }

  /** Replaces the model list the fake serves and accepts (until `reset()`: the CLI's list). */
  serveModels(models: FakeModel[]): void {
    this.models = models;
  }

  /**
   * The list body as a backend that changed its shape would send it (`reshape` of the served
   * models); the models themselves are still served and accepted as before. Until `reset()`.
   */
  reshapeModelsList(reshape: (models: FakeModel[]) => unknown): void {
    this.listShape = reshape;
  }

  /** The models served now. */
  servedModels(): FakeModel[] {
    return [...this.models];
  }

  /** The next `count` model list GETs answer `status` (then the list again). */
  failModelsList(status: number, count = 1): void {
    for (let index = 0; index < count; index++) this.modelsFailures.push(status);
  }

  /**
   * The model list answers 401 to a GET with this access token, as the backend does to a token it
   * no longer takes; a token the fake's token endpoint grants later is served. Until `reset()`.
   */
  refuseModelsListToken(accessToken: string): void {
    this.refusedListTokens.add(accessToken);
  }

  /** Every GET of the model list so far. */
  modelsRequests(): RecordedModelsRequest[] {
    return [...this.modelsCalls];
  }

  /** Appends token endpoint answers; with none queued it answers 200 with fresh tokens. */
  enqueueToken(...answers: FakeTokenAnswer[]): void {
    this.tokenAnswers.push(...answers);
  }

  /** Every WebSocket connection and SSE POST so far, in arrival order. */
  requests(): RecordedRequest[] {
    return [...this.recorded];
  }

  /** Connections / POSTs that found the script queue empty (answered 500). */
  misses(): Array<{ transport: 'ws' | 'sse'; path: string }> {
    return [...this.missed];
  }

  /** Scripts not consumed yet. */
  pendingScripts(): number {
    return this.scripts.length;
  }

  /** Form fields of every token endpoint call. */
  tokenRequests(): Array<Record<string, string>> {
    return [...this.tokenCalls];
  }

  /** The parsed body of the latest recorded request. */
  lastBody(): Record<string, unknown> | undefined {
    return this.recorded.at(-1)?.body;
  }

  /** Resolves with the requests once at least `count` were recorded; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs = WAIT_GUARD_MS): Promise<RecordedRequest[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.recorded.length < count) return false;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(this.requests());
        return true;
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`fake provider_a saw ${this.recorded.length} of ${count} requests within ${timeoutMs} ms`));
      }, timeoutMs);
      if (!check()) this.waiters.add(check);
    });
  }

  /**
   * Behave like the real backend's WebSocket mode from now until `reset()`: a connection stays
   * open after a script that ends with a terminal event, each further `response.create` frame
   * on it consumes the next script, and the connection keeps its response chains in memory
   * (inputs + output items by response id): a frame whose `previous_response_id` this
   * connection does not hold gets a `previous_response_not_found` error event and consumes no
   * script. Without it the fake reads exactly one frame per connection (docs/upstream/provider-a.md §11.2).
   */
  keepConnectionsOpen(): void {
    this.keepOpen = true;
  }

  /**
   * Delays every WebSocket upgrade by `ms` from now until `reset()`: a stand-in for the TLS and
   * WebSocket handshake across the internet (`npm run bench`).
   */
  delayHandshakes(ms: number): void {
    this.handshakeDelayMs = ms;
  }

  /**
   * From now until `reset()`, every upgrade answer announces `x-codex-websocket-max-message-bytes:
   * <bytes>` and, as a real server does, a frame larger than that closes its connection with 1009
   * (message too big) unanswered; `oversizedFrames()` lists such frames.
   */
  limitWebSocketMessages(bytes: number): void {
    this.maxMessageBytes = bytes;
  }

  /**
   * From now until `reset()`, answer the model list and the SSE POSTs compressed with `coding`
   * when the request's `accept-encoding` names it, as the real backend's HTTP front does.
   */
  compressAnswers(coding: ContentCoding = 'gzip'): void {
    this.compress = coding;
  }

  /** How many answers went out compressed. */
  compressedAnswers(): number {
    return this.compressedCount;
  }

  /** Byte sizes of the frames that exceeded the announced limit. */
  oversizedFrames(): number[] {
    return [...this.oversized];
  }

  /** Drops every open WebSocket without a close frame (a kept connection the server lost). */
  dropConnections(): void {
    for (const client of this.wss.clients) client.terminate();
  }

  /** Forgets every connection's response chains (the server lost its in-memory state). */
  forgetChains(): void {
    for (const chains of this.chainStores) chains.clear();
  }

  /** Open WebSocket connections right now. */
  openConnections(): number {
    return this.wss.clients.size;
  }

  /**
   * Replaces the `wham/usage` answer until `reset()`: a body, or one computed at each call from the
   * call's `ChatGPT-Account-Id` (each login's own plan).
   */
  serveUsage(body: Record<string, unknown> | ((accountId: string | undefined) => Record<string, unknown>)): void {
    this.usage = typeof body === 'function' ? body : () => body;
  }

  /**
   * From now until the returned release (or `reset()`), `wham/usage` calls (of the login with
   * `ChatGPT-Account-Id: accountId` only, when given) are recorded but answered only at the
   * release: a usage endpoint as slow as a spec needs, without a timer.
   */
  holdUsage(accountId?: string): () => void {
    const held = { accountId, answers: [] as Array<() => void> };
    this.usageHeld = held;
    return () => {
      if (this.usageHeld === held) this.usageHeld = undefined;
      held.answers.splice(0).forEach((answer) => answer());
    };
  }

  /** The `GET wham/usage` calls the fake saw (URL and lower-cased headers). */
  usageRequests(): RecordedModelsRequest[] {
    return [...this.usageCalls];
  }

  /**
   * From now until `reset()`, every upgrade / POST answer carries these headers, as the real
   * backend sends the plan's meter on every answer (`x-codex-primary-used-percent`,
   * `x-codex-credits-has-credits`, …; `planHeaders` in provider-a-fixtures.ts builds them).
   * A script's own `headers` win.
   */
  sendMeter(headers: Record<string, string>): void {
    this.meter = { ...headers };
  }

  /** Forgets scripts, recordings, misses and token state (between tests). */
  reset(): void {
    this.usage = () => defaultUsageBody();
    this.usageCalls.length = 0;
    this.usageHeld?.answers.splice(0).forEach((answer) => answer());
    this.usageHeld = undefined;
    this.meter = {};
    this.keepOpen = false;
    this.handshakeDelayMs = 0;
    this.maxMessageBytes = undefined;
    this.oversized.length = 0;
    this.compress = undefined;
    this.compressedCount = 0;
    this.scripts.length = 0;
    this.recorded.length = 0;
    this.missed.length = 0;
    this.tokenAnswers.length = 0;
    this.tokenCalls.length = 0;
    this.tokenCounter = 0;
    this.responder = undefined;
    this.router = undefined;
    this.models = cliModelList();
    this.listShape = undefined;
    this.modelsFailures.length = 0;
    this.modelsCalls.length = 0;
    this.refusedListTokens.clear();
  }

  /** Drops every connection and stops the server. */
  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    for (const socket of this.sockets) socket.destroy();
    this.wss.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private record(entry: RecordedRequest): void {
    this.recorded.push(entry);
    for (const waiter of [...this.waiters]) waiter();
  }

  /**
   * Answers every request the script queue does not cover with frames computed from its body
   * (`npm run demo` uses this for open-ended conversations); tests leave it unset so a missing
   * script stays a visible 500 miss.
   */
  respondWith(responder: ((body: Record<string, unknown>) => FakeFrame[]) | undefined): void {
    this.responder = responder;
  }

  /**
   * Answers each upgrade / POST from its lower-cased headers (which login: `chatgpt-account-id`)
   * and body (over WebSocket, undefined at the upgrade) before the script queue is looked at, until
   * `reset()`; a request the router answers `undefined` takes the next script as usual.
   */
  answerBy(router: FakeRouter | undefined): void {
    this.router = router;
  }

  private nextScript(
    transport: 'ws' | 'sse',
    path: string,
    headers: Record<string, string>,
    body: Record<string, unknown> | undefined,
  ): FakeScript | undefined {
    const script =
      this.router?.(headers, body) ??
      this.scripts.shift() ??
      (this.responder ? { frames: [], respond: this.responder } : undefined);
    if (!script) this.missed.push({ transport, path });
    return script;
  }

  // ── HTTP: token endpoint and SSE ───────────────────────────────────────────────────────────

  private async onRequest(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0];
    const raw = await readBody(request).catch(() => '');
    if (request.method === 'POST' && path === FAKE_TOKEN_PATH) return this.answerToken(raw, response);
    if (request.method === 'GET' && path === FAKE_MODELS_PATH) return this.answerModels(request, response);
    if (request.method === 'GET' && path === FAKE_USAGE_PATH) return this.answerUsage(request, response);
    if (request.method !== 'POST' || path !== FAKE_RESPONSES_PATH) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const closed = deferred();
    response.on('close', () => {
      if (!response.writableFinished) closed.resolve();
    });
    const answered = deferred();
    response.on('finish', () => answered.resolve());
    const body = parseJson(raw);
    // Every POST is recorded once; a refused one carries the reason the real backend would give.
    const recordRequest = (violation?: string): void =>
      this.record({
        transport: 'sse',
        path,
        headers: lowerHeaders(request.headers),
        body,
        raw,
        receivedAt: Date.now(),
        connection: ++this.connections,
        remotePort: request.socket.remotePort,
        answered: answered.promise,
        ...(violation === undefined
          ? { resolvedInput: Array.isArray(body?.input) ? body.input : undefined }
          : { violation }),
        closedByClient: closed.promise,
      });
    const refusal =
      modelRefusal(
        body ?? {},
        this.models,
        request.headers['x-openai-internal-codex-responses-lite'] === 'true',
        clientVersionOf(request.headers['user-agent']),
      ) ?? strictSchemaRefusal(body ?? {});
    if (refusal) {
      recordRequest(refusalText(refusal));
      response.writeHead(refusal.status, { 'content-type': 'application/json' }).end(JSON.stringify(refusal.body));
      return;
    }
    const violation = responsesRequestViolation(body ?? {});
    if (violation) {
      recordRequest(violation);
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(invalidRequest(violation)));
      return;
    }
    const script = this.nextScript('sse', path, lowerHeaders(request.headers), body);
    recordRequest();
    if (!script) {
      response
        .writeHead(500, { 'content-type': 'application/json' })
        .end('{"error":{"code":"server_error","message":"no script"}}');
      return;
    }
    if (script.reject) {
      response.writeHead(script.reject.status, { 'content-type': 'application/json', ...script.reject.headers });
      response.end(script.reject.body === undefined ? '' : JSON.stringify(script.reject.body));
      return;
    }
    const coding = this.codingOf(request);
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...(coding ? { 'content-encoding': coding } : {}),
      ...this.meter,
      ...script.headers,
    });
    response.flushHeaders();
    // Compressed, each event is flushed through the compressor at once, as a streaming server does.
    const compressor =
      coding === 'gzip' ? zlib.createGzip() : coding === 'zstd' ? zlib.createZstdCompress() : undefined;
    compressor?.pipe(response);
    const write = (text: string) =>
      new Promise<void>((resolve) =>
        compressor
          ? (compressor.write(text), compressor.flush(() => resolve()))
          : response.write(text, () => resolve()),
      );
    const gone = () => response.destroyed || response.writableEnded;
    const frames = script.respond ? script.respond(parseJson(raw) ?? {}) : script.frames;
    for (const frame of frames) {
      if (frame.after) await frame.after;
      if (!(await pause(frame.delayMs, gone))) return;
      if ('disconnect' in frame) {
        response.socket?.destroy();
        return;
      }
      if ('ping' in frame) {
        frame.ping();
        continue;
      }
      const text =
        'raw' in frame
          ? frame.raw
          : `event: ${String((frame.event as { type?: unknown }).type ?? 'message')}\ndata: ${JSON.stringify(frame.event)}\n\n`;
      // Wait until the bytes are handed to the socket, so a following disconnect cannot drop them.
      await write(text);
    }
    if (!script.holdOpen && !gone()) {
      if (compressor) compressor.end();
      else response.end();
    }
  }

  /** In `compressAnswers()` mode, a request that accepts that coding gets an answer in it. */
  private codingOf(request: http.IncomingMessage): ContentCoding | undefined {
    const accepted = (request.headers['accept-encoding'] ?? '').split(',').map((coding) => coding.trim());
    if (this.compress === undefined || !accepted.includes(this.compress)) return undefined;
    this.compressedCount += 1;
    return this.compress;
  }

  /** Like the real backend: no bearer → 401, no `ChatGPT-Account-Id` → 403; else the usage answer. */
  private answerUsage(request: http.IncomingMessage, response: http.ServerResponse): void {
    const headers = lowerHeaders(request.headers);
    this.usageCalls.push({ url: request.url ?? '', headers });
    const json = (status: number, body: unknown): void =>
      void response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (!/^Bearer \S+$/.test(headers.authorization ?? '')) return json(401, { detail: 'Unauthorized' });
    if (!headers['chatgpt-account-id']) return json(403, { detail: 'Forbidden' });
    const held = this.usageHeld;
    if (held && (held.accountId === undefined || held.accountId === headers['chatgpt-account-id']))
      held.answers.push(() => json(200, this.usage(headers['chatgpt-account-id'])));
    else json(200, this.usage(headers['chatgpt-account-id']));
  }

  private answerModels(request: http.IncomingMessage, response: http.ServerResponse): void {
    const headers = lowerHeaders(request.headers);
    this.modelsCalls.push({ url: request.url ?? '', headers });
    const bearer = /^Bearer (\S+)$/.exec(headers.authorization ?? '')?.[1];
    if (bearer === undefined || this.refusedListTokens.has(bearer)) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":"Unauthorized"}');
      return;
    }
    const failure = this.modelsFailures.shift();
    if (failure !== undefined) {
      response.writeHead(failure, { 'content-type': 'application/json' }).end('{"detail":"scripted failure"}');
      return;
    }
    // The backend shapes the list by the client version asked for: newer-only models are left out.
    const asked = new URL(request.url ?? '/', 'http://fake').searchParams.get('client_version') ?? undefined;
    const models = this.models.filter(
      (model) => model.minimal_client_version === undefined || !olderThan(asked, model.minimal_client_version),
    );
    const text = JSON.stringify(this.listShape ? this.listShape(models) : { models });
    const coding = this.codingOf(request);
    if (coding)
      response
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding })
        .end(coding === 'gzip' ? zlib.gzipSync(text) : zlib.zstdCompressSync(text));
    else response.writeHead(200, { 'content-type': 'application/json' }).end(text);
  }

  private async answerToken(raw: string, response: http.ServerResponse): Promise<void> {
    this.tokenCalls.push(Object.fromEntries(new URLSearchParams(raw)));
    const answer = this.tokenAnswers.shift() ?? this.defaultTokenAnswer();
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    if (answer.after) await answer.after;
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  }

  private defaultTokenAnswer(): FakeTokenAnswer {
    const n = ++this.tokenCounter;
    const exp = Math.floor(Date.now() / 1000) + 3600;
    return {
      status: 200,
      body: {
        access_token: makeJwt({ exp, jti: `at-${n}` }),
        refresh_token: `rt-${n}`,
        id_token: makeJwt({ exp, jti: `id-${n}` }),
        expires_in: 3600,
      },
    };
  }

  // ── WebSocket ──────────────────────────────────────────────────────────────────────────────

  private onUpgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (request.url ?? '/').split('?')[0];
    const headers = lowerHeaders(request.headers);
    if (path !== FAKE_RESPONSES_PATH) return rejectUpgrade(socket, 404, {}, { error: 'not found' });
    // Under an announced limit a client may hang up before any frame (its frame would be too
    // large): the script is then only looked at here and taken with the first frame.
    const lazy =
      this.maxMessageBytes !== undefined && (this.scripts.length === 0 ? !!this.responder : !this.scripts[0].reject);
    const script = lazy ? (this.scripts[0] ?? { frames: [] }) : this.nextScript('ws', path, headers, undefined);
    if (!script || script.reject) {
      this.record({
        transport: 'ws',
        path,
        headers,
        body: undefined,
        raw: '',
        receivedAt: Date.now(),
        connection: ++this.connections,
        closedByClient: new Promise(() => undefined),
      });
      if (!script) return rejectUpgrade(socket, 500, {}, { error: { code: 'server_error', message: 'no script' } });
      return rejectUpgrade(socket, script.reject!.status, script.reject!.headers ?? {}, script.reject!.body);
    }
    const addHeaders = (responseHeaders: string[], upgradeRequest: http.IncomingMessage) => {
      if (upgradeRequest !== request) return;
      this.wss.off('headers', addHeaders);
      for (const [name, value] of Object.entries({ ...this.meter, ...script.headers }))
        responseHeaders.push(`${name}: ${value}`);
      if (this.maxMessageBytes !== undefined)
        responseHeaders.push(`x-codex-websocket-max-message-bytes: ${this.maxMessageBytes}`);
    };
    this.wss.on('headers', addHeaders);
    const upgrade = () =>
      this.wss.handleUpgrade(request, socket, head, (ws) =>
        this.serveWebSocket(ws, path, headers, lazy ? undefined : script),
      );
    if (this.handshakeDelayMs > 0) setTimeout(upgrade, this.handshakeDelayMs);
    else upgrade();
  }

  private serveWebSocket(
    ws: WebSocket,
    path: string,
    headers: Record<string, string>,
    upgradeScript: FakeScript | undefined,
  ): void {
    // Under an announced limit the script is taken with the first frame (see onUpgrade).
    let firstScript: FakeScript = upgradeScript ?? { frames: [] };
    const connection = ++this.connections;
    const closed = deferred();
    let closingByFake = false;
    ws.on('close', () => {
      if (!closingByFake) closed.resolve();
    });
    ws.on('error', () => undefined);
    /** This connection's response chains: response id → every input and output item it stands for. */
    const chains = new Map<string, unknown[]>();
    this.chainStores.add(chains);
    ws.on('close', () => this.chainStores.delete(chains));

    let frames = 0;
    let busy = false;
    const gone = () => ws.readyState !== WebSocket.OPEN;
    const send = (text: string) => new Promise<void>((resolve) => ws.send(text, () => resolve()));
    const closeByFake = () => {
      closingByFake = true;
      ws.close(1000);
    };
    const play = async (script: FakeScript, body: Record<string, unknown>, resolvedInput: unknown[]) => {
      busy = true;
      const output: unknown[] = [];
      let terminal = false;
      for (const frame of script.respond ? script.respond(body) : script.frames) {
        if (frame.after) await frame.after;
        if (!(await pause(frame.delayMs, gone))) return;
        if ('disconnect' in frame) {
          closingByFake = true;
          ws.terminate();
          return;
        }
        if ('ping' in frame) {
          if (!(await pingAnswered(ws))) return;
          frame.ping();
          continue;
        }
        await send('raw' in frame ? frame.raw : JSON.stringify(frame.event));
        const event = 'event' in frame ? (frame.event as Record<string, unknown>) : {};
        terminal = TERMINAL_EVENTS.has(String(event.type));
        if (event.type === 'response.output_item.done') output.push(event.item);
        const response = event.response as Record<string, unknown> | undefined;
        if (event.type === 'response.completed' && typeof response?.id === 'string')
          chains.set(response.id, [...resolvedInput, ...output]);
      }
      busy = false;
      if (!script.holdOpen && !gone() && !(this.keepOpen && terminal)) closeByFake();
    };
    ws.on('message', (data) => {
      const size = Buffer.isBuffer(data) ? data.length : Buffer.concat(data as Buffer[]).length;
      if (this.maxMessageBytes !== undefined && size > this.maxMessageBytes) {
        this.oversized.push(size);
        closingByFake = true;
        ws.close(1009);
        return;
      }
      frames += 1;
      const raw = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8');
      if (frames === 1 && !upgradeScript) {
        const taken = this.nextScript('ws', path, headers, parseJson(raw));
        if (!taken) {
          void send(
            JSON.stringify({ type: 'error', status: 500, error: { code: 'server_error', message: 'no script' } }),
          );
          return;
        }
        firstScript = taken;
      }
      // Without keepConnectionsOpen the fake reads exactly one frame (the request), then only watches for the close.
      if ((frames > 1 && !this.keepOpen) || busy) return;
      const body = parseJson(raw) ?? {};
      const recordFrame = (fields: Pick<RecordedRequest, 'resolvedInput' | 'violation'>): void =>
        this.record({
          transport: 'ws',
          path,
          headers,
          body: parseJson(raw),
          raw,
          receivedAt: Date.now(),
          connection,
          closedByClient: closed.promise,
          ...fields,
        });
      const refusal =
        modelRefusal(body, this.models, false, clientVersionOf(headers['user-agent'])) ?? strictSchemaRefusal(body);
      if (refusal) {
        recordFrame({ violation: refusalText(refusal) });
        // The backend answers a refused response.create with an error event; the script stays queued.
        if (frames === 1 && !firstScript.respond) this.scripts.unshift(firstScript);
        void send(JSON.stringify({ type: 'error', status: refusal.status, ...refusal.body })).then(() => {
          if (!this.keepOpen) closeByFake();
        });
        return;
      }
      const previous = typeof body.previous_response_id === 'string' ? body.previous_response_id : undefined;
      const known = previous === undefined ? [] : chains.get(previous);
      const input = Array.isArray(body.input) ? body.input : undefined;
      const resolvedInput = known && input ? [...known, ...input] : undefined;
      const violation = known ? responsesRequestViolation({ ...body, input: resolvedInput ?? [] }) : undefined;
      recordFrame({ resolvedInput, violation });
      if (violation) {
        // The backend answers a bad response.create with an error event; the script stays queued.
        if (frames === 1 && !firstScript.respond) this.scripts.unshift(firstScript);
        void send(JSON.stringify({ type: 'error', status: 400, ...invalidRequest(violation) })).then(() => {
          if (!this.keepOpen) closeByFake();
        });
        return;
      }
      if (!known) {
        void send(
          JSON.stringify({
            type: 'error',
            status: 400,
            error: {
              type: 'invalid_request_error',
              code: 'previous_response_not_found',
              message: `Previous response with id '${previous}' not found.`,
              param: 'previous_response_id',
            },
          }),
        );
        return;
      }
      const script = frames === 1 ? firstScript : this.nextScript('ws', path, headers, body);
      if (!script) {
        void send(
          JSON.stringify({ type: 'error', status: 500, error: { code: 'server_error', message: 'no script' } }),
        );
        return;
      }
      void play(script, body, resolvedInput ?? []);
    });
  }
}

/** Events after which the real backend's connection is free for the next `response.create`. */
const TERMINAL_EVENTS = new Set(['response.completed', 'response.failed', 'response.incomplete', 'error']);

/** The refusal's message, for `RecordedRequest.violation`. */
function refusalText(refusal: FakeRefusal): string {
  const error = refusal.body.error as { message?: string } | undefined;
  return error?.message ?? String(refusal.body.detail);
}

/** The backend's 400 body for a request it refuses. */
function invalidRequest(message: string): { error: Record<string, unknown> } {
  return { error: { message, type: 'invalid_request_error', param: 'input', code: null } };
}

function rejectUpgrade(socket: Duplex, status: number, headers: Record<string, string>, body: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(text)}`,
    'connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${text}`);
}
