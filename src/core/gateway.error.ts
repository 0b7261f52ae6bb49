import type { ErrorCode, ErrorSpec } from './error-codes';
import { errorSpec } from './error-codes';
import type { ProviderId } from './provider-id';

export interface GatewayErrorOptions {
  /** Public message replacing the table's (our own words only; never upstream text). */
  publicMessage?: string;
  /** The request field the error is about: OpenAI's `error.param` on chat routes (e.g. `n`, `response_format`). */
  param?: string;
  /**
   * The public message quotes the client's request (a schema validator's words about the schema
   * sent): the request's log line then keeps only `param`, never the message.
   */
  quotesRequest?: boolean;
  /** Structured `error.details` (invalid_schema, unsupported_model, output_validation_failed). */
  details?: string[];
  /** Retry-After hint in seconds (rounded up, at least 1, when written). */
  retryAfterSeconds?: number;
  /** Internal detail for logs only; never sent to a client. Must not contain secrets or prompts. */
  detail?: string;
  /**
   * What the operator does about this failure when it is not the family's usual fix (a login file
   * the gateway's user may not read): the failure's log lines carry it whole, beside `detail`.
   */
  fix?: string;
  /** Upstream HTTP status, for logs and retry decisions. */
  upstreamStatus?: number;
  /** Whether an adapter may retry this failure before output began. */
  retryable?: boolean;
  /** Epoch ms at which a spent limit or credit resets, when the upstream said; named in the message. */
  resetsAt?: number;
  /**
   * A failure about the one upstream model the turn asked for on this login, not the whole login:
   * a usage limit of a family whose quota is kept per model (the account pool rests that model on
   * the login), or a login without access to the model (the turn tries another login).
   */
  limitsModel?: boolean;
  /** The family that failed; the per-family messages of the error table need it. */
  provider?: ProviderId;
  /** What the upstream said about the failure, for the log only (providers/shared/upstream-log.ts). */
  upstream?: UpstreamCause;
  /**
   * The login's own file is the cause (missing, not readable, not a login, expired without a refresh
   * token): what the login report's offline check finds by itself and reports, so a background read
   * that meets it leaves the telling to that report.
   */
  loginFileCause?: boolean;
  /**
   * The token endpoint refused the login's refresh token (its grant, or one it refused for good
   * before): a turn the login still serves on the access token it had proves nothing of its next
   * refresh, so only a new login brings it back (AccountPool.succeeded).
   */
  refreshRefused?: boolean;
  cause?: unknown;
}

/**
 * An upstream's own account of a failure, for the `upstream_*` log lines only: never sent to a
 * client. The message is bounded and sanitized where it is read (sanitizeUpstreamMessage).
 */
export interface UpstreamCause {
  /** The upstream's error type (`rate_limit_error`, `RESOURCE_EXHAUSTED`, …). */
  readonly type?: string;
  /** The upstream's error code or reason (`usage_limit_reached`, `QUOTA_EXHAUSTED`, …). */
  readonly code?: string;
  readonly message?: string;
  /** The exit code of a family's CLI run as a child process; null when a signal ended it. */
  readonly exitCode?: number | null;
  readonly exitSignal?: string | null;
  /** A connection that never reached the upstream: the system's error code (`ECONNREFUSED`, …). */
  readonly errno?: string;
  /** The upstream's host and port that connection was for (never a path, query or credentials). */
  readonly host?: string;
  /** The egress proxy's host and port when it went through one (never its credentials). */
  readonly proxyHost?: string;
  /** What the operator can do about it, naming the family's settings. */
  readonly fix?: string;
}

