import type { AccountPool } from '../../accounts/account-pool';
import { AccountTurn } from '../../accounts/account-turn';
import type { QueueSlot } from '../../common/admission/fair-queue';
import { closingEvents, Deadline, deadline, sleep, withIdleTimeout } from '../../common/async/abortable';
import type { ChatEvent } from '../../core/chat-event';
import { GatewayError } from '../../core/gateway.error';
import type { CallContext, ChatRequest } from '../provider-adapter';
import { retryDelayMs } from '../shared/retry-policy';
import { normalizeTools } from '../shared/tool-definitions';
import type { ProviderCAccount } from './provider-c.accounts';
import { buildProviderCArgs } from './provider-c.argv';
import { classifyRunFailure } from './provider-c.errors';
import { LineTooLongError } from './provider-c.line-splitter';
import { ChildExit, ClaudeChild } from './provider-c.process';
import { ProviderCProcessSlots } from './provider-c.process-slots';
import { renderProviderCPrompt } from './provider-c.prompt';
import { planToolChoice } from './provider-c.protocol';
import { createStreamState, endWithoutResult, flushVisibleText, parseStreamLine, StreamStateOptions, translateLine } from './provider-c.stream';

/** §8.3: up to 2 more runs after the first, only for plain upstream failures before output. */
const MAX_RETRIES = 2;
/** §3.5: after the `result` line, a child still running after this long is terminated. */
const AFTER_RESULT_GRACE_MS = 2000;

export interface TurnSettings {
  readonly command: string;
  readonly childEnv: Readonly<Record<string, string>>;
  /** PROVIDER_C_TIMEOUT: first spawn → terminate; 0 = none. */
  readonly timeoutMs: number;
  /** GATEWAY_STREAM_IDLE_TIMEOUT: silence between stdout lines; 0 = off. */
  readonly idleTimeoutMs: number;
}

/** What the adapter shares with its turns: settings, the slot pool, and the live turns (shutdown). */
export interface TurnEnvironment {
  readonly settings: TurnSettings;
  /** The Claude Code logins (docs/accounts.md): each turn runs on one, moved once on a login failure before output. */
  readonly accounts: AccountPool<ProviderCAccount>;
  readonly slots: ProviderCProcessSlots;
  readonly liveTurns: Set<ProviderCTurn>;
}

type TurnItem = 'accepted' | ChatEvent;

const isOutput = (event: ChatEvent) => event.type === 'text-delta' || event.type === 'reasoning-delta' || event.type === 'tool-call';

/**
 * One chat turn on the Claude Code CLI: slot → spawn → stdout lines → events, with retries and
 * every timer. All state lives here, one instance per call. `start()` resolves once the API has
 * answered (its `message_start`, or the first model output) and rejects with the classified
 * error before that. Whatever happens (finish,
 * error, client abort, timeout, idle, shutdown, a consumer that never iterates), `close()` runs:
 * the child is terminated if needed and reaped, its directory removed, then the slot released.
 */
export class ProviderCTurn {
  private readonly args: string[];
  private readonly prompt: string;
  private readonly streamOptions: StreamStateOptions;
  private readonly chatKey: string;
  private account?: AccountTurn<ProviderCAccount>;
  private slot?: QueueSlot;
  private child?: ClaudeChild;
  private pendingSpawn: Promise<unknown> = Promise.resolve();
  /** The runs' item stream: ended by close(), so its idle timer and stdout reader never outlive the turn. */
  private items?: AsyncGenerator<TurnItem>;
  /** PROVIDER_C_TIMEOUT and the caller's deadline, from the first spawn; its abort terminates the child. */
  private turnDeadline?: Deadline;
  private sawResult = false;
  private attempts = 0;
  private nonJsonLines = 0;
  private closing?: Promise<void>;

  constructor(
    private readonly environment: TurnEnvironment,
    request: ChatRequest,
    private readonly context: CallContext,
  ) {
    this.chatKey = request.conversationId;
    const tools = normalizeTools(request.tools);
    const plan = planToolChoice(request.toolChoice, tools);
    this.args = buildProviderCArgs(request.model);
    this.prompt = renderProviderCPrompt(request.messages, tools, plan);
    this.streamOptions = {
      toolKinds: new Map(tools.map((tool) => [tool.name, tool.type === 'custom' ? 'custom' : 'function'] as const)),
      fenceDetection: plan.enabled,
      diagnostic: (event, fields) =>
        event === 'tool_fence_duplicate' ? context.logger.debug({ event, ...fields }, event) : context.logger.warn({ event, ...fields }, event),
    };
  }

  async start(): Promise<AsyncIterable<ChatEvent>> {
    const { signal } = this.context;
    // The chat's login, or a 429/401 at once when every login is cooling or dead.
    this.account = new AccountTurn(this.environment.accounts, this.chatKey);
    try {
      this.slot = await this.environment.slots.acquire(signal, this.context.deadlineAt);
    } catch (error) {
      this.account.end();
      throw error;
    }
    this.environment.liveTurns.add(this);
    signal.addEventListener('abort', this.onAbort, { once: true });
    if (signal.aborted) this.onAbort();
    const items = (this.items = this.run());
    try {
      const first = await items.next();
      if (first.done) throw new GatewayError('upstream', { detail: 'provider_c turn ended before acceptance' });
    } catch (error) {
      await this.close();
      throw signal.aborted ? signal.reason : error;
    }
    // A consumer that returns without reading still ends the turn; reaping runs in the background.
    return closingEvents(this.events(items), () => void this.close());
  }

