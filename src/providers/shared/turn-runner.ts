import type { AccountTurn } from '../../accounts/account-turn';
import type { ChatEvent, PolledEvents, UsageEvent } from '../../core/chat-event';
import type { PlanReport } from '../../core/plan-usage';
import { GatewayError } from '../../core/gateway.error';
import { familyOf, isFamilyId } from '../../core/family-registry';
import { isNever, timeoutOrNever } from '../../common/async/timer-range';
import type { ProviderId } from '../../core/provider-id';
import type { CallContext } from './provider-adapter';
import type { UpstreamLogFields } from './upstream-log';
import { logUpstream, upstreamCauseFields } from './upstream-log';
import { idleTimeoutFix, turnTimeoutFix } from './timeout-fixes';
import type { RetryClock } from './retry-policy';
import { RETRY_DELAYS_MS, retryDelayMs, SYSTEM_RETRY_CLOCK } from './retry-policy';

/**
 * The one lifecycle of an upstream turn, for every family (docs/architecture.md "An upstream
 * turn"): take the login, open attempts until one shows output (the shared retry rule before
 * output, never after), resolve once the upstream accepted the turn, bound it by the deadline and
 * the idle timer, move once to another login, close the attempt whatever happens, and log every
 * failure once as `upstream_*`, at info: each attempt, each retry and the turn's end are the
 * turn's story; the request's one warning is its summary line (`chat_completion`,
 * `structured_failure`), which carries the turn's final failure. A family only says how to build
 * and send an attempt's request, how its failures map to the error table, and what its frames mean.
 */

/** Why an attempt is closed; a family may close differently (a child after its result gets a grace). */
export type CloseReason = 'done' | 'failed' | 'canceled' | 'timeout' | 'idle';

/** One upstream attempt as its family's `send` resolved it: a connection, a fetch, a child process. */
export interface UpstreamAttempt<F> {
  /** The attempt's frames in order; ends when the upstream closes. */
  readonly frames: AsyncIterator<F>;
  /** A frame that already arrived, taken without waiting (a burst costs no promise per frame). */
  poll?(): F | undefined;
  /**
   * Waits for the next frame without a promise of its own: calls `arrived` once with it (or with
   * the end), or `failed` with the error `frames.next()` would reject with; possibly at once.
   * Without it the runner reads `frames.next()`.
   */
  listen?(arrived: (next: IteratorResult<F>) => void, failed: (error: unknown) => void): void;
  /** Ends the attempt (socket closed, fetch aborted, child killed); resolves once its resources are gone. Idempotent. */
  close(reason: CloseReason): Promise<void> | void;
}

/** What one frame (or the end of the frames) means for the turn. */
export interface FrameStep {
  /** Events for the client, in order (ignored on a failure, classified or not: the runner decides what the client sees). */
  readonly events: readonly ChatEvent[];
  /** The upstream took the turn (the first real answer; headers may be committed). */
  readonly accepted?: boolean;
  /** The turn is complete; `events` end it. */
  readonly terminal?: boolean;
  /**
   * Usage the upstream billed for the attempt beyond what its events report (provider_c: the API
   * calls of one run the client never got, on the terminal step; the usage a failure reports with
   * it, on the failed step), handed to the caller's count only, whatever else the step holds.
   */
  readonly billed?: UsageEvent;
  /** The attempt failed; retried before output by the shared rule. */
  readonly failure?: GatewayError;
  /**
   * The attempt failed with what only the family's `classify` reads (an error event or payload of
   * the stream, provider_c's failed run); the runner classifies it with its own clock, like a
   * refusal of `send`.
   */
  readonly unclassified?: unknown;
  /**
   * The attempt ended showing nothing and the family wants it sent again (`emptyTurnRetry`); the
   * value names why (for the log), `events` are what the client gets if it is not.
   */
  readonly again?: string;
}

