import { Inject, Injectable, OnModuleDestroy, Optional } from '@nestjs/common';
import type { AccountPool } from '../../accounts/account-pool';
import { AccountPools } from '../../accounts/account-pools';
import { AccountTurn } from '../../accounts/account-turn';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import type { CallContext, ChatRequest, ProviderAdapter } from '../provider-adapter';
import type { ChatEvent } from '../../core/chat-event';
import type { SsePayload } from '../shared/sse-event-parser';
import { AttemptInfo, runTurn, UpstreamFamily } from '../shared/turn-runner';
import { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { sleep } from '../../common/async/abortable';
import { createProviderBPool, ProviderBLogin } from '../../accounts/provider-b/provider-b.accounts';
import {
  callCodeAssist,
  CodeAssistClient,
  loginToken,
  postCodeAssist,
  readJsonResponse,
  TurnScope,
} from './provider-b.http';
import { DiscoveryTransport, ProviderBProjectResolver } from './provider-b.project';
import { buildProviderBRequest } from './provider-b.request';
import { ThoughtSignatureStore } from './provider-b.thought-signatures';
import {
  endOfPayloads,
  INVALID_TURN_RETRY,
  ProviderBAttempt,
  providerBAttempt,
  translatePayload,
} from './provider-b.upstream';

/**
 * provider_b: Gemini Code Assist `v1internal` with the Gemini CLI's login (provider_b.md).
 * Wiring only: tokens, project discovery and the signature memory are process-wide; a turn runs
 * on the turn runner, and this class only says how to open an attempt (`provider-b.upstream.ts`
 * says what its payloads mean).
 */
@Injectable()
export class ProviderBAdapter implements ProviderAdapter, OnModuleDestroy {
  readonly id = 'provider_b' as const;
  /** HTTPS_PROXY / HTTP_PROXY / NO_PROXY for Code Assist and the token endpoint. */
  private readonly proxy: UpstreamProxy;
  /** The Gemini logins (docs/accounts.md); one, `default`, unless PROVIDER_B_ACCOUNTS lists several. */
  private readonly accounts: AccountPool<ProviderBLogin>;
  /** Set when this adapter made its own pools (outside Nest): it then stops their timers itself. */
  private readonly ownPools?: AccountPools;
  private readonly projects: ProviderBProjectResolver;
  private readonly signatures = new ThoughtSignatureStore();
  private readonly rememberSignature = (id: string, signature: string) => this.signatures.remember(id, signature);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() pools?: AccountPools,
  ) {
    this.proxy = new UpstreamProxy(config.proxy);
    if (!pools) this.ownPools = pools = new AccountPools(config);
    this.accounts = createProviderBPool(config, pools, this.proxy);
    this.projects = new ProviderBProjectResolver(config.providerB.project, config.providerB.onboardingPollIntervalMs);
  }

  onModuleDestroy(): void {
    this.ownPools?.onModuleDestroy();
    void this.proxy.close();
  }

  stream(request: ChatRequest, context: CallContext): Promise<AsyncIterable<ChatEvent>> {
    return this.run(request, context, 'streamGenerateContent');
  }

  complete(request: ChatRequest, context: CallContext): Promise<AsyncIterable<ChatEvent>> {
    return this.run(request, context, 'generateContent');
  }

  /** Resolves once the upstream accepted the turn; retries (§10.3) happen before that, on the runner. */
  private async run(
    request: ChatRequest,
    context: CallContext,
    method: 'streamGenerateContent' | 'generateContent',
  ): Promise<AsyncIterable<ChatEvent>> {
    const family: UpstreamFamily<ProviderBLogin, SsePayload, ProviderBAttempt> = {
      provider: 'provider_b',
      open: (attempt, signal) => this.open(request, context, method, attempt, signal),
      translate: translatePayload,
      end: endOfPayloads,
      held: (attempt) => attempt.held,
      emptyTurnRetry: INVALID_TURN_RETRY,
    };
    const turn = await runTurn(family, {
      // Throws `rate_limited` / `auth` at once when no login can take the turn.
      account: new AccountTurn(this.accounts, request.conversationId),
      timeoutMs: this.config.providerB.timeoutMs,
      idleTimeoutMs: this.config.server.streamIdleTimeoutMs,
      context,
    });
    return turn.events;
  }

  /** One attempt: the login token, the project (discovered once per login), the body, the POST. */
  private async open(
    request: ChatRequest,
    context: CallContext,
    method: 'streamGenerateContent' | 'generateContent',
    attempt: AttemptInfo<ProviderBLogin>,
    signal: AbortSignal,
  ): Promise<ProviderBAttempt> {
    const scope: TurnScope = { signal, deadlineAt: attempt.deadlineAt };
    const client: CodeAssistClient = {
      baseUrl: this.config.providerB.url,
      tokens: attempt.login.tokens,
      turn: scope,
      headerTimeoutMs: this.config.server.streamIdleTimeoutMs,
      logger: context.logger,
      model: request.model.upstreamModel,
      proxy: this.proxy,
    };
    const credential = await loginToken(client);
    const project = await this.projects.resolve(credential.loginKey, this.discoveryTransport(client));
    const built = buildProviderBRequest(request, {
      project,
      userPromptId: context.requestId,
      signatureFor: (id) => this.signatures.lookup(id),
    });
    const { invalidArguments, cancelledToolCalls, orphanToolResults, unresolvedRefs } = built.report;
    if (invalidArguments + cancelledToolCalls + orphanToolResults + unresolvedRefs > 0) {
      context.logger.debug(
        {
          event: 'provider_b_request_adjusted',
          invalidArguments,
          cancelledToolCalls,
          orphanToolResults,
          unresolvedRefs,
        },
        'provider_b_request_adjusted',
      );
    }
    context.logger.debug(
      {
        event: 'provider_b_attempt',
        method,
        attempt: attempt.number,
        contents: built.envelope.request.contents.length,
      },
      'provider_b_attempt',
    );
    const opened = await postCodeAssist(client, method, built.envelope);
    return providerBAttempt(opened, scope, {
      streaming: method === 'streamGenerateContent',
      customToolNames: built.customToolNames,
      requestId: context.requestId,
      onToolCall: this.rememberSignature,
    });
  }

  private discoveryTransport(client: CodeAssistClient): DiscoveryTransport {
    return {
      call: async (method, body) => readJsonResponse(await postCodeAssist(client, method, body), client.turn),
      getOperation: async (operation) => readJsonResponse(await callCodeAssist(client, { operation }), client.turn),
      wait: (ms) => sleep(ms, client.turn.signal),
      deadlineAt: client.turn.deadlineAt,
      signal: client.turn.signal,
      logger: client.logger,
    };
  }
}
