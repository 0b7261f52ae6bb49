import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import type { AccountPool } from '../../accounts/account-pool';
import { AccountPools } from '../../accounts/account-pools';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import type { CallContext, ChatRequest, CheckedRequest, ProviderAdapter } from '../shared/provider-adapter';
import type { PolledEvents } from '../../core/chat-event';
import { runFamilyTurn } from '../shared/family-turn';
import { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { createProviderBPool, ProviderBLogin } from '../../accounts/provider-b/provider-b.accounts';
import { ProviderBProjectResolver } from './provider-b.project';
import { ThoughtSignatureStore } from './provider-b.thought-signatures';
import type { ProviderBConnect, ProviderBMethod } from './provider-b.upstream';
import { readProviderBUsage, ProviderBUpstream } from './provider-b.upstream';
import { GEMINI_CLI_DEFAULT_MODEL } from './provider-b.constants';
import { assertCarriedContent } from './provider-b.content-parts';
import { clientExecutedTool, unusableToolRefusal } from '../shared/hosted-tools';
import { toolsOf } from './provider-b.tools';
import { RETRY_CLOCK, type RetryClock } from '../shared/retry-policy';

/** Why provider_b refuses a hosted tool (`web_search`…), and what to do. */
const HOSTED_TOOLS_NOT_TAKEN =
  'which provider_b cannot take: Code Assist runs only function tools the client executes; drop the tool';

/**
 * provider_b: Gemini Code Assist `v1internal` with the Gemini CLI's login (docs/upstream/provider-b.md).
 * Wiring only: tokens, project discovery and the signature memory are process-wide; a turn runs
 * on the turn runner as the family `provider-b.upstream.ts` describes.
 */
@Injectable()
export class ProviderBAdapter implements ProviderAdapter, OnModuleDestroy {
  readonly id = 'provider_b' as const;
  /** HTTPS_PROXY / HTTP_PROXY / NO_PROXY for Code Assist and the token endpoint. */
  private readonly proxy: UpstreamProxy;
  /** The Gemini logins (docs/accounts.md); one, `default`, unless PROVIDER_B_ACCOUNTS lists several. */
  private readonly accounts: AccountPool<ProviderBLogin>;
  /** What every turn shares: the endpoint, the proxy, project discovery and the signature memory. */
  private readonly connect: ProviderBConnect;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    pools: AccountPools,
    /** The waits of the turn's retries. */
    @Inject(RETRY_CLOCK) private readonly retryClock: RetryClock,
  ) {
    this.proxy = new UpstreamProxy(config.proxy);
    const signatures = new ThoughtSignatureStore();
    this.connect = {
      baseUrl: config.providerB.url,
      proxy: this.proxy,
      projects: new ProviderBProjectResolver(config.providerB.project, config.providerB.onboardingPollIntervalMs),
      signatures,
      rememberSignature: (id, signature) => signatures.remember(id, signature),
    };
    this.accounts = createProviderBPool(config, pools, this.proxy, (login, signal, logger) =>
      readProviderBUsage(this.connect, login, GEMINI_CLI_DEFAULT_MODEL, signal, logger),
    );
  }

  onModuleDestroy(): void {
    void this.proxy.close();
  }

  /**
   * Parts and history calls Code Assist can carry, only tools the client executes (no hosted tool),
   * and tool schemas whose `$ref`s inline within the bound: the tools are converted here, once for
   * every attempt's body (`toolsOf`).
   */
  checkContent(request: CheckedRequest): void {
    assertCarriedContent(request.messages, request.normalizedTools);
    if (request.tools.length === 0) return;
    const refusal = unusableToolRefusal(request.tools, clientExecutedTool, HOSTED_TOOLS_NOT_TAKEN);
    if (refusal) throw refusal;
    toolsOf(request.normalizedTools);
  }

  stream(request: ChatRequest, context: CallContext): Promise<PolledEvents> {
    return this.run(request, context, 'streamGenerateContent');
  }

  complete(request: ChatRequest, context: CallContext): Promise<PolledEvents> {
    return this.run(request, context, 'generateContent');
  }

  /** Resolves once the upstream accepted the turn; retries (docs/upstream/provider-b.md §10.3) happen before that, on the runner. */
  private async run(request: ChatRequest, context: CallContext, method: ProviderBMethod): Promise<PolledEvents> {
    const turn = await runFamilyTurn(new ProviderBUpstream(this.connect, request, context, method), {
      // Throws `rate_limited` / `auth` at once when no login can take the turn.
      pool: this.accounts,
      chat: request.conversationId,
      model: request.model.upstreamModel,
      timeoutMs: this.config.providerB.timeoutMs,
      idleTimeoutMs: this.config.server.streamIdleTimeoutMs,
      context,
      clock: this.retryClock,
    });
    return turn.events;
  }
}