/** What a family's `request`, `send` and `classify` are told about the attempt. */
export interface AttemptInfo<L> {
  /** 1 for the first attempt of the turn, counting across logins. */
  readonly number: number;
  readonly login: L;
  readonly alias: string;
  /** Epoch ms; Infinity when unbounded. */
  readonly deadlineAt: number;
  /**
   * The upstream said this attempt draws paid usage (a plan report with `paid.inUse`): the turn is
   * one paid turn of the attempt's login, counted and logged when the turn gives the login back,
   * delivered or not (docs/accounts.md "What each login has left, and paid usage").
   */
  paidReported(): void;
  /**
   * What the upstream said of the attempt's login's plan (response headers, a stream's rate-limit
   * event, a refusal): it reaches the login through the turn, which drops it when the login file
   * came to hold another account's login since the turn took it (docs/accounts.md).
   */
  reportPlan(report: PlanReport): void;
}

/** What an attempt's reports reach: the turn it belongs to. */
interface AttemptReports {
  paidReported(): void;
  reportPlan(report: PlanReport): void;
}

/** The `AttemptInfo` the runner gives a family: one object per attempt, its method on the prototype. */
class Attempt<L> implements AttemptInfo<L> {
  constructor(
    readonly number: number,
    readonly login: L,
    readonly alias: string,
    readonly deadlineAt: number,
    private readonly turn: AttemptReports,
  ) {}

  paidReported(): void {
    this.turn.paidReported();
  }

  reportPlan(report: PlanReport): void {
    this.turn.reportPlan(report);
  }
}

/** What a family's `classify` is told with a failure. */
export interface FailureContext<L> {
  /** When the runner met the failure, epoch ms by its clock: what a reset or a hint is read against. */
  readonly atMs: number;
  /** The attempt that failed (its login: a family may learn from the refusal, as provider_a's plan meter does). */
  readonly attempt: AttemptInfo<L>;
}

/**
 * How one family talks to its upstream; everything else is the runner's. An attempt is opened in
 * the same two steps for every family, `request` then `send`, and whatever either step or the
 * frames fail with that is not already a `GatewayError` reaches `classify`, with the runner's
 * time. `R` is the family's request: the body, headers and token, or the argv, stdin and env.
 */
export interface UpstreamFamily<L, F, A extends UpstreamAttempt<F>, R = unknown> {
  readonly provider: ProviderId;
  /**
   * The attempt's request for the login it runs on (`attempt.login`): its token (maybe a refresh,
   * waited for on `signal`) and the body and headers, or argv and environment, built for it.
   * Synchronous when nothing is waited for, so an attempt pays no promise for it.
   */
  request(attempt: AttemptInfo<L>, signal: AbortSignal): R | Promise<R>;
  /**
   * Sends the request: resolves with the attempt once the upstream took it (a 2xx, an upgrade, a
   * spawned child); rejects with the refusal as it came (a status and body) for `classify`.
   */
  send(request: R, attempt: AttemptInfo<L>, signal: AbortSignal): Promise<A>;
  /**
   * The one place a family maps a failure to the error table: a refusal of `send`, a transport
   * error of any step or of the frames, a step's `unclassified`. Never given a `GatewayError`, nor
   * the turn's abort. Side effects of a refusal (a plan meter learning from its headers) happen
   * here; `transportFailure` is the reading of an error the family does not know.
   */
  classify(failure: unknown, context: FailureContext<L>): GatewayError;
  /**
   * One frame's meaning (translation state lives on the attempt). An error the upstream reports in
   * a frame is handed over as the step's `unclassified` failure, so `classify` reads it at the
   * runner's time like any other.
   */
  translate(frame: F, attempt: A): FrameStep;
  /** The frames ended: a terminal step, a failure (or one left `unclassified`), or `again`. */
  end(attempt: A): FrameStep;
  /** Events held back from the client (reasoning, possible fence text), released before a terminal error. */
  held?(attempt: A): readonly ChatEvent[];
  /**
   * A failure before output that the family recovers from itself, at once and outside the retry
   * budget (a login's one forced refresh after an upstream 401; provider_a's kept WebSocket found
   * stale at its first event, sent again in full on a fresh one): true opens again now.
   */
  reopenAfter?(failure: GatewayError): boolean;
  /**
   * The turn is over, once, whatever ended it (its close): no attempt follows, so what the family
   * counts per turn from how its attempts went is final here (provider_a: how the turn used the
   * chat's kept connection, as its `chat_completion` line says).
   */
  closed?(): void;
  /** Attempts that ended showing nothing (`again`) may be sent again this often, this far apart. */
  readonly emptyTurnRetry?: { readonly maxRetries: number; delayMs(retry: number): number };
}

