import { Inject, Injectable, OnModuleDestroy, Optional } from '@nestjs/common';
import type { AccountPool } from '../../accounts/account-pool';
import { AccountPools } from '../../accounts/account-pools';
import { AccountTurn } from '../../accounts/account-turn';
import { GatewayError } from '../../core/gateway.error';
import { sanitizeIdentifier } from '../../common/logging/sanitize';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import type { CallContext, ChatRequest, ProviderAdapter } from '../provider-adapter';
import type { ChatEvent } from '../../core/chat-event';
import { runWithRetries } from '../shared/retry-policy';
import { UpstreamProxy } from '../shared/upstream-proxy';
import { closingEvents, sleep } from '../../common/async/abortable';
import { createProviderBPool, ProviderBLogin } from './provider-b.accounts';
import { AcceptedTurn, openTurn, turnEvents } from './provider-b.turn-events';
import { callCodeAssist, CodeAssistClient, loginToken, postCodeAssist, readJsonResponse } from './provider-b.http';
import { DiscoveryTransport, ProviderBProjectResolver } from './provider-b.project';
import { buildProviderBRequest } from './provider-b.request';
import { ThoughtSignatureStore } from './provider-b.thought-signatures';
import { ProviderBTurn } from './provider-b.turn';

/**
 * provider_b: Gemini Code Assist `v1internal` with the Gemini CLI's login (provider_b.md).
 * Wiring only: tokens, project discovery and the signature memory are process-wide; everything
 * about one turn (deadline, retries, stream state) is created per call.
 */
/**
 * The accepted turn's events on its login: an error after output only changes the login's state
 * (a spent quota still cools it for later turns), and the login is given back at the end.
 */
async function* eventsOnLogin<T>(events: AsyncIterable<ChatEvent>, account: AccountTurn<T>): AsyncGenerator<ChatEvent> {
  try {
    for await (const event of events) {
      if (event.type === 'error') account.noteFailure(event.error);
      yield event;
    }
  } finally {
    account.end();
  }
}

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

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig, @Optional() pools?: AccountPools) {
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

  /** Resolves once the upstream accepted the turn; retries (§10.3) happen before that. */
  private async run(request: ChatRequest, context: CallContext, method: 'streamGenerateContent' | 'generateContent'): Promise<AsyncIterable<ChatEvent>> {
    // Throws `rate_limited` / `auth` at once when no login can take the turn.
    const account = new AccountTurn(this.accounts, request.conversationId);
    const turn = new ProviderBTurn(context.signal, this.config.providerB.timeoutMs, context.deadlineAt);
    const clientFor = (login: ProviderBLogin): CodeAssistClient => ({
      baseUrl: this.config.providerB.url,
      tokens: login.tokens,
      turn,
      headerTimeoutMs: this.config.server.streamIdleTimeoutMs,
      logger: context.logger,
      model: request.model.upstreamModel,
      proxy: this.proxy,
    });
    const onLogin = (client: CodeAssistClient) =>
      runWithRetries((attempt) => this.attempt(request, context, client, method, attempt), {
        signal: turn.signal,
        deadlineAt: turn.deadlineAt,
        onRetry: (error, retry, delayMs) => {
          context.retried?.(error.code);
          context.logger.info(
            { event: 'provider_b_retry', code: error.code, upstreamStatus: error.upstreamStatus, retry, delayMs: Math.round(delayMs) },
            'provider_b_retry',
          );
        },
      });
    // A quota error, spent 429 retries or a dead login before any output moves the turn once.
    const accept = async () => {
      for (;;) {
        try {
          return await onLogin(clientFor(account.handle));
        } catch (error) {
          if (turn.signal.aborted || !account.moveAfter(error)) throw error;
        }
      }
    };
    try {
      const accepted = await accept();
      const events = turnEvents(accepted, turn, {
        onToolCall: (id, signature) => this.signatures.remember(id, signature),
        reopen: accept,
        onInvalidTurnRetry: (reason, retry, delayMs) =>
          context.logger.info({ event: 'provider_b_invalid_turn_retry', reason: sanitizeIdentifier(reason), retry, delayMs: Math.round(delayMs) }, 'provider_b_invalid_turn_retry'),
      });
      return closingEvents(eventsOnLogin(events, account), async () => {
        await events[Symbol.asyncIterator]().return?.();
        account.end();
      });
    } catch (error) {
      turn.dispose();
      account.end();
      const failure = turn.normalize(error);
      const normalized = failure instanceof GatewayError ? account.finalError(failure) : failure;
      if (normalized instanceof GatewayError) {
        // `detail` names statuses, reasons and quota ids only (never tokens or upstream text).
        const detail = sanitizeIdentifier(normalized.detail);
        context.logger.info({ event: 'provider_b_turn_failed', code: normalized.code, upstreamStatus: normalized.upstreamStatus, detail }, 'provider_b_turn_failed');
      }
      throw normalized;
    }
  }

  private async attempt(
    request: ChatRequest,
    context: CallContext,
    client: CodeAssistClient,
    method: 'streamGenerateContent' | 'generateContent',
    attempt: number,
  ): Promise<AcceptedTurn> {
    const credential = await loginToken(client);
    const project = await this.projects.resolve(credential.loginKey, this.discoveryTransport(client));
    const built = buildProviderBRequest(request, {
      project,
      userPromptId: context.requestId,
      signatureFor: (id) => this.signatures.lookup(id),
    });
    const { invalidArguments, cancelledToolCalls, orphanToolResults, unresolvedRefs } = built.report;
    if (invalidArguments + cancelledToolCalls + orphanToolResults + unresolvedRefs > 0) {
      context.logger.debug({ event: 'provider_b_request_adjusted', invalidArguments, cancelledToolCalls, orphanToolResults, unresolvedRefs }, 'provider_b_request_adjusted');
    }
    context.logger.debug({ event: 'provider_b_attempt', method, attempt, contents: built.envelope.request.contents.length }, 'provider_b_attempt');
    const opened = await postCodeAssist(client, method, built.envelope);
    return openTurn(opened, method === 'streamGenerateContent', client.turn, {
      customToolNames: built.customToolNames,
      requestId: context.requestId,
      idleTimeoutMs: this.config.server.streamIdleTimeoutMs,
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
