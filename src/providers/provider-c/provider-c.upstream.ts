import type { ChatEvent } from '../../core/chat-event';
import type { EventLogger } from '../../core/event-logger';
import { GatewayError } from '../../core/gateway.error';
import type { JsonObject } from '../../common/json';
import type { ChatRequest } from '../shared/provider-adapter';
import type {
  AttemptInfo,
  CloseReason,
  FailureContext,
  FrameStep,
  UpstreamAttempt,
  UpstreamFamily,
} from '../shared/turn-runner';
import { transportFailure } from '../shared/turn-runner';
import { untilAborted } from '../../common/async/abortable';
import type { ProviderCAccount } from '../../accounts/provider-c/provider-c.accounts';
import { commandProblem } from '../../accounts/provider-c/provider-c.login-check';
import { buildProviderCArgs, effortEnvironment } from './provider-c.argv';
import type { RunFailure } from './provider-c.errors';
import { classifyRunFailure, RunFailed } from './provider-c.errors';
import { renderProviderCPrompt } from './provider-c.prompt';
import type { ToolChoicePlan } from './provider-c.protocol';
import { LineTooLongError } from './provider-c.line-splitter';
import type { ChildExit } from './provider-c.process';
import { ClaudeChild } from './provider-c.process';
import type { ProviderCStreamState, StreamStateOptions } from './provider-c.stream';
import {
  createStreamState,
  endWithoutResult,
  flushVisibleText,
  parseStreamLine,
  translateLine,
} from './provider-c.stream';

/** One `claude -p` run as the turn runner reads it (docs/providers.md, provider_c): its stdout JSON lines. */
export interface ProviderCAttempt extends UpstreamAttempt<JsonObject> {
  readonly child: ClaudeChild;
  /** Its translation state; once `state.accepted`, a clean exit without `result` still ends the turn. */
  readonly state: ProviderCStreamState;
  readonly logger: EventLogger;
  /**
   * What the runner said of this run: what its `rate_limit_event` says of the plan is reported
   * through it for its login (`info.reportPlan`), and extra usage in use is told to the turn
   * (`info.paidReported`).
   */
  readonly info: AttemptInfo<ProviderCAccount>;
  /** How the child ended, known once its lines ended (`end` reads it). */
  readonly exit?: ChildExit;
  /** A stdout line was longer than the bound: the run was terminated. */
  readonly lineTooLong: boolean;
}

/** What every run of one chat turn shares. */
export interface ClaudeRun {
  readonly command: string;
  /** The child environment without the login's variables. */
  readonly baseEnv: Readonly<Record<string, string>>;
  /** The turn's request: its model makes the argv, its messages and tools the prompt. */
  readonly request: Pick<ChatRequest, 'model' | 'messages' | 'normalizedTools'>;
  /** How the request's tool choice is carried by the prompt (`planToolChoice`). */
  readonly toolPlan: ToolChoicePlan;
  readonly streamOptions: StreamStateOptions;
  readonly logger: EventLogger;
  /** The children alive now (the adapter terminates them on shutdown). */
  readonly live: Set<ClaudeChild>;
}

/** One run's invocation on its login: argv and stdin (the same for every run of the turn) and the login's environment. */
export interface ClaudeInvocation {
  readonly args: readonly string[];
  /** The complete child environment: the base one with the login's variables. */
  readonly env: Readonly<Record<string, string>>;
  /** Written to stdin (never argv, docs/upstream/provider-c.md §3.4). */
  readonly stdin: string;
}

/**
 * provider_c as an upstream family of the turn runner: an attempt is one child process on the
 * turn's login; its frames are its stdout lines, and how the child exited is what `end` hands the
 * runner to classify (the exit is when the CLI's refusal becomes known).
 */
export class ProviderCUpstream implements UpstreamFamily<
  ProviderCAccount,
  JsonObject,
  ProviderCAttempt,
  ClaudeInvocation