export interface TurnOptions<L> {
  /** The login the turn runs on (already taken: a full or dead pool fails before any work). */
  readonly account: AccountTurn<L>;
  /** The family's whole-turn bound (PROVIDER_*_TIMEOUT); 0 = none of its own. */
  readonly timeoutMs: number;
  /** GATEWAY_STREAM_IDLE_TIMEOUT: longest wait for the next frame; 0 = off. */
  readonly idleTimeoutMs: number;
  readonly context: CallContext;
  /** Called once when the last attempt is closed and the login given back (a process slot is freed). */
  readonly onClosed?: () => void;
  /** The time, jitter and waits of the turn's retries; the system's unless a spec gives its own. */
  readonly clock?: RetryClock;
}

/** An accepted turn: its events and the attempt that is running (the extraction reads its ids). */
export interface AcceptedTurn<A> {
  readonly events: PolledEvents;
  current(): A | undefined;
}

const ACCEPTED = Symbol('accepted');
/** The attempt's request waited (a token refresh) and the pool no longer gives the turn its login: nothing was sent. */
const WITHDRAWN = Symbol('withdrawn');
/** The attempt's frames ended. */
const DONE = Symbol('done');
const isOutput = (event: ChatEvent) =>
  event.type === 'text-delta' || event.type === 'reasoning-delta' || event.type === 'tool-call';
/** A step `poll` may hand over itself: events only (none of what the generator decides on). */
const isPlain = (step: FrameStep, accepted: boolean) =>
  (accepted || !step.accepted) &&
  !step.terminal &&
  step.failure === undefined &&
  step.unclassified === undefined &&
  step.again === undefined;

/**
 * Runs one turn. Resolves once the upstream accepted it; rejects with the classified error (the
 * caller's abort reason when the client left) when no attempt was accepted. After acceptance every
 * failure is one terminal `error` event; the events throw only when the client left.
 */
export async function runTurn<L, F, A extends UpstreamAttempt<F>, R>(
  family: UpstreamFamily<L, F, A, R>,
  options: TurnOptions<L>,
): Promise<AcceptedTurn<A>> {
  const turn = new UpstreamTurn(family, options);
  try {
    await turn.run.next();
  } catch (error) {
    throw turn.rejected(error);
  }
  // The generator already started (it stopped at ACCEPTED), so its return() runs its finally even
  // when the consumer never reads: no wrapper generator is needed, and none is paid for per stream.
  return turn;
}

/** A failure a family does not know (a reset socket, a failed read): retryable `upstream`, its cause kept for the log. */
export function transportFailure(provider: ProviderId, error: unknown): GatewayError {
  return new GatewayError('upstream', { detail: `${provider} transport error`, retryable: true, cause: error });
}

/**
 * The state of one turn, kept cheap because a gateway holds thousands of open streams: one
 * object that is itself the listener on the client's signal (`handleEvent`) and the client's
 * events (`next`, `poll`), one generator, one AbortController (the turn's signal every wait of
 * its attempts listens to: the request's own when the context hands it over) and one timer, for the idle bound or the deadline, whichever ends
 * first, whose callback is a module function given the turn.
 *
 * The generator decides everything: retries, moves, failures, the end. While it waits on its
 * consumer after a plain step, `poll` translates frames the attempt already holds and hands over
 * their events without resuming it; any other step is kept for the generator to take next.
 */