  /** Gateway shutdown: stop the child now; resolves once it is reaped and the slot released. */
  shutdown(): Promise<void> {
    this.child?.terminate('shutdown');
    return this.close();
  }

  // context.logger is the request's own logger, so the line keeps its request id even though
  // abort listeners run from whoever called abort() (a socket 'close').
  private readonly onAbort = () => {
    this.context.logger.info({ event: 'provider_c_canceled', attempt: this.attempts }, 'provider_c_canceled');
    this.child?.terminate('canceled');
    void this.close();
  };

  private async *events(items: AsyncGenerator<TurnItem>): AsyncGenerator<ChatEvent> {
    try {
      for (;;) {
        const next = await items.next();
        if (next.done) return;
        if (next.value !== 'accepted') yield next.value;
      }
    } finally {
      await items.return(undefined);
      // Reaping may take up to the post-result grace; the client must not wait for it.
      void this.close();
    }
  }

  /** Runs until a terminal event; yields 'accepted' once, when the API of any run has answered. */
  private async *run(): AsyncGenerator<TurnItem> {
    const { signal, logger } = this.context;
    let accepted = false;
    let outputYielded = false;
    const account = this.account!;
    for (let retry = 0; ; retry++) {
      const state = createStreamState(this.streamOptions);
      const login = this.loginEnvironment(account);
      let failure: GatewayError | undefined = login instanceof GatewayError ? login : undefined;
      if (!failure) {
        const child = await this.spawnChild(login as Record<string, string>);
        try {
          for await (const line of withIdleTimeout(child.lines(), this.environment.settings.idleTimeoutMs, () => child.terminate('idle'))) {
            const message = parseStreamLine(line);
            if (!message) {
              logger.debug({ event: 'provider_c_non_json_line', count: ++this.nonJsonLines }, 'provider_c_non_json_line');
              continue;
            }
            const result = translateLine(message, state);
            if (result.outcome?.type === 'error') {
              failure = classifyRunFailure({ kind: 'error_result', report: result.outcome.report, stderr: child.stderr() });
              break;
            }
            // Accepted when the API answered, never at `system/init` (design.md §4): until then a
            // failure is still a plain JSON error with its real status.
            if (!accepted && result.accepted) {
              accepted = true;
              yield 'accepted';
            }
            // Set before yielding: a consumer that stops at `finish` must find the turn complete.
            if (result.outcome?.type === 'success') this.sawResult = true;
            for (const event of result.events) {
              if (isOutput(event)) outputYielded = true;
              yield event;
            }
            if (this.sawResult) return;
          }
        } catch (error) {
          if (signal.aborted) throw signal.reason;
          if (error instanceof LineTooLongError) {
            child.terminate('line_too_long');
            failure = classifyRunFailure({ kind: 'line_too_long' });
          } else if (error instanceof GatewayError && error.code === 'timeout') {
            failure = classifyRunFailure({ kind: 'timeout', idle: true });
          } else if (child.terminatedBy === undefined) {
            throw error;
          }
          // Otherwise a read cut short by our own termination: classified from the exit below.
        }
        if (!failure) {
          const exit = await child.closed;
          if (signal.aborted) throw signal.reason;
          failure = this.exitFailure(child, exit);
          if (!failure && accepted) {
            logger.warn({ event: 'provider_c_missing_result' }, 'provider_c_missing_result');
            yield* endWithoutResult(state);
            return;
          }
          // Exit 0 without a single JSON line is no answer at all.
          failure ??= classifyRunFailure({ kind: 'exit', code: exit.code, signal: exit.signal, stderr: child.stderr() });
        }
        await this.retire(child);
      }
      if (signal.aborted) throw signal.reason;
      if (outputYielded) {
        // Output has begun: the turn stays on its login, whose state still learns from the failure.
        account.noteFailure(failure);
      } else if (account.moveAfter(failure)) {
        // A usage limit, 429 or dead login before any output: once more on another login (the
        // pool logs the move).
        continue;
      }
      if (!outputYielded && failure.retryable && retry < MAX_RETRIES) {
        const delayMs = retryDelayMs(retry, undefined);
        if (Date.now() + delayMs < (this.turnDeadline?.deadlineAt ?? Infinity)) {
          this.context.retried?.(failure.code);
          logger.warn({ event: 'provider_c_retry', attempt: retry + 2, delay_ms: Math.round(delayMs), code: failure.code }, 'provider_c_retry');
          await sleep(delayMs, signal);
          continue;
        }
      }
      if (!accepted) throw account.finalError(failure);
      yield* flushVisibleText(state);
      yield { type: 'error', error: failure };
      return;
    }
  }

