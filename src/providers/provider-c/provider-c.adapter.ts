import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import type { AccountPool } from '../../accounts/account-pool';
import { AccountPools } from '../../accounts/account-pools';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import { GatewayMetrics } from '../../metrics/gateway-metrics';
import type { PolledEvents } from '../../core/chat-event';
import type { CallContext, ChatRequest, CheckedRequest, ProviderAdapter } from '../shared/provider-adapter';
import { runFamilyTurn } from '../shared/family-turn';
import {
  accountBaseEnvironment,
  createProviderCPool,
  ProviderCAccount,
} from '../../accounts/provider-c/provider-c.accounts';
import { claudeChildEnvironment } from '../../accounts/provider-c/provider-c.child-env';
import { ClaudeChild, killChildrenOnExit } from './provider-c.process';
import { commandProblem, resolveCommand } from '../../accounts/provider-c/provider-c.login-check';
import { LoginNotReadable } from '../../accounts/plan-usage-refresh';
import { ProviderCProcessSlots } from './provider-c.process-slots';
import { PROVIDER_C_FIX } from './provider-c.fix';
import { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { installedClaudeCodeVersion } from '../../accounts/provider-c/provider-c.cli-version';
import { providerCUsageUrl, readProviderCUsage } from './provider-c.usage';
import { planToolChoice } from './provider-c.protocol';
import { diagnosticLevel } from './provider-c.stream';
import { assertTextOnlyConversation } from './provider-c.prompt';
import { ClaudeRun, ProviderCUpstream } from './provider-c.upstream';
import { clientExecutedTool, unusableToolRefusal } from '../shared/hosted-tools';

/** Why provider_c refuses a hosted tool (`web_search`…), and what to do. */
const HOSTED_TOOLS_NOT_TAKEN =
  'which provider_c cannot take: the claude CLI is given only the function and custom tools the client executes; drop the tool';

/**
 * provider_c: the Claude Code CLI as one child process per attempt (docs/upstream/provider-c.md), with client
 * tools bridged through fenced `agent_tool_call` blocks. Only constructed when provider_c is
 * enabled, so a disabled family never spawns, injects its protocol or parses fences. The gateway
 * holds no Claude credentials: the CLI uses its own login (a login's token is read only to ask the
 * usage endpoint what its plan has left, provider-c.usage.ts). Never serves structured inference (no
 * `extract`). Several logins (PROVIDER_C_ACCOUNTS) form an account pool: each child gets its
 * login's CLAUDE_CONFIG_DIR or CLAUDE_CODE_OAUTH_TOKEN (docs/accounts.md). A turn runs on the turn
 * runner; `provider-c.upstream.ts` says how to start a run and what its lines mean.
 */
@Injectable()
export class ProviderCAdapter implements ProviderAdapter, OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  readonly id = 'provider_c' as const;
  private readonly command: string;
  private readonly baseEnv: Readonly<Record<string, string>>;
  private readonly slots: ProviderCProcessSlots;
  /** The gateway's own egress (the usage endpoint, the idle refresh); the children find their proxy in their environment. */
  private readonly proxy: UpstreamProxy;
  private readonly accounts: AccountPool<ProviderCAccount>;
  /** Every child alive now: none outlives the gateway. */
  private readonly live = new Set<ClaudeChild>();
  /** Uninstalls the exit hook that kills `live` (installed while the application runs). */
  private uninstallExitHook?: () => void;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: GatewayMetrics,
    private readonly logger: PinoLogger,
    pools: AccountPools,
  ) {
    const { providerC } = config;
    this.command = providerC.command;
    this.baseEnv = accountBaseEnvironment(config, claudeChildEnvironment(providerC.childEnv));
    this.slots = new ProviderCProcessSlots(
      {
        maxProcesses: providerC.maxProcesses,
        queueLimit: config.agentQueue.queueLimit,
        queueTimeoutMs: config.agentQueue.queueTimeoutMs,
      },
      metrics,
    );
    this.proxy = new UpstreamProxy(config.proxy);
    const usageUrl = providerCUsageUrl(providerC.childEnv);
    this.accounts = createProviderCPool(config, pools, this.proxy, async (account, signal) => {
      // No CLI, no turn: its install is the fix, whatever the login holds (the login report says the same).
      if (resolveCommand(this.command, this.baseEnv.PATH) === undefined) {
        const problem = commandProblem(this.command);
        throw new LoginNotReadable('cli_missing', problem && { state: 'cli_missing', ...problem });
      }
      return readProviderCUsage({
        url: usageUrl,
        token: await account.oauthToken(),
        cliVersion: installedClaudeCodeVersion(),
        proxy: this.proxy,
        signal,
      });
    });
  }

  /**
   * docs/upstream/provider-c.md §1: a missing CLI is not fatal; each request then fails with 502 when its spawn fails.
   * docs/upstream/provider-c.md §3.2: the credential routes kept from the children are named once (names only, never values).
   */
  onModuleInit(): void {
    const { providerC } = this.config;
    if (providerC.droppedCredentialVariables.length > 0) {
      this.logger.warn(
        {
          event: 'provider_c_credential_variables_ignored',
          variables: providerC.droppedCredentialVariables,
          fix: `unset ${providerC.droppedCredentialVariables.join(', ')} in the gateway's environment; the claude children use only the Claude Code CLI's login, never an API key or a cloud account`,
        },
        'provider_c_credential_variables_ignored',
      );
    }
    if (resolveCommand(providerC.command, providerC.childEnv.PATH) === undefined) {
      // A path that is there but cannot run (a directory, no execute bit) is no install away.
      const { reason, fix } = commandProblem(providerC.command) ?? {
        reason: 'command not found',
        fix: PROVIDER_C_FIX.install,
      };
      this.logger.warn(
        { event: 'provider_c_command_missing', command: providerC.command, reason, fix },
        'provider_c_command_missing',
      );
    }
  }

  /** The conversation as text only, and only tools the client executes (no hosted tool). */
  checkContent(request: CheckedRequest): void {
    assertTextOnlyConversation(request.messages);
    if (request.tools.length === 0) return;
    const refusal = unusableToolRefusal(request.tools, clientExecutedTool, HOSTED_TOOLS_NOT_TAKEN);
    if (refusal) throw refusal;
  }

  /**
   * Login → slot → runs → events. Resolves once the API answered (its `message_start`, or the first model
   * output); the slot is released after the last child was reaped (docs/upstream/provider-c.md §2, §3.6).
   */
  stream(request: ChatRequest, context: CallContext): Promise<PolledEvents> {
    return this.turn(request, context, false);
  }

  /**
   * The same child as `stream`, its output held until the run ends well; the chat layer
   * aggregates it (docs/upstream/provider-c.md §6). An answer the CLI restarts is taken whole (§6.1).
   */
  complete(request: ChatRequest, context: CallContext): Promise<PolledEvents> {
    return this.turn(request, context, true);
  }

  private async turn(request: ChatRequest, context: CallContext, holdUntilEnd: boolean): Promise<PolledEvents> {
    const turn = await runFamilyTurn(new ProviderCUpstream(this.run(request, context, holdUntilEnd)), {
      // The chat's login first: a 429/401 at once when every login is cooling or dead, before any slot
      // wait; taken again after the wait, so a login the paid-usage guard rested meanwhile never starts.
      pool: this.accounts,
      chat: request.conversationId,
      // A login whose weekly window of this model's family is spent is passed over for it (quota buckets).
      model: request.model.upstreamModel,
      // PROVIDER_C_TIMEOUT bounds the whole turn, retries included, from the first spawn.
      timeoutMs: this.config.providerC.timeoutMs,
      idleTimeoutMs: this.config.server.streamIdleTimeoutMs,
      context,
      before: async () => {
        const slot = await this.slots.acquire(context);
        return () => slot.release();
      },
    });
    return turn.events;
  }

  /**
   * A gateway that exits without closing (`process.exit` on a second signal, a crash) still leaves
   * no child or directory behind: they are killed and removed as the process exits.
   */
  onApplicationBootstrap(): void {
    this.uninstallExitHook = killChildrenOnExit(this.live);
  }

  /**
   * No child outlives the gateway: terminate and reap every running child on shutdown. The exit
   * hook stays until they were reaped (an exit meanwhile still kills them), then goes, so many
   * gateways in one process (the tests) do not pile up listeners.
   */
  async onModuleDestroy(): Promise<void> {
    void this.proxy.close();
    await Promise.all(
      [...this.live].map((child) => {
        child.terminate('shutdown');
        child.discardOutput();
        return child.reaped;
      }),
    );
    this.uninstallExitHook?.();
  }

  /** What every run of this turn shares: the request (the family builds argv and prompt from it), the fence settings. */
  private run(request: ChatRequest, context: CallContext, holdUntilEnd: boolean): ClaudeRun {
    const tools = request.normalizedTools;
    const plan = planToolChoice(request.toolChoice, tools);
    return {
      command: this.command,
      baseEnv: this.baseEnv,
      request,
      toolPlan: plan,
      streamOptions: {
        toolKinds: new Map(tools.map((tool) => [tool.name, tool.type === 'custom' ? 'custom' : 'function'] as const)),
        discardBlocks: !plan.callsAllowed,
        holdUntilEnd,
        diagnostic: (event, fields) => context.logger[diagnosticLevel(event, fields)]({ event, ...fields }, event),
      },
      logger: context.logger,
      live: this.live,
    };
  }
}