class UpstreamTurn<L, F, A extends UpstreamAttempt<F>, R> implements AcceptedTurn<A>, PolledEvents, AttemptReports {
  /** The run: ACCEPTED once (taken by `runTurn`), then the client's events. */
  readonly run: AsyncGenerator<ChatEvent> & AsyncGenerator<ChatEvent | typeof ACCEPTED>;
  attempt?: A;
  /** Events of the current step not yet handed over (the first went out through the generator's yield or `poll`). */
  private queued?: readonly ChatEvent[];
  private queuedAt = 0;
  /** The generator waits on its consumer after a step that is not the last: `poll` may read on. */
  private readable = false;
  /** A step `poll` translated but leaves to the generator (it accepts, ends, fails or asks again). */
  private kept?: FrameStep;
  /** What the family is told about the current attempt; set when it starts, before anything can fail. */
  private info?: AttemptInfo<L>;
  /**
   * Behind the turn's signal: the context's (the request's, which the turn then ends with its own
   * reason) or the turn's own, linked to the context's signal.
   */
  private readonly controller: AbortController;
  /** The turn ended its signal itself (its deadline, or silence while opening): not the client, not the drain. */
  private endedItself = false;
  /** The signal ended and the turn stopped for it (timer cleared, listener removed): once, whoever ended it. */
  private stopped = false;
  private readonly deadlineAt: number;
  /**
   * The turn's one timer: armed for the idle bound while that ends before the deadline (re-armed
   * with refresh() at every wait, no timer per frame), else for the deadline.
   */
  private timer?: NodeJS.Timeout;
  /** What `timer` is armed for: the idle bound, the deadline, or nothing. */
  private timerFor: 'idle' | 'deadline' | 'none' = 'none';
  private resolveRead?: (frame: F | typeof DONE) => void;
  private rejectRead?: (error: unknown) => void;
  /** The attempt the read callbacks belong to: a read left pending on an attempt given up settles into nothing. */
  private readingFrom?: A;
  private openingAttempt = false;
  private frameArrived?: (next: IteratorResult<F>) => void;
  private readFailed?: (error: unknown) => void;
  private number = 0;
  private accepted = false;
  /** The current attempt reported paid usage before the upstream accepted the turn. */
  private paidPending = false;
  private output = false;
  private closed = false;
  /** True while the run waits at a yield for its consumer. */
  private suspended = false;
  private readonly clock: RetryClock;

  constructor(
    private readonly family: UpstreamFamily<L, F, A, R>,
    private readonly options: TurnOptions<L>,
  ) {
    const { timeoutMs, context } = options;
    this.clock = options.clock ?? SYSTEM_RETRY_CLOCK;
    this.deadlineAt = Math.min(timeoutMs > 0 ? this.clock.now() + timeoutMs : Infinity, context.deadlineAt ?? Infinity);
    this.controller = context.controller ?? new AbortController();
    if (context.signal.aborted) {
      this.stopped = true;
      if (!this.controller.signal.aborted) this.controller.abort(context.signal.reason);
    } else context.signal.addEventListener('abort', this);
    this.armTimer();
    this.run = this.steps() as UpstreamTurn<L, F, A, R>['run'];
  }

  current(): A | undefined {
    return this.attempt;
  }

  get events(): PolledEvents {
    return this;
  }

  [Symbol.asyncIterator](): PolledEvents {
    return this;
  }

  next(): Promise<IteratorResult<ChatEvent>> {
    const ready = this.poll();
    return ready === undefined ? this.run.next() : Promise.resolve({ done: false, value: ready });
  }

  return(): Promise<IteratorResult<ChatEvent>> {
    this.queued = undefined;
    this.readable = false;
    return this.run.return(undefined);
  }

  /**
   * The next event without a wait: one left of the current step, else the first of the next
   * frame the attempt already holds, translated here while the generator waits at its yield.
   */
  poll(): ChatEvent | undefined {
    const queued = this.queued;
    if (queued !== undefined) {
      const event = queued[this.queuedAt++];
      if (this.queuedAt === queued.length) this.queued = undefined;
      return event;
    }
    const attempt = this.attempt;
    if (!this.readable || attempt?.poll === undefined) return undefined;
    for (;;) {
      if (this.controller.signal.aborted) return undefined;
      const frame = attempt.poll();
      if (frame === undefined) return undefined;
      const step = this.family.translate(frame, attempt);
      if (!isPlain(step, this.accepted)) {
        this.kept = step;
        this.readable = false;
        return undefined;
      }
      if (step.events.length > 0) return this.handOver(step.events);
    }
  }

  /** Hands over a step's first event and queues the rest (output marked: it is the client's now). */
  private handOver(events: readonly ChatEvent[]): ChatEvent {
    if (!this.output) this.output = events.some(isOutput);
    if (events.length > 1) {
      this.queued = events;
      this.queuedAt = 1;
    }
    return events[0];
  }