> {
  readonly provider = 'provider_c' as const;
  /** The argv of every run of this turn, built with its first request. */
  private args?: readonly string[];
  /** The prompt of every run of this turn (it does not depend on the login), built with its first request. */
  private prompt?: string;

  constructor(private readonly run: ClaudeRun) {}

  /**
   * The login's child variables (or the auth error that makes the login unusable), with the turn's
   * argv and prompt. A background refresh of the login in flight is waited for first, as another
   * family's request waits for its token: the runner then starts the child only while the pool
   * still gives the turn this login, else the turn takes the pool's choice. Synchronous without one.
   */
  request(attempt: AttemptInfo<ProviderCAccount>, signal: AbortSignal): ClaudeInvocation | Promise<ClaudeInvocation> {
    const refresh = attempt.login.refreshInFlight();
    if (refresh) return untilAborted(refresh, signal).then(() => this.request(attempt, signal));
    let loginEnv: Record<string, string>;
    try {
      loginEnv = attempt.login.childEnv();
    } catch (error) {
      throw error instanceof GatewayError
        ? error
        : new GatewayError('auth', { detail: 'provider_c login unusable', cause: error });
    }
    if (signal.aborted) throw signal.reason;
    const { run } = this;
    this.args ??= buildProviderCArgs(run.request.model);
    this.prompt ??= this.renderPrompt();
    // The effort's variables win over the gateway's own (an operator's MAX_THINKING_TOKENS).
    return {
      args: this.args,
      env: { ...run.baseEnv, ...loginEnv, ...effortEnvironment(run.request.model) },
      stdin: this.prompt,
    };
  }

  /** The turn's prompt; what pairing the history's calls and results changed is logged once, as counts. */
  private renderPrompt(): string {
    const { request, toolPlan, logger } = this.run;
    const prompt = renderProviderCPrompt(request.messages, request.normalizedTools, toolPlan);
    if (prompt.cancelledCalls + prompt.orphanResults > 0)
      logger.debug(
        {
          event: 'provider_c_prompt_adjusted',
          cancelled_tool_calls: prompt.cancelledCalls,
          orphan_tool_results: prompt.orphanResults,
        },
        'provider_c_prompt_adjusted',
      );
    return prompt.text;
  }

  /** Starts the child: it is the attempt; a spawn refused outright rejects with its `RunFailed`. */
  send(
    invocation: ClaudeInvocation,
    attempt: AttemptInfo<ProviderCAccount>,
    signal: AbortSignal,
  ): Promise<ProviderCAttempt> {
    return spawnAttempt(this.run, invocation, attempt, signal);
  }

  /** A failed run (`RunFailed`, or the exit `end` hands over) by the table of docs/upstream/provider-c.md §8.3, at `atMs`. */
  classify(failure: unknown, { atMs }: FailureContext<ProviderCAccount>): GatewayError {
    if (!(failure instanceof RunFailed)) return transportFailure(this.provider, failure);
    // A spawn refused: a command path that is there but cannot run has its own fix, not the install.
    const problem = failure.failure.kind === 'spawn' ? commandProblem(this.run.command) : undefined;
    return classifyRunFailure(failure.failure, atMs, problem);
  }

  translate(message: JsonObject, attempt: ProviderCAttempt): FrameStep {
    const step = translateLine(message, attempt.state, attempt.child);
    const { planReport } = attempt.state;
    if (planReport) {
      attempt.state.planReport = undefined;
      const { info } = attempt;
      info.reportPlan(planReport);
      if (planReport.paid?.inUse) info.paidReported();
    }
    return step;
  }

  /** The lines ended: how the child exited decides. */
  end(attempt: ProviderCAttempt): FrameStep {
    return exitStep(attempt);
  }

  /** Text held while it might open a tool fence is the client's once the turn ends in an error. */
  held(attempt: ProviderCAttempt): readonly ChatEvent[] {
    return flushVisibleText(attempt.state);
  }
}

async function spawnAttempt(
  run: ClaudeRun,
  invocation: ClaudeInvocation,
  attempt: AttemptInfo<ProviderCAccount>,
  signal: AbortSignal,
): Promise<ProviderCAttempt> {
  // The request waited for a background refresh of the login in flight; a client that left
  // meanwhile starts no child. The login is busy until the child exits.
  if (signal.aborted) throw signal.reason;
  const childEnded = attempt.login.childStarting();
  let child: ClaudeChild;
  try {
    child = await ClaudeChild.start({
      command: run.command,
      args: invocation.args,
      env: invocation.env,
      stdin: invocation.stdin,
    });
  } catch (error) {
    childEnded();
    throw error;
  }
  run.live.add(child);
  const { logger } = run;
  const number = attempt.number;
  logger.info(
    { event: 'provider_c_process_start', attempt: number, pid: child.pid ?? null },
    'provider_c_process_start',
  );
  void child.closed.then((exit) => {
    childEnded();
    const fields = {
      attempt: number,
      exit_code: exit.code,
      signal: exit.signal,
      terminated_by: child.terminatedBy ?? null,
      duration_ms: Date.now() - child.startedAt,
    };
    // At info: the attempt's failure (its errno and the install fix) is the request's one warning.
    if (exit.spawnError)
      logger.info(
        { event: 'provider_c_spawn_failed', attempt: number, errno: exit.spawnError },
        'provider_c_spawn_failed',
      );
    else logger.info({ event: 'provider_c_process_exit', ...fields }, 'provider_c_process_exit');
  });
  void child.reaped.then(() => run.live.delete(child));
  return new ChildAttempt(child, createStreamState(run.streamOptions), logger, attempt, signal);
}

