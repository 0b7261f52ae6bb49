import type { AccountTurn } from '../../accounts/account-turn';
import { closingEvents, Deadline, deadline, linkedAbort, withIdleTimeout, withinIdleTimeout } from '../../common/async/abortable';
import type { ChatEvent } from '../../core/chat-event';
import { GatewayError } from '../../core/gateway.error';
import type { CallContext } from '../provider-adapter';
import { runWithRetries } from '../shared/retry-policy';
import type { UpstreamProxy } from '../shared/upstream-proxy';
import type { ProviderALogin } from './provider-a.accounts';
import type { ProviderACredentials } from './provider-a.auth';
import { classifyUpstreamFailure, connectionFailure, isUpstreamAuthRejection } from './provider-a.errors';
import { rateLimitsFromHeaders, RateLimitTelemetry } from './provider-a.rate-limits';
import { createStreamState, StreamState, translateEvent } from './provider-a.stream';
import { OpenConnection, UpstreamConnection, UpstreamFrame, UpstreamRejection } from './provider-a.transport';

type Json = Record<string, unknown>;

/** Headers and body of one upstream attempt. */
export interface AttemptPlan {
  readonly headers: Record<string, string>;
  readonly body: Json;
}

/** Everything one turn needs; the adapter builds it per request. */
export interface TurnOptions {
  readonly url: string;
  readonly open: OpenConnection;
  /** Called once per attempt (a fresh turn id each time) with the login to use. */
  readonly plan: (credentials: ProviderACredentials, attemptNumber: number) => AttemptPlan;
  /** The login the turn runs on; it moves once to another login on a usage limit before output. */
  readonly account: AccountTurn<ProviderALogin>;
  /** PROVIDER_A_TIMEOUT; 0 = no bound of its own (the context deadline still applies). */
  readonly turnTimeoutMs: number;
  /** GATEWAY_STREAM_IDLE_TIMEOUT; 0 = off. */
  readonly idleTimeoutMs: number;
  /** The egress proxy of every connection of the turn. */
  readonly proxy?: UpstreamProxy;
  /** What the client gets for each translated event (e.g. its own tool names); as is when absent. */
  readonly toClient?: (event: ChatEvent) => ChatEvent;
}

/** An accepted turn: its events, and the upstream response id/model seen so far. */
export interface AcceptedTurn {
  readonly events: AsyncIterable<ChatEvent>;
  response(): { readonly id?: string; readonly model?: string };
}

/** One live connection after its first output (or terminal) event. */
interface LiveAttempt {
  readonly iterator: AsyncIterator<UpstreamFrame>;
  /** A frame that already arrived, without waiting (see `UpstreamConnection.poll`). */
  readonly poll: () => UpstreamFrame | undefined;
  readonly state: StreamState;
  readonly accountId: string;
  /** The telemetry of the login this attempt runs on. */
  readonly rateLimits: RateLimitTelemetry;
  /** Events translated while looking for the first output, not yet yielded. */
  readonly pending: ChatEvent[];
  readonly finished: boolean;
}

const isOutput = (event: ChatEvent) => event.type === 'text-delta' || event.type === 'reasoning-delta' || event.type === 'tool-call';

/**
 * Ends an attempt's frames at once (an async generator's return() would wait for a pending read),
 * and offers the frames that already arrived without waiting (`poll`).
 */
function attemptFrames(
  connect: (signal: AbortSignal) => Promise<UpstreamConnection>,
  turnSignal: AbortSignal,
): AsyncIterable<UpstreamFrame> & { poll(): UpstreamFrame | undefined } {
  const attempt = linkedAbort([turnSignal]);
  let connection: UpstreamConnection | undefined;
  let frames: AsyncIterator<UpstreamFrame> | undefined;
  return {
    poll: () => (frames ? connection?.poll?.() : undefined),
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        if (!frames) {
          connection = await connect(attempt.signal);
          frames = connection.frames[Symbol.asyncIterator]();
        }
        return frames.next();
      },
      return: async () => {
        attempt.abort(new Error('provider_a attempt closed'));
        connection?.close();
        return { value: undefined, done: true };
      },
    }),
  };
}

/**
 * One provider_a turn (provider_a.md §4.4–§4.6): attempts with the shared retry rule until the
 * first output, one forced token refresh on an upstream 401/403, an idle timer on every wait for
 * the upstream and a deadline for the whole turn. Resolves once the upstream accepted the turn
 * (first non-error event); rejects with the classified error when no attempt was accepted. After
 * acceptance every failure is a terminal `error` event; retries continue only while nothing was
 * yielded yet. The iterable throws only when the caller's signal aborted.
 */