  /** Aborted when the client leaves (its reason, unchanged) or the deadline passes (`timeout`). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * The current attempt reported drawing paid usage (`AttemptInfo.paidReported`): a flag on the
   * login's lease, read when the turn gives it back, its line logged by the turn's logger. Held
   * (`paidPending`) until the upstream accepts the turn.
   */
  paidReported(): void {
    // Before the upstream took the turn a report is only a promise (a handshake's headers, telemetry
    // ahead of a refusal): it counts once the turn is accepted, and a refused attempt's is dropped.
    if (this.accepted) this.options.account.paidReported(this.options.context.logger);
    else this.paidPending = true;
  }

  /** The current attempt's report of its login's plan (`AttemptInfo.reportPlan`). */
  reportPlan(report: PlanReport): void {
    this.options.account.reportPlan(report);
  }

  /** The client's signal aborted (this object is its listener: no closure per turn). */
  handleEvent(): void {
    this.abort(this.options.context.signal.reason);
  }

  /** The client left or the gateway ended the request (the drain deadline); not the turn's own end. */
  private clientEnded(): boolean {
    return this.options.context.signal.aborted && !this.endedItself;
  }

  /**
   * Arms the turn's timer from now: for the idle bound when that ends before the deadline, else
   * for the deadline. Called when the turn starts and at every wait on the upstream; the common
   * case is a refresh() of the idle timer already armed.
   */
  private armTimer(): void {
    const idleMs = this.options.idleTimeoutMs;
    const now = this.clock.now();
    // An idle bound longer than a timer holds is none, as 0 is (timer-range.ts).
    if (idleMs > 0 && !isNever(idleMs) && now + idleMs < this.deadlineAt) {
      if (this.timerFor === 'idle') this.timer!.refresh();
      else {
        clearTimeout(this.timer);
        // The work being timed keeps the process alive (the deadline alone does not).
        this.timer = timeoutOrNever(turnTimerFired, idleMs, this);
        this.timerFor = 'idle';
      }
    } else if (this.timerFor !== 'deadline') this.armDeadline(now);
  }

  /** Arms the timer for the deadline (none when it is further than a timer holds: no deadline). */
  private armDeadline(now: number): void {
    clearTimeout(this.timer);
    this.timerFor = 'none';
    this.timer = timeoutOrNever(turnTimerFired, this.deadlineAt - now, this)?.unref();
    if (this.timer) this.timerFor = 'deadline';
  }

  /** The timer fired: the deadline passed, or the idle bound did and the deadline still counts. */
  timerFired(): void {
    const now = this.clock.now();
    if (this.timerFor === 'deadline' || now >= this.deadlineAt) {
      this.deadlinePassed();
      return;
    }
    this.idleBoundPassed();
    if (!this.closed && !this.controller.signal.aborted) this.armDeadline(now);
  }

  /** The deadline passed: the family's turn timeout, or the request's own deadline when that came first. */
  deadlinePassed(): void {
    const { provider } = this.family;
    const { timeoutMs, context } = this.options;
    const own = this.deadlineAt === context.deadlineAt;
    const setting = (isFamilyId(provider) && familyOf(provider).timeoutSetting) || "the family's turn timeout";
    this.endItself(
      new GatewayError('timeout', {
        detail: `${provider}: the turn's deadline passed (${own ? "the request's own deadline" : `${setting}, ${timeoutMs} ms`})`,
        fix: own
          ? 'the client may give the request a longer deadline (deadline_ms)'
          : turnTimeoutFix(setting, timeoutMs),
      }),
    );
  }

  /** The idle bound passed; only a wait on the upstream fails (not a slow client holding a value). */
  idleBoundPassed(): void {
    const { idleTimeoutMs } = this.options;
    const silence = new GatewayError('timeout', {
      detail: `${this.family.provider}: no upstream event for ${idleTimeoutMs} ms (GATEWAY_STREAM_IDLE_TIMEOUT)`,
      fix: idleTimeoutFix(idleTimeoutMs),
    });
    if (this.rejectRead) this.failRead(silence);
    // Silence while opening (a hung token endpoint, handshake or first answer) ends the turn: the
    // signal stops what the family awaits, and a timeout is not retried anyway.
    else if (this.openingAttempt) this.endItself(silence);
  }

