import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { performance } from 'node:perf_hooks';
import type { AccountPool } from '../../accounts/account-pool';
import { AccountPools } from '../../accounts/account-pools';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import type { PolledEvents, UsageEvent } from '../../core/chat-event';
import { customToolNames } from '../../core/chat-message';
import { GatewayError } from '../../core/gateway.error';
import { GatewayMetrics } from '../../metrics/gateway-metrics';
import { LiveModelLists } from '../../models/live-model-lists';
import { ModelCatalog } from '../../models/model-catalog';
import type {
  CallContext,
  ChatRequest,
  CheckedRequest,
  ExtractionRequest,
  ExtractionResult,
  ProviderAdapter,
} from '../shared/provider-adapter';
import { runFamilyTurn } from '../shared/family-turn';
import type { AcceptedTurn } from '../shared/turn-runner';
import { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { createProviderAPool, ProviderALogin } from './provider-a.accounts';
import type { ProviderACredentials } from '../../accounts/provider-a/provider-a.auth';
import { buildExtractionBody } from './provider-a.extraction';
import { CodexClient, codexClient } from './provider-a.client';
import { CODEX_CLI_VERSION } from './codex-cli-version';
import { FaithfulProfile, loadFaithfulProfile, localTimeZone } from './provider-a.faithful-profile';
import { assertCarriedContent, modelImageRefusal } from './provider-a.input-items';
import type { WireShape } from './provider-a.request';
import {
  buildChatBody,
  hostedToolRefusal,
  newTurnId,
  readInstallationId,
  sessionIdForChat,
  structuredPromptCacheKey,
  toLiteShape,
  toolsSent,
  turnMetadata,
  upstreamHeaders,
  wireShapeFor,
} from './provider-a.request';
import { ChatTurnLease, SessionPool, sessionUseFields } from './provider-a.session-pool';
import { MODEL_REFUSAL_CODES, namingModel } from './provider-a.errors';
import { ProviderAModelsRefresh } from './provider-a.models-refresh';
import { OpenConnection, ProviderATransportKind, transportForUrl } from './provider-a.transport';
import { openSseConnection } from './provider-a.transport-sse';
import { openWebSocketConnection } from './provider-a.transport-ws';
import { AttemptBuilder, AttemptRequest, ProviderAAttempt, ProviderAUpstream } from './provider-a.upstream';

/** Headers and body of one attempt, before the tool-name mapping joins them. */
type AttemptPlan = Pick<AttemptRequest, 'headers' | 'body'>;

const NO_USAGE: UsageEvent = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/**
 * provider_a: the ChatGPT Codex Responses backend through the Codex CLI login. Wiring only: the
 * login (`provider-a.auth`), bodies (`provider-a.request`, `provider-a.extraction`), transports
 * and the event translation (`provider-a.stream`) live in their own files; per-call state lives
 * in the turn runner, never on this instance.
 */
@Injectable()
export class ProviderAAdapter implements ProviderAdapter, OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  readonly id = 'provider_a' as const;
  /** The Codex logins (docs/accounts.md); one, `default`, unless PROVIDER_A_ACCOUNTS lists several. */
  private readonly accounts: AccountPool<ProviderALogin>;
  /** HTTPS_PROXY / HTTP_PROXY / NO_PROXY for the backend, the token endpoint and the WebSocket. */
  private readonly proxy: UpstreamProxy;
  /** The proxy of each attempt's connection; none without a proxy setting, so nothing is asked per connection. */
  private readonly attemptProxy?: UpstreamProxy;
  /** Read in `onModuleInit`, before the application serves. */
  private profile!: FaithfulProfile;
  /** Faithful mode's installation id, read in `onModuleInit` (no file read on a request). */
  private installationId!: string;
  private readonly transport: ProviderATransportKind;
  /** The Codex CLI version and encodings the gateway claims (PROVIDER_A_CLIENT_VERSION). */
  private readonly client: CodexClient;
  private readonly open: OpenConnection;
  /**
   * Chat connections kept between turns (WebSocket only; never used by structured inference).
   * Readable so a spec can shorten its checks on a running gateway (`SessionPool.check`).
   */
  readonly sessions?: SessionPool;
  /** The live model list (PROVIDER_A_MODELS_REFRESH; `0` never starts it). */
  private readonly modelsRefresh: ProviderAModelsRefresh;
  /**
   * The wire shape a turn's tools were checked against before the queue, by the turn's tools list
   * (one array per request): the turn goes out in that shape even if the model list changed while
   * it waited, so no hosted tool reaches the lite shape, which would leave it out.
   */
  private readonly checkedShapes = new WeakMap<readonly unknown[], WireShape>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: GatewayMetrics,
    pools: AccountPools,
    private readonly catalog: ModelCatalog,
    logger: PinoLogger,
    private readonly liveModels: LiveModelLists,
  ) {
    this.proxy = new UpstreamProxy(config.proxy);
    if (this.proxy.enabled) this.attemptProxy = this.proxy;
    this.transport = transportForUrl(config.providerA.url);
    this.client = codexClient(config.providerA.clientVersion);
    this.accounts = createProviderAPool(config, pools, this.proxy, this.client);
    if (config.providerA.clientVersion !== undefined && config.providerA.clientVersion !== CODEX_CLI_VERSION) {
      // Once, at startup: the operator claims a version whose wire nobody compared with the gateway's.
      logger?.warn(
        {
          event: 'provider_a_client_version_unverified',
          client_version: config.providerA.clientVersion,
          verified_version: CODEX_CLI_VERSION,
          fix: `the gateway still sends Codex CLI ${CODEX_CLI_VERSION}'s wire; unset PROVIDER_A_CLIENT_VERSION once a gateway release verifies a CLI that new`,
        },
        'provider_a_client_version_unverified',
      );
    }
    this.open = this.transport === 'ws' ? openWebSocketConnection : openSseConnection;
    if (this.transport === 'ws') {
      this.sessions = new SessionPool(
        { maxKept: config.providerA.maxKeptSessions, idleTimeoutMs: config.providerA.sessionIdleTimeoutMs },
        {
          keptChanged: (count) => metrics.upstreamSessionsKeptChanged(count),
          turnReused: () => metrics.upstreamSessionTurn('reused'),
          turnIncremental: () => metrics.upstreamSessionTurn('incremental'),
          chainFallback: () => metrics.upstreamSessionTurn('fallback'),
        },
      );
    }
    this.modelsRefresh = new ProviderAModelsRefresh({
      responsesUrl: config.providerA.url,
      client: this.client,
      periodMs: config.providerA.modelsRefreshMs,
      catalog,
      live: liveModels,
      accounts: this.accounts,
      proxy: this.proxy,
      logger,
    });
  }

  /** A missing or invalid faithful profile fails startup (ConfigError); the installation id is read once. */
  onModuleInit(): void {
    this.profile = loadFaithfulProfile(this.config.providerA.faithfulProfilePath);
    this.installationId = readInstallationId(this.config.providerA.codexHome);
  }

  /** In the background: readiness and startup never wait for the upstream's list. */
  onApplicationBootstrap(): void {
    this.modelsRefresh.start();
  }

  onModuleDestroy(): void {
    this.modelsRefresh.stop();
    this.sessions?.closeAll();
    void this.proxy.close();
  }

  checkContent(request: CheckedRequest): void {
    const info = this.catalog.upstreamInfo(request.model.upstreamModel);
    assertCarriedContent(request.messages, modelImageRefusal(request.model, info?.inputModalities));
    if (request.tools.length === 0) return;
    // Decided once per turn, here: the client's tools are checked against it and every attempt goes out in it.
    const shape = wireShapeFor(this.config.providerA.wire, info);
    this.checkedShapes.set(request.tools, shape);
    if (shape === 'lite' && !request.faithful) {
      const refusal = hostedToolRefusal(request.tools, request.model.requestedId, () => this.classicModels());
      if (refusal) throw refusal;
    }
  }

  async stream(request: ChatRequest, context: CallContext): Promise<PolledEvents> {
    const startedAt = performance.now();
    // Every attempt goes out in one shape: the one checkContent checked the tools against, if any.
    const shape = this.checkedShapes.get(request.tools) ?? this.shapeOf(request.model.upstreamModel);
    const lease = this.sessions?.lease(request.conversationId, customToolNames(request.normalizedTools), context);
    const requests = new ChatAttempts(this, request, context, shape);
    let turn: AcceptedTurn<ProviderAAttempt>;
    try {
      turn = await this.run(requests, request.conversationId, context, lease);
    } catch (error) {
      this.modelRefused(error, request.model.upstreamModel);
    }
    logTiming(context, this.transport, lease, requests.inputItems, performance.now() - startedAt);
    return turn.events;
  }

  /** Body and headers of one chat attempt, and the shape of the first one at debug (`ChatAttempts`). */
  chatAttemptRequest(
    request: ChatRequest,
    shape: WireShape,
    sessionId: string,
    context: CallContext,
    credentials: ProviderACredentials,
    attempt: number,
  ) {
    const built = this.chatAttempt(request, shape, sessionId, credentials);
    if (attempt === 1) logRequest(context, this.transport, request.faithful, built);
    return built;
  }

  /** Same events as `stream()`; the chat layer aggregates them. */
  complete(request: ChatRequest, context: CallContext): Promise<PolledEvents> {
    return this.stream(request, context);
  }

  /** Strict JSON-schema extraction (docs/upstream/provider-a.md §6): minimal headers, no profile, no tools. */
  async extract(request: ExtractionRequest, context: CallContext): Promise<ExtractionResult> {
    const promptCacheKey = structuredPromptCacheKey(request.conversationId);
    const body = buildExtractionBody(request, promptCacheKey);
    const shape = this.shapeOf(request.model.upstreamModel);
    // One-off work: the login with the most headroom, no pin.
    const attempt = (credentials: ProviderACredentials, transport: ProviderATransportKind) =>
      this.shaped(
        shape,
        { headers: upstreamHeaders(transport, this.client, credentials, promptCacheKey), body },
        transport,
      );
    const turn = await this.run(
      {
        build: (credentials) => ({
          ...attempt(credentials, this.transport),
          overHttp: () => attempt(credentials, 'sse'),
        }),
      },
      undefined,
      context,
    ).catch((error: unknown) => this.modelRefused(error, request.model.upstreamModel));
    let text = '';
    let usage: UsageEvent | undefined;
    let finished = false;
    for await (const event of turn.events) {
      if (event.type === 'text-delta') text += event.text;
      else if (event.type === 'usage') usage = event.usage;
      else if (event.type === 'error') throw event.error;
      else if (event.type === 'finish') {
        finished = true;
        break;
      }
    }
    if (!finished) throw new GatewayError('upstream', { detail: 'extraction ended without a finish event' });
    const state = turn.current()?.state;
    return {
      text,
      upstreamResponseId: state?.responseId ?? '',
      upstreamModel: state?.model ?? null,
      usage: usage ?? NO_USAGE,
    };
  }

  /** One turn on the runner; throws `rate_limited` / `auth` at once when no login can take it (docs/accounts.md). */
  private run(requests: AttemptBuilder, chat: string | undefined, context: CallContext, lease?: ChatTurnLease) {
    const connect = {
      url: this.config.providerA.url,
      open: this.open,
      lease,
      proxy: this.attemptProxy,
    };
    return runFamilyTurn(new ProviderAUpstream(connect, context, requests), {
      pool: this.accounts,
      chat,
      timeoutMs: this.config.providerA.timeoutMs,
      idleTimeoutMs: this.config.server.streamIdleTimeoutMs,
      context,
    });
  }

  /**
   * Body and headers of one chat attempt; faithful mode gets a fresh turn id per attempt.
   * `overHttp` is the same attempt for HTTP + SSE (a WebSocket frame too large for the server).
   */
  private chatAttempt(request: ChatRequest, shape: WireShape, sessionId: string, credentials: ProviderACredentials) {
    const info = this.catalog.upstreamInfo(request.model.upstreamModel);
    if (!request.faithful) {
      const built = buildChatBody(request, { sessionId, info });
      const shapedFor = (transport: ProviderATransportKind) =>
        this.shaped(
          shape,
          { headers: upstreamHeaders(transport, this.client, credentials, sessionId), body: built.body },
          transport,
        );
      return { ...built, ...shapedFor(this.transport), overHttp: () => shapedFor('sse') };
    }
    const turnId = newTurnId();
    const installationId = this.installationId;
    const now = new Date();
    const metadata = turnMetadata({
      sessionId,
      turnId,
      installationId,
      model: request.model,
      startedAtMs: now.getTime(),
    });
    const built = buildChatBody(request, {
      sessionId,
      info,
      faithful: {
        profile: this.profile,
        turnId,
        installationId,
        turnMetadata: metadata,
        now,
        timeZone: localTimeZone(),
        shape,
      },
    });
    const shapedFor = (transport: ProviderATransportKind) =>
      this.shaped(
        shape,
        {
          headers: upstreamHeaders(transport, this.client, credentials, sessionId, { turnMetadata: metadata }),
          body: built.body,
        },
        transport,
      );
    return { ...built, ...shapedFor(this.transport), overHttp: () => shapedFor('sse') };
  }

  /** The shape a model takes: PROVIDER_A_WIRE, else the model list's `use_responses_lite`. */
  private shapeOf(upstreamModel: string): WireShape {
    return wireShapeFor(this.config.providerA.wire, this.catalog.upstreamInfo(upstreamModel));
  }

  /** The request in the turn's shape. */
  private shaped(shape: WireShape, plan: AttemptPlan, transport: ProviderATransportKind): AttemptPlan {
    return shape === 'lite' ? toLiteShape(plan, transport) : plan;
  }

  /** The models `/v1/models` lists that take the classic shape now (only for a refusal's way out). */
  private classicModels(): string[] {
    const models = new Set<string>();
    for (const entry of this.catalog.listed)
      if (entry.provider === this.id && this.shapeOf(entry.upstream_model) === 'classic')
        models.add(entry.upstream_model);
    return [...models];
  }

  /**
   * A model refusal names the model, and a model the catalog has leaves the list; then it is
   * thrown on. A passthrough id the catalog never had is not remembered: nothing lists it, and a
   * client could otherwise grow the set with every id it makes up.
   */
  private modelRefused(error: unknown, upstreamModel: string): never {
    if (error instanceof GatewayError && MODEL_REFUSAL_CODES.has(error.code) && this.inCatalog(upstreamModel))
      this.liveModels.refuse('provider_a', upstreamModel);
    throw namingModel(error, upstreamModel);
  }

  private inCatalog(upstreamModel: string): boolean {
    return this.catalog.entries.some((entry) => entry.provider === this.id && entry.upstream_model === upstreamModel);
  }
}