export async function startTurn(options: TurnOptions, context: CallContext): Promise<AcceptedTurn> {
  // The whole-turn bound (provider_a.md §4.6): the caller's abort or the turn deadline, whichever first.
  const deadlineAt = Math.min(options.turnTimeoutMs > 0 ? Date.now() + options.turnTimeoutMs : Infinity, context.deadlineAt ?? Infinity);
  const clock = deadline(deadlineAt, () => new GatewayError('timeout', { detail: 'provider_a turn deadline reached' }), [context.signal]);
  let current: StreamState | undefined;
  let markAccepted!: () => void;
  const accepted = new Promise<void>((resolve) => (markAccepted = resolve));
  const live = runAttempts(options, context, clock, markAccepted, (state) => (current = state));
  live.catch(() => undefined);
  try {
    await Promise.race([accepted, live]);
  } catch (error) {
    clock.clear();
    options.account.end();
    const failure = options.account.finalError(asTurnError(error, context));
    context.logger.warn({ event: 'provider_a_turn_failed', error_code: failure.code, upstream_status: failure.upstreamStatus }, 'provider_a_turn_failed');
    throw failure;
  }
  return {
    // Never iterated (the client left before the first chunk): close the attempt and the clock anyway.
    events: closingEvents(acceptedEvents(live, options, context, clock), async () => {
      // An attempt may still be reading towards its first output: the abort ends it and its socket.
      clock.abort(new Error('provider_a turn closed by its consumer'));
      const attempt = await live.catch(() => undefined);
      await attempt?.iterator.return?.(undefined);
      options.account.end();
    }),
    response: () => ({ id: current?.responseId, model: current?.model }),
  };
}

/**
 * The attempts of a turn on its login (the shared retry rule, one forced refresh on a 401); a
 * failure before any output that is about the login (usage limit, 429, login dead) moves the turn
 * once to another login, where the attempts start over.
 */
async function runAttempts(
  options: TurnOptions,
  context: CallContext,
  clock: Deadline,
  markAccepted: () => void,
  onState: (state: StreamState) => void,
): Promise<LiveAttempt> {
  const once = async (credentials: ProviderACredentials, attemptNumber: number) => {
    const state = createStreamState();
    onState(state);
    return firstOutput(options, context, clock, credentials, attemptNumber, state, markAccepted);
  };
  const onCurrentLogin = () => {
    const { auth } = options.account.handle;
    let authRetried = false;
    // A login token (maybe a refresh) is waited for like any upstream event: turn deadline and idle bound.
    const token = (fetch: (signal: AbortSignal) => Promise<ProviderACredentials>) => withinIdleTimeout(options.idleTimeoutMs, clock.signal, 'login token', fetch);
    return runWithRetries(
      async (attemptNumber) => {
        const credentials = await token((signal) => auth.credentials(context.logger, signal));
        try {
          return await once(credentials, attemptNumber);
        } catch (error) {
          if (!isUpstreamAuthRejection(error) || authRetried || clock.signal.aborted) throw error;
          // §1.7: one forced refresh and one retry per turn, outside the generic retry budget.
          authRetried = true;
          context.logger.info({ event: 'provider_a_auth_retry', upstream_status: error.upstreamStatus }, 'provider_a_auth_retry');
          return once(await token((signal) => auth.afterRejection(credentials, context.logger, signal)), attemptNumber);
        }
      },
      {
        signal: clock.signal,
        deadlineAt: clock.deadlineAt,
        onRetry: (error, retryNumber, delayMs) => {
          context.retried?.(error.code);
          context.logger.warn(
            { event: 'provider_a_attempt_retry', retry: retryNumber, error_code: error.code, upstream_status: error.upstreamStatus, delay_ms: Math.round(delayMs) },
            'provider_a_attempt_retry',
          );
        },
      },
    );
  };
  for (;;) {
    try {
      return await onCurrentLogin();
    } catch (error) {
      if (clock.signal.aborted || !options.account.moveAfter(error)) throw error;
    }
  }
}