  /**
   * Ends the turn's signal. A wait on the upstream fails at once; a turn waiting on its consumer
   * (suspended at a yield, perhaps never to be read again: the client left, or reads nothing
   * until the deadline) is closed here, so its child, socket, login and slot are freed now; a
   * consumer that reads on still gets the turn's end. Anywhere else the run is itself awaiting
   * something the signal ends (open, a retry's sleep) and closes on its own.
   */
  private abort(reason: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.timerFor = 'none';
    this.options.context.signal.removeEventListener('abort', this);
    // Already aborted when it is the request's own controller and the client ended it.
    if (!this.controller.signal.aborted) this.controller.abort(reason);
    if (this.rejectRead) this.failRead(reason);
    else if (this.suspended) this.close(this.clientEnded() ? 'canceled' : 'timeout');
  }

  /** The turn ends its signal with its own reason (a `timeout`). */
  private endItself(reason: GatewayError): void {
    if (this.stopped) return;
    this.endedItself = true;
    this.abort(reason);
  }

  private async *steps(): AsyncGenerator<ChatEvent | typeof ACCEPTED> {
    const { family, signal, deadlineAt } = this;
    const { account } = this.options;
    let retries = 0;
    let emptyRetries = 0;
    let opens = 0;
    try {
      for (;;) {
        let failure: GatewayError | undefined;
        let again: FrameStep | undefined;
        this.attempt = undefined;
        // Every open after the first (a retry, a reopen, a move, a withdrawn request) asks the pool
        // again, as the turn's first did: the paid-usage guard may have rested the login since (its
        // failed attempt's own headers may have said the plan is spent), or it cooled or died.
        if (opens++ > 0 && this.retake()) retries = 0;
        this.paidPending = false;
        const info = new Attempt(++this.number, account.handle, account.alias, deadlineAt, this);
        this.info = info;
        try {
          // Opening (a login token, a handshake, the first answer) is bounded by the idle timer too.
          this.armTimer();
          this.openingAttempt = true;
          let opened: A | typeof WITHDRAWN;
          try {
            opened = await this.open(info, signal);
          } finally {
            this.openingAttempt = false;
          }
          if (opened === WITHDRAWN) {
            // Nothing was sent: the attempt's number goes to the one opened on the pool's choice.
            this.number--;
            continue;
          }
          this.attempt = opened;
          if (signal.aborted) throw signal.reason;
          for (;;) {
            // A step `poll` translated and left to the run comes first; else the next frame.
            let step = this.kept;
            this.kept = undefined;
            if (step === undefined) {
              const next = opened.poll?.() ?? (await this.read(opened));
              if (signal.aborted) throw signal.reason;
              step = next === DONE ? family.end(opened) : family.translate(next, opened);
            } else if (signal.aborted) throw signal.reason;
            if (step.accepted && !this.accepted) {
              this.accepted = true;
              if (this.paidPending) this.paidReported();
              this.suspended = true;
              yield ACCEPTED;
              this.suspended = false;
            }
            if (step.billed) this.options.context.billed?.(step.billed);
            if (step.failure !== undefined || step.unclassified !== undefined) {
              failure = step.failure ?? this.classified(step.unclassified);
              break;
            }
            if (step.again !== undefined) {
              again = step;
              break;
            }
            // The turn ends as the upstream meant it to: told before its last events, which a
            // consumer may stop reading at.
            if (step.terminal) account.succeeded();
            if (step.events.length > 0) {
              const first = this.handOver(step.events);
              // After a step that is not the last, `poll` may read on while the consumer holds this one.
              this.readable = !step.terminal;
              this.suspended = true;
              yield first;
              this.suspended = false;
              this.readable = false;
            }
            if (step.terminal) return;
          }
        } catch (error) {
          failure = this.failureOf(error);
        }
        await this.attempt?.close(failure?.code === 'timeout' ? (signal.aborted ? 'timeout' : 'idle') : 'failed');
        if (again) {
          const delayMs = this.emptyRetryDelay(emptyRetries);
          if (delayMs === undefined) {
            yield* this.suspendedAt(again.events);
            return;
          }
          emptyRetries++;
          // The attempt dropped was billed all the same: its usage goes to the caller's count.
          for (const event of again.events) if (event.type === 'usage') this.options.context.billed?.(event.usage);
          this.log('upstream_retry', { reason: again.again, delay_ms: Math.round(delayMs) });
          await this.clock.sleep(delayMs, signal);
          continue;
        }
        failure ??= new GatewayError('upstream', { detail: `${family.provider} attempt ended without an outcome` });
        this.log('upstream_attempt_failed', this.causeOf(failure));
        if (this.output) {
          // Output has begun: never retried; the login's state still learns from the failure. The
          // error is the turn's last event, and a non-streamed chat's JSON answer with its Retry-After.
          account.noteFailure(failure);
          yield* this.endWith(account.finalError(failure));
          return;
        }
        this.options.context.attemptDropped?.();
        if (family.reopenAfter?.(failure)) continue;
        const delayMs =
          failure.retryable && retries < RETRY_DELAYS_MS.length
            ? retryDelayMs(retries, failure.retryAfterSeconds, () => this.clock.random())
            : undefined;
        if (delayMs !== undefined && this.clock.now() + delayMs < deadlineAt) {
          retries++;
          this.options.context.retried?.(failure.code);
          this.log('upstream_retry', { ...this.causeOf(failure), delay_ms: Math.round(delayMs) });
          await this.clock.sleep(delayMs, signal);
          continue;
        }
        const from = account.alias;
        if (account.moveAfter(failure)) {
          // A usage limit, 429 or dead login before any output: the attempts start over on another login.
          retries = 0;
          this.log('upstream_account_moved', {
            ...this.causeOf(failure),
            from_account: from,
            to_account: account.alias,
          });
          continue;
        }
        const final = account.finalError(failure);
        if (!this.accepted) throw final;
        yield* this.endWith(final);
        return;
      }
    } catch (error) {
      const failure = this.failureOf(error);
      if (!this.accepted) throw failure;
      this.log('upstream_attempt_failed', this.causeOf(failure));
      yield* this.endWith(failure);
    } finally {
      this.close(this.clientEnded() ? 'canceled' : 'done');
    }
  }

