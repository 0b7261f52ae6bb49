import type { ChatEvent } from '../../core/chat-event';
import type { EventLogger } from '../../core/event-logger';
import type { GatewayError } from '../../core/gateway.error';
import type { CallContext } from '../shared/provider-adapter';
import type { JsonObject } from '../../common/json';
import type {
  AttemptInfo,
  CloseReason,
  FailureContext,
  FrameStep,
  UpstreamAttempt,
  UpstreamFamily,
} from '../shared/turn-runner';
import { transportFailure } from '../shared/turn-runner';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import type { ProviderALogin } from './provider-a.accounts';
import type { ProviderACredentials } from '../../accounts/provider-a/provider-a.auth';
import type { ToolNameMap } from '../shared/tool-names';
import { classifyUpstreamFailure, connectionFailure } from './provider-a.errors';
import { LoginTokenTurn } from '../shared/login-rejection';
import { unreadableFrame } from '../shared/unreadable-frame';
import type { ProviderAPlanMeter } from './provider-a.rate-limits';
import { rateLimitsFromHeaders } from './provider-a.rate-limits';
import type { StreamState } from './provider-a.stream';
import { createStreamState, translateEvent } from './provider-a.stream';
import type { AttemptInput, OpenConnection, UpstreamConnection, UpstreamFrame } from './provider-a.transport';
import { UpstreamErrorEvent, UpstreamRefusal } from '../shared/upstream-failure';

/** Headers and body of one upstream attempt, built for the login it runs on. */
export interface AttemptRequest {
  readonly headers: Record<string, string>;
  readonly body: JsonObject;
  /** The client's own names of the tools the upstream calls (possibly shortened there); as they are when absent. */
  readonly toolNames?: Pick<ToolNameMap, 'toClient'>;
  /** The same request for HTTP + SSE, for a WebSocket frame too large for the server. */
  readonly overHttp?: () => Pick<AttemptRequest, 'headers' | 'body'>;
}

/** One provider_a attempt: a WebSocket turn or an SSE POST, and the translation state of its events. */
export interface ProviderAAttempt extends UpstreamAttempt<UpstreamFrame> {
  readonly state: StreamState;
  /** What the runner said of this attempt: its stream's report of credits in use is told to it. */
  readonly info: AttemptInfo<ProviderALogin>;
  /** The plan meter of the login this attempt runs on. */
  readonly plan: ProviderAPlanMeter;
  readonly logger: EventLogger;
  readonly toolNames?: Pick<ToolNameMap, 'toClient'>;
}

/** Builds each attempt's request for the login it runs on (attempt 1 is the turn's first). */
export interface AttemptBuilder {
  build(credentials: ProviderACredentials, attempt: number): AttemptRequest;
}

/** What opening a provider_a attempt needs besides the request. */
export interface ProviderAConnect {
  readonly url: string;
  /** Opens each attempt's connection, unless there is a `lease`. */
  readonly open: OpenConnection;
  readonly proxy?: UpstreamProxy;
  /** The chat's kept WebSocket connections (`ChatTurnLease`): it opens every attempt instead of `open`. */
  readonly lease?: ConnectionLease;
}

/** Opens a turn's attempts on a chat's kept connection when it can (a method, so a turn pays no closure for it). */
export interface ConnectionLease {
  open(input: AttemptInput): Promise<UpstreamConnection>;
  /** A failure of `open` it recovers from by opening again at once (a kept connection found stale). */
  reopenAfter(failure: GatewayError): boolean;
  /** The turn is over: no attempt follows. */
  turnClosed(): void;
}

/**
 * provider_a as an upstream family of the turn runner (docs/upstream/provider-a.md §4): `requests` give the body
 * and headers of an attempt for its login (a fresh turn id each time in faithful mode). A class,
 * so a turn pays for one object rather than a closure per method.
 */
export class ProviderAUpstream implements UpstreamFamily<
  ProviderALogin,
  UpstreamFrame,
  ProviderAAttempt,
  AttemptRequest
