import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import { GatewayMetrics } from '../../metrics/gateway-metrics';
import type { ChatEvent } from '../../core/chat-event';
import type { CallContext, ChatRequest, ProviderAdapter } from '../provider-adapter';
import { claudeChildEnvironment } from './provider-c.child-env';
import { resolveCommand } from './provider-c.process';
import { ProviderCProcessSlots } from './provider-c.process-slots';
import { ProviderCTurn, TurnEnvironment } from './provider-c.turn';

/**
 * provider_c: the Claude Code CLI as one child process per chat turn (provider_c.md), with
 * client tools bridged through fenced `agent_tool_call` blocks. Only constructed when provider_c
 * is enabled, so a disabled family never spawns, injects its protocol or parses fences. The
 * gateway holds no Claude credentials: the CLI uses its own login. Never serves structured
 * inference (no `extract`).
 */
@Injectable()
export class ProviderCAdapter implements ProviderAdapter, OnModuleDestroy {
  readonly id = 'provider_c' as const;
  private readonly environment: TurnEnvironment;

  constructor(@Inject(APP_CONFIG) config: AppConfig, metrics: GatewayMetrics, logger: PinoLogger) {
    const { providerC } = config;
    // §1: a missing CLI is not fatal; each request then fails with 502 when its spawn fails.
    if (resolveCommand(providerC.command, providerC.childEnv.PATH) === undefined) {
      logger.warn({ event: 'provider_c_command_missing', command: providerC.command }, 'provider_c_command_missing');
    }
    this.environment = {
      settings: {
        command: providerC.command,
        childEnv: claudeChildEnvironment(providerC.childEnv),
        timeoutMs: providerC.timeoutMs,
        idleTimeoutMs: config.server.streamIdleTimeoutMs,
      },
      slots: new ProviderCProcessSlots(
        { maxProcesses: providerC.maxProcesses, queueLimit: config.agentQueue.queueLimit, queueTimeoutMs: config.agentQueue.queueTimeoutMs },
        metrics,
      ),
      liveTurns: new Set(),
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
  }
}