  /** The error `runTurn` rejects with: the client's reason as is, else the final classified failure (logged). */
  rejected(error: unknown): unknown {
    this.close(this.clientEnded() ? 'canceled' : 'failed');
    if (this.clientEnded()) return this.options.context.signal.reason ?? error;
    const failure = error instanceof GatewayError ? error : this.failureOf(error);
    this.log('upstream_turn_failed', this.causeOf(failure));
    return failure;
  }

  /** Idempotent: the family told, the attempt closed, timers cleared, the login given back, then `onClosed`. */
  close(reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    this.family.closed?.();
    this.readable = false;
    clearTimeout(this.timer);
    this.timerFor = 'none';
    this.options.context.signal.removeEventListener('abort', this);
    const { signal } = this.options.context;
    // The client left, or the gateway ended the turn (the drain deadline: its code is named).
    if (reason === 'canceled' && this.clientEnded())
      this.log('upstream_canceled', {
        error_code: signal.reason instanceof GatewayError ? signal.reason.code : undefined,
      });
    // The turn is over for its client: its chat may send the next turn (or the same one again after
    // a stop) now, while the login stays taken until the attempt's resources are gone.
    this.options.account.closing();
    // A consumer that leaves must not wait for a child's grace period; what it frees follows the close.
    const closing = this.attempt?.close(reason);
    const done = () => {
      this.options.account.end();
      this.options.onClosed?.();
    };
    if (closing instanceof Promise) closing.then(done, done);
    else done();
  }

  /**
   * Reads the next frame under the idle bound (its timer only counts while we wait on the
   * upstream, not while a slow client drains) and the turn's signal: a family slow to notice an
   * abort cannot hold the turn. The losing read settles a promise already settled.
   */
  private read(attempt: A): Promise<F | typeof DONE> {
    this.armTimer();
    if (this.readingFrom !== attempt) {
      // One pair of callbacks per attempt, handed to each of its reads (not two closures per wait).
      this.readingFrom = attempt;
      this.frameArrived = (next) => {
        if (this.readingFrom !== attempt) return;
        const resolve = this.resolveRead;
        this.resolveRead = this.rejectRead = undefined;
        resolve?.(next.done ? DONE : next.value);
      };
      this.readFailed = (error) => {
        if (this.readingFrom === attempt) this.failRead(error);
      };
    }
    const waiting = new Promise<F | typeof DONE>((resolve, reject) => {
      this.resolveRead = resolve;
      this.rejectRead = reject;
    });
    if (attempt.listen) attempt.listen(this.frameArrived!, this.readFailed!);
    // Both outcomes are handled: readFailed takes the rejection.
    else void attempt.frames.next().then(this.frameArrived, this.readFailed);
    return waiting;
  }