/** Opens one connection and reads until the first output or terminal event. */
async function firstOutput(
  options: TurnOptions,
  context: CallContext,
  clock: Deadline,
  credentials: ProviderACredentials,
  attemptNumber: number,
  state: StreamState,
  markAccepted: () => void,
): Promise<LiveAttempt> {
  const plan = options.plan(credentials, attemptNumber);
  const { rateLimits } = options.account.handle;
  const connect = async (signal: AbortSignal) => {
    try {
      const connection = await options.open({ url: options.url, headers: plan.headers, body: plan.body, signal, proxy: options.proxy });
      rateLimits.record(credentials.accountId, rateLimitsFromHeaders(connection.responseHeaders), context.logger);
      return connection;
    } catch (error) {
      if (!(error instanceof UpstreamRejection)) throw error;
      rateLimits.record(credentials.accountId, rateLimitsFromHeaders(error.headers), context.logger);
      throw classifyUpstreamFailure({
        status: error.status,
        headers: error.headers,
        payload: error.payload,
        rateLimits: rateLimits.latest(credentials.accountId),
      });
    }
  };
  // The idle timer also covers the handshake and the wait for the first event.
  const frames = attemptFrames(connect, clock.signal);
  const iterator = withIdleTimeout(frames, options.idleTimeoutMs)[Symbol.asyncIterator]();
  const live = { iterator, poll: () => frames.poll(), state, accountId: credentials.accountId, rateLimits };
  const pending: ChatEvent[] = [];
  try {
    for (;;) {
      const step = polledStep(live, options, context) ?? (await nextStep(live, options, context));
      if (step.failure) throw step.failure;
      if (step.accepted) markAccepted();
      pending.push(...step.events);
      if (step.terminal || step.events.some(isOutput)) return { ...live, pending, finished: step.terminal };
    }
  } catch (error) {
    await iterator.return?.(undefined);
    throw error;
  }
}

interface Step {
  readonly events: ChatEvent[];
  readonly accepted: boolean;
  readonly terminal: boolean;
  readonly failure?: GatewayError;
}

type ReadingAttempt = Omit<LiveAttempt, 'pending' | 'finished'>;

/** Reads and translates one frame; a close without a terminal event is an upstream failure. */
async function nextStep(live: ReadingAttempt, options: TurnOptions, context: CallContext): Promise<Step> {
  const next = await live.iterator.next();
  if (next.done) return failed(connectionFailure('stream closed before completion'));
  return frameStep(live, next.value, options, context);
}

/**
 * The step of a frame that already arrived, or `undefined` when none is buffered: a burst of
 * frames is translated without a promise per frame (the idle bound only concerns waits).
 */
function polledStep(live: ReadingAttempt, options: TurnOptions, context: CallContext): Step | undefined {
  const frame = live.poll();
  return frame === undefined ? undefined : frameStep(live, frame, options, context);
}

function frameStep(live: ReadingAttempt, frame: UpstreamFrame, options: TurnOptions, context: CallContext): Step {
  if (!frame.ok) return failed(connectionFailure(frame.reason === 'binary' ? 'binary frame' : 'non-JSON frame'));
  const step = translateEvent(live.state, frame.value as Json, { rateLimits: live.rateLimits.latest(live.accountId) });
  if (step.rateLimits) live.rateLimits.record(live.accountId, step.rateLimits, context.logger);
  return step;
}

const failed = (failure: GatewayError): Step => ({ events: [{ type: 'error', error: failure }], accepted: false, terminal: true, failure });

/** The events after acceptance: buffered ones, then the rest of the live connection. */
async function* acceptedEvents(live: Promise<LiveAttempt>, options: TurnOptions, context: CallContext, clock: Deadline): AsyncGenerator<ChatEvent> {
  let attempt: LiveAttempt | undefined;
  const toClient = options.toClient ?? ((event: ChatEvent) => event);
  try {
    attempt = await live;
    // Plain loops, not `yield*` over the arrays: that would add a promise per event.
    for (const event of attempt.pending) yield toClient(event);
    if (attempt.finished) return;
    for (;;) {
      const step = polledStep(attempt, options, context) ?? (await nextStep(attempt, options, context));
      if (step.failure) {
        logFailure(context, step.failure);
        // Output has begun: the turn stays on its login, but a usage limit still cools it.
        options.account.noteFailure(step.failure);
      }
      for (const event of step.events) yield toClient(event);
      if (step.terminal) return;
    }
  } catch (error) {
    const failure = asTurnError(error, context);
    logFailure(context, failure);
    yield { type: 'error', error: failure };
  } finally {
    await attempt?.iterator.return?.(undefined);
    clock.clear();
    options.account.end();
  }
}

function logFailure(context: CallContext, failure: GatewayError): void {
  context.logger.warn({ event: 'provider_a_stream_failed', error_code: failure.code, upstream_status: failure.upstreamStatus }, 'provider_a_stream_failed');
}

/** The caller's abort passes through as is; everything else becomes a GatewayError. */
function asTurnError(error: unknown, context: CallContext): GatewayError {
  if (context.signal.aborted) throw context.signal.reason ?? error;
  if (error instanceof GatewayError) return error;
  return new GatewayError('upstream', { detail: 'provider_a turn failed', cause: error });
}