  private exitFailure(child: ClaudeChild, exit: ChildExit): GatewayError | undefined {
    if (exit.spawnError) return classifyRunFailure({ kind: 'spawn', errno: exit.spawnError });
    if (child.terminatedBy === 'timeout' || this.timedOut) return classifyRunFailure({ kind: 'timeout', idle: false });
    if (child.terminatedBy === 'idle') return classifyRunFailure({ kind: 'timeout', idle: true });
    if (child.terminatedBy === 'shutdown') return new GatewayError('upstream', { detail: 'gateway shutting down' });
    if (exit.code === 0 && child.terminatedBy === undefined) return undefined;
    return classifyRunFailure({ kind: 'exit', code: exit.code, signal: exit.signal, stderr: child.stderr() });
  }

  /** The child variables of the turn's login, or the auth error that makes the login unusable. */
  private loginEnvironment(account: AccountTurn<ProviderCAccount>): Record<string, string> | GatewayError {
    try {
      return account.handle.childEnv();
    } catch (error) {
      return error instanceof GatewayError ? error : new GatewayError('auth', { detail: 'provider_c login unusable', cause: error });
    }
  }

  private async spawnChild(login: Record<string, string>): Promise<ClaudeChild> {
    if (this.closing) throw this.context.signal.aborted ? this.context.signal.reason : new GatewayError('upstream', { detail: 'provider_c turn closed' });
    if (this.timedOut) throw classifyRunFailure({ kind: 'timeout', idle: false });
    this.startTurnDeadline();
    const { settings } = this.environment;
    const attempt = ++this.attempts;
    // Waits for a background refresh of this login in flight; marks the login busy until the child exits.
    const childEnded = await this.account!.handle.childStarting();
    const spawning = ClaudeChild.start({ command: settings.command, args: this.args, env: { ...settings.childEnv, ...login }, stdin: this.prompt });
    this.pendingSpawn = spawning.catch(() => undefined);
    spawning.then((started) => started.closed, () => undefined).finally(childEnded).catch(() => undefined);
    const child = await spawning;
    this.child = child;
    // Closed or timed out while the directory was being created: stop it at once.
    if (this.closing) child.terminate(this.context.signal.aborted ? 'canceled' : 'shutdown');
    else if (this.timedOut) child.terminate('timeout');
    const { logger } = this.context;
    logger.info({ event: 'provider_c_process_start', attempt, pid: child.pid ?? null }, 'provider_c_process_start');
    void child.closed.then((exit) => {
      const fields = { attempt, exit_code: exit.code, signal: exit.signal, terminated_by: child.terminatedBy ?? null, duration_ms: Date.now() - child.startedAt };
      if (exit.spawnError) logger.warn({ event: 'provider_c_spawn_failed', attempt, errno: exit.spawnError }, 'provider_c_spawn_failed');
      else logger.info({ event: 'provider_c_process_exit', ...fields }, 'provider_c_process_exit');
    });
    return child;
  }

  /** PROVIDER_C_TIMEOUT (and a caller deadline) bound the whole turn, retries included, from the first spawn. */
  private startTurnDeadline(): void {
    if (this.turnDeadline) return;
    const { timeoutMs } = this.environment.settings;
    const deadlineAt = Math.min(timeoutMs > 0 ? Date.now() + timeoutMs : Infinity, this.context.deadlineAt ?? Infinity);
    // No parent signal: a client abort has its own path (onAbort, terminated as 'canceled').
    this.turnDeadline = deadline(deadlineAt, () => classifyRunFailure({ kind: 'timeout', idle: false }));
    this.turnDeadline.signal.addEventListener('abort', () => this.child?.terminate('timeout'), { once: true });
  }

  private get timedOut(): boolean {
    return this.turnDeadline?.signal.aborted ?? false;
  }

  /** A run that will not be continued: let it exit on its own briefly, else terminate; then reap. */
  private async retire(child: ClaudeChild): Promise<void> {
    child.discardOutput();
    if (!(await child.closesWithin(AFTER_RESULT_GRACE_MS))) child.terminate('after_result');
    await child.reaped;
  }

  /** Idempotent; the slot is released only after the last child was reaped (§2, §3.6). */
  close(): Promise<void> {
    this.closing ??= this.finish();
    return this.closing;
  }

  private async finish(): Promise<void> {
    this.turnDeadline?.clear();
    this.context.signal.removeEventListener('abort', this.onAbort);
    try {
      await this.pendingSpawn;
      const child = this.child;
      const aborted = this.context.signal.aborted;
      if (child && !child.isClosed) {
        if (this.sawResult && !aborted) {
          await this.retire(child);
        } else {
          child.terminate(aborted ? 'canceled' : 'turn_end');
        }
      }
      child?.discardOutput();
      await child?.reaped;
    } finally {
      // A run suspended at a yield nobody will resume (the consumer never read, or left) still
      // holds its idle timer and stdout reader until it is ended; ending it after the reap keeps
      // a lingering child's stdout open until it exited (see ClaudeChild.discardOutput).
      this.items?.return(undefined).catch(() => undefined);
      this.slot?.release();
      this.account?.end();
      this.environment.liveTurns.delete(this);
    }
  }
}
