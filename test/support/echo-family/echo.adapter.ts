import { Inject, Injectable } from '@nestjs/common';
import type { Type } from '@nestjs/common';
import type { AccountPool } from '../../../src/accounts/account-pool';
import { AccountPools } from '../../../src/accounts/account-pools';
import type { AppConfig } from '../../../src/config/app-config';
import { APP_CONFIG } from '../../../src/config/config.tokens';
import type { PolledEvents } from '../../../src/core/chat-event';
import { runFamilyTurn } from '../../../src/providers/shared/family-turn';
import type { CallContext, ChatRequest, ProviderAdapter } from '../../../src/providers/shared/provider-adapter';
import { ECHO_ID } from './echo.constants';
import type { EchoFamilyOptions, EchoSettings } from './echo.family';
import type { EchoLogin } from './echo.upstream';
import { EchoUpstream } from './echo.upstream';

/**
 * The echo family's adapter class for one declaration: Nest builds it (the providers module's
 * factory, as for every enabled family) with the shared account pools, and it builds its pool
 * of the declared logins there, as provider_b's adapter does with its Gemini logins. A turn runs
 * on the shared family turn: the chat's login, the runner's retries and its one move to another
 * login.
 */
export function echoAdapterClass(options: EchoFamilyOptions): Type<ProviderAdapter> {
  @Injectable()
  class EchoAdapter implements ProviderAdapter {
    readonly id = ECHO_ID;
    /** Its settings rows' group: `AppConfig` is typed for the built-in families only. */
    private readonly settings: EchoSettings;
    private readonly accounts: AccountPool<EchoLogin>;

    constructor(
      @Inject(APP_CONFIG) private readonly config: AppConfig,
      @Inject(AccountPools) pools: AccountPools,
    ) {
      this.settings = (config as unknown as { readonly echo: EchoSettings }).echo;
      this.accounts = pools.create(
        ECHO_ID,
        options.logins.map(({ alias, token }) => ({ alias, handle: { token } })),
      );
    }

    stream(request: ChatRequest, context: CallContext): Promise<PolledEvents> {
      return this.run(request, context, true);
    }

    complete(request: ChatRequest, context: CallContext): Promise<PolledEvents> {
      return this.run(request, context, false);
    }

    private async run(request: ChatRequest, context: CallContext, streaming: boolean): Promise<PolledEvents> {
      const turn = await runFamilyTurn(new EchoUpstream(ECHO_ID, this.settings.url ?? '', request, streaming), {
        pool: this.accounts,
        chat: request.conversationId,
        timeoutMs: this.settings.timeoutMs,
        idleTimeoutMs: this.config.server.streamIdleTimeoutMs,
        context,
      });
      return turn.events;
    }
  }
  return EchoAdapter;
}
