import type { EventLogger } from '../../core/event-logger';
import { GatewayError } from '../../core/gateway.error';
import type { JsonObject } from '../../common/json';
import type { AttemptInfo, CloseReason, FrameStep, UpstreamAttempt, UpstreamFamily } from '../shared/turn-runner';
import type { ProviderCAccount } from '../../accounts/provider-c/provider-c.accounts';
import { classifyRunFailure } from './provider-c.errors';
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

/** What one `claude` run prints: its stdout JSON lines, then how it ended. */
export type ClaudeFrame =
  | { readonly kind: 'line'; readonly message: JsonObject }
  /** stdout ended (or a line was too long): the exit status, read once the child closed. */
  | { readonly kind: 'exit'; readonly exit: ChildExit; readonly lineTooLong: boolean };

/** One `claude -p` run as the turn runner reads it (provider_c.md §3, §6). */
export interface ProviderCAttempt extends UpstreamAttempt<ClaudeFrame> {
  readonly child: ClaudeChild;
  readonly state: ProviderCStreamState;
  /** The API answered in this run (message_start or output): a clean exit without `result` still ends the turn. */
  accepted: boolean;
  sawResult: boolean;
  readonly logger: EventLogger;
}

/** What every run of one chat turn shares. */
export interface ClaudeRun {
  readonly command: string;
  /** The child environment without the login's variables. */
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly args: readonly string[];
  /** Written to stdin (never argv, §3.4). */
  readonly prompt: string;
  readonly streamOptions: StreamStateOptions;
  readonly logger: EventLogger;
  /** The children alive now (the adapter terminates them on shutdown). */
  readonly live: Set<ClaudeChild>;
}

/**
 * provider_c as an upstream family: an attempt is one child process on the turn's login; its
 * frames are its stdout lines and, last, its exit.
 */
export function providerCFamily(run: ClaudeRun): UpstreamFamily<ProviderCAccount, ClaudeFrame, ProviderCAttempt> {
  return {
    provider: 'provider_c',
    open: (attempt, signal) => spawnAttempt(run, attempt, signal),
    translate: translateFrame,
    end: () => ({
      events: [],
      failure: new GatewayError('upstream', { detail: 'provider_c run ended without an exit' }),
    }),
    // Text held while it might open a tool fence is the client's once the turn ends in an error (§7.3).
    held: (attempt) => flushVisibleText(attempt.state),
  };
}

async function spawnAttempt(
  run: ClaudeRun,
  attempt: AttemptInfo<ProviderCAccount>,
  signal: AbortSignal,
): Promise<ProviderCAttempt> {
  // The child variables of the login, or the auth error that makes the login unusable.
  let loginEnv: Record<string, string>;
  try {
    loginEnv = attempt.login.childEnv();
  } catch (error) {
    throw error instanceof GatewayError
      ? error
      : new GatewayError('auth', { detail: 'provider_c login unusable', cause: error });
  }
  if (signal.aborted) throw signal.reason;
  // Waits for a background refresh of this login in flight; marks the login busy until the child exits.
  const childEnded = await attempt.login.childStarting();
  let child: ClaudeChild;
  try {
    child = await ClaudeChild.start({
      command: run.command,
      args: run.args,
      env: { ...run.baseEnv, ...loginEnv },
      stdin: run.prompt,
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
    if (exit.spawnError)
      logger.warn(
        { event: 'provider_c_spawn_failed', attempt: number, errno: exit.spawnError },
        'provider_c_spawn_failed',
      );
    else logger.info({ event: 'provider_c_process_exit', ...fields }, 'provider_c_process_exit');
  });
  void child.reaped.then(() => run.live.delete(child));
  // The client leaving or the deadline passing stops the child at once, whatever the turn is doing.
  const onAbort = () =>
    child.terminate(signal.reason instanceof GatewayError && signal.reason.code === 'timeout' ? 'timeout' : 'canceled');
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  let closing: Promise<void> | undefined;
  const result: ProviderCAttempt = {
    child,
    state: createStreamState(run.streamOptions),
    accepted: false,
    sawResult: false,
    logger,
    frames: childFrames(child, logger),
    close: (reason) => {
      signal.removeEventListener('abort', onAbort);
      closing ??= closeChild(child, reason);
      return closing;
    },
  };
  return result;
}

/** stdout lines as frames (non-JSON lines skipped and counted, §6), then the exit. */
async function* childFrames(child: ClaudeChild, logger: EventLogger): AsyncGenerator<ClaudeFrame> {
  let nonJsonLines = 0;
  let lineTooLong = false;
  try {
    for await (const line of child.lines()) {
      const message = parseStreamLine(line);
      if (message) yield { kind: 'line', message };
      else logger.debug({ event: 'provider_c_non_json_line', count: ++nonJsonLines }, 'provider_c_non_json_line');
    }
  } catch (error) {
    if (error instanceof LineTooLongError) {
      lineTooLong = true;
      child.terminate('line_too_long');
    } else if (child.terminatedBy === undefined) throw error;
    // Otherwise a read cut short by our own termination: classified from the exit.
  }
  yield { kind: 'exit', exit: await child.closed, lineTooLong };
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

function translateFrame(frame: ClaudeFrame, attempt: ProviderCAttempt): FrameStep {
  if (frame.kind === 'exit') return exitStep(frame, attempt);
  const result = translateLine(frame.message, attempt.state);
  if (result.outcome?.type === 'error') {
    return {
      events: [],
      failure: classifyRunFailure({
        kind: 'error_result',
        report: result.outcome.report,
        stderr: attempt.child.stderr(),
      }),
    };
  }
  // Accepted when the API answered, never at `system/init` (design.md §4).
  if (result.accepted) attempt.accepted = true;
  // Set before the events go out: a consumer that stops at `finish` must find the run complete.
  if (result.outcome?.type === 'success') attempt.sawResult = true;
  return { events: result.events, accepted: result.accepted, terminal: attempt.sawResult };
}

/** How a run that printed no `result` ended (§8.3). */
function exitStep(frame: Extract<ClaudeFrame, { kind: 'exit' }>, attempt: ProviderCAttempt): FrameStep {
  const { child, state } = attempt;
  const { exit } = frame;
  const classified = (failure: GatewayError): FrameStep => ({ events: [], failure });
  if (frame.lineTooLong) return classified(classifyRunFailure({ kind: 'line_too_long' }));
  if (exit.spawnError) return classified(classifyRunFailure({ kind: 'spawn', errno: exit.spawnError }));
  if (child.terminatedBy === 'timeout') return classified(classifyRunFailure({ kind: 'timeout', idle: false }));
  if (child.terminatedBy === 'idle') return classified(classifyRunFailure({ kind: 'timeout', idle: true }));
  if (child.terminatedBy === 'shutdown')
    return classified(new GatewayError('upstream', { detail: 'gateway shutting down' }));
  if (exit.code === 0 && child.terminatedBy === undefined && attempt.accepted) {
    // The API answered and the CLI exited cleanly without its result line: the answer so far stands.
    attempt.sawResult = true;
    attempt.logger.warn({ event: 'provider_c_missing_result' }, 'provider_c_missing_result');
    return { events: endWithoutResult(state), terminal: true };
  }
  // Exit 0 without a single JSON line is no answer at all.
  return classified(classifyRunFailure({ kind: 'exit', code: exit.code, signal: exit.signal, stderr: child.stderr() }));
}