> {
  readonly provider = 'provider_a' as const;
  private readonly login: LoginTokenTurn<ProviderACredentials>;

  constructor(
    private readonly connect: ProviderAConnect,
    private readonly context: CallContext,
    private readonly requests: AttemptBuilder,
  ) {
    this.login = new LoginTokenTurn('provider_a', context.logger);
  }

  /**
   * The login's token (the cached one without a wait, so no promise) and the attempt's request
   * built for it. A login token (maybe a refresh) is waited for like any upstream event: the
   * runner bounds it by the turn's deadline and the idle bound, both through `signal`.
   */
  request(attempt: AttemptInfo<ProviderALogin>, signal: AbortSignal): AttemptRequest | Promise<AttemptRequest> {
    const token = this.login.token(attempt.login.auth, signal);
    return token instanceof Promise
      ? token.then((credentials) => this.requests.build(credentials, attempt.number))
      : this.requests.build(token, attempt.number);
  }

  /** The connection (the chat's kept one when its lease can); a refused upgrade or POST rejects with its `UpstreamRefusal`. */
  async send(
    request: AttemptRequest,
    attempt: AttemptInfo<ProviderALogin>,
    signal: AbortSignal,
  ): Promise<ProviderAAttempt> {
    const { connect } = this;
    const { logger } = this.context;
    const { plan } = attempt.login;
    const input: AttemptInput = {
      url: connect.url,
      headers: request.headers,
      body: request.body,
      signal,
      proxy: connect.proxy,
      overHttp: request.overHttp && { request: request.overHttp, logger },
    };
    const connection = await (connect.lease ? connect.lease.open(input) : connect.open(input));
    // The upstream serves this turn: windows at 100 % here mean credits are paying for it. A turn
    // on a kept WebSocket has no headers of its own: its stream's `codex.rate_limits` report instead.
    if (plan.record(rateLimitsFromHeaders(connection.responseHeaders), attempt, logger, true)) attempt.paidReported();
    return new ConnectionAttempt(connection, attempt, plan, logger, request.toolNames);
  }

  /**
   * A refused upgrade or POST, or an error event of the stream (docs/upstream/provider-a.md §10),
   * read against the login's plan at `atMs`: a refusal's rate-limit headers go to the login's plan
   * meter first, and a spent limit marks the plan. Anything else is a transport failure.
   */
  classify(failure: unknown, { atMs, attempt }: FailureContext<ProviderALogin>): GatewayError {
    const refusal = failure instanceof UpstreamRefusal ? failure : undefined;
    const event = failure instanceof UpstreamErrorEvent ? failure : undefined;
    if (!refusal && !event) return transportFailure(this.provider, failure);
    const { plan } = attempt.login;
    // An error event carries no status or headers: only a refusal's reach the plan meter.
    if (refusal) plan.record(rateLimitsFromHeaders(refusal.headers), attempt, this.context.logger, false);
    const payload = refusal ? refusal.body : event?.payload;
    const classified = classifyUpstreamFailure({
      status: refusal?.status,
      headers: refusal?.headers,
      payload,
      planWindows: plan.latest()?.windows,
      now: atMs,
    });
    // The plan is spent until the reset the login cools until (every hint of the refusal, else its spent window's).
    if (classified.code === 'usage_limit')
      plan.usageLimit(
        payload,
        refusal?.headers['x-codex-rate-limit-reached-type'],
        attempt,
        classified.retryAfterSeconds !== undefined ? atMs + classified.retryAfterSeconds * 1000 : undefined,
      );
    return classified;
  }

  /**
   * Opens again at once, outside the retry budget: in full on a fresh connection after the chat's
   * kept connection turned out stale, or after a 401 with one forced refresh per turn (docs/accounts.md).
   */
  reopenAfter(failure: GatewayError): boolean {
    return this.connect.lease?.reopenAfter(failure) === true || this.login.reopenAfter(failure);
  }

  /** The turn is over: its lease counts how it used the chat's kept connection. */
  closed(): void {
    this.connect.lease?.turnClosed();
  }

  translate(frame: UpstreamFrame, attempt: ProviderAAttempt): FrameStep {
    return translateFrame(frame, attempt);
  }

  end(): FrameStep {
    return { events: [], failure: connectionFailure('stream closed before completion') };
  }
}

/** One connection as the runner reads it (methods on the prototype: nothing per attempt but the object). */
class ConnectionAttempt implements ProviderAAttempt {
  readonly frames: AsyncIterator<UpstreamFrame>;
  readonly state = createStreamState();

  constructor(
    private readonly connection: UpstreamConnection,
    readonly info: AttemptInfo<ProviderALogin>,
    readonly plan: ProviderAPlanMeter,
    readonly logger: EventLogger,
    readonly toolNames?: Pick<ToolNameMap, 'toClient'>,
  ) {
    this.frames = connection.frames[Symbol.asyncIterator]();
  }

  poll(): UpstreamFrame | undefined {
    return this.connection.poll?.();
  }

  listen(arrived: (next: IteratorResult<UpstreamFrame>) => void, failed: (error: unknown) => void): void {
    if (this.connection.listen) this.connection.listen(arrived, failed);
    else void this.frames.next().then(arrived, failed);
  }

  /**
   * Ends the turn on the socket (kept for the chat when it completed) or ends the POST (its body
   * read to the end when the turn completed, else aborted).
   */
  close(reason: CloseReason): void {
    this.connection.close(reason);
  }
}

/**
 * One frame's meaning (docs/upstream/provider-a.md §9.1); a binary or non-JSON frame is a protocol
 * failure, and an error event is handed over for `classify`.
 */
function translateFrame(frame: UpstreamFrame, attempt: ProviderAAttempt): FrameStep {
  if (!frame.ok) return unreadableFrame('provider_a', frame.reason === 'binary' ? 'binary frame' : 'non-JSON frame');
  const step = translateEvent(attempt.state, frame.value);
  if (step.rateLimits && attempt.plan.record(step.rateLimits, attempt.info, attempt.logger, true))
    attempt.info.paidReported();
  const { toolNames } = attempt;
  if (!toolNames || step.unclassified || !step.events.some((event) => event.type === 'tool-call')) return step;
  // Calls coming back carry the upstream (possibly shortened) name; the client gets its own.
  const events = step.events.map((event): ChatEvent =>
    event.type === 'tool-call'
      ? { ...event, call: { ...event.call, name: toolNames.toClient(event.call.name) } }
      : event,
  );
  return { ...step, events };
}
