import { Inject, Injectable, OnModuleDestroy, Optional } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { AccountPools } from '../../accounts/account-pools';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import { GatewayMetrics } from '../../metrics/gateway-metrics';
import type { ChatEvent } from '../../core/chat-event';
import type { CallContext, ChatRequest, ProviderAdapter } from '../provider-adapter';
import { accountBaseEnvironment, createProviderCPool } from './provider-c.accounts';
import { claudeChildEnvironment } from './provider-c.child-env';
import { resolveCommand } from './provider-c.process';
import { ProviderCProcessSlots } from './provider-c.process-slots';
import { ProviderCTurn, TurnEnvironment } from './provider-c.turn';

/**
 * provider_c: the Claude Code CLI as one child process per chat turn (provider_c.md), with
 * client tools bridged through fenced `agent_tool_call` blocks. Only constructed when provider_c
 * is enabled, so a disabled family never spawns, injects its protocol or parses fences. The
 * gateway holds no Claude credentials: the CLI uses its own login. Never serves structured
 * inference (no `extract`). Several logins (PROVIDER_C_ACCOUNTS) form an account pool: each turn's
 * child gets its login's CLAUDE_CONFIG_DIR or CLAUDE_CODE_OAUTH_TOKEN (docs/accounts.md).
 */
@Injectable()
export class ProviderCAdapter implements ProviderAdapter, OnModuleDestroy {
  readonly id = 'provider_c' as const;
  private readonly environment: TurnEnvironment;
  /** Set when this adapter made its own pools (outside Nest): it then stops their timers itself. */
  private readonly ownPools?: AccountPools;

  constructor(@Inject(APP_CONFIG) config: AppConfig, metrics: GatewayMetrics, logger: PinoLogger, @Optional() pools?: AccountPools) {
    const { providerC } = config;
    // §1: a missing CLI is not fatal; each request then fails with 502 when its spawn fails.
    if (resolveCommand(providerC.command, providerC.childEnv.PATH) === undefined) {
      logger.warn({ event: 'provider_c_command_missing', command: providerC.command }, 'provider_c_command_missing');
    }
    this.environment = {
      settings: {
        command: providerC.command,
        childEnv: accountBaseEnvironment(config, claudeChildEnvironment(providerC.childEnv)),
        timeoutMs: providerC.timeoutMs,
        idleTimeoutMs: config.server.streamIdleTimeoutMs,
      },
      slots: new ProviderCProcessSlots(
        { maxProcesses: providerC.maxProcesses, queueLimit: config.agentQueue.queueLimit, queueTimeoutMs: config.agentQueue.queueTimeoutMs },
        metrics,
      ),
      liveTurns: new Set(),
      accounts: createProviderCPool(config, pools ?? (this.ownPools = new AccountPools(config))),
    };
  }

  stream(request: ChatRequest, context: CallContext): Promise<AsyncIterable<ChatEvent>> {
    return new ProviderCTurn(this.environment, request, context).start();
  }

  /** Same child, same events; the chat layer aggregates them (§6). */
  complete(request: ChatRequest, context: CallContext): Promise<AsyncIterable<ChatEvent>> {
    return this.stream(request, context);
  }

  /** No child outlives the gateway: terminate and reap every running turn on shutdown. */
  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.environment.liveTurns].map((turn) => turn.shutdown()));
    this.ownPools?.onModuleDestroy();
  }
}