  /** Fails the pending read; the attempt it was reading from is given up (its late answer is ignored). */
  private failRead(error: unknown): void {
    const reject = this.rejectRead;
    this.resolveRead = this.rejectRead = undefined;
    this.readingFrom = undefined;
    reject?.(error);
  }

  private emptyRetryDelay(emptyRetries: number): number | undefined {
    const policy = this.family.emptyTurnRetry;
    if (!policy || this.output || emptyRetries >= policy.maxRetries) return undefined;
    const delayMs = policy.delayMs(emptyRetries);
    return this.clock.now() + delayMs < this.deadlineAt ? delayMs : undefined;
  }

  /**
   * The turn's last events after it was accepted: what the family held back, then the failure,
   * logged as the turn's end (`upstream_turn_failed`) as a turn that failed before acceptance is.
   */
  private endWith(failure: GatewayError): Generator<ChatEvent> {
    this.log('upstream_turn_failed', this.causeOf(failure));
    const held = this.attempt && this.family.held ? this.family.held(this.attempt) : [];
    return this.suspendedAt([...held, { type: 'error', error: failure }]);
  }

  /** Yields `events`, marking the turn as waiting on its consumer meanwhile (see `abort`). */
  private *suspendedAt(events: readonly ChatEvent[]): Generator<ChatEvent> {
    for (const event of events) {
      this.suspended = true;
      yield event;
      this.suspended = false;
    }
  }

  /** The client's abort passes through as is; the deadline is `timeout`; anything else is classified. */
  private failureOf(error: unknown): GatewayError {
    if (this.clientEnded()) throw this.options.context.signal.reason ?? error;
    if (this.signal.aborted) return this.signal.reason as GatewayError;
    if (error instanceof GatewayError) return error;
    return this.classified(error);
  }

  /**
   * The open step: the attempt's request built, then sent. Outside `run`, so the request is not
   * kept in the turn's suspended frame for the stream's life (the attempt keeps what it needs).
   * A request that waited (a token refresh) is sent only while the pool still gives the turn its
   * login; else WITHDRAWN, and the run takes the pool's choice. A request built at once costs no check.
   */
  private open(info: AttemptInfo<L>, signal: AbortSignal): Promise<A | typeof WITHDRAWN> {
    const { family } = this;
    const request = family.request(info, signal);
    return request instanceof Promise
      ? request.then<A | typeof WITHDRAWN>((built) =>
          this.options.account.kept() ? family.send(built, info, signal) : WITHDRAWN,
        )
      : family.send(request, info, signal);
  }

  /**
   * Takes the turn's login again before an open after the first (AccountTurn.retake): the same
   * one while the pool would still give it to the turn, else the pool's choice now, logged as a
   * move; throws the pool's answer (the paid-usage refusal, with its Retry-After) when no login
   * can take the turn. True when the turn moved.
   */
  private retake(): boolean {
    const { account } = this.options;
    const from = account.alias;
    if (!account.retake()) return false;
    this.log('upstream_account_moved', {
      reason: 'login_withdrawn',
      from_account: from,
      to_account: account.alias,
    });
    return true;
  }

  /** The family's reading of a failure, at the runner's time: the one call of `classify`. */
  private classified(failure: unknown): GatewayError {
    // Every failure follows the start of an attempt (`run` sets `info` before anything can fail).
    return this.family.classify(failure, { atMs: this.clock.now(), attempt: this.info! });
  }

  private causeOf(failure: GatewayError): UpstreamLogFields {
    return upstreamCauseFields(failure, { omitMessage: this.options.context.omitUpstreamMessage });
  }

  /** One `upstream_*` line of the turn, at info (the request's summary line is its warning). */
  private log(event: string, fields: UpstreamLogFields): void {
    logUpstream(this.options.context.logger, event, {
      provider: this.family.provider,
      account: this.options.account.alias,
      attempt: this.number,
      ...fields,
    });
  }
}

// The timer's callback takes its turn as an argument: no closure per turn.
function turnTimerFired(turn: { timerFired(): void }): void {
  turn.timerFired();
}