/** One child as the runner reads it. */
class ChildAttempt implements ProviderCAttempt {
  readonly frames: AsyncGenerator<JsonObject>;
  exit?: ChildExit;
  lineTooLong = false;
  private closing?: Promise<void>;

  constructor(
    readonly child: ClaudeChild,
    readonly state: ProviderCStreamState,
    readonly logger: EventLogger,
    readonly info: AttemptInfo<ProviderCAccount>,
    private readonly signal: AbortSignal,
  ) {
    this.frames = this.lines();
    // The client leaving or the deadline passing stops the child at once, whatever the turn is doing.
    if (signal.aborted) this.handleEvent();
    else signal.addEventListener('abort', this, { once: true });
  }

  /** The turn's signal aborted (this object is its listener). */
  handleEvent(): void {
    const { reason } = this.signal;
    this.child.terminate(reason instanceof GatewayError && reason.code === 'timeout' ? 'timeout' : 'canceled');
  }

  close(reason: CloseReason): Promise<void> {
    this.signal.removeEventListener('abort', this);
    this.closing ??= closeChild(this.child, reason);
    return this.closing;
  }

  /**
   * stdout's JSON lines; then the exit is read. The CLI prints other text between them, so non-JSON
   * lines are skipped and counted here instead of failing the attempt (providers/shared/unreadable-frame.ts).
   */
  private async *lines(): AsyncGenerator<JsonObject> {
    const { child, logger } = this;
    let nonJsonLines = 0;
    try {
      for await (const line of child.lines()) {
        const message = parseStreamLine(line);
        if (message) yield message;
        else logger.debug({ event: 'provider_c_non_json_line', count: ++nonJsonLines }, 'provider_c_non_json_line');
      }
    } catch (error) {
      if (error instanceof LineTooLongError) {
        this.lineTooLong = true;
        child.terminate('line_too_long');
      } else if (child.terminatedBy === undefined) throw error;
      // Otherwise a read cut short by our own termination: classified from the exit.
    }
    this.exit = await child.closed;
  }
}

/**
 * A run that is over is terminated now, whatever ended it: a child that printed its result has
 * nothing left to give the turn, and one left to exit on its own may hold its process group for
 * seconds (docs/providers.md "Timeouts and cancellation"). Resolves once the child was reaped
 * (its directory removed), so a process slot is freed only then.
 */
async function closeChild(child: ClaudeChild, reason: CloseReason): Promise<void> {
  child.terminate(reason === 'done' ? 'turn_end' : reason);
  // Unread stdout keeps `close` from firing: dropped once the child exited (ClaudeChild.discardOutput).
  child.discardOutput();
  await child.reaped;
}

/**
 * How a run that printed no `result` ended (docs/upstream/provider-c.md §8.3): a failed run is
 * handed to the runner as it is (`unclassified`), which classifies it through `classify`.
 */
function exitStep(attempt: ProviderCAttempt): FrameStep {
  const { child, state, exit } = attempt;
  const failed = (failure: RunFailure): FrameStep => ({ events: [], unclassified: new RunFailed(failure) });
  if (attempt.lineTooLong) return failed({ kind: 'line_too_long' });
  if (!exit)
    return { events: [], failure: new GatewayError('upstream', { detail: 'provider_c run ended without an exit' }) };
  if (exit.spawnError) return failed({ kind: 'spawn', errno: exit.spawnError });
  if (child.terminatedBy === 'timeout') return failed({ kind: 'timeout', idle: false });
  if (child.terminatedBy === 'idle') return failed({ kind: 'timeout', idle: true });
  if (child.terminatedBy === 'shutdown')
    return { events: [], failure: new GatewayError('upstream', { detail: 'gateway shutting down' }) };
  if (exit.code === 0 && child.terminatedBy === undefined && state.accepted) {
    // The API answered and the CLI exited cleanly without its result line: the answer so far stands.
    attempt.logger.warn({ event: 'provider_c_missing_result' }, 'provider_c_missing_result');
    return endWithoutResult(state);
  }
  // Exit 0 without a single JSON line is no answer at all.
  return failed({ kind: 'exit', code: exit.code, signal: exit.signal, stderr: child.stderr() });
}