/**
 * The requests of one chat turn's attempts, built for each attempt's login (a fresh turn id each
 * time in faithful mode): one object per turn rather than a closure, and what the turn's
 * `chat_completion` line counts of its input.
 */
class ChatAttempts implements AttemptBuilder {
  /** Input items of the last attempt's translated request. */
  inputItems = 0;
  private readonly sessionId: string;

  constructor(
    private readonly adapter: ProviderAAdapter,
    private readonly request: ChatRequest,
    private readonly context: CallContext,
    /** The turn's request shape, the same for all its attempts. */
    private readonly shape: WireShape,
  ) {
    this.sessionId = sessionIdForChat(request.conversationId);
  }

  build(credentials: ProviderACredentials, attempt: number): AttemptRequest {
    const built = this.adapter.chatAttemptRequest(
      this.request,
      this.shape,
      this.sessionId,
      this.context,
      credentials,
      attempt,
    );
    this.inputItems = (built.body.input as unknown[]).length;
    return { headers: built.headers, body: built.body, toolNames: built.toolNames, overHttp: built.overHttp };
  }
}

/** The shape of the first attempt's body, at debug (counts only: the repaired items' content is never logged). */
function logRequest(
  context: CallContext,
  transport: ProviderATransportKind,
  faithful: boolean,
  built: ReturnType<typeof buildChatBody>,
): void {
  const fields = {
    event: 'provider_a_request',
    transport,
    faithful,
    input_items: (built.body.input as unknown[]).length,
    tools: toolsSent(built.body),
    aborted_calls: built.abortedCalls,
    orphan_outputs: built.orphanOutputs,
    renamed_tools: built.toolNames.renamed,
  };
  context.logger.debug(fields, 'provider_a_request');
}

/**
 * How the upstream connection was used (counts and flags only) and how long the upstream took to
 * accept the turn: fields of the turn's `chat_completion` line (docs/endpoints.md "Logs").
 */
function logTiming(
  context: CallContext,
  transport: ProviderATransportKind,
  lease: ChatTurnLease | undefined,
  inputItems: number,
  acceptMs: number,
): void {
  context.note?.({
    transport,
    ...(lease
      ? sessionUseFields(lease.use)
      : { session_reused: false, incremental: false, chain_fallback: false, input_items_sent: inputItems }),
    input_items: inputItems,
    accept_ms: Math.round(acceptMs),
  });
}