/** The one error type services throw; the global filter and the SSE writer render it. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly publicMessage?: string;
  readonly param?: string;
  readonly quotesRequest: boolean;
  readonly details?: string[];
  readonly retryAfterSeconds?: number;
  readonly detail?: string;
  readonly fix?: string;
  readonly upstreamStatus?: number;
  readonly retryable: boolean;
  readonly resetsAt?: number;
  readonly limitsModel: boolean;
  /** Set where the failure happens, or by whoever knows the request's family (`attributeTo`). */
  provider?: ProviderId;
  readonly upstream?: UpstreamCause;
  readonly loginFileCause: boolean;
  readonly refreshRefused: boolean;

  constructor(code: ErrorCode, options: GatewayErrorOptions = {}) {
    super(options.detail ? `${code}: ${options.detail}` : code, { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.publicMessage = options.publicMessage;
    this.param = options.param;
    this.quotesRequest = options.quotesRequest ?? false;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.detail = options.detail;
    this.fix = options.fix;
    this.upstreamStatus = options.upstreamStatus;
    this.retryable = options.retryable ?? false;
    this.upstream = options.upstream;
    this.resetsAt = options.resetsAt;
    this.limitsModel = options.limitsModel ?? false;
    this.provider = options.provider;
    this.loginFileCause = options.loginFileCause ?? false;
    this.refreshRefused = options.refreshRefused ?? false;
  }

  /**
   * This error with `changes` applied and every other field kept (code, words, hints, provider,
   * the upstream's cause, the original `cause`): the one way an error is copied, so no copy forgets
   * a field the client's message or the log line needs.
   */
  with(changes: GatewayErrorOptions): GatewayError {
    return new GatewayError(this.code, {
      publicMessage: this.publicMessage,
      param: this.param,
      quotesRequest: this.quotesRequest,
      details: this.details,
      retryAfterSeconds: this.retryAfterSeconds,
      detail: this.detail,
      fix: this.fix,
      upstreamStatus: this.upstreamStatus,
      retryable: this.retryable,
      resetsAt: this.resetsAt,
      limitsModel: this.limitsModel,
      provider: this.provider,
      upstream: this.upstream,
      loginFileCause: this.loginFileCause,
      refreshRefused: this.refreshRefused,
      cause: this.cause,
      ...changes,
    });
  }

  /** The upstream's own (bounded, sanitized) words, for the request's failure line. */
  get upstreamMessage(): string | undefined {
    return this.upstream?.message;
  }

  /**
   * Names the family of the request that failed, unless the error already names one: the
   * orchestrators know the family of every request, the code that throws often does not.
   */
  attributeTo(provider: ProviderId | undefined): this {
    this.provider ??= provider;
    return this;
  }

  static isInstance(value: unknown): value is GatewayError {
    return value instanceof GatewayError;
  }

  get spec(): ErrorSpec {
    return errorSpec(this.code);
  }

  /** Retry-After to send: the hint, else the table default; whole seconds, at least 1. */
  get retryAfterHeader(): number | undefined {
    const seconds = this.retryAfterSeconds ?? this.spec.retryAfterSeconds;
    return seconds === undefined ? undefined : Math.max(1, Math.ceil(seconds));
  }
}

/** The abort reason used when a client disconnects (an Error subclass, not a plain object). */
export class ClientDisconnectedError extends Error {
  constructor() {
    super('client disconnected');
    this.name = 'ClientDisconnectedError';
  }
}

/**
 * The request's client signal aborted because its client left, and not because the gateway ended
 * the turn itself: the drain deadline aborts it with the `draining` GatewayError, which the route
 * still answers (a 503, or a stream's error chunk) and records as that error, not as a cancel.
 */
export function clientLeft(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && !(signal.reason instanceof GatewayError);
}

/**
 * The error the gateway ended the request's turn with, if it did (the other side of `clientLeft`):
 * the drain deadline's `draining`, or a chat turn's own `timeout`.
 */
export function endedByGateway(signal: AbortSignal): GatewayError | undefined {
  return signal.aborted && signal.reason instanceof GatewayError ? signal.reason : undefined;
}

/**
 * The `canceled` error: the client left before the request had a signal to abort (its body was
 * still arriving), so nothing is answered and it is recorded as a cancel (499).
 */
export function isCanceled(thrown: unknown): boolean {
  return thrown instanceof GatewayError && thrown.code === 'canceled';
}
